//===- TrustedCodeTest.cpp - Kernels rebuilt from an artifact's records ---===//
//
// The builders the runtime uses instead of an artifact's own kernel files
// (Compiler/TrustedCode.h): on an sm_90 artifact compiled here, every GPU
// kernel record rebuilds to exactly the PTX the compiler wrote (the record
// describes its kernel completely), and a record whose launch geometry or
// entry symbols were changed is refused; the host records rebuild to one
// object that the runtime loads and runs.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Compiler/TrustedCode.h"
#include "qtensor/Compiler/Compile.h"
#include "qtensor/Formats/Artifact.h"

#include "TestTempDir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace qtensor;

namespace {

const std::string kCorpusGGUF =
    std::string(QTENSOR_CORPUS_DIR) + "/gguf/tiny_llama/tiny-llama-Q8_0.gguf";

/// Compiles the corpus tiny llama for `target` into `dir`.
void compileTiny(const std::string &target, const std::string &dir) {
  compiler::CompileRequest request;
  request.input = kCorpusGGUF;
  request.outputDir = dir;
  request.target = target;
  request.quant = "keep";
  auto result = compiler::compileArtifact(request);
  ASSERT_TRUE(bool(result)) << result.message();
  ASSERT_TRUE(result->verified);
}

std::string fileText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST(TrustedCode, GpuRecordsRebuildToTheCompilersPtx) {
  if (!std::filesystem::exists(kCorpusGGUF))
    GTEST_SKIP() << "corpus absent: " << kCorpusGGUF;
  test::TempDir dir("qtc-trusted-gpu");
  compileTiny("sm_90", (dir / "a").string());
  auto artifact = artifact::openArtifact((dir / "a").string());
  ASSERT_TRUE(bool(artifact)) << artifact.message();
  artifact::Manifest m = artifact->manifest();
  size_t checked = 0;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const artifact::KernelEntry &e = m.kernels[i];
    if (e.format != artifact::KernelFormat::Ptx)
      continue;
    SCOPED_TRACE(e.id);
    auto ptx = compiler::rebuildGpuKernel(m, i, {"off"});
    ASSERT_TRUE(bool(ptx)) << ptx.message();
    EXPECT_EQ(*ptx, fileText((dir / "a" / *e.file).string()));
    ++checked;
  }
  EXPECT_GT(checked, 0u);

  // A record that launches its kernel otherwise, or names other symbols,
  // does not describe what this installation builds.
  size_t first = 0;
  while (m.kernels[first].format != artifact::KernelFormat::Ptx)
    ++first;
  artifact::Manifest launch = m;
  launch.kernels[first].launch->block[0] = 1024;
  auto refused = compiler::rebuildGpuKernel(launch, first, {"off"});
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(refused.message().find(
                "its launch geometry is not the one its capability builds"),
            std::string::npos)
      << refused.message();
  artifact::Manifest symbols = m;
  symbols.kernels[first].entries[0].symbol = "qt_other";
  refused = compiler::rebuildGpuKernel(symbols, first, {"off"});
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(refused.message().find("that its capability does not build"),
            std::string::npos)
      << refused.message();
}

TEST(TrustedCode, HostRecordsRebuildAndCache) {
  if (!std::filesystem::exists(kCorpusGGUF))
    GTEST_SKIP() << "corpus absent: " << kCorpusGGUF;
  test::TempDir dir("qtc-trusted-host");
  compileTiny("host", (dir / "a").string());
  auto artifact = artifact::openArtifact((dir / "a").string());
  ASSERT_TRUE(bool(artifact)) << artifact.message();
  const std::string cache = (dir / "cache").string();
  auto built =
      compiler::rebuildHostKernels(artifact->manifest(), nullptr, {cache});
  ASSERT_TRUE(bool(built)) << built.message();
  EXPECT_NE(built->how.find("rebuilt by this installation"), std::string::npos)
      << built->how;
  auto again =
      compiler::rebuildHostKernels(artifact->manifest(), nullptr, {cache});
  ASSERT_TRUE(bool(again)) << again.message();
  EXPECT_NE(again->how.find("from its cache"), std::string::npos) << again->how;
  EXPECT_EQ(again->bytes, built->bytes);
}
