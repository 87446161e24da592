//===- CompileBench.cpp - --qtensor-compile on a 7B-shaped model ----------===//
//
// Times the compile pipeline (import, canonicalize, fuse, place shards,
// select layouts) on llama-shaped modules of 1..32 blocks x 7 quantized
// linears (shapes only, no weight bytes), for tp = 1, 2 and 4. The baseline,
// measured in the same run, is parsing and verifying the same module: the
// pipeline's cost is reported as a ratio to it, and Google Benchmark fits how
// it grows with the number of blocks (expected: linear).
//
// Modules come from bench/models/make_llama_shapes.py (one generator for the
// benchmark, the lit model test and users), run once per size at start-up.
//
//===----------------------------------------------------------------------===//

#include "qtensor/InitAll.h"
#include "qtensor/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

/// The module text for `blocks` Llama-2-7B blocks, generated once.
const std::string &modelText(int64_t blocks) {
  static std::map<int64_t, std::string> cache;
  auto it = cache.find(blocks);
  if (it != cache.end())
    return it->second;
  std::string command = std::string("python3 ") + QTENSOR_MODEL_GENERATOR +
                        " --blocks " + std::to_string(blocks);
  std::unique_ptr<FILE, int (*)(FILE *)> pipe(popen(command.c_str(), "r"),
                                              pclose);
  if (!pipe)
    throw std::runtime_error("cannot run " + command);
  std::string text;
  char buffer[1 << 16];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe.get())) > 0)
    text.append(buffer, n);
  if (text.empty())
    throw std::runtime_error(command + " printed nothing");
  return cache.emplace(blocks, std::move(text)).first->second;
}

struct Context {
  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> context;
  Context() {
    qtensor::registerDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
  }
};

mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext &context,
                                        const std::string &text) {
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    throw std::runtime_error("the generated module does not parse");
  return module;
}

void BM_ParseVerify(benchmark::State &state) {
  Context ctx;
  const std::string &text = modelText(state.range(0));
  for (auto _ : state) {
    auto module = parse(*ctx.context, text);
    benchmark::DoNotOptimize(module.get());
  }
  state.counters["linears"] = 7.0 * state.range(0);
  state.SetComplexityN(state.range(0));
}

void BM_Compile(benchmark::State &state) {
  Context ctx;
  const std::string &text = modelText(state.range(0));
  qtensor::CompileOptions options;
  options.target = "sm_90";
  options.tp = state.range(1);
  options.groupPolicy =
      mlir::qt::GroupPolicy::Align; // tp=4 cuts down_proj's 86 groups
  for (auto _ : state) {
    state.PauseTiming();
    auto module = parse(*ctx.context, text);
    mlir::PassManager pm(ctx.context.get());
    qtensor::buildCompilePipeline(pm, options);
    state.ResumeTiming();
    if (mlir::failed(pm.run(*module))) {
      state.SkipWithError("the compile pipeline failed");
      break;
    }
  }
  state.counters["linears"] = 7.0 * state.range(0);
  state.SetComplexityN(state.range(0));
}

} // namespace

BENCHMARK(BM_ParseVerify)
    ->RangeMultiplier(2)
    ->Range(1, 32)
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);
BENCHMARK(BM_Compile)
    ->ArgsProduct({{1, 2, 4, 8, 16, 32}, {1}})
    ->Unit(benchmark::kMillisecond)
    ->Complexity(benchmark::oN);
BENCHMARK(BM_Compile)
    ->ArgsProduct({{32}, {2, 4}})
    ->Unit(benchmark::kMillisecond);
