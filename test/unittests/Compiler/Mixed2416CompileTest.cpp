//===- Mixed2416CompileTest.cpp - qtc compile --quant mixed2416 ------------===//
//
// The compiler side of the mixed 2/4/16 family (seed M8.9 0x07D):
//   - `--quant mixed2416[:budget=B]` and the per-linear descriptor (G1, G2,
//     types), with errors that name the tensor;
//   - the streams as stored: their bytes add up to the converter's rates;
//   - a whole compile of the corpus tiny llama (F32 weights): every linear a
//     mixed_2416 tensor whose manifest streams add up to the report's
//     bytes, one decode record per shape with 16 entries, bindings for
//     decode and prefill, and the trusted rebuild of the records (host
//     symbols, the GPU's PTX byte for byte).
// The compile runs the parity ladder, which needs the runtime's side of
// the family: the test reads the manifest whether it was published or
// withdrawn (manifest.rejected.json).
//
//===----------------------------------------------------------------------===//

#include "ExportMixed2416.h"
#include "Quantize.h"

#include "TestTempDir.h"

#include "qtensor/Compiler/Compile.h"
#include "qtensor/Compiler/TrustedCode.h"
#include "qtensor/Formats/Manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

using namespace qtensor;
using namespace qtensor::compiler;
using json = nlohmann::json;

namespace {

const std::string kCorpusF32 =
    std::string(QTENSOR_CORPUS_DIR) + "/gguf/tiny_llama/tiny-llama-F32.gguf";

SourceLinear floatLinear(const std::string &name, int64_t n, int64_t k,
                         const std::string &dtype = "F16") {
  SourceLinear l;
  l.name = name;
  l.role = "q_proj";
  l.weight.name = name;
  l.weight.dtype = dtype;
  l.weight.shape = {n, k};
  return l;
}

std::string fileText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Compiles the corpus tiny llama under --quant mixed2416 for `target`;
/// returns the manifest published or withdrawn by the ladder.
json compileMixed(const std::string &target, const std::string &dir) {
  CompileRequest request;
  request.input = kCorpusF32;
  request.outputDir = dir;
  request.target = target;
  request.quant = "mixed2416:budget=3.5";
  auto result = compileArtifact(request);
  // Until the runtime runs mixed_2416 tensors the ladder withdraws the
  // manifest; either way the export is complete.
  if (!result)
    EXPECT_NE(result.message().find("parity ladder"), std::string::npos)
        << result.message();
  const std::string published = dir + "/manifest.json";
  return json::parse(fileText(std::filesystem::exists(published)
                                  ? published
                                  : dir + "/manifest.rejected.json"));
}

json reportOf(const std::string &dir, const json &manifest) {
  for (const json &f : manifest["files"])
    if (f["role"] == "report")
      return json::parse(fileText(dir + "/" + f["path"].get<std::string>()));
  ADD_FAILURE() << "no report listed";
  return json();
}

} // namespace

TEST(Mixed2416Quant, ParsesTheBudget) {
  auto spec = parseQuantSpec("mixed2416");
  ASSERT_TRUE(bool(spec)) << spec.message();
  EXPECT_EQ(spec->mixed2416Budget, std::optional<double>(3.0));
  spec = parseQuantSpec("mixed2416:budget=2.75");
  ASSERT_TRUE(bool(spec)) << spec.message();
  EXPECT_EQ(spec->mixed2416Budget, std::optional<double>(2.75));
  EXPECT_FALSE(parseQuantSpec("w4a16:g128")->mixed2416Budget);
  auto errorOf = [](const char *text) {
    auto s = parseQuantSpec(text);
    EXPECT_FALSE(bool(s)) << text;
    return s ? std::string() : s.message();
  };
  EXPECT_EQ(errorOf("mixed2416:budget=0"),
            "--quant mixed2416:budget=0: budget \"0\" is not a positive "
            "finite number of bits per weight");
  EXPECT_EQ(errorOf("mixed2416:budget=inf"),
            "--quant mixed2416:budget=inf: budget \"inf\" is not a positive "
            "finite number of bits per weight");
  EXPECT_EQ(errorOf("mixed2416:budget=3x"),
            "--quant mixed2416:budget=3x: budget \"3x\" is not a positive "
            "finite number of bits per weight");
  EXPECT_EQ(errorOf("mixed2416:g64"),
            "--quant mixed2416:g64: unexpected \"g64\"; expected "
            "mixed2416[:budget=B]");
  EXPECT_EQ(errorOf("mixed2416:budget=3:x"),
            "--quant mixed2416:budget=3:x: expected mixed2416[:budget=B]");
  EXPECT_NE(errorOf("int3").find("mixed2416[:budget=B]"), std::string::npos);
}

