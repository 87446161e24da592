//===- ArtifactWriterTest.cpp - Transactional writing, failures, kills ----===//

#include "ArtifactTestSupport.h"

#include "qtensor/Support/MappedFile.h"
#include "qtensor/Support/Sha256.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sys/file.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace arttest;

namespace {

bool isTemp(const std::string &name) { return name.rfind(kTempPrefix, 0) == 0; }

std::set<std::string> referencedNames(const Manifest &m) {
  std::set<std::string> names = {kManifestFileName};
  for (const FileEntry &f : m.files)
    names.insert(f.path);
  return names;
}

/// The invariant after any failure or kill: either no manifest.json, or one
/// whose whole artifact opens and verifies. Returns the manifest if any.
std::optional<Manifest> publishedArtifact(const TempDir &dir) {
  if (!fs::exists(dir / kManifestFileName))
    return std::nullopt;
  auto a = openArtifact(dir.str());
  EXPECT_TRUE(a) << "a published manifest must be complete: " << a.message();
  if (!a)
    return std::nullopt;
  return a->manifest();
}

/// A hook that fails the `failAt`-th event (0-based) and records it.
struct Injection {
  size_t failAt = SIZE_MAX;
  size_t seen = 0;
  std::optional<WriteEvent> failed;
  std::vector<WriteEvent> events;

  WriteOptions options() {
    WriteOptions o;
    o.hook = [this](const WriteEvent &e) -> Status {
      events.push_back(e);
      if (seen++ == failAt) {
        failed = e;
        return makeError("injected failure");
      }
      return Status::ok();
    };
    return o;
  }
};

/// The events of one complete write of `writer` into a copy of `setup`.
std::vector<WriteEvent> dryRun(const ArtifactWriter *before,
                               const ArtifactWriter &writer) {
  TempDir dir;
  if (before)
    EXPECT_TRUE(before->write(dir.str()));
  Injection inj;
  auto r = writer.write(dir.str(), inj.options());
  EXPECT_TRUE(r) << r.message();
  return inj.events;
}

//===----------------------------------------------------------------------===//
// Successful writes
//===----------------------------------------------------------------------===//

TEST(ArtifactWriter, WritesAContentAddressedVerifiedArtifact) {
  ArtifactFixture fx;
  TempDir dir;
  auto r = fx.writer.write(dir.str());
  ASSERT_TRUE(r) << r.message();
  const Manifest &m = r->manifest;
  ASSERT_EQ(m.files.size(), 4u);
  EXPECT_EQ(m.files[0].role, FileRole::Shard);
  EXPECT_EQ(m.files[2].role, FileRole::Graph);
  for (const FileEntry &f : m.files) {
    // "<stem>.<first 16 hex of sha256>.<ext>"
    EXPECT_NE(f.path.find("." + f.sha256.substr(0, 16) + "."),
              std::string::npos)
        << f.path;
    EXPECT_EQ(fs::file_size(dir / f.path), f.bytes);
    std::string bytes = readText(dir / f.path);
    EXPECT_EQ(*sha256Hex(reinterpret_cast<const uint8_t *>(bytes.data()),
                         bytes.size()),
              f.sha256);
  }
  EXPECT_EQ(m.files[0].path.rfind("model-00001.", 0), 0u);
  EXPECT_EQ(m.tensors[0].file, m.files[0].path);
  // Only the manifest and what it references; no temporaries.
  EXPECT_EQ(listNames(dir.path()), referencedNames(m));
  // The file on disk is the manifest returned, and it opens.
  auto parsed = parseManifest(readText(dir / kManifestFileName));
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(*parsed, m);
  auto a = openArtifact(dir.str());
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a->manifest(), m);
  EXPECT_TRUE(r->removed.empty());
  EXPECT_TRUE(r->warnings.empty());
}

TEST(ArtifactWriter, SameContentSameManifest) {
  ArtifactFixture fx;
  TempDir a, b;
  auto ra = fx.writer.write(a.str());
  auto rb = fx.writer.write(b.str());
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ(ra->manifest, rb->manifest);
  EXPECT_EQ(readText(a / kManifestFileName), readText(b / kManifestFileName));
}

TEST(ArtifactWriter, CreatesTheDirectoryOneLevelDeep) {
  ArtifactFixture fx;
  TempDir dir;
  EXPECT_TRUE(fx.writer.write((dir / "new").string()));
  EXPECT_TRUE(openArtifact((dir / "new").string()));
  EXPECT_ERROR_CONTAINS(fx.writer.write((dir / "x" / "y").string()),
                        "cannot create the artifact directory");
}

TEST(ArtifactWriter, ReplacingAnArtifactCollectsTheOldFiles) {
  ArtifactFixture a(1), b(2);
  TempDir dir;
  auto ra = a.writer.write(dir.str());
  ASSERT_TRUE(ra);
  auto rb = b.writer.write(dir.str());
  ASSERT_TRUE(rb) << rb.message();
  EXPECT_EQ(listNames(dir.path()), referencedNames(rb->manifest));
  std::vector<std::string> oldPaths;
  for (const FileEntry &f : ra->manifest.files)
    oldPaths.push_back(f.path);
  EXPECT_EQ(rb->removed, oldPaths);
  auto opened = openArtifact(dir.str());
  ASSERT_TRUE(opened) << opened.message();
  EXPECT_EQ(opened->manifest(), rb->manifest);
}

