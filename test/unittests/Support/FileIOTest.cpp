//===- FileIOTest.cpp - Reads, writes and mappings under faults -----------===//
//
// Each fault a disk or a filesystem produces, injected under the libraries'
// own I/O (InjectedFileFaults.h) or made for real (truncating a mapped
// file, an address-space limit), and what the caller sees: an error naming
// the file and the byte offset, nothing half-written, no crash.
//
//===----------------------------------------------------------------------===//

#include "AddressSpaceLimit.h"
#include "InjectedFileFaults.h"
#include "TestAssertions.h"
#include "TestTempDir.h"

#include "qtensor/Support/FileIO.h"
#include "qtensor/Support/MappedFile.h"
#include "qtensor/Support/Sha256.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unistd.h>
#include <vector>

using namespace qtensor;
using qtensor::test::contains;
using qtensor::test::InjectedFileFaults;

namespace {

struct Scratch : qtensor::test::TempDir {
  Scratch() : qtensor::test::TempDir("qtensor-fileio-test") {}
};

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = uint8_t(i * 131 + i / 251);
  return v;
}

void writeFile(const std::filesystem::path &p, const std::vector<uint8_t> &v) {
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char *>(v.data()),
             std::streamsize(v.size()));
}

int openRead(const std::filesystem::path &p) {
  return ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
}

} // namespace

TEST(ReadAll, RetriesShortReadsAndInterruptions) {
  Scratch dir;
  std::vector<uint8_t> bytes = pattern(100000);
  writeFile(dir / "a.bin", bytes);
  InjectedFileFaults faults;
  faults.maxRead = 7;
  faults.interrupt = true;
  ScopedFileLayer scoped(faults);
  int fd = openRead(dir / "a.bin");
  std::vector<uint8_t> out(bytes.size() - 10);
  Status s = readAll(fd, out.data(), out.size(), 10, "a.bin");
  ::close(fd);
  ASSERT_TRUE(bool(s)) << s.message();
  EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes.begin() + 10));
  EXPECT_GT(faults.faultyCalls.load(), 2 * out.size() / 7);
}

TEST(ReadAll, AnIOErrorNamesTheFileAndTheOffset) {
  Scratch dir;
  writeFile(dir / "a.bin", pattern(20000));
  InjectedFileFaults faults;
  faults.readErrorAt = 12288;
  ScopedFileLayer scoped(faults);
  int fd = openRead(dir / "a.bin");
  std::vector<uint8_t> out(20000);
  Status s = readAll(fd, out.data(), out.size(), 0, "shard a.bin");
  ::close(fd);
  ASSERT_FALSE(bool(s));
  EXPECT_TRUE(contains(s.message(), "shard a.bin: read failed at byte "
                                    "offset 12288: Input/output error"));
}

TEST(ReadAll, SaysWhereATruncatedFileEnds) {
  Scratch dir;
  writeFile(dir / "a.bin", pattern(5000));
  int fd = openRead(dir / "a.bin");
  std::vector<uint8_t> out(8000);
  Status s = readAll(fd, out.data(), out.size(), 0, "a.bin");
  ::close(fd);
  ASSERT_FALSE(bool(s));
  EXPECT_TRUE(contains(s.message(), "a.bin: the file ends at byte 5000, but "
                                    "8000 bytes were expected"));
}

