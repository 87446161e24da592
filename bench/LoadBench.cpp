//===- LoadBench.cpp - Opening a multi-GB safetensors file ----------------===//
//
// Load = open + validate the header + map (payloads are not copied), against
// a plain sequential read() of the same file in the same run. A third case
// touches one byte per page of every tensor after opening, which is what the
// first use of every weight costs through the mapping.
//
// The file (QTENSOR_BENCH_LOAD_GB GiB, default 2, 256 tensors) is written once
// under QTENSOR_BENCH_DIR (default /tmp) and removed at exit. The page cache
// is warm for all three cases (the file was just written); see
// docs/benchmarks.md.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/Safetensors.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace qtensor;

namespace {
struct BenchFile {
  std::string path;
  uint64_t bytes = 0;

  BenchFile() {
    const char *dir = std::getenv("QTENSOR_BENCH_DIR");
    const char *gb = std::getenv("QTENSOR_BENCH_LOAD_GB");
    uint64_t gib = gb ? std::strtoull(gb, nullptr, 10) : 2;
    path = std::string(dir ? dir : "/tmp") + "/qtensor-bench-load-" +
           std::to_string(getpid()) + ".safetensors";
    constexpr int kTensors = 256;
    uint64_t perTensor = (gib << 30) / kTensors;
    std::vector<uint8_t> payload(perTensor);
    for (size_t i = 0; i < payload.size(); ++i)
      payload[i] = static_cast<uint8_t>(i * 2654435761u >> 24);
    safetensors::SafetensorsWriter writer(
        {safetensors::SafetensorsWriter::kPageSize, {}});
    for (int t = 0; t < kTensors; ++t) {
      Status s =
          writer.addTensorRef("model.layers." + std::to_string(t) + ".weight",
                              safetensors::DType::U8, {int64_t(perTensor)},
                              payload.data(), payload.size());
      if (!s) {
        std::fprintf(stderr, "bench: %s\n", s.message().c_str());
        std::exit(1);
      }
    }
    auto written = writer.writeFile(path);
    if (!written) {
      std::fprintf(stderr, "bench: %s\n", written.message().c_str());
      std::exit(1);
    }
    bytes = *written;
  }
  ~BenchFile() { std::remove(path.c_str()); }
};

const BenchFile &benchFile() {
  static BenchFile file;
  return file;
}

void BM_Load_SequentialRead(benchmark::State &state) {
  const BenchFile &file = benchFile();
  std::vector<char> buffer(16 << 20);
  for (auto _ : state) {
    int fd = open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
    uint64_t total = 0;
    ssize_t n;
    while ((n = read(fd, buffer.data(), buffer.size())) > 0)
      total += n;
    close(fd);
    if (total != file.bytes)
      state.SkipWithError("short read");
    benchmark::DoNotOptimize(total);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * file.bytes);
}
BENCHMARK(BM_Load_SequentialRead)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Load_OpenValidateMap(benchmark::State &state) {
  const BenchFile &file = benchFile();
  for (auto _ : state) {
    auto opened = safetensors::SafetensorsFile::open(file.path);
    if (!opened) {
      state.SkipWithError(opened.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(opened->tensors().data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * file.bytes);
}
BENCHMARK(BM_Load_OpenValidateMap)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Load_OpenValidateMapTouchPages(benchmark::State &state) {
  const BenchFile &file = benchFile();
  long page = sysconf(_SC_PAGESIZE);
  for (auto _ : state) {
    auto opened = safetensors::SafetensorsFile::open(file.path);
    if (!opened) {
      state.SkipWithError(opened.message().c_str());
      break;
    }
    uint64_t sum = 0;
    for (const safetensors::TensorView &view : opened->tensors())
      for (uint64_t off = 0; off < view.byteSize(); off += page)
        sum += view.data[off];
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * file.bytes);
}
BENCHMARK(BM_Load_OpenValidateMapTouchPages)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
} // namespace