TEST(Mixed2416Quant, DescribesFloatLinearsOnly) {
  const QuantSpec spec = *parseQuantSpec("mixed2416");
  auto d =
      describeMixed2416Linear(floatLinear("a", 64, 256), spec, FloatType::BF16);
  ASSERT_TRUE(bool(d)) << d.message();
  ASSERT_TRUE(d->has_value());
  EXPECT_EQ((*d)->shape, (std::vector<int64_t>{64, 256}));
  EXPECT_EQ((*d)->firstGroupSize, 64);
  EXPECT_EQ((*d)->secondGroupSize, 16);
  EXPECT_EQ((*d)->elementType, FloatType::BF16);
  EXPECT_EQ((*d)->secondType, FloatType::BF16);
  EXPECT_EQ((*d)->sparseType, FloatType::BF16);
  // G2: the largest of 16, 8, 4, 2 dividing N.
  d = describeMixed2416Linear(floatLinear("b", 12, 128), spec, FloatType::F16);
  ASSERT_TRUE(bool(d) && d->has_value()) << d.message();
  EXPECT_EQ((*d)->secondGroupSize, 4);
  // Stored codes are kept; other specs plan no mixed tensor.
  d = describeMixed2416Linear(floatLinear("c", 64, 256, "Q4_0"), spec,
                              FloatType::F16);
  ASSERT_TRUE(bool(d));
  EXPECT_FALSE(d->has_value());
  d = describeMixed2416Linear(floatLinear("c", 64, 256),
                              *parseQuantSpec("w4a16:g128"), FloatType::F16);
  ASSERT_TRUE(bool(d));
  EXPECT_FALSE(d->has_value());
  // Errors name the tensor and the extent.
  d = describeMixed2416Linear(floatLinear("blk.0.odd", 7, 128), spec,
                              FloatType::F16);
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(d.message(), "tensor blk.0.odd: --quant mixed2416 groups N by 16, "
                         "8, 4 or 2 (second level), and none divides N = 7");
  d = describeMixed2416Linear(floatLinear("blk.0.narrow", 64, 96), spec,
                              FloatType::F16);
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(d.message(), "tensor blk.0.narrow: --quant mixed2416 groups K by "
                         "64 (first level), and K = 96 is not a multiple of "
                         "64");
  d = describeMixed2416Linear(floatLinear("blk.0.f32", 64, 256), spec,
                              FloatType::F32);
  ASSERT_FALSE(bool(d));
  EXPECT_NE(d.message().find("tensor blk.0.f32: "), std::string::npos);
  // A budget below the tensor's smallest rate is refused by the plan.
  d = describeMixed2416Linear(floatLinear("blk.0.small", 64, 256),
                              *parseQuantSpec("mixed2416:budget=2"),
                              FloatType::F16);
  ASSERT_FALSE(bool(d));
  EXPECT_NE(d.message().find("tensor blk.0.small: --quant mixed2416:budget=2: "
                             "a budget of 2"),
            std::string::npos)
      << d.message();
  EXPECT_NE(d.message().find("below this tensor's smallest rate"),
            std::string::npos);
  // The affine path refuses what the mixed path describes.
  auto affine =
      describeLinear(floatLinear("blk.0.q", 64, 256), spec, FloatType::F16);
  ASSERT_FALSE(bool(affine));
  EXPECT_NE(affine.message().find("tensor blk.0.q"), std::string::npos);
}

