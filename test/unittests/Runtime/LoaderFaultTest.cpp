//===- LoaderFaultTest.cpp - Loading and running under file faults --------===//
//
// Issue 14, item 3: each fault a disk or a filesystem produces while an
// artifact is loaded or in use, and what the caller sees. Reads are
// injected under the loader's own I/O (InjectedFileFaults.h); truncation,
// rewriting and the address-space limit are done for real.
//
//===----------------------------------------------------------------------===//

#include "AddressSpaceLimit.h"
#include "InjectedFileFaults.h"
#include "RuntimeTestArtifact.h"
#include "TestAssertions.h"

#include "qtensor/Support/MappedFile.h"

#include <gtest/gtest.h>

#include <unistd.h>

using namespace qtensor;
using namespace qtensor::runtime;
using namespace rttest;
using qtensor::test::contains;
using qtensor::test::InjectedFileFaults;

namespace {

/// Two linears, so that the shard is more than a page or two.
TestArtifactSpec twoLinears() {
  TestArtifactSpec spec;
  TestLinear b;
  b.name = "layer.b.weight";
  b.n = 64;
  b.k = 512;
  spec.linears.push_back(b);
  return spec;
}

/// Every linear's output for a fixed input.
std::vector<std::vector<uint8_t>> outputsOf(LoadedModel &m,
                                            const TestArtifactSpec &spec) {
  std::vector<std::vector<uint8_t>> out;
  for (const TestLinear &l : spec.linears) {
    auto y = m.run(l.name, activations(3, l.k, 11));
    EXPECT_TRUE(bool(y)) << y.message();
    out.push_back(y ? y->bytes : std::vector<uint8_t>());
  }
  return out;
}

} // namespace

TEST(LoaderFaults, ShortReadsAndInterruptionsLoadTheSameModel) {
  TempDir dir;
  TestArtifactSpec spec = twoLinears();
  auto clean = loadSpec(dir, spec);
  ASSERT_TRUE(bool(clean)) << clean.message();
  std::vector<std::vector<uint8_t>> expected = outputsOf(**clean, spec);

  InjectedFileFaults faults;
  faults.maxRead = 5;
  faults.interrupt = true;
  ScopedFileLayer scoped(faults);
  auto loaded = loadModel(dir.str(), hostOptions());
  ASSERT_TRUE(bool(loaded)) << loaded.message();
  EXPECT_GT(faults.faultyCalls.load(), 1000u);
  EXPECT_EQ(outputsOf(**loaded, spec), expected);
}

TEST(LoaderFaults, AnIOErrorInAShardNamesTheFileAndTheOffset) {
  TempDir dir;
  writeTestArtifact(dir.str(), twoLinears());
  InjectedFileFaults faults;
  faults.pathPart = "/weights.";
  faults.readErrorAt = 8192;
  ScopedFileLayer scoped(faults);
  auto loaded = loadModel(dir.str(), hostOptions());
  ASSERT_FALSE(bool(loaded));
  EXPECT_TRUE(
      contains(loaded.message(), publishedFile(dir, "weights").string() +
                                     ": read failed at byte offset 8192: "
                                     "Input/output error"));
}

TEST(LoaderFaults, AnIOErrorInTheManifestIsAnError) {
  TempDir dir;
  writeTestArtifact(dir.str(), twoLinears());
  InjectedFileFaults faults;
  faults.pathPart = "/manifest.json";
  faults.readErrorAt = 0;
  ScopedFileLayer scoped(faults);
  auto loaded = loadModel(dir.str(), hostOptions());
  ASSERT_FALSE(bool(loaded));
  EXPECT_TRUE(contains(loaded.message(), "manifest.json: read failed at byte "
                                         "offset 0: Input/output error"));
}

TEST(LoaderFaults, AShardTruncatedWhileOpenIsRefused) {
  TempDir dir;
  writeTestArtifact(dir.str(), twoLinears());
  fs::path shard = publishedFile(dir, "weights");
  uint64_t size = fs::file_size(shard);
  InjectedFileFaults faults;
  faults.pathPart = "/weights.";
  faults.beforeFirstRead = [&](const std::string &) {
    fs::resize_file(shard, size / 2);
  };
  ScopedFileLayer scoped(faults);
  auto loaded = loadModel(dir.str(), hostOptions());
  ASSERT_FALSE(bool(loaded));
  EXPECT_TRUE(contains(loaded.message(),
                       shard.string() + ": the file ends at byte " +
                           std::to_string(size / 2) + ", but " +
                           std::to_string(size) + " bytes were expected"));
}