TEST(WriteAll, AFullDiskNamesTheFileAndTheOffset) {
  Scratch dir;
  InjectedFileFaults faults;
  faults.spaceLeft = 3000;
  faults.interrupt = true;
  ScopedFileLayer scoped(faults);
  int fd =
      ::open((dir / "out.bin").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  std::vector<uint8_t> bytes = pattern(10000);
  uint64_t offset = 0;
  Status s = writeAll(fd, bytes.data(), bytes.size(), "out.bin", offset);
  ::close(fd);
  ASSERT_FALSE(bool(s));
  EXPECT_TRUE(contains(s.message(), "out.bin: write failed at byte offset "
                                    "3000: No space left on device"));
  EXPECT_EQ(offset, 3000u);
}

TEST(WriteFileAtomically, AFullDiskLeavesTheOldFileAndNoTemporary) {
  Scratch dir;
  std::filesystem::path target = dir / "report.json";
  writeFile(target, {'o', 'l', 'd'});
  for (int variant = 0; variant < 2; ++variant) {
    InjectedFileFaults faults;
    if (variant == 0)
      faults.spaceLeft = 100;
    else
      faults.failFsync = true;
    ScopedFileLayer scoped(faults);
    Status s = writeFileAtomically(target.string(), std::string(5000, 'x'));
    ASSERT_FALSE(bool(s));
    EXPECT_TRUE(contains(s.message(),
                         variant == 0 ? "No space left on device"
                                      : "fsync failed: Input/output error"));
    size_t entries = 0;
    for ([[maybe_unused]] const auto &e :
         std::filesystem::directory_iterator(dir.path()))
      ++entries;
    EXPECT_EQ(entries, 1u) << "a temporary file was left behind";
    std::ifstream in(target);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text, "old");
  }
}

TEST(ReadCopy, KeepsTheBytesItHashedWhateverHappensToTheFile) {
  Scratch dir;
  std::vector<uint8_t> bytes = pattern(3 * (8 << 20) + 12345);
  writeFile(dir / "w.bin", bytes);
  auto expected = sha256Hex(bytes.data(), bytes.size());
  ASSERT_TRUE(bool(expected));
  auto hash = Sha256Stream::create();
  ASSERT_TRUE(bool(hash));
  size_t chunks = 0;
  auto copy =
      MappedFile::readCopy(openRead(dir / "w.bin"), "w.bin", bytes.size(),
                           [&](const uint8_t *p, size_t n) {
                             ++chunks;
                             return hash->update(p, n);
                           });
  ASSERT_TRUE(bool(copy)) << copy.message();
  EXPECT_FALSE(copy->mapsFile());
  EXPECT_EQ(chunks, 4u);
  EXPECT_EQ(*hash->finishHex(), *expected);
  // Truncate and rewrite the file: the copy is what was hashed.
  std::filesystem::resize_file(dir / "w.bin", 0);
  writeFile(dir / "w.bin", pattern(10));
  ASSERT_EQ(copy->size(), bytes.size());
  EXPECT_EQ(std::memcmp(copy->data(), bytes.data(), bytes.size()), 0);
  // Giving pages back is for file mappings: on a copy it must not zero it.
  releaseMappedPages(copy->data(), size_t(copy->size()));
  EXPECT_EQ(std::memcmp(copy->data(), bytes.data(), bytes.size()), 0);
}

// A file of more than two chunks is read on a second thread, ahead of the
// hash: an I/O error there, or a hash that fails, still ends the read with
// that error, and the chunks are handed over in order.
TEST(ReadCopy, ReadingAheadKeepsOrderAndErrors) {
  Scratch dir;
  const uint64_t chunk = 8 << 20;
  std::vector<uint8_t> bytes = pattern(5 * chunk + 77);
  writeFile(dir / "w.bin", bytes);
  std::vector<uint64_t> offsets;
  auto inOrder =
      MappedFile::readCopy(openRead(dir / "w.bin"), "w.bin", bytes.size(),
                           [&](const uint8_t *p, size_t n) {
                             offsets.push_back(reinterpret_cast<uint64_t>(p) -
                                               offsets.size() * chunk);
                             EXPECT_LE(n, chunk);
                             return Status::ok();
                           });
  ASSERT_TRUE(bool(inOrder)) << inOrder.message();
  ASSERT_EQ(offsets.size(), 6u);
  for (uint64_t base : offsets) // every chunk at its place in one copy
    EXPECT_EQ(base, reinterpret_cast<uint64_t>(inOrder->data()));

  {
    InjectedFileFaults faults;
    faults.readErrorAt = 3 * chunk + 4096;
    ScopedFileLayer scoped(faults);
    size_t handed = 0;
    auto failed =
        MappedFile::readCopy(openRead(dir / "w.bin"), "w.bin", bytes.size(),
                             [&](const uint8_t *, size_t) {
                               ++handed;
                               return Status::ok();
                             });
    ASSERT_FALSE(bool(failed));
    EXPECT_TRUE(contains(failed.message(), "w.bin")) << failed.message();
    EXPECT_TRUE(contains(failed.message(), std::to_string(3 * chunk + 4096)))
        << failed.message();
    EXPECT_LE(handed, 3u) << "no chunk past the error was handed over";
  }

  size_t calls = 0;
  auto refused =
      MappedFile::readCopy(openRead(dir / "w.bin"), "w.bin", bytes.size(),
                           [&](const uint8_t *, size_t) -> Status {
                             if (++calls == 2)
                               return makeError("hash refused chunk 2");
                             return Status::ok();
                           });
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(refused.message(), "hash refused chunk 2");
  EXPECT_EQ(calls, 2u);
}