TEST(Mixed2416Quant, StoredStreamsAddUpToTheRates) {
  const int64_t n = 32, k = 256;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> w(size_t(n * k));
  for (float &v : w)
    v = normal(rng);
  const QuantSpec spec = *parseQuantSpec("mixed2416:budget=3");
  auto planned =
      describeMixed2416Linear(floatLinear("w", n, k), spec, FloatType::F16);
  ASSERT_TRUE(bool(planned) && planned->has_value()) << planned.message();
  auto q =
      quantizeMixed2416(w.data(), n, k, mixed2416OptionsFor(**planned, spec));
  ASSERT_TRUE(bool(q)) << q.message();
  EXPECT_EQ(q->descriptor, **planned);
  auto streams = mixed2416StoredStreams("w", q->descriptor, q->streams);
  ASSERT_TRUE(bool(streams)) << streams.message();
  const std::vector<std::string> keys = {
      "precision_map",      "w2_codes",          "w4_codes",
      "first_scale_codes",  "first_zero_points", "second_scales",
      "second_zero_points", "sparse_values",     "sparse_columns",
      "sparse_row_pointers"};
  ASSERT_EQ(streams->size(), keys.size());
  int64_t bytes = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const StoredStream &s = (*streams)[i];
    EXPECT_EQ(s.key, keys[i]);
    int64_t elements = 1;
    for (int64_t d : s.shape)
      elements *= d;
    EXPECT_EQ(int64_t(s.bytes.size()),
              elements * int64_t(safetensors::dtypeSize(s.dtype)))
        << s.key;
    bytes += int64_t(s.bytes.size());
  }
  EXPECT_EQ(bytes, q->rates.totalBytes);
  EXPECT_EQ((*streams)[5].dtype, safetensors::DType::F16);
  const auto report = mixed2416Report(q->descriptor, q->rates);
  EXPECT_EQ(report["stored_bytes"], q->rates.totalBytes);
  EXPECT_EQ(report["w2_groups"].get<int64_t>() +
                report["w4_groups"].get<int64_t>(),
            n * k / 64);
  EXPECT_LE(report["bits_per_weight"].get<double>(), 3.0);
  // A value that is not exact in its dtype is refused, by stream and index.
  Mixed2416Streams inexact = q->streams;
  inexact.secondScales[2] = 0.1;
  auto refused = mixed2416StoredStreams("w", q->descriptor, inexact);
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(refused.message(),
            "w.second_scales[2]: 0.100000 is not exact in f16");
}

