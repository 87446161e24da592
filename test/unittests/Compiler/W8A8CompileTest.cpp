//===- W8A8CompileTest.cpp - qtc compile --quant w8a8 ---------------------===//
//
// The compiler side of W8A8 (seed M8.1 0x05): a compile of the corpus tiny
// llama (F32 weights) under --quant w8a8 for the host gives one decode
// record per shape (the W8A8 GEMV's 16 entries, the quantizer's 16 under
// activation_quant, the GEMV's arguments), bindings naming the kernel for
// both phases with the activation form, and records the trusted rebuild
// builds (and refuses when a quantizer symbol is another T's).
//
//===----------------------------------------------------------------------===//

#include "TestTempDir.h"

#include "qtensor/Compiler/Compile.h"
#include "qtensor/Compiler/TrustedCode.h"
#include "qtensor/Formats/Manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace qtensor;
using namespace qtensor::compiler;
using json = nlohmann::json;

namespace {

const std::string kCorpusF32 =
    std::string(QTENSOR_CORPUS_DIR) + "/gguf/tiny_llama/tiny-llama-F32.gguf";

std::string fileText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST(W8A8Compile, HostRecordsBindingsAndTrustedRebuild) {
  if (!std::filesystem::exists(kCorpusF32))
    GTEST_SKIP() << "corpus absent: " << kCorpusF32;
  test::TempDir dir("qtc-w8a8-host");
  const std::string out = (dir / "a").string();
  CompileRequest request;
  request.input = kCorpusF32;
  request.outputDir = out;
  request.target = "host";
  request.quant = "w8a8:asym:a8asym";
  auto result = compileArtifact(request);
  ASSERT_TRUE(bool(result)) << result.message();
  const json m = json::parse(fileText(out + "/manifest.json"));
  EXPECT_EQ(m["quantization"]["family"], "affine_w8a8");
  EXPECT_EQ(m["quantization"]["config"]["activation_quant"], "per_token_asym");

  size_t records = 0;
  for (size_t i = 0; i < m["kernels"].size(); ++i) {
    auto e = artifact::kernelEntryFromJson(
        m["kernels"][i], "manifest.kernels[" + std::to_string(i) + "]");
    ASSERT_TRUE(bool(e)) << e.message();
    ++records;
    SCOPED_TRACE(e->id);
    EXPECT_EQ(e->registryId, "w8a8_gemv_decode_host");
    EXPECT_EQ(e->layout, "decode_gemv");
    EXPECT_EQ(e->codeBits, 8u);
    EXPECT_FALSE(e->codeSigned);
    EXPECT_EQ(e->groupSize, 0);
    EXPECT_EQ(e->phase, kernels::Phase::Decode);
    EXPECT_EQ(e->tokens, (kernels::TokenRange{1, 16}));
    ASSERT_EQ(e->entries.size(), 16u);
    ASSERT_TRUE(e->activationQuant.has_value());
    const auto &q = *e->activationQuant;
    EXPECT_FALSE(q.symmetric);
    ASSERT_EQ(q.entries.size(), 16u);
    const std::string nk =
        "_n" + std::to_string(e->n) + "_k" + std::to_string(e->k);
    EXPECT_EQ(e->entries[6].symbol,
              "_mlir_ciface_qt_w8a8_gemv_w8asym_a8asym_gch_f16_t7" + nk +
                  "_of16");
    EXPECT_EQ(q.entries[6].symbol, "_mlir_ciface_qt_quantize_a8asym_f16_t7_k" +
                                       std::to_string(e->k));
    EXPECT_EQ(q.entries[6].tokens, e->entries[6].tokens);
    std::vector<artifact::ArgRole> roles;
    for (const artifact::KernelArg &a : e->args)
      roles.push_back(a.role);
    EXPECT_EQ(roles, artifact::w8a8ArgOrder(false, true, false));
    EXPECT_EQ(e->arg(artifact::ArgRole::XQ)->type, artifact::ArgType::U8);
    EXPECT_EQ(e->arg(artifact::ArgRole::XQ)->shape,
              (std::vector<int64_t>{artifact::kDynamic, e->k}));
    EXPECT_EQ(e->arg(artifact::ArgRole::Z)->type, artifact::ArgType::U8);
    EXPECT_FALSE(e->rowSplit);
    EXPECT_EQ(e->splitK, 1);
    EXPECT_FALSE(e->ops.empty());
  }
  EXPECT_EQ(records, 4u); // q/o, k/v, gate/up, down
  for (const json &b : m["bindings"]) {
    EXPECT_EQ(b["activation_quant"], "per_token_asym") << b["op"];
    EXPECT_EQ(b["phases"], json::parse(R"([
      {"phase": "decode", "kernel": "w8a8_gemv_decode_host", "fallback": false},
      {"phase": "prefill", "kernel": "w8a8_gemv_decode_host", "fallback": false}
    ])"))
        << b["op"];
  }

  // The trusted rebuild builds the records' GEMVs and quantizers.
  auto manifest = artifact::manifestFromJson(m);
  ASSERT_TRUE(bool(manifest)) << manifest.message();
  auto built = rebuildHostKernels(*manifest, nullptr, {"off"});
  ASSERT_TRUE(bool(built)) << built.message();
  EXPECT_NE(built->how.find("64 W8A8 entries with their quantizers"),
            std::string::npos)
      << built->how;
  // A record whose quantizer entry names another T's symbol is refused.
  artifact::Manifest swapped = *manifest;
  auto &q = *swapped.kernels.front().activationQuant;
  std::swap(q.entries[0].symbol, q.entries[1].symbol);
  auto refused = rebuildHostKernels(swapped, nullptr, {"off"});
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(refused.message().find("is not the symbol its record's kernel "
                                   "builds"),
            std::string::npos)
      << refused.message();
}

TEST(W8A8Compile, GpuRecordsRebuildToTheCompilersPtx) {
  if (!std::filesystem::exists(kCorpusF32))
    GTEST_SKIP() << "corpus absent: " << kCorpusF32;
  test::TempDir dir("qtc-w8a8-gpu");
  const std::string out = (dir / "a").string();
  CompileRequest request;
  request.input = kCorpusF32;
  request.outputDir = out;
  request.target = "sm_90";
  request.quant = "w8a8";
  auto result = compileArtifact(request);
  ASSERT_TRUE(bool(result)) << result.message();
  auto manifest =
      artifact::manifestFromJson(json::parse(fileText(out + "/manifest.json")));
  ASSERT_TRUE(bool(manifest)) << manifest.message();
  size_t checked = 0;
  for (size_t i = 0; i < manifest->kernels.size(); ++i) {
    const artifact::KernelEntry &e = manifest->kernels[i];
    if (!e.activationQuant || e.format != artifact::KernelFormat::Ptx)
      continue;
    SCOPED_TRACE(e.id);
    ASSERT_TRUE(e.activationQuant->launch.has_value());
    EXPECT_EQ(e.activationQuant->launch->tokenAxis, 0);
    EXPECT_EQ(e.activationQuant->launch->tokensPerBlock, 4);
    auto ptx = rebuildGpuKernel(*manifest, i, {"off"});
    ASSERT_TRUE(bool(ptx)) << ptx.message();
    EXPECT_EQ(*ptx, fileText(out + "/" + *e.file));
    ++checked;
  }
  EXPECT_EQ(checked, 4u);
}
