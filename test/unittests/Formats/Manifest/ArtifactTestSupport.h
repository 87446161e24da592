//===- ArtifactTestSupport.h - Helpers for the artifact tests ---*- C++ -*-===//
#ifndef QTENSOR_TEST_ARTIFACT_SUPPORT_H
#define QTENSOR_TEST_ARTIFACT_SUPPORT_H

#include "qtensor/Formats/Artifact.h"
#include "qtensor/Formats/ArtifactWriter.h"
#include "qtensor/Formats/Manifest.h"

#include "TestTempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace arttest {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace qtensor;
using namespace qtensor::artifact;
using safetensors::DType;

/// A fresh directory under the system temporary directory, removed with
/// everything in it when the test ends.
struct TempDir : qtensor::test::TempDir {
  TempDir() : qtensor::test::TempDir("qtensor-artifact-test") {}
};

inline std::string readText(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void writeText(const fs::path &p, const std::string &text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

/// Regular entries of a directory, sorted.
inline std::set<std::string> listNames(const fs::path &dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    names.insert(e.path().filename().string());
  return names;
}

inline std::string hexOf(char c) { return std::string(64, c); }

/// Everything except files and tensors, with every optional field set.
inline Manifest baseManifest() {
  Manifest m;
  m.model.architecture = "llama";
  m.model.name = "tiny-llama";
  m.model.revision = "r1";
  m.model.tokenizerSha256 = hexOf('a');
  m.quantization.family = "affine_w4a16";
  m.quantization.config = {{"bits", 4}, {"group_size", 32}, {"sym", false}};
  m.quantization.configSha256 = hexOf('b');
  m.topology = {1, 1, 1};
  m.provenance.sourceCheckpointSha256 = hexOf('c');
  m.provenance.converterName = "qtc";
  m.provenance.converterRevision = "0123abc";
  m.provenance.createdBy = "artifact-tests";
  m.provenance.calibrationManifestSha256 = hexOf('d');
  return m;
}

/// 4-bit asymmetric groupwise (axis 1, group 32) over [rows, cols].
inline QuantizedTensorDescriptor groupDescriptor(int64_t rows, int64_t cols) {
  QuantizedTensorDescriptor t;
  t.shape = {rows, cols};
  t.elementType = FloatType::F16;
  t.descriptor.code = {4, false};
  t.descriptor.scheme = QuantScheme::Asymmetric;
  t.descriptor.zeroPoint = ZeroPointKind::Integer;
  t.descriptor.granularity = Granularity::Group;
  t.descriptor.axis = 1;
  t.descriptor.groupSize = 32;
  t.descriptor.scaleType = FloatType::F16;
  return t;
}

inline QuantizedTensor quantizedParts(const std::string &name, int64_t rows,
                                      int64_t cols) {
  QuantizedTensor q;
  q.logical = groupDescriptor(rows, cols);
  q.codes = {name + ".codes", DType::U8, {rows, (cols * 4 + 7) / 8}};
  q.scales = {name + ".scales", DType::F16, {rows, (cols + 31) / 32}};
  q.zeros = StoredTensor{name + ".zeros", DType::U8, {rows, (cols + 31) / 32}};
  return q;
}

/// An sm_80 decode GEMV record for `op`, a quantizedParts(op, rows, cols)
/// tensor: u4 codes with u8 zero-points, group 32, f16 scales.
inline KernelEntry gemvEntry(const std::string &id, const std::string &file,
                             const std::string &op, int64_t rows,
                             int64_t cols) {
  KernelEntry k;
  k.id = id;
  k.file = file;
  k.registryId = "affine_gemv_decode_sm80";
  k.target = *kernels::parseTarget("sm_80");
  k.format = KernelFormat::Ptx;
  k.phase = kernels::Phase::Decode;
  k.tokens = {1, 16};
  k.n = rows;
  k.k = cols;
  k.layout = "decode_gemv";
  k.codeSigned = false;
  k.groupSize = 32;
  k.entries = {{"qt_decode", {1, 16}}};
  const int64_t groups = (cols + 31) / 32;
  k.args = {{ArgRole::X, ArgType::F16, {kDynamic, cols}},
            {ArgRole::W, ArgType::I32, {rows, groups * 4}},
            {ArgRole::S, ArgType::F16, {rows, groups}},
            {ArgRole::Z, ArgType::U8, {rows, groups}},
            {ArgRole::Y, ArgType::F16, {kDynamic, rows}}};
  LaunchConfig launch;
  launch.grid = {2, 1, 1};
  launch.block = {128, 1, 1};
  k.launch = launch;
  k.ops = {op};
  return k;
}

/// A complete, valid manifest with every optional field present (files are
/// not on disk: for parser tests).
inline Manifest fullManifest() {
  Manifest m = baseManifest();
  m.files = {
      {"model-00001.safetensors", 1000, hexOf('1'), FileRole::Shard},
      {"graph.mlir", 10, hexOf('2'), FileRole::Graph},
      {"kernels/gemm_w4.ptx", 20, hexOf('3'), FileRole::Kernel},
      {"trace.json", 30, hexOf('4'), FileRole::Trace},
  };
  TensorEntry q;
  q.name = "layers.0.mlp.up.weight";
  q.file = "model-00001.safetensors";
  q.data = quantizedParts(q.name, 8, 64);
  TensorEntry p;
  p.name = "norm.weight";
  p.file = "model-00001.safetensors";
  p.data = PlainTensor{DType::F16, {64}};
  m.tensors = {q, p};
  m.kernels = {
      gemvEntry("gemv_w4a16_g32", "kernels/gemm_w4.ptx", q.name, 8, 64)};
  OpBinding b;
  b.op = q.name;
  b.n = 8;
  b.k = 64;
  b.ranks = {{0, 8, 0, 64}};
  b.phases = {{kernels::Phase::Decode, "affine_gemv_decode_sm80", false}};
  m.bindings = {b};
  return m;
}

/// `j` (a full manifest's JSON) with tensor 0 turned into ggml Q4_K kept as
/// stored: nested qparams, both levels declared.
inline json withNestedQ4K(json j) {
  json &t = j["tensors"][0];
  t["logical"]["shape"] = {8, 512};
  json &d = t["logical"]["descriptor"];
  d["zero_point"] = "min";
  d["scale_dtype"] = "f32";
  d["granularity"] = {
      {"kind", "group"}, {"axis", 1}, {"group_size", 32}, {"tail", "exact"}};
  d["nested"] = {{"scale_code", {{"bits", 6}, {"signed", false}}},
                 {"min_code", {{"bits", 6}, {"signed", false}}},
                 {"super_group_size", 256},
                 {"super_dtype", "f16"}};
  t["codes"]["shape"] = {8, 256};
  t["scales"] = {{"tensor", "w.scales"}, {"dtype", "U8"}, {"shape", {8, 16}}};
  t["zeros"] = {{"tensor", "w.zeros"}, {"dtype", "U8"}, {"shape", {8, 16}}};
  t["super_scales"] = {
      {"tensor", "w.super_scales"}, {"dtype", "F16"}, {"shape", {8, 2}}};
  t["super_zeros"] = {
      {"tensor", "w.super_zeros"}, {"dtype", "F16"}, {"shape", {8, 2}}};
  return j;
}

/// A mixed_2416 entry's record (no data): [16, 128] with G1 = 64 (32
/// groups, 16 of them W4), G2 = 8, f16 second level and 16 outliers.
inline TensorEntry mixedTensorEntry(const std::string &name,
                                    const std::string &file) {
  Mixed2416Tensor t;
  t.logical.shape = {16, 128};
  t.logical.secondGroupSize = 8;
  auto stored = [&](const char *key, DType dtype, std::vector<int64_t> shape) {
    return StoredTensor{name + "." + key, dtype, std::move(shape)};
  };
  t.precisionMap = stored("precision_map", DType::U8, {4});
  t.w2Codes = stored("w2_codes", DType::U8, {16 * 16});
  t.w4Codes = stored("w4_codes", DType::U8, {16 * 32});
  t.firstScaleCodes = stored("first_scale_codes", DType::U8, {16, 2});
  t.firstZeroPoints = stored("first_zero_points", DType::U8, {16, 2});
  t.secondScales = stored("second_scales", DType::F16, {2, 2});
  t.secondZeroPoints = stored("second_zero_points", DType::F16, {2, 2});
  t.sparseValues = stored("sparse_values", DType::F16, {16});
  t.sparseColumns = stored("sparse_columns", DType::I32, {16});
  t.sparseRowPointers = stored("sparse_row_pointers", DType::I32, {17});
  TensorEntry e;
  e.name = name;
  e.file = file;
  e.data = std::move(t);
  return e;
}

/// Deterministic pseudo-random bytes.
inline std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = static_cast<uint8_t>(x);
  }
  return out;
}

