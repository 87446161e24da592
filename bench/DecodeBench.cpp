//===- DecodeBench.cpp - ggml decode throughput per type ------------------===//
//
// Decodes 16 MiB worth of elements of each type, reporting bytes of encoded
// input per second (GB/s) and, as the baseline in the same run, a memcpy of
// the same number of output bytes (what "decoding" F32 costs at best).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/GGMLTypes.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

using namespace qtensor;

namespace {
constexpr int64_t kElements = int64_t(1) << 22; // 4 Mi values = 16 MiB of f32

/// Random blocks whose fp16 scale fields are finite and small, so decoding
/// does the same work as on a real checkpoint.
std::vector<uint8_t> makeBlocks(GGMLType type, int64_t elements) {
  const GGMLTypeTraits &traits = ggmlTypeTraits(type);
  uint64_t blocks = elements / traits.blockSize;
  std::vector<uint8_t> bytes(blocks * traits.typeSize);
  std::mt19937 rng(42);
  for (uint8_t &b : bytes)
    b = static_cast<uint8_t>(rng());
  if (!traits.quantized) {
    // Plain floats: avoid NaN/Inf patterns by clearing the top exponent bit.
    size_t width = traits.typeSize;
    for (size_t i = width - 1; i < bytes.size(); i += width)
      bytes[i] &= 0x3f;
    return bytes;
  }
  // Every quantized block starts or ends with fp16 scales; 0x3c00 (1.0) in the
  // first two bytes and the last two keeps them finite whichever it is.
  for (uint64_t blk = 0; blk < blocks; ++blk) {
    uint8_t *p = bytes.data() + blk * traits.typeSize;
    p[0] = 0x00, p[1] = 0x3c;
    p[traits.typeSize - 2] = 0x00, p[traits.typeSize - 1] = 0x3c;
  }
  return bytes;
}

void decodeType(benchmark::State &state, GGMLType type) {
  std::vector<uint8_t> src = makeBlocks(type, kElements);
  std::vector<float> dst(kElements);
  for (auto _ : state) {
    Status s = decodeRow(type, src.data(), src.size(), kElements, dst.data());
    if (!s) {
      state.SkipWithError(s.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * src.size());
  state.counters["out_GB/s"] = benchmark::Counter(
      double(state.iterations()) * kElements * sizeof(float) / 1e9,
      benchmark::Counter::kIsRate);
}

/// Baseline: copying the decoded output size, the floor of any decoder.
void BM_MemcpyBaseline(benchmark::State &state) {
  std::vector<float> src(kElements, 1.0f), dst(kElements);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kElements * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kElements *
                          sizeof(float));
}
BENCHMARK(BM_MemcpyBaseline)->Unit(benchmark::kMillisecond);

struct Registrar {
  Registrar() {
    for (const GGMLTypeTraits &traits : allGGMLTypes()) {
      if (!isDecodable(traits.type))
        continue;
      std::string name = "BM_Decode/" + std::string(traits.name);
      benchmark::RegisterBenchmark(name.c_str(), decodeType, traits.type)
          ->Unit(benchmark::kMillisecond);
    }
  }
} registrar;
} // namespace