// readCopyInPieces: each piece read and handed over, chunk by chunk in
// order, by one thread; the copy holds the file; an I/O error in one piece,
// a refused chunk, or a file that ends early is the error returned.
TEST(ReadCopyInPieces, PiecesArriveInOrderAndErrorsEndTheRead) {
  Scratch dir;
  const uint64_t piece = 20 << 20; // 2.5 read chunks a piece
  std::vector<uint8_t> bytes = pattern(3 * piece + 12345);
  writeFile(dir / "w.bin", bytes);
  std::mutex mutex;
  std::vector<std::vector<std::pair<uint64_t, size_t>>> seen(4);
  auto copy = MappedFile::readCopyInPieces(
      openRead(dir / "w.bin"), "w.bin", bytes.size(), piece,
      [&](size_t i, const uint8_t *p, size_t n) -> Status {
        std::lock_guard<std::mutex> lock(mutex);
        if (i >= seen.size())
          return makeError("piece ", i, " out of range");
        seen[i].push_back({reinterpret_cast<uint64_t>(p), n});
        return Status::ok();
      });
  ASSERT_TRUE(bool(copy)) << copy.message();
  EXPECT_FALSE(copy->mapsFile());
  ASSERT_EQ(copy->size(), bytes.size());
  EXPECT_EQ(std::memcmp(copy->data(), bytes.data(), bytes.size()), 0);
  uint64_t base = reinterpret_cast<uint64_t>(copy->data());
  for (size_t i = 0; i < seen.size(); ++i) {
    uint64_t at = i * piece; // each piece's chunks cover it, in order
    for (const auto &[address, n] : seen[i]) {
      EXPECT_EQ(address - base, at) << "piece " << i;
      at += n;
    }
    EXPECT_EQ(at, std::min<uint64_t>((i + 1) * piece, bytes.size()))
        << "piece " << i;
  }

  {
    InjectedFileFaults faults;
    faults.readErrorAt = 2 * piece + 4096;
    ScopedFileLayer scoped(faults);
    auto failed = MappedFile::readCopyInPieces(
        openRead(dir / "w.bin"), "w.bin", bytes.size(), piece,
        [](size_t, const uint8_t *, size_t) { return Status::ok(); });
    ASSERT_FALSE(bool(failed));
    EXPECT_TRUE(contains(failed.message(), "w.bin")) << failed.message();
    EXPECT_TRUE(contains(failed.message(), std::to_string(2 * piece + 4096)))
        << failed.message();
  }

  auto refused = MappedFile::readCopyInPieces(
      openRead(dir / "w.bin"), "w.bin", bytes.size(), piece,
      [](size_t i, const uint8_t *, size_t) -> Status {
        if (i == 1)
          return makeError("hash refused piece 1");
        return Status::ok();
      });
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(refused.message(), "hash refused piece 1");

  auto shorter = MappedFile::readCopyInPieces(
      openRead(dir / "w.bin"), "w.bin", bytes.size() + 4096, piece,
      [](size_t, const uint8_t *, size_t) { return Status::ok(); });
  ASSERT_FALSE(bool(shorter));
  EXPECT_TRUE(contains(shorter.message(), "w.bin: the file ends at byte " +
                                              std::to_string(bytes.size())))
      << shorter.message();
}