/// Source bytes for an artifact and the writer that borrows them. `scale`
/// multiplies the plain tensors' sizes (1 = a few KiB).
class ArtifactFixture {
public:
  explicit ArtifactFixture(uint32_t seed = 1, size_t shards = 2,
                           size_t plainBytes = 4096)
      : writer(baseManifest()) {
    for (size_t s = 0; s < shards; ++s) {
      std::string shard = "model-0000" + std::to_string(s + 1) + ".safetensors";
      std::string name = "layers." + std::to_string(s) + ".mlp.up.weight";
      QuantizedTensor q = quantizedParts(name, 8, 64);
      auto &codes = keep(pattern(8 * 32, seed + 10 * s));
      auto &scales = keep(pattern(8 * 2 * 2, seed + 10 * s + 1));
      auto &zeros = keep(pattern(8 * 2, seed + 10 * s + 2));
      expect(writer.addQuantizedTensor(
          shard, name, q.logical,
          {q.codes.tensor, q.codes.dtype, q.codes.shape, codes.data(),
           codes.size()},
          {q.scales.tensor, q.scales.dtype, q.scales.shape, scales.data(),
           scales.size()},
          TensorData{q.zeros->tensor, q.zeros->dtype, q.zeros->shape,
                     zeros.data(), zeros.size()}));
      auto &plain = keep(pattern(plainBytes, seed + 10 * s + 3));
      std::string plainName = "layers." + std::to_string(s) + ".norm.weight";
      expect(writer.addPlainTensor(shard, {plainName,
                                           DType::U8,
                                           {static_cast<int64_t>(plainBytes)},
                                           plain.data(),
                                           plain.size()}));
    }
    expect(writer.addFile("graph.mlir", FileRole::Graph,
                          pattern(100, seed + 1000)));
    expect(writer.addFile("trace.json", FileRole::Trace,
                          pattern(50, seed + 2000)));
  }

  ArtifactWriter writer;

private:
  std::vector<uint8_t> &keep(std::vector<uint8_t> bytes) {
    buffers.push_back(std::make_unique<std::vector<uint8_t>>(std::move(bytes)));
    return *buffers.back();
  }
  static void expect(const Status &s) { EXPECT_TRUE(s) << s.message(); }
  std::vector<std::unique_ptr<std::vector<uint8_t>>> buffers;
};

/// Expects `s` to fail with a message containing `needle`.
#define EXPECT_ERROR_CONTAINS(expr, needle)                                    \
  do {                                                                         \
    auto &&qtensorResult = (expr);                                             \
    ASSERT_FALSE(qtensorResult) << "expected an error containing: " << needle; \
    EXPECT_NE(qtensorResult.message().find(needle), std::string::npos)         \
        << "message: " << qtensorResult.message()                              \
        << "\nexpected to contain: " << needle;                                \
  } while (0)

} // namespace arttest

#endif // QTENSOR_TEST_ARTIFACT_SUPPORT_H
