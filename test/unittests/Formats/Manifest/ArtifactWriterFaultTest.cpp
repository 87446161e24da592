//===- ArtifactWriterFaultTest.cpp - Publishing under disk faults ---------===//
//
// Issue 14, item 3: a disk that fills up, fails a write or an fsync while
// an artifact is written. The error names the file and the reason, and
// nothing is half-published: a fresh directory stays empty, an artifact
// being replaced stays the old one, and no temporary is left behind. The
// faults go under the writer's own I/O (InjectedFileFaults.h), so these are
// the code paths a real ENOSPC or EIO takes.
//
//===----------------------------------------------------------------------===//

#include "ArtifactTestSupport.h"
#include "InjectedFileFaults.h"

#include "qtensor/Support/FileIO.h"

using namespace arttest;
using qtensor::test::InjectedFileFaults;

namespace {

/// The bytes one complete write of `writer` puts into files.
uint64_t bytesOfAWrite(const ArtifactWriter &writer) {
  TempDir dir;
  InjectedFileFaults count;
  ScopedFileLayer scoped(count);
  auto r = writer.write(dir.str());
  EXPECT_TRUE(r) << r.message();
  return count.written.load();
}

/// What a failed write must leave in `dir`: exactly `before` (the names
/// and the manifest of the artifact that was there, if any).
void expectUnchanged(const TempDir &dir, const std::set<std::string> &before,
                     const std::optional<Manifest> &manifest) {
  EXPECT_EQ(listNames(dir.path()), before);
  if (!manifest)
    return;
  auto a = openArtifact(dir.str());
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a->manifest(), *manifest);
}

} // namespace

TEST(ArtifactWriterFaults, ShortWritesAndInterruptionsStillPublish) {
  ArtifactFixture fx;
  TempDir dir;
  InjectedFileFaults faults;
  faults.maxRead = 3; // also caps each write
  faults.interrupt = true;
  ScopedFileLayer scoped(faults);
  auto r = fx.writer.write(dir.str());
  ASSERT_TRUE(r) << r.message();
  auto a = openArtifact(dir.str());
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a->manifest(), r->manifest);
}

TEST(ArtifactWriterFaults, AFullDiskAtAnyPointPublishesNothing) {
  ArtifactFixture fx;
  const uint64_t total = bytesOfAWrite(fx.writer);
  ASSERT_GT(total, 1000u);
  ArtifactFixture old(7);
  for (bool replacing : {false, true})
    for (uint64_t left :
         {uint64_t(0), uint64_t(100), total / 3, total / 2, total - 10}) {
      SCOPED_TRACE("space left " + std::to_string(left) +
                   (replacing ? ", over an artifact" : ", fresh"));
      TempDir dir;
      std::optional<Manifest> before;
      if (replacing) {
        auto w = old.writer.write(dir.str());
        ASSERT_TRUE(w) << w.message();
        before = w->manifest;
      }
      std::set<std::string> names = listNames(dir.path());
      InjectedFileFaults faults;
      faults.spaceLeft = left;
      {
        ScopedFileLayer scoped(faults);
        EXPECT_ERROR_CONTAINS(fx.writer.write(dir.str()),
                              "No space left on device");
      }
      expectUnchanged(dir, names, before);
    }
}

TEST(ArtifactWriterFaults, AFailedFsyncPublishesNothing) {
  ArtifactFixture fx;
  ArtifactFixture old(7);
  TempDir dir;
  auto w = old.writer.write(dir.str());
  ASSERT_TRUE(w) << w.message();
  std::set<std::string> names = listNames(dir.path());
  InjectedFileFaults faults;
  faults.failFsync = true;
  faults.pathPart = ".qtensor-tmp-";
  {
    ScopedFileLayer scoped(faults);
    EXPECT_ERROR_CONTAINS(fx.writer.write(dir.str()),
                          "fsync failed: Input/output error");
  }
  expectUnchanged(dir, names, w->manifest);
}

TEST(ArtifactWriterFaults, AnIOErrorReadingBackPublishesNothing) {
  ArtifactFixture fx;
  TempDir dir;
  InjectedFileFaults faults;
  faults.readErrorAt = 0;
  {
    ScopedFileLayer scoped(faults);
    EXPECT_ERROR_CONTAINS(fx.writer.write(dir.str()), "Input/output error");
  }
  expectUnchanged(dir, {}, std::nullopt);
}
