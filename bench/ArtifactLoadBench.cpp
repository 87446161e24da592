//===- ArtifactLoadBench.cpp - Loading a compiled artifact ----------------===//
//
// Three ways to get a compiled artifact into memory, in the same run:
//   PlainRead   read() every file the manifest lists (no checks at all): the
//               baseline a naive loader pays;
//   OpenVerify  openArtifact: bounded manifest parse, every file's size and
//               SHA-256, every shard's header and inventory, mapped;
//   LoadModel   the runtime's whole load order for the host backend
//               (docs/runtime.md): open and verify, plan and re-admit
//               kernels, load kernels-host.so, materialize (no warmup).
// and, for manifest.json alone:
//   ManifestJson     nlohmann's parse of its bytes: the baseline;
//   ManifestRecords  parseManifest: that parse, every record read with its
//                    typed reader, and every rule of validateManifest.
// The artifact comes from QTENSOR_BENCH_ARTIFACT (scripts/bench.sh load
// compiles one); the page cache is warm for all three.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/Artifact.h"
#include "qtensor/Formats/Manifest.h"
#include "qtensor/Runtime/Loader.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

const char *artifactDir() { return std::getenv("QTENSOR_BENCH_ARTIFACT"); }

void BM_PlainRead(benchmark::State &state) {
  const char *dir = artifactDir();
  if (!dir) {
    state.SkipWithError("set QTENSOR_BENCH_ARTIFACT (scripts/bench.sh load)");
    return;
  }
  auto a = qtensor::artifact::openArtifact(dir);
  if (!a) {
    state.SkipWithError(a.message().c_str());
    return;
  }
  std::vector<std::string> paths;
  for (const auto &f : a->manifest().files)
    paths.push_back(std::string(dir) + "/" + f.path);
  std::vector<char> buffer;
  uint64_t bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (const std::string &p : paths) {
      int fd = ::open(p.c_str(), O_RDONLY);
      if (fd < 0) {
        state.SkipWithError(("cannot open " + p).c_str());
        return;
      }
      off_t size = ::lseek(fd, 0, SEEK_END);
      buffer.resize(static_cast<size_t>(size));
      ssize_t got = ::pread(fd, buffer.data(), buffer.size(), 0);
      ::close(fd);
      bytes += got > 0 ? static_cast<uint64_t>(got) : 0;
      benchmark::DoNotOptimize(buffer.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}

void BM_OpenVerify(benchmark::State &state) {
  const char *dir = artifactDir();
  if (!dir) {
    state.SkipWithError("set QTENSOR_BENCH_ARTIFACT (scripts/bench.sh load)");
    return;
  }
  for (auto _ : state) {
    auto a = qtensor::artifact::openArtifact(dir);
    if (!a) {
      state.SkipWithError(a.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(a->manifest().files.size());
  }
}

void BM_LoadModel(benchmark::State &state) {
  const char *dir = artifactDir();
  if (!dir) {
    state.SkipWithError("set QTENSOR_BENCH_ARTIFACT (scripts/bench.sh load)");
    return;
  }
  qtensor::runtime::LoadOptions options;
  options.backend = qtensor::runtime::BackendChoice::Host;
  options.warmup = false;
  // The artifact is the one scripts/bench.sh just compiled here, and this
  // MLIR-free program has no kernel builder: its own code is trusted.
  options.code.trustArtifactCode = true;
  for (auto _ : state) {
    auto model = qtensor::runtime::loadModel(dir, options);
    if (!model) {
      state.SkipWithError(model.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(model->get());
  }
}

/// manifest.json's bytes, or empty (the benchmark skips).
std::string manifestText(benchmark::State &state) {
  const char *dir = artifactDir();
  if (!dir) {
    state.SkipWithError("set QTENSOR_BENCH_ARTIFACT (scripts/bench.sh load)");
    return {};
  }
  std::ifstream in(std::string(dir) + "/manifest.json", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (text.empty())
    state.SkipWithError("cannot read manifest.json");
  return text;
}

void BM_ManifestJson(benchmark::State &state) {
  const std::string text = manifestText(state);
  if (text.empty())
    return;
  for (auto _ : state)
    benchmark::DoNotOptimize(nlohmann::json::parse(text).size());
  state.SetBytesProcessed(int64_t(text.size()) * state.iterations());
}

void BM_ManifestRecords(benchmark::State &state) {
  const std::string text = manifestText(state);
  if (text.empty())
    return;
  for (auto _ : state) {
    auto m = qtensor::artifact::parseManifest(text, "manifest.json");
    if (!m) {
      state.SkipWithError(m.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(m->bindings.size());
  }
  state.SetBytesProcessed(int64_t(text.size()) * state.iterations());
}

} // namespace

BENCHMARK(BM_ManifestJson)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ManifestRecords)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlainRead)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OpenVerify)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadModel)->Unit(benchmark::kMillisecond);