TEST(ArtifactWriter, PublishCallbacksRunOnceAroundThePublish) {
  ArtifactFixture a(1), b(2);
  TempDir dir;
  auto ra = a.writer.write(dir.str());
  ASSERT_TRUE(ra);
  std::string previous = readText(dir / kManifestFileName);
  int calls = 0;
  std::vector<WriteStep> stepsBefore;
  WriteOptions o;
  o.hook = [&](const WriteEvent &e) -> Status {
    if (calls == 0)
      stepsBefore.push_back(e.step);
    return Status::ok();
  };
  int after = 0;
  o.beforePublish = [&] {
    ++calls;
    // Every check is done and the previous artifact is still the one
    // published.
    EXPECT_EQ(readText(dir / kManifestFileName), previous);
  };
  o.afterPublish = [&] {
    ++after;
    EXPECT_NE(readText(dir / kManifestFileName), previous);
  };
  auto rb = b.writer.write(dir.str(), o);
  ASSERT_TRUE(rb) << rb.message();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(after, 1);
  ASSERT_FALSE(stepsBefore.empty());
  EXPECT_EQ(stepsBefore.back(), WriteStep::PublishManifest);

  // A write that fails before the publish never calls it.
  calls = 0;
  Injection inj;
  inj.failAt = 0;
  WriteOptions failing = inj.options();
  failing.beforePublish = [&] { ++calls; };
  failing.afterPublish = [&] { ++after; };
  EXPECT_FALSE(a.writer.write(dir.str(), failing));
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(after, 1);
}

