//===- RuntimeTestArtifact.h - Artifacts for the runtime tests --*- C++ -*-===//
//
// Writes a complete artifact the way `qtc compile --target host` lays it out
// (docs/kernel-abi.md): W4 group-32 linears packed in the decode_gemv layout,
// one op binding and one kernel entry per linear, a graph, and
// kernels-host.so -- here the test kernels of TestHostKernels.c, built by
// CMake. Hooks edit manifest.json's records after the writer published
// them (the writer refuses a record its reader would), so each test can
// corrupt exactly one field.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TEST_RUNTIME_TESTARTIFACT_H
#define QTENSOR_TEST_RUNTIME_TESTARTIFACT_H

#include "qtensor/Formats/ArtifactWriter.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Kernels/Admission.h"
#include "qtensor/Kernels/Registry.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Runtime/Loader.h"

#include "TestTempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace rttest {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace qtensor;

/// A fresh temporary directory, removed with its contents.
struct TempDir : qtensor::test::TempDir {
  TempDir() : qtensor::test::TempDir("qtensor-runtime-test") {}
};

inline std::vector<uint8_t> readBytes(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

/// The published file whose name starts with `stem` + "." (the writer
/// inserts a content hash: "weights.<hash>.safetensors").
inline fs::path publishedFile(const TempDir &dir, const std::string &stem) {
  for (const auto &e : fs::directory_iterator(dir / ""))
    if (e.path().filename().string().rfind(stem + ".", 0) == 0)
      return e.path();
  ADD_FAILURE() << "no published file " << stem << ".*";
  return dir / stem;
}

/// Flips one bit of a published file, keeping its size.
inline void corrupt(const fs::path &file, size_t offset) {
  std::vector<uint8_t> bytes = readBytes(file);
  ASSERT_LT(offset, bytes.size());
  bytes[offset] ^= 0x40;
  fs::permissions(file, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(bytes.data()),
             std::streamsize(bytes.size()));
}

/// The test kernels' shared object, built by CMake.
inline std::vector<uint8_t> testKernelLibrary() {
  return readBytes(QTENSOR_TEST_HOST_KERNELS);
}

struct TestLinear {
  std::string name = "layer.a.weight";
  int64_t n = 6, k = 256;
  /// Unsigned codes with u8 zero-points, a bias (stored f16), f32 output.
  bool asymmetric = false;
  /// Stored in the logical layout: the loader repacks it to decode_gemv.
  bool storedLogical = false;
  std::string symbol; ///< default: the kernel matching `asymmetric`
};

struct TestArtifactSpec {
  std::vector<TestLinear> linears{TestLinear{}};
  std::string architecture = "test";
  std::string registryId = "affine_gemv_decode_host";
  /// The bindings' fallback policy (the one the artifact was compiled with).
  std::string fallbackPolicy = "forbid";
  /// The bindings select the full-dequant fallback (compile-time fallback).
  bool compiledFallback = false;
  /// Edits manifest.json's kernel record of each linear after the artifact
  /// is written (the writer itself refuses a record its reader would).
  std::function<void(json &record, size_t linear)> editKernelRecord;
  /// Edits manifest.json's `bindings` array after the artifact is written.
  std::function<void(json &bindings)> editBindings;
};

/// Logical codes, scales and zero-points of linear `l`, deterministic.
struct TestWeights {
  QuantizedTensorDescriptor logical;
  std::vector<int32_t> codes;
  std::vector<uint16_t> scales;
  std::vector<uint8_t> zeros;
  std::vector<uint16_t> bias;
};

inline TestWeights makeWeights(const TestLinear &l) {
  TestWeights w;
  QuantizedTensorDescriptor &t = w.logical;
  t.shape = {l.n, l.k};
  t.elementType = FloatType::F16;
  AffineDescriptor &d = t.descriptor;
  d.code = {4, !l.asymmetric};
  d.scheme = l.asymmetric ? QuantScheme::Asymmetric : QuantScheme::Symmetric;
  d.zeroPoint = l.asymmetric ? ZeroPointKind::Integer : ZeroPointKind::None;
  d.granularity = Granularity::Group;
  d.axis = 1;
  d.groupSize = 32;
  d.scaleType = FloatType::F16;
  int64_t groups = (l.k + 31) / 32;
  for (int64_t r = 0; r < l.n; ++r)
    for (int64_t c = 0; c < l.k; ++c) {
      int32_t v = int32_t((r * 7 + c * 3 + (c / 5)) % 16);
      w.codes.push_back(l.asymmetric ? v : v - 8);
    }
  for (int64_t r = 0; r < l.n; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      w.scales.push_back(floatToHalfBits(0.0078125f * float(1 + (r + g) % 5)));
      if (l.asymmetric)
        w.zeros.push_back(uint8_t((r + 3 * g) % 16));
    }
  if (l.asymmetric)
    for (int64_t r = 0; r < l.n; ++r)
      w.bias.push_back(floatToHalfBits(0.25f * float(r % 3) - 0.25f));
  return w;
}

/// The kernel record of `l`'s decode GEMV as qtc compile writes it
/// (docs/kernel-abi.md), T buckets included; every bucket calls `symbol`.
inline json kernelRecordOf(const TestLinear &l, size_t index,
                           const std::string &registryId) {
  int64_t groups = (l.k + 31) / 32, words = (l.k + 31) / 32 * 4;
  const char *out = l.asymmetric ? "f32" : "f16";
  json args = json::array();
  args.push_back({{"name", "x"}, {"dtype", "f16"}, {"shape", {-1, l.k}}});
  args.push_back({{"name", "w"}, {"dtype", "i32"}, {"shape", {l.n, words}}});
  args.push_back({{"name", "s"}, {"dtype", "f16"}, {"shape", {l.n, groups}}});
  if (l.asymmetric) {
    args.push_back({{"name", "z"}, {"dtype", "u8"}, {"shape", {l.n, groups}}});
    args.push_back({{"name", "b"}, {"dtype", out}, {"shape", {l.n}}});
  }
  args.push_back({{"name", "y"}, {"dtype", out}, {"shape", {-1, l.n}}});
  std::string symbol = !l.symbol.empty() ? l.symbol
                       : l.asymmetric
                           ? "_mlir_ciface_test_gemv_w4a_g32_bias_f32"
                           : "_mlir_ciface_test_gemv_w4s_g32_f16";
  json entries = json::array();
  for (auto [lo, hi] : {std::pair{1, 1}, {2, 2}, {3, 4}, {5, 8}, {9, 16}})
    entries.push_back({{"symbol", symbol}, {"tokens", {lo, hi}}});
  return {{"id", "test_gemv_" + std::to_string(index)},
          {"file", "kernels-host.so"},
          {"registry_id", registryId},
          {"target", "host"},
          {"format", "host_so"},
          {"phase", "decode"},
          {"tokens", {1, 16}},
          {"n", l.n},
          {"k", l.k},
          {"activation", "f16"},
          {"output", out},
          {"bias", l.asymmetric},
          {"layout", "decode_gemv"},
          {"code", {{"bits", 4}, {"signed", !l.asymmetric}}},
          {"group_size", 32},
          {"scale", "f16"},
          {"entries", entries},
          {"args", args},
          {"split_k", 1},
          {"zero_output", false},
          {"cpu", "generic"}, // testKernelLibrary() is built by the test
          {"ops", {l.name}}};
}

/// The op binding of `l` as qtc compile writes it: single rank, decode
/// only, the signature its kernel record was admitted for.
inline json bindingOf(const TestLinear &l, const std::string &kernel,
                      bool fallback, const std::string &policy) {
  return {
      {"op", l.name},
      {"n", l.n},
      {"k", l.k},
      {"topology", "single"},
      {"ranks", {{{"n_offset", 0}, {"n", l.n}, {"k_offset", 0}, {"k", l.k}}}},
      {"activation", "f16"},
      {"accumulator", "f32"},
      {"output", l.asymmetric ? "f32" : "f16"},
      {"epilogue", l.asymmetric ? "bias" : "none"},
      {"phases",
       {{{"phase", "decode"}, {"kernel", kernel}, {"fallback", fallback}}}},
      {"fallback_policy", policy}};
}

inline artifact::Manifest baseManifest(const std::string &architecture) {
  artifact::Manifest m;
  m.model.architecture = architecture;
  m.model.name = "runtime-test";
  m.quantization.family = "affine_w4a16";
  m.provenance.sourceCheckpointSha256 = std::string(64, 'c');
  m.provenance.converterName = "runtime-tests";
  return m;
}

/// Writes the artifact into `dir`; gtest failures on any writer error.
inline void writeTestArtifact(const std::string &dir,
                              const TestArtifactSpec &spec) {
  std::deque<std::vector<uint8_t>> keep;
  auto bytesOf = [&](const void *p, size_t n) -> std::vector<uint8_t> & {
    keep.emplace_back(static_cast<const uint8_t *>(p),
                      static_cast<const uint8_t *>(p) + n);
    return keep.back();
  };
  artifact::Manifest base = baseManifest(spec.architecture);
  std::string graph;
  for (size_t i = 0; i < spec.linears.size(); ++i) {
    const TestLinear &l = spec.linears[i];
    auto binding = artifact::opBindingFromJson(
        bindingOf(
            l, spec.compiledFallback ? "full_dequant_linear" : spec.registryId,
            spec.compiledFallback, spec.fallbackPolicy),
        "test binding");
    ASSERT_TRUE(bool(binding)) << binding.message();
    base.bindings.push_back(binding.take());
    if (!spec.compiledFallback) {
      auto record = artifact::kernelEntryFromJson(
          kernelRecordOf(l, i, spec.registryId), "test record");
      ASSERT_TRUE(bool(record)) << record.message();
      base.kernels.push_back(record.take());
    }
    graph +=
        "%w" + std::to_string(i) + " = qtensor.weight \"" + l.name + "\"\n";
  }

  artifact::ArtifactWriter writer(base);
  for (const TestLinear &l : spec.linears) {
    TestWeights w = makeWeights(l);
    QuantizedTensorDescriptor stored = w.logical;
    if (!l.storedLogical) {
      auto layout = kernels::kernelLayoutDescriptor(
          kernels::builtinRegistry(), {"decode_gemv", 1, "offset_binary"}, 4,
          stored.shape);
      ASSERT_TRUE(bool(layout)) << layout.message();
      stored.layout = *layout;
    }
    auto packed = artifact::packStoredCodes(stored, w.codes);
    ASSERT_TRUE(bool(packed)) << packed.message();
    auto codeShape = artifact::storedCodeShape(stored);
    ASSERT_TRUE(bool(codeShape)) << codeShape.message();
    std::vector<int64_t> qshape = {l.n, (l.k + 31) / 32};
    std::vector<uint8_t> &codes = bytesOf(packed->data(), packed->size());
    std::vector<uint8_t> &scales =
        bytesOf(w.scales.data(), 2 * w.scales.size());
    std::optional<artifact::TensorData> zeros;
    if (l.asymmetric) {
      std::vector<uint8_t> &z = bytesOf(w.zeros.data(), w.zeros.size());
      zeros = artifact::TensorData{l.name + ".zeros", safetensors::DType::U8,
                                   qshape, z.data(), z.size()};
    }
    Status s =
        writer.addQuantizedTensor("weights.safetensors", l.name, stored,
                                  {l.name + ".codes", safetensors::DType::U8,
                                   *codeShape, codes.data(), codes.size()},
                                  {l.name + ".scales", safetensors::DType::F16,
                                   qshape, scales.data(), scales.size()},
                                  zeros);
    ASSERT_TRUE(bool(s)) << s.message();
    if (l.asymmetric) {
      std::vector<uint8_t> &b = bytesOf(w.bias.data(), 2 * w.bias.size());
      std::string biasName =
          l.name.substr(0, l.name.size() - std::string(".weight").size()) +
          ".bias";
      s = writer.addPlainTensor(
          "weights.safetensors",
          {biasName, safetensors::DType::F16, {l.n}, b.data(), b.size()});
      ASSERT_TRUE(bool(s)) << s.message();
    }
  }
  auto text = [](const std::string &t) {
    return std::vector<uint8_t>(t.begin(), t.end());
  };
  ASSERT_TRUE(bool(
      writer.addFile("graph.mlir", artifact::FileRole::Graph, text(graph))));
  if (!spec.compiledFallback)
    ASSERT_TRUE(bool(writer.addFile(
        "kernels-host.so", artifact::FileRole::Kernel, testKernelLibrary())));
  auto written = writer.write(dir);
  ASSERT_TRUE(bool(written)) << written.message();
  if ((spec.editKernelRecord && !spec.compiledFallback) || spec.editBindings) {
    const std::string path = dir + "/" + artifact::kManifestFileName;
    json m;
    {
      std::ifstream in(path);
      m = json::parse(in);
    }
    if (spec.editKernelRecord && !spec.compiledFallback)
      for (size_t i = 0; i < spec.linears.size(); ++i)
        spec.editKernelRecord(m["kernels"][i], i);
    if (spec.editBindings)
      spec.editBindings(m["bindings"]);
    std::filesystem::remove(path);
    std::ofstream(path) << m.dump(2);
  }
}

/// The test artifacts' host code is the test's own (TestHostKernels.c):
/// trusted, so loaded as is (no compiler here to rebuild it).
inline runtime::LoadOptions hostOptions() {
  runtime::LoadOptions o;
  o.backend = runtime::BackendChoice::Host;
  o.code.trustArtifactCode = true;
  return o;
}

/// Deterministic f16 activations in [-1, 1).
inline runtime::HostTensor activations(int64_t t, int64_t k, uint32_t seed) {
  std::vector<double> v(size_t(t * k));
  uint32_t x = seed * 2654435761u + 7;
  for (double &d : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    d = double(x % 2048) / 1024.0 - 1.0;
  }
  return *runtime::HostTensor::fromDoubles(FloatType::F16, t, k, v);
}

/// Writes the artifact of `spec` into `dir` and loads it.
inline Expected<std::unique_ptr<runtime::LoadedModel>>
loadSpec(const TempDir &dir, const TestArtifactSpec &spec,
         runtime::LoadOptions o = hostOptions()) {
  writeTestArtifact(dir.str(), spec);
  return runtime::loadModel(dir.str(), o);
}

} // namespace rttest

#endif // QTENSOR_TEST_RUNTIME_TESTARTIFACT_H
