//===- LayoutBench.cpp - Packing codes into the decode_gemv layout --------===//
//
// packKernelLayout and unpackKernelLayout of a 4096 x 4096 decode_gemv
// tensor (what a compile does to every weight, and L1 of the ladder does
// back), 4- and 6-bit codes. The baseline in the same run is copying the
// same int32 codes once (BM_CopyCodes): the memory floor of touching them.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Numerics/KernelLayout.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

using namespace qtensor;

namespace {

constexpr int64_t kRows = 4096, kCols = 4096;

std::vector<int32_t> randomCodes(unsigned bits) {
  std::vector<int32_t> codes(size_t(kRows * kCols));
  std::mt19937 rng(bits);
  for (int32_t &c : codes)
    c = int32_t(rng() % (1u << bits));
  return codes;
}

void BM_CopyCodes(benchmark::State &state) {
  std::vector<int32_t> codes = randomCodes(4);
  for (auto _ : state) {
    std::vector<int32_t> copy(codes.size());
    std::memcpy(copy.data(), codes.data(), codes.size() * sizeof(int32_t));
    benchmark::DoNotOptimize(copy.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows * kCols);
}

void BM_PackDecodeGemv(benchmark::State &state) {
  const unsigned bits = unsigned(state.range(0));
  std::vector<int32_t> codes = randomCodes(bits);
  KernelLayoutSpec spec{KernelLayoutKind::DecodeGemv, bits, false};
  for (auto _ : state) {
    auto packed = packKernelLayout(spec, codes.data(), kRows, kCols);
    if (!packed)
      state.SkipWithError(packed.message().c_str());
    benchmark::DoNotOptimize(packed);
  }
  state.SetItemsProcessed(state.iterations() * kRows * kCols);
}

void BM_UnpackDecodeGemv(benchmark::State &state) {
  const unsigned bits = unsigned(state.range(0));
  std::vector<int32_t> codes = randomCodes(bits);
  KernelLayoutSpec spec{KernelLayoutKind::DecodeGemv, bits, false};
  auto packed = packKernelLayout(spec, codes.data(), kRows, kCols);
  if (!packed) {
    state.SkipWithError(packed.message().c_str());
    return;
  }
  for (auto _ : state) {
    auto unpacked =
        unpackKernelLayout(spec, packed->data(), packed->size(), kRows, kCols);
    if (!unpacked)
      state.SkipWithError(unpacked.message().c_str());
    benchmark::DoNotOptimize(unpacked);
  }
  state.SetItemsProcessed(state.iterations() * kRows * kCols);
}

} // namespace

BENCHMARK(BM_CopyCodes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PackDecodeGemv)->Arg(4)->Arg(6)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_UnpackDecodeGemv)->Arg(4)->Arg(6)->Unit(benchmark::kMillisecond);