TEST(ArtifactWriter, RewritingSharedFilesKeepsThem) {
  ArtifactFixture fx;
  TempDir dir;
  auto first = fx.writer.write(dir.str());
  ASSERT_TRUE(first);
  ArtifactWriter more = fx.writer;
  ASSERT_TRUE(more.addFile("extra.bin", FileRole::Trace, pattern(10, 9)));
  auto second = more.write(dir.str());
  ASSERT_TRUE(second) << second.message();
  EXPECT_TRUE(second->removed.empty());
  EXPECT_EQ(second->manifest.files.size(), 5u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(second->manifest.files[i], first->manifest.files[i]);
  EXPECT_EQ(listNames(dir.path()), referencedNames(second->manifest));
  EXPECT_TRUE(openArtifact(dir.str()));
}

TEST(ArtifactWriter, KernelFilesAreMappedToFinalNames) {
  Manifest base = baseManifest();
  base.kernels.push_back(gemvEntry("gemv", "gemm.ptx", "w", 8, 64));
  QuantizedTensor q = quantizedParts("w", 8, 64);
  std::vector<uint8_t> codes(256), scales(8 * 2 * 2), zeros(16);
  auto addWeight = [&](ArtifactWriter &w) {
    return w.addQuantizedTensor(
        "m.safetensors", "w", q.logical,
        {"w.codes", DType::U8, {8, 32}, codes.data(), codes.size()},
        {"w.scales", DType::F16, {8, 2}, scales.data(), scales.size()},
        TensorData{"w.zeros", DType::U8, {8, 2}, zeros.data(), zeros.size()});
  };
  ArtifactWriter w(base);
  ASSERT_TRUE(addWeight(w));
  ASSERT_TRUE(w.addFile("gemm.ptx", FileRole::Kernel, pattern(33, 4)));
  TempDir dir;
  auto r = w.write(dir.str());
  ASSERT_TRUE(r) << r.message();
  ASSERT_TRUE(r->manifest.kernels[0].file);
  EXPECT_EQ(*r->manifest.kernels[0].file, r->manifest.files[1].path);
  EXPECT_NE(r->manifest.files[1].path, "gemm.ptx");
  auto a = openArtifact(dir.str());
  ASSERT_TRUE(a) << a.message();
  ASSERT_NE(a->file(*r->manifest.kernels[0].file), nullptr);
  EXPECT_EQ(a->file(*r->manifest.kernels[0].file)->size(), 33u);

  // A kernel naming a file that was never added fails before any write.
  base.kernels[0].file = "missing.ptx";
  ArtifactWriter bad(base);
  ASSERT_TRUE(addWeight(bad));
  TempDir dir2;
  EXPECT_ERROR_CONTAINS(bad.write((dir2 / "out").string()),
                        "manifest.kernels[0].file: \"missing.ptx\" is not "
                        "listed");
  EXPECT_FALSE(fs::exists(dir2 / "out"));
}

TEST(ArtifactWriter, VerbatimNamesRefuseToClobberTheCurrentArtifact) {
  ArtifactFixture a(1), b(2);
  WriteOptions verbatim;
  verbatim.contentAddressedNames = false;
  TempDir dir;
  auto ra = a.writer.write(dir.str(), verbatim);
  ASSERT_TRUE(ra) << ra.message();
  EXPECT_EQ(ra->manifest.files[0].path, "model-00001.safetensors");
  std::string before = readText(dir / kManifestFileName);
  std::set<std::string> names = listNames(dir.path());

  EXPECT_ERROR_CONTAINS(b.writer.write(dir.str(), verbatim),
                        "/model-00001.safetensors: the current manifest "
                        "references this name with SHA-256 " +
                            ra->manifest.files[0].sha256);
  EXPECT_EQ(readText(dir / kManifestFileName), before);
  EXPECT_EQ(listNames(dir.path()), names);
  auto opened = openArtifact(dir.str());
  ASSERT_TRUE(opened) << opened.message();
  EXPECT_EQ(opened->manifest(), ra->manifest);

  // Identical bytes under the same names are fine; content-addressed names
  // replace the artifact and collect the verbatim files.
  EXPECT_TRUE(a.writer.write(dir.str(), verbatim));
  auto rb = b.writer.write(dir.str());
  ASSERT_TRUE(rb) << rb.message();
  EXPECT_EQ(rb->removed.front(), "model-00001.safetensors");
  EXPECT_EQ(listNames(dir.path()), referencedNames(rb->manifest));
}

// A file under the final name that no manifest references is someone
// else's: never replaced, whatever the naming mode.
TEST(ArtifactWriter, NeverReplacesAFileItDoesNotOwn) {
  ArtifactFixture a(1);
  WriteOptions verbatim;
  verbatim.contentAddressedNames = false;
  TempDir dir;
  writeText(dir / "model-00001.safetensors", "a user's own file");
  EXPECT_ERROR_CONTAINS(a.writer.write(dir.str(), verbatim),
                        "/model-00001.safetensors: already exists and the "
                        "current manifest does not reference it; refusing to "
                        "replace a file this writer does not own");
  EXPECT_EQ(readText(dir / "model-00001.safetensors"), "a user's own file");
  EXPECT_EQ(listNames(dir.path()),
            (std::set<std::string>{"model-00001.safetensors"}));

  // The same bytes under that name (an interrupted write of the same
  // content) may be taken over.
  TempDir dir2;
  auto first = a.writer.write(dir2.str(), verbatim);
  ASSERT_TRUE(first) << first.message();
  fs::remove(dir2 / kManifestFileName);
  auto again = a.writer.write(dir2.str(), verbatim);
  ASSERT_TRUE(again) << again.message();
  EXPECT_TRUE(openArtifact(dir2.str()));
}

// A manifest this build cannot read may belong to a newer artifact: the
// writer stops before creating anything.
TEST(ArtifactWriter, RefusesToWriteOverAnUnreadableManifest) {
  ArtifactFixture a(1);
  TempDir dir;
  std::string newer = R"({"versions": {"artifact_schema": 9}})";
  writeText(dir / kManifestFileName, newer);
  writeText(dir / "model-00001.safetensors", "referenced by that manifest?");
  EXPECT_ERROR_CONTAINS(a.writer.write(dir.str()),
                        "refusing to write over an artifact this build cannot "
                        "read");
  EXPECT_EQ(readText(dir / kManifestFileName), newer);
  EXPECT_EQ(
      listNames(dir.path()),
      (std::set<std::string>{kManifestFileName, "model-00001.safetensors"}));
}

//===----------------------------------------------------------------------===//
// Bad requests
//===----------------------------------------------------------------------===//

TEST(ArtifactWriter, BadRequestsLeaveNoTrace) {
  std::vector<uint8_t> data(64);
  {
    ArtifactWriter w(baseManifest());
    EXPECT_ERROR_CONTAINS(
        w.addPlainTensor("m.bin", {"t", DType::F32, {16}, data.data(), 64}),
        "shard names end in \".safetensors\"");
    EXPECT_ERROR_CONTAINS(
        w.addPlainTensor("d/m.safetensors",
                         {"t", DType::F32, {16}, data.data(), 64}),
        "files are written flat");
    EXPECT_ERROR_CONTAINS(
        w.addPlainTensor("../m.safetensors",
                         {"t", DType::F32, {16}, data.data(), 64}),
        "'..' component");
    EXPECT_ERROR_CONTAINS(
        w.addPlainTensor(".qtensor-tmp-m.safetensors",
                         {"t", DType::F32, {16}, data.data(), 64}),
        "reserved for temporaries");
    EXPECT_ERROR_CONTAINS(
        w.addPlainTensor("m.safetensors",
                         {"t", DType::F32, {17}, data.data(), 64}),
        "tensor \"t\": F32 [17] needs 68 bytes but 64 were given");
    EXPECT_ERROR_CONTAINS(
        w.addPlainTensor("m.safetensors", {"t", DType::F32, {16}, nullptr, 64}),
        "null data pointer");
    EXPECT_ERROR_CONTAINS(w.addFile("manifest.json", FileRole::Graph, {}),
                          "is the manifest itself");
    EXPECT_ERROR_CONTAINS(w.addFile("x.safetensors", FileRole::Shard, {}),
                          "shards are built from tensors");
    TempDir dir;
    EXPECT_ERROR_CONTAINS(w.write((dir / "out").string()), "nothing to write");
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
  {
    Manifest base = baseManifest();
    base.files.push_back({"a", 1, hexOf('0'), FileRole::Graph});
    ArtifactWriter w(base);
    ASSERT_TRUE(w.addPlainTensor("m.safetensors",
                                 {"t", DType::F32, {16}, data.data(), 64}));
    TempDir dir;
    EXPECT_ERROR_CONTAINS(w.write((dir / "out").string()),
                          "the base manifest must not list files");
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
  {
    // Inconsistent quantized parts: caught by validateManifest up front.
    ArtifactWriter w(baseManifest());
    QuantizedTensor q = quantizedParts("w", 8, 64);
    std::vector<uint8_t> codes(256), scales(8 * 3 * 2), zeros(16);
    ASSERT_TRUE(w.addQuantizedTensor(
        "m.safetensors", "w", q.logical,
        {"w.codes", DType::U8, {8, 32}, codes.data(), codes.size()},
        {"w.scales", DType::F16, {8, 3}, scales.data(), scales.size()},
        TensorData{"w.zeros", DType::U8, {8, 2}, zeros.data(), zeros.size()}));
    TempDir dir;
    EXPECT_ERROR_CONTAINS(w.write((dir / "out").string()),
                          "artifact writer: manifest.tensors[0].scales.shape: "
                          "expected [8, 2]");
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
  {
    // Duplicate names.
    ArtifactWriter w(baseManifest());
    ASSERT_TRUE(w.addPlainTensor("m.safetensors",
                                 {"t", DType::F32, {16}, data.data(), 64}));
    ASSERT_TRUE(w.addPlainTensor("n.safetensors",
                                 {"t", DType::F32, {16}, data.data(), 64}));
    TempDir dir;
    EXPECT_ERROR_CONTAINS(w.write((dir / "out").string()),
                          "manifest.tensors[1].name: duplicate tensor \"t\"");
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}

TEST(ArtifactWriter, OneWriterAtATime) {
  ArtifactFixture fx;
  TempDir dir;
  int fd = ::open(dir.str().c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  EXPECT_ERROR_CONTAINS(fx.writer.write(dir.str()),
                        "another artifact writer holds the directory's lock");
  EXPECT_ERROR_CONTAINS(removeStaleFiles(dir.str()),
                        "another artifact writer holds the directory's lock");
  EXPECT_TRUE(listNames(dir.path()).empty());
  ::close(fd);
  EXPECT_TRUE(fx.writer.write(dir.str()));
}

//===----------------------------------------------------------------------===//
// Verification inside the writer
//===----------------------------------------------------------------------===//

/// Runs `corrupt(path)` on the file a step is about to work on.
WriteOptions corruptAt(WriteStep step, const std::string &file,
                       std::function<void(const fs::path &)> corrupt,
                       const TempDir &dir) {
  WriteOptions o;
  o.hook = [=, &dir](const WriteEvent &e) -> Status {
    if (e.step == step && e.file == file)
      corrupt(dir / e.path);
    return Status::ok();
  };
  return o;
}

void flipByte(const fs::path &p, uint64_t fromEnd) {
  std::string bytes = readText(p);
  bytes[bytes.size() - fromEnd] ^= 0x40;
  // Rewrite in place: the inode must stay the one the writer created.
  int fd = ::open(p.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), 0),
            static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

TEST(ArtifactWriterVerify, CorruptPayloadIsCaughtBeforePublish) {
  ArtifactFixture fx;
  TempDir dir;
  auto r = fx.writer.write(dir.str(),
                           corruptAt(
                               WriteStep::VerifyTemp, "model-00002.safetensors",
                               [](const fs::path &p) { flipByte(p, 5); }, dir));
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find(": tensor \"layers.1.norm.weight\": the reopened "
                             "payload (file offset "),
            std::string::npos)
      << r.message();
  EXPECT_NE(r.message().find(") differs from the source bytes"),
            std::string::npos);
  EXPECT_TRUE(listNames(dir.path()).empty());
}

TEST(ArtifactWriterVerify, CorruptInventoryIsCaughtBeforePublish) {
  ArtifactFixture fx;
  TempDir dir;
  auto r = fx.writer.write(dir.str(),
                           corruptAt(
                               WriteStep::VerifyTemp, "model-00001.safetensors",
                               [](const fs::path &p) {
                                 std::string bytes = readText(p);
                                 size_t at = bytes.find("\"F16\"");
                                 ASSERT_NE(at, std::string::npos);
                                 bytes[at + 1] = 'I'; // F16 -> I16, same size
                                 writeText(p, bytes);
                               },
                               dir));
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("tensor \"layers.0.mlp.up.weight.scales\" "
                             "reopened as I16 [8, 2], written as F16 [8, 2]"),
            std::string::npos)
      << r.message();
  EXPECT_TRUE(listNames(dir.path()).empty());
}

TEST(ArtifactWriterVerify, CorruptBlobIsCaughtBeforePublish) {
  ArtifactFixture fx;
  TempDir dir;
  auto r = fx.writer.write(dir.str(),
                           corruptAt(
                               WriteStep::VerifyTemp, "graph.mlir",
                               [](const fs::path &p) { flipByte(p, 1); }, dir));
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("the reopened bytes differ from the source bytes"),
            std::string::npos)
      << r.message();
  EXPECT_TRUE(listNames(dir.path()).empty());
}

TEST(ArtifactWriterVerify, SwappedFinalFileIsCaughtBeforePublish) {
  ArtifactFixture fx;
  TempDir dir;
  WriteOptions o;
  o.hook = [&](const WriteEvent &e) -> Status {
    if (e.step != WriteStep::VerifyManifest)
      return Status::ok();
    // Replace a verified shard by a copy with identical bytes: a different
    // inode is not the verified file.
    for (const std::string &n : listNames(dir.path()))
      if (n.rfind("model-00001.", 0) == 0) {
        fs::copy_file(dir / n, dir / "copy");
        fs::rename(dir / "copy", dir / n);
      }
    return Status::ok();
  };
  auto r = fx.writer.write(dir.str(), o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("is no longer the file that was written and "
                             "verified"),
            std::string::npos)
      << r.message();
  EXPECT_FALSE(fs::exists(dir / kManifestFileName));
}

//===----------------------------------------------------------------------===//
// Failure injection at every step
//===----------------------------------------------------------------------===//

/// Fails each event of writing `next` in turn (over `previous`, if any) and
/// checks the directory afterwards. Returns the steps that were failed.
std::set<WriteStep> injectEverywhere(const ArtifactWriter *previous,
                                     const ArtifactWriter &next) {
  std::vector<WriteEvent> all = dryRun(previous, next);
  Manifest expectedNew;
  {
    TempDir ref;
    auto r = next.write(ref.str());
    EXPECT_TRUE(r);
    expectedNew = r->manifest;
  }
  std::set<WriteStep> failed;
  for (size_t k = 0; k < all.size(); ++k) {
    SCOPED_TRACE("failing event " + std::to_string(k) + " (" +
                 toString(all[k].step) + " " + all[k].file + ")");
    TempDir dir;
    std::optional<Manifest> old;
    std::string oldText;
    std::set<std::string> oldNames;
    if (previous) {
      auto r = previous->write(dir.str());
      EXPECT_TRUE(r);
      old = r->manifest;
      oldText = readText(dir / kManifestFileName);
      oldNames = listNames(dir.path());
    }
    Injection inj;
    inj.failAt = k;
    auto r = next.write(dir.str(), inj.options());
    EXPECT_TRUE(inj.failed.has_value());
    if (!inj.failed)
      continue;
    EXPECT_EQ(inj.failed->step, all[k].step);
    failed.insert(inj.failed->step);
    WriteStep step = inj.failed->step;

    if (step == WriteStep::CollectGarbage) {
      // After the publish: success, with the failure as a warning.
      EXPECT_TRUE(r) << r.message();
      if (r)
        EXPECT_EQ(r->warnings.size(), 1u);
    } else {
      EXPECT_FALSE(r);
      if (!r) {
        EXPECT_NE(r.message().find("injected failure"), std::string::npos)
            << r.message();
        EXPECT_NE(r.message().find(toString(step)), std::string::npos)
            << r.message();
      }
    }

    std::optional<Manifest> now = publishedArtifact(dir);
    if (step <= WriteStep::PublishManifest) {
      // Before the publish: exactly the previous state, nothing left over.
      if (old) {
        EXPECT_EQ(readText(dir / kManifestFileName), oldText);
        EXPECT_TRUE(now);
        if (now)
          EXPECT_EQ(*now, *old);
        EXPECT_EQ(listNames(dir.path()), oldNames);
      } else {
        EXPECT_FALSE(now);
        EXPECT_TRUE(listNames(dir.path()).empty());
      }
    } else {
      // After the publish: the new artifact, complete.
      EXPECT_TRUE(now);
      if (now)
        EXPECT_EQ(*now, expectedNew);
      for (const std::string &n : listNames(dir.path()))
        EXPECT_FALSE(isTemp(n)) << n;
    }
  }
  return failed;
}

TEST(ArtifactWriterInjection, EveryStepInAFreshDirectory) {
  ArtifactFixture fx;
  std::set<WriteStep> failed = injectEverywhere(nullptr, fx.writer);
  // Every step but collection (nothing to collect) was failed at least once.
  for (int s = 0; s <= static_cast<int>(WriteStep::SyncPublished); ++s)
    EXPECT_TRUE(failed.count(static_cast<WriteStep>(s)))
        << toString(static_cast<WriteStep>(s));
}

TEST(ArtifactWriterInjection, EveryStepOverADifferentArtifact) {
  ArtifactFixture a(1), b(2);
  std::set<WriteStep> failed = injectEverywhere(&a.writer, b.writer);
  for (int s = 0; s <= static_cast<int>(WriteStep::CollectGarbage); ++s)
    EXPECT_TRUE(failed.count(static_cast<WriteStep>(s)))
        << toString(static_cast<WriteStep>(s));
}

TEST(ArtifactWriterInjection, EveryStepOverAnArtifactSharingFiles) {
  // The new artifact re-writes the old one's files byte for byte under the
  // same names: a rollback must not remove them.
  ArtifactFixture fx;
  ArtifactWriter more = fx.writer;
  ASSERT_TRUE(more.addFile("extra.bin", FileRole::Trace, pattern(10, 9)));
  injectEverywhere(&fx.writer, more);
}

TEST(ArtifactWriterInjection, VerbatimNamesOverAnArtifact) {
  // Verbatim names over a content-addressed artifact: a failure after every
  // rename removes the verbatim names this write created. (A stray file under
  // such a name is refused up front: NeverReplacesAFileItDoesNotOwn.)
  ArtifactFixture a(1), b(2);
  TempDir dir;
  ASSERT_TRUE(a.writer.write(dir.str()));
  Injection inj;
  inj.failAt = 0;
  WriteOptions o = inj.options();
  o.contentAddressedNames = false;
  // Fail at the manifest write: after all renames.
  std::vector<WriteEvent> all;
  {
    TempDir probe;
    ASSERT_TRUE(a.writer.write(probe.str()));
    Injection counter;
    WriteOptions co = counter.options();
    co.contentAddressedNames = false;
    ASSERT_TRUE(b.writer.write(probe.str(), co));
    all = counter.events;
  }
  size_t at = 0;
  while (at < all.size() && all[at].step != WriteStep::WriteManifest)
    ++at;
  ASSERT_LT(at, all.size());
  inj.failAt = at;
  std::string before = readText(dir / kManifestFileName);
  EXPECT_FALSE(b.writer.write(dir.str(), o));
  EXPECT_EQ(readText(dir / kManifestFileName), before);
  EXPECT_TRUE(openArtifact(dir.str()));
  EXPECT_FALSE(fs::exists(dir / "graph.mlir"));
  EXPECT_FALSE(fs::exists(dir / "model-00001.safetensors"));
}

//===----------------------------------------------------------------------===//
// Leftovers
//===----------------------------------------------------------------------===//

TEST(ArtifactWriterCleanup, WriterSweepsStaleTemporaries) {
  ArtifactFixture fx;
  TempDir dir;
  writeText(dir / ".qtensor-tmp-999-abc-model-00001.safetensors", "partial");
  writeText(dir / "notes.txt", "user file");
  auto r = fx.writer.write(dir.str());
  ASSERT_TRUE(r);
  std::set<std::string> expected = referencedNames(r->manifest);
  expected.insert("notes.txt");
  EXPECT_EQ(listNames(dir.path()), expected);
}

TEST(ArtifactWriterCleanup, RemoveStaleFilesRemovesOnlyWhatIsProvablyOurs) {
  ArtifactFixture fx;
  TempDir dir;
  auto r = fx.writer.write(dir.str());
  ASSERT_TRUE(r);
  std::string orphanBytes = "an orphan from a killed writer";
  std::string sha =
      *sha256Hex(reinterpret_cast<const uint8_t *>(orphanBytes.data()),
                 orphanBytes.size());
  std::string orphan = "model-00003." + sha.substr(0, 16) + ".safetensors";
  std::string orphanNoExt = "blob." + sha.substr(0, 16);
  std::string decoy = "model-00004.0123456789abcdef.safetensors";
  writeText(dir / orphan, orphanBytes);
  writeText(dir / orphanNoExt, orphanBytes);
  writeText(dir / decoy, "not matching its address");
  writeText(dir / "README.md", "user file");
  writeText(dir / ".qtensor-tmp-1-2-x", "temp");

  auto kept = removeStaleFiles(dir.str(), /*keepOrphans=*/true);
  ASSERT_TRUE(kept) << kept.message();
  EXPECT_EQ(*kept, std::vector<std::string>{".qtensor-tmp-1-2-x"});
  EXPECT_TRUE(fs::exists(dir / orphan));

  auto removed = removeStaleFiles(dir.str());
  ASSERT_TRUE(removed) << removed.message();
  std::set<std::string> got(removed->begin(), removed->end());
  EXPECT_EQ(got, (std::set<std::string>{orphanNoExt, orphan}));
  std::set<std::string> expected = referencedNames(r->manifest);
  expected.insert({decoy, "README.md"});
  EXPECT_EQ(listNames(dir.path()), expected);
  EXPECT_TRUE(openArtifact(dir.str()));
}

TEST(ArtifactWriterCleanup, OrphansAreKeptWhenTheManifestIsUnreadable) {
  TempDir dir;
  std::string bytes = "x";
  std::string sha =
      *sha256Hex(reinterpret_cast<const uint8_t *>(bytes.data()), 1);
  std::string orphan = "a." + sha.substr(0, 16) + ".bin";
  writeText(dir / orphan, bytes);
  writeText(dir / kManifestFileName, "{ broken");
  auto removed = removeStaleFiles(dir.str());
  ASSERT_TRUE(removed);
  EXPECT_TRUE(removed->empty());
  EXPECT_TRUE(fs::exists(dir / orphan));
}

//===----------------------------------------------------------------------===//
// kill -9
//===----------------------------------------------------------------------===//

/// Writes `writer` into `dir` in a child process. With `pauseAt`, the child
/// stops in the hook before event `pauseAt` until killed. Returns the pid.
pid_t spawnWriter(const ArtifactWriter &writer, const std::string &dir,
                  std::optional<size_t> pauseAt, int readyFd) {
  pid_t pid = ::fork();
  if (pid != 0)
    return pid;
  // Child: no gtest from here on.
  WriteOptions o;
  size_t seen = 0;
  if (pauseAt)
    o.hook = [&](const WriteEvent &) -> Status {
      if (seen++ == *pauseAt) {
        char c = 1;
        (void)!::write(readyFd, &c, 1);
        while (true)
          ::pause();
      }
      return Status::ok();
    };
  auto r = writer.write(dir, o);
  ::_exit(r ? 0 : 1);
}

void killAndReap(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

/// After a kill: the invariant, then cleanup leaves exactly the published
/// artifact. `allowed` are the manifests that may be published.
void checkAfterKill(const TempDir &dir, const std::vector<Manifest> &allowed,
                    bool mayBeEmpty) {
  std::optional<Manifest> now = publishedArtifact(dir);
  if (!now) {
    EXPECT_TRUE(mayBeEmpty) << "the previous manifest disappeared";
  } else {
    bool known =
        std::find(allowed.begin(), allowed.end(), *now) != allowed.end();
    EXPECT_TRUE(known) << "published manifest is neither the old nor the new";
  }
  auto removed = removeStaleFiles(dir.str());
  ASSERT_TRUE(removed) << removed.message();
  std::set<std::string> expected;
  if (now)
    expected = referencedNames(*now);
  EXPECT_EQ(listNames(dir.path()), expected);
  if (now)
    EXPECT_TRUE(openArtifact(dir.str()));
}

TEST(ArtifactWriterKill, KilledBeforeEveryStep) {
  ArtifactFixture a(1), b(2);
  std::vector<WriteEvent> events = dryRun(&a.writer, b.writer);
  Manifest oldM, newM;
  {
    TempDir ref;
    oldM = a.writer.write(ref.str())->manifest;
    newM = b.writer.write(ref.str())->manifest;
  }
  for (bool withOld : {false, true}) {
    size_t count = withOld ? events.size() : dryRun(nullptr, b.writer).size();
    for (size_t k = 0; k < count; ++k) {
      SCOPED_TRACE((withOld ? "over an artifact, " : "fresh, ") +
                   std::string("killed before event ") + std::to_string(k));
      TempDir dir;
      if (withOld)
        ASSERT_TRUE(a.writer.write(dir.str()));
      int pipeFds[2];
      ASSERT_EQ(::pipe(pipeFds), 0);
      pid_t pid = spawnWriter(b.writer, dir.str(), k, pipeFds[1]);
      ASSERT_GT(pid, 0);
      // Only the child may hold the write end: if it exits early, read()
      // sees end-of-file instead of waiting forever.
      ::close(pipeFds[1]);
      char c;
      // Wait until the child sits before event k, then kill it there.
      ASSERT_EQ(::read(pipeFds[0], &c, 1), 1);
      killAndReap(pid);
      ::close(pipeFds[0]);
      std::vector<Manifest> allowed = {newM};
      if (withOld)
        allowed.push_back(oldM);
      checkAfterKill(dir, allowed, /*mayBeEmpty=*/!withOld);
    }
  }
}

/// A large artifact (4 shards of 10 MiB) so that kills land mid-write.
class LargeFixture {
public:
  explicit LargeFixture(uint32_t seed) : writer(baseManifest()) {
    for (int s = 0; s < 4; ++s) {
      data.push_back(pattern(10u << 20, seed * 100 + s));
      std::string shard = "model-0000" + std::to_string(s + 1) + ".safetensors";
      EXPECT_TRUE(writer.addPlainTensor(
          shard, {"w" + std::to_string(s),
                  DType::U8,
                  {static_cast<int64_t>(data.back().size())},
                  data.back().data(),
                  data.back().size()}));
    }
  }
  std::vector<std::vector<uint8_t>> data;
  ArtifactWriter writer;
};

TEST(ArtifactWriterKill, KilledAtRandomMomentsOfALargeWrite) {
  LargeFixture a(1), b(2);
  Manifest oldM, newM;
  double seconds;
  {
    TempDir ref;
    oldM = a.writer.write(ref.str())->manifest;
    auto t0 = std::chrono::steady_clock::now();
    newM = b.writer.write(ref.str())->manifest;
    seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
  }
  int interrupted = 0, leftovers = 0;
  for (bool withOld : {false, true}) {
    for (double fraction : {0.0, 0.05, 0.15, 0.3, 0.45, 0.6, 0.75, 0.9, 1.2}) {
      SCOPED_TRACE((withOld ? "over an artifact, " : "fresh, ") +
                   std::string("killed at ") + std::to_string(fraction) +
                   " of " + std::to_string(seconds) + " s");
      TempDir dir;
      if (withOld)
        ASSERT_TRUE(a.writer.write(dir.str()));
      pid_t pid = spawnWriter(b.writer, dir.str(), std::nullopt, -1);
      ASSERT_GT(pid, 0);
      std::this_thread::sleep_for(
          std::chrono::duration<double>(fraction * seconds));
      killAndReap(pid);
      std::optional<Manifest> now = publishedArtifact(dir);
      if (!now || *now != newM)
        ++interrupted;
      for (const std::string &n : listNames(dir.path()))
        if (!now || !referencedNames(*now).count(n)) {
          ++leftovers;
          break;
        }
      std::vector<Manifest> allowed = {newM};
      if (withOld)
        allowed.push_back(oldM);
      checkAfterKill(dir, allowed, /*mayBeEmpty=*/!withOld);
    }
  }
  // A kill at 0 s cannot find the write finished.
  EXPECT_GE(interrupted, 2);
  RecordProperty("interrupted", interrupted);
  RecordProperty("kills_leaving_files", leftovers);
}

} // namespace

//===----------------------------------------------------------------------===//
// Filled tensors: bytes produced while the shard is written (the streamed
// export's path), checked against their declared SHA-256
//===----------------------------------------------------------------------===//

namespace {

/// A writer with one plain tensor of `bytes` that is filled from `source`
/// (declared with `declared`, the real digest when empty).
ArtifactWriter filledWriter(const std::vector<uint8_t> &source,
                            std::string declared = "", bool failFill = false) {
  ArtifactWriter writer(baseManifest());
  TensorData t;
  t.name = "embed.weight";
  t.dtype = DType::U8;
  t.shape = {static_cast<int64_t>(source.size())};
  t.size = source.size();
  t.sha256 =
      declared.empty() ? *sha256Hex(source.data(), source.size()) : declared;
  t.fill = [&source, failFill](uint8_t *out, uint64_t size) -> Status {
    if (failFill)
      return makeError("spool read failed");
    std::memcpy(out, source.data(), size);
    return Status::ok();
  };
  EXPECT_TRUE(writer.addPlainTensor("plain.safetensors", t));
  EXPECT_TRUE(writer.addFile("graph.mlir", FileRole::Graph, pattern(10, 3)));
  return writer;
}

} // namespace

TEST(ArtifactWriterFill, FilledTensorIsWrittenAndReopenedByDigest) {
  std::vector<uint8_t> source = pattern(100000, 42);
  TempDir dir;
  auto r = filledWriter(source).write(dir.str());
  ASSERT_TRUE(r) << r.message();
  auto a = openArtifact(dir.str());
  ASSERT_TRUE(a) << a.message();
  auto t = a->tensor("embed.weight");
  ASSERT_TRUE(t) << t.message();
  ASSERT_TRUE(t->data);
  ASSERT_EQ(t->data->byteSize(), source.size());
  EXPECT_EQ(std::memcmp(t->data->data, source.data(), source.size()), 0);
}

TEST(ArtifactWriterFill, BytesOtherThanDeclaredAreRefusedAndNothingPublished) {
  std::vector<uint8_t> source = pattern(4096, 7);
  TempDir dir;
  auto r = filledWriter(source, std::string(64, 'a')).write(dir.str());
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("embed.weight"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("the filled bytes (file offset "),
            std::string::npos)
      << r.message();
  EXPECT_NE(r.message().find(", but " + std::string(64, 'a') + " was declared"),
            std::string::npos)
      << r.message();
  EXPECT_FALSE(fs::exists(dir / kManifestFileName));
  for (const std::string &name : listNames(dir.path()))
    EXPECT_FALSE(isTemp(name)) << name;
}

TEST(ArtifactWriterFill, AFailingFillNamesTheTensorAndPublishesNothing) {
  std::vector<uint8_t> source = pattern(4096, 9);
  TempDir dir;
  auto r = filledWriter(source, "", /*failFill=*/true).write(dir.str());
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("embed.weight"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("spool read failed"), std::string::npos)
      << r.message();
  EXPECT_FALSE(fs::exists(dir / kManifestFileName));
}

TEST(ArtifactWriterFill, AFilledTensorMustDeclareItsDigest) {
  ArtifactWriter writer(baseManifest());
  TensorData t{"w", DType::U8, {4}, nullptr, 4};
  t.fill = [](uint8_t *, uint64_t) { return Status::ok(); };
  Status s = writer.addPlainTensor("plain.safetensors", t);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("declares its SHA-256"), std::string::npos)
      << s.message();
}

// The page-release helpers the streamed passes use: what was released stays
// readable (re-read from the file), and the streaming digest is the digest.
TEST(MappedPages, ReleasedPagesStayReadableAndHashTheSame) {
  TempDir dir;
  std::vector<uint8_t> bytes = pattern(3 * 1024 * 1024 + 123, 5);
  std::string path = (dir / "blob.bin").string();
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  auto mapped = MappedFile::open(path);
  ASSERT_TRUE(mapped) << mapped.message();
  auto streamed = sha256HexOfMapped(mapped->data(), mapped->size());
  auto whole = sha256Hex(bytes.data(), bytes.size());
  ASSERT_TRUE(streamed && whole);
  EXPECT_EQ(*streamed, *whole);
  // Odd, unaligned ranges: only whole pages inside them are given back.
  releaseMappedPages(mapped->data() + 17, mapped->size() - 40);
  releaseMappedPages(mapped->data(), 1);
  releaseMappedPages(nullptr, 100);
  EXPECT_EQ(std::memcmp(mapped->data(), bytes.data(), bytes.size()), 0);
}
