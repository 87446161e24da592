//===- OpBench.cpp - One compiled linear through the runtime --------------===//
//
// Times `LoadedModel::runInto` on one quantized op of a host artifact: the
// path a decode step takes (the admitted kernel, row-split over the
// runtime's thread pool, the output buffer reused). Bytes processed are the
// op's stored codes and scales, so the rate reads as weight bandwidth.
//
//   QTENSOR_BENCH_ARTIFACT=DIR QTENSOR_BENCH_OP=blk.0.ffn_down.weight \
//     QTENSOR_THREADS=2 bench-op --benchmark_filter=BM_Op/1
//
// bench/host-gemv.sh runs it beside ggml's q4_0 matmul on the same shape.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/Loader.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

struct Loaded {
  std::unique_ptr<LoadedModel> model;
  size_t index = 0;
  const OpPlan *op = nullptr;
  uint64_t weightBytes = 0;
  std::string error;
};

Loaded &loaded() {
  static Loaded l = [] {
    Loaded r;
    const char *dir = std::getenv("QTENSOR_BENCH_ARTIFACT");
    const char *name = std::getenv("QTENSOR_BENCH_OP");
    if (!dir || !name) {
      r.error = "set QTENSOR_BENCH_ARTIFACT and QTENSOR_BENCH_OP";
      return r;
    }
    LoadOptions options;
    options.backend = BackendChoice::Host;
    options.warmup = false;
    options.ops = {name};
    // The artifact is the one the harness just compiled here, and this
    // MLIR-free program has no kernel builder: its own code is trusted.
    options.code.trustArtifactCode = true;
    auto model = loadModel(dir, options);
    if (!model) {
      r.error = model.message();
      return r;
    }
    r.model = model.take();
    auto index = r.model->opIndex(name);
    if (!index) {
      r.error = index.message();
      return r;
    }
    r.index = *index;
    r.op = &r.model->plan().ops[*index];
    for (const auto &[role, stored] : r.op->entry->storedTensors()) {
      (void)role;
      uint64_t bytes = safetensors::dtypeSize(stored.dtype);
      for (int64_t d : stored.shape)
        bytes *= uint64_t(d);
      r.weightBytes += bytes;
    }
    return r;
  }();
  return l;
}

void BM_Op(benchmark::State &state) {
  Loaded &l = loaded();
  if (!l.error.empty()) {
    state.SkipWithError(l.error.c_str());
    return;
  }
  const int64_t t = state.range(0);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> values(size_t(t * l.op->k()));
  for (double &v : values)
    v = unit(rng);
  auto x = HostTensor::fromDoubles(l.op->activation, t, l.op->k(), values);
  if (!x) {
    state.SkipWithError(x.message().c_str());
    return;
  }
  HostTensor y;
  for (auto _ : state) {
    Status s = l.model->runInto(l.index, *x, y, /*record=*/false);
    if (!s) {
      state.SkipWithError(s.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(y.bytes.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(l.weightBytes));
  state.SetLabel(l.op->tensor + " [" + std::to_string(l.op->n()) + ", " +
                 std::to_string(l.op->k()) + "]");
}

} // namespace

BENCHMARK(BM_Op)
    ->Arg(1)
    ->Arg(16)
    ->Arg(128)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