TEST(ReadCopy, AFileShorterThanDeclaredIsAnError) {
  Scratch dir;
  writeFile(dir / "w.bin", pattern(4096));
  auto copy = MappedFile::readCopy(openRead(dir / "w.bin"), "w.bin", 8192);
  ASSERT_FALSE(bool(copy));
  EXPECT_TRUE(contains(copy.message(), "w.bin: the file ends at byte 4096"));
}

TEST(ReleaseMappedPages, OnlyActsInsideAFileMapping) {
  Scratch dir;
  std::vector<uint8_t> bytes = pattern(5 * 4096);
  writeFile(dir / "m.bin", bytes);
  auto mapped = MappedFile::open((dir / "m.bin").string());
  ASSERT_TRUE(bool(mapped)) << mapped.message();
  EXPECT_TRUE(mapped->mapsFile());
  releaseMappedPages(mapped->data(), size_t(mapped->size()));
  EXPECT_EQ(std::memcmp(mapped->data(), bytes.data(), bytes.size()), 0);
  // Heap memory is left alone (MADV_DONTNEED would zero private pages).
  std::vector<uint8_t> heap = pattern(64 * 4096);
  std::vector<uint8_t> before = heap;
  releaseMappedPages(heap.data(), heap.size());
  EXPECT_EQ(heap, before);
}

TEST(MappedFileFaults, ATruncatedMappingIsANamedErrorNotACrash) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Scratch dir;
  std::vector<uint8_t> bytes = pattern(4 * 4096);
  writeFile(dir / "shard.bin", bytes);
  std::string path = (dir / "shard.bin").string();
  auto child = [&] {
    installMappedFileFaultHandler("fileio-test");
    auto mapped = MappedFile::open(path);
    if (!mapped)
      ::_exit(3);
    std::filesystem::resize_file(path, 4096);
    // The death-test child runs this test body again, with a scratch
    // directory of its own that no destructor will remove: remove it now
    // (the mapping keeps the truncated file alive).
    std::error_code ec;
    std::filesystem::remove_all(dir.path(), ec);
    volatile uint8_t b = mapped->data()[2 * 4096 + 5];
    (void)b;
    ::_exit(0);
  };
  EXPECT_EXIT(
      child(), ::testing::ExitedWithCode(kMappedFileFaultExitCode),
      "fileio-test: error: .*shard.bin: reading byte 8197 of the mapped file "
      "failed \\(SIGBUS\\): the file was truncated");
}

TEST(MappedFileFaults, ASIGBUSElsewhereKeepsItsDefaultAction) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto child = [&] {
    installMappedFileFaultHandler("fileio-test");
    ::raise(SIGBUS);
    ::_exit(0);
  };
  EXPECT_EXIT(child(), ::testing::KilledBySignal(SIGBUS), "");
}

#ifndef QTENSOR_SANITIZED
// Sanitizers reserve terabytes of address space: RLIMIT_AS cannot be
// tested under them.
TEST(ReadCopy, AnAddressSpaceLimitIsAnErrorNotACrash) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Scratch dir;
  const size_t size = 64u << 20;
  {
    std::ofstream out(dir / "big.bin", std::ios::binary);
    out.seekp(std::streamoff(size - 1));
    out.put('x');
  }
  std::string path = (dir / "big.bin").string();
  auto child = [&] {
    // What the process has now, plus 16 MiB: the 64 MiB copy cannot fit.
    qtensor::test::limitAddressSpaceTo(uint64_t(16) << 20);
    auto copy =
        MappedFile::readCopy(::open(path.c_str(), O_RDONLY), "big.bin", size);
    // This child's own scratch directory (it reran the test body).
    std::error_code ec;
    std::filesystem::remove_all(dir.path(), ec);
    if (copy)
      ::_exit(0);
    std::fprintf(stderr, "%s\n", copy.message().c_str());
    ::_exit(3);
  };
  EXPECT_EXIT(
      child(), ::testing::ExitedWithCode(3),
      "big.bin: cannot allocate 67108864 bytes of memory to read it into: "
      "Cannot allocate memory");
}
#endif