TEST(Mixed2416Compile, HostArtifactStoresStreamsRecordsAndBindings) {
  if (!std::filesystem::exists(kCorpusF32))
    GTEST_SKIP() << "corpus absent: " << kCorpusF32;
  test::TempDir dir("qtc-mixed2416-host");
  const std::string out = (dir / "a").string();
  const json m = compileMixed("host", out);
  const json report = reportOf(out, m);
  EXPECT_EQ(m["quantization"]["family"], "mixed_2416");

  // Every linear a mixed_2416 tensor whose streams add up to the report.
  std::map<std::string, json> reported;
  for (const json &t : report["tensors"])
    reported[t["name"]] = t;
  size_t mixed = 0;
  for (const json &t : m["tensors"]) {
    if (t["kind"] != "mixed_2416")
      continue;
    ++mixed;
    SCOPED_TRACE(t["name"].get<std::string>());
    int64_t bytes = 0;
    for (const auto &[key, v] : t.items()) {
      if (!v.is_object() || !v.contains("tensor"))
        continue;
      int64_t elements = 1;
      for (const json &d : v["shape"])
        elements *= d.get<int64_t>();
      bytes += elements *
               int64_t(safetensors::dtypeSize(
                   *safetensors::parseDType(v["dtype"].get<std::string>())));
    }
    const json &r = reported.at(t["name"]);
    EXPECT_EQ(r["stored_bytes"].get<int64_t>(), bytes);
    EXPECT_EQ(r["mixed_2416"]["stored_bytes"].get<int64_t>(), bytes);
    EXPECT_LE(r["mixed_2416"]["bits_per_weight"].get<double>(), 3.5);
    EXPECT_EQ(r["mixed_2416"]["second_type"], "f16");
  }
  EXPECT_EQ(mixed, 14u);

  // One decode record per shape: T = 1..16, each its own entry point.
  size_t records = 0;
  for (size_t i = 0; i < m["kernels"].size(); ++i) {
    auto e = artifact::kernelEntryFromJson(
        m["kernels"][i], "manifest.kernels[" + std::to_string(i) + "]");
    ASSERT_TRUE(bool(e)) << e.message();
    if (!e->mixed)
      continue;
    ++records;
    EXPECT_EQ(e->registryId, "mixed2416_decode_gemv");
    EXPECT_EQ(e->layout, "mixed_2416");
    EXPECT_EQ(e->phase, kernels::Phase::Decode);
    EXPECT_EQ(e->tokens, (kernels::TokenRange{1, 16}));
    ASSERT_EQ(e->entries.size(), 16u);
    EXPECT_EQ(e->entries[6].symbol,
              "_mlir_ciface_qt_mixed2416_gemv_g64_z16_f16_t7_n" +
                  std::to_string(e->n) + "_k" + std::to_string(e->k) + "_of16");
    EXPECT_FALSE(e->rowSplit);
    EXPECT_FALSE(e->ops.empty());
  }
  EXPECT_EQ(records, 4u); // q/o, k/v, gate/up, down
  for (const json &b : m["bindings"])
    EXPECT_EQ(b["phases"], json::parse(R"([
      {"phase": "decode", "kernel": "mixed2416_decode_gemv", "fallback": false},
      {"phase": "prefill", "kernel": "mixed2416_decode_gemv", "fallback": false}
    ])"))
        << b["op"];

  // The trusted rebuild builds the records' symbols.
  auto manifest = artifact::manifestFromJson(m);
  ASSERT_TRUE(bool(manifest)) << manifest.message();
  auto built = rebuildHostKernels(*manifest, nullptr, {"off"});
  ASSERT_TRUE(bool(built)) << built.message();
  EXPECT_NE(built->how.find("64 mixed_2416 entries"), std::string::npos)
      << built->how;
  // A record whose entry names another T's symbol is refused.
  artifact::Manifest swapped = *manifest;
  for (artifact::KernelEntry &e : swapped.kernels)
    if (e.mixed) {
      std::swap(e.entries[0].symbol, e.entries[1].symbol);
      break;
    }
  auto refused = rebuildHostKernels(swapped, nullptr, {"off"});
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(refused.message().find("is not the symbol its record's kernel "
                                   "builds"),
            std::string::npos)
      << refused.message();
}

TEST(Mixed2416Compile, GpuRecordsRebuildToTheCompilersPtx) {
  if (!std::filesystem::exists(kCorpusF32))
    GTEST_SKIP() << "corpus absent: " << kCorpusF32;
  test::TempDir dir("qtc-mixed2416-gpu");
  const std::string out = (dir / "a").string();
  const json m = compileMixed("sm_90", out);
  auto manifest = artifact::manifestFromJson(m);
  ASSERT_TRUE(bool(manifest)) << manifest.message();
  size_t checked = 0;
  for (size_t i = 0; i < manifest->kernels.size(); ++i) {
    const artifact::KernelEntry &e = manifest->kernels[i];
    if (!e.mixed || e.format != artifact::KernelFormat::Ptx)
      continue;
    SCOPED_TRACE(e.id);
    ASSERT_TRUE(e.launch.has_value());
    EXPECT_EQ(e.launch->block, (std::array<int64_t, 3>{128, 1, 1}));
    EXPECT_EQ(e.entries.size(), 16u);
    auto ptx = rebuildGpuKernel(*manifest, i, {"off"});
    ASSERT_TRUE(bool(ptx)) << ptx.message();
    EXPECT_EQ(*ptx, fileText(out + "/" + *e.file));
    ++checked;
  }
  EXPECT_EQ(checked, 4u);
}