TEST(LoaderFaults, AShardRewrittenWhileOpenFailsItsHash) {
  TempDir dir;
  writeTestArtifact(dir.str(), twoLinears());
  fs::path shard = publishedFile(dir, "weights");
  InjectedFileFaults faults;
  faults.pathPart = "/weights.";
  faults.beforeFirstRead = [&](const std::string &) {
    corrupt(shard, size_t(fs::file_size(shard) - 3));
  };
  ScopedFileLayer scoped(faults);
  auto loaded = loadModel(dir.str(), hostOptions());
  ASSERT_FALSE(bool(loaded));
  EXPECT_TRUE(contains(loaded.message(), shard.string() +
                                             ": SHA-256 mismatch: the "
                                             "manifest expects"));
}

// The default (FileAccess::Read): what runs is the bytes that were hashed.
TEST(LoaderFaults, FilesChangedAfterLoadDoNotChangeWhatRuns) {
  TempDir dir;
  TestArtifactSpec spec = twoLinears();
  auto loaded = loadSpec(dir, spec);
  ASSERT_TRUE(bool(loaded)) << loaded.message();
  std::vector<std::vector<uint8_t>> before = outputsOf(**loaded, spec);
  fs::path shard = publishedFile(dir, "weights");
  corrupt(shard, size_t(fs::file_size(shard) - 3));
  fs::resize_file(shard, 0);
  EXPECT_EQ(outputsOf(**loaded, spec), before);
}

// --mmap: a shard truncated under the mapping ends the process with an
// error that names it (MappedFile.h), not a crash.
TEST(LoaderFaults, AMappedShardTruncatedInUseIsANamedError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir dir;
  TestArtifactSpec spec = twoLinears();
  writeTestArtifact(dir.str(), spec);
  fs::path shard = publishedFile(dir, "weights");
  auto child = [&] {
    installMappedFileFaultHandler("loader-test");
    LoadOptions o = hostOptions();
    o.access = FileAccess::Map;
    auto loaded = loadModel(dir.str(), o);
    if (!loaded)
      ::_exit(3);
    fs::resize_file(shard, 0);
    // The death-test child reran the test body and made a directory of its
    // own that no destructor will remove: remove it now (the mapping keeps
    // the truncated shard alive).
    std::error_code ec;
    fs::remove_all(dir.str(), ec);
    outputsOf(**loaded, spec);
    ::_exit(0);
  };
  EXPECT_EXIT(
      child(), ::testing::ExitedWithCode(kMappedFileFaultExitCode),
      "loader-test: error: .*weights\\..*safetensors: reading byte [0-9]+ of "
      "the mapped file failed \\(SIGBUS\\)");
}

#ifndef QTENSOR_SANITIZED
TEST(LoaderFaults, AnAddressSpaceLimitIsAnErrorNotACrash) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir dir;
  TestArtifactSpec spec;
  // 4096 x 8192 W4 codes: a 16 MiB shard, and a limit of 8 MiB more than
  // the process has when it loads.
  spec.linears[0].n = 4096;
  spec.linears[0].k = 8192;
  writeTestArtifact(dir.str(), spec);
  auto child = [&] {
    qtensor::test::limitAddressSpaceTo(uint64_t(8) << 20);
    auto loaded = loadModel(dir.str(), hostOptions());
    std::error_code ec;
    fs::remove_all(dir.str(), ec); // this child's own (see above)
    if (loaded)
      ::_exit(0);
    std::fprintf(stderr, "%s\n", loaded.message().c_str());
    ::_exit(3);
  };
  EXPECT_EXIT(
      child(), ::testing::ExitedWithCode(3),
      "weights\\..*safetensors: cannot allocate [0-9]+ bytes of memory to "
      "read it into: Cannot allocate memory");
}
#endif
