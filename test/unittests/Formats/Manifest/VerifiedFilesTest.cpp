//===- VerifiedFilesTest.cpp - Chunk digests: written, checked, refused ---===//

#include "ArtifactTestSupport.h"

#include "qtensor/Formats/VerifiedFiles.h"
#include "qtensor/Support/Sha256.h"

#include <algorithm>
#include <cstring>
#include <functional>

using namespace arttest;

namespace {

constexpr uint64_t kChunk = kMinDigestChunkBytes; // 1 MiB
constexpr uint64_t kPayload = 3 * kChunk + 12345; // 4 pieces with the header

/// An artifact of one shard holding a 3 MiB-and-a-bit plain tensor (4 chunk
/// digests at 1 MiB) and a small graph file (none).
class ChunkedArtifactTest : public ::testing::Test {
protected:
  void SetUp() override {
    payload = pattern(kPayload, 7);
    ArtifactWriter writer(baseManifest());
    ASSERT_TRUE(writer.addPlainTensor(
        "model.safetensors",
        {"big", DType::U8, {int64_t(kPayload)}, payload.data(), kPayload}));
    ASSERT_TRUE(writer.addFile("graph.mlir", FileRole::Graph, pattern(100, 3)));
    WriteOptions options;
    options.digestChunkBytes = kChunk;
    auto r = writer.write(dir.str(), options);
    ASSERT_TRUE(r) << r.message();
    written = r->manifest;
    for (const FileEntry &f : written.files)
      (f.role == FileRole::Shard ? shard : graph) = &f;
    ASSERT_TRUE(shard && graph);
  }

  std::vector<Expected<MappedFile>>
  hold(HoldAs as, DigestCheck check = DigestCheck::Once) {
    auto root = ArtifactRoot::open(dir.str());
    EXPECT_TRUE(root) << root.message();
    HoldOptions options;
    options.as = as;
    options.check = check;
    return holdVerifiedFiles(*root, {shard, graph}, options);
  }

  void editManifest(const std::function<void(json &)> &edit) {
    json j = json::parse(readText(dir / "manifest.json"));
    edit(j);
    writeText(dir / "manifest.json", j.dump(2));
  }

  std::vector<uint8_t> payload;
  TempDir dir;
  Manifest written;
  const FileEntry *shard = nullptr, *graph = nullptr;
};

TEST_F(ChunkedArtifactTest, WriterListsOneDigestPerPieceOfLongFilesOnly) {
  ASSERT_TRUE(shard->chunks.has_value());
  EXPECT_FALSE(graph->chunks.has_value()); // one chunk: the SHA-256 says it
  EXPECT_EQ(shard->chunks->bytes, kChunk);
  ASSERT_EQ(shard->chunks->sha256.size(), (shard->bytes + kChunk - 1) / kChunk);
  std::string bytes = readText(dir / shard->path);
  ASSERT_EQ(bytes.size(), shard->bytes);
  for (size_t i = 0; i < shard->chunks->sha256.size(); ++i) {
    size_t begin = i * kChunk;
    size_t n = std::min<size_t>(kChunk, bytes.size() - begin);
    auto hex =
        sha256Hex(reinterpret_cast<const uint8_t *>(bytes.data()) + begin, n);
    ASSERT_TRUE(hex);
    EXPECT_EQ(shard->chunks->sha256[i], *hex) << "chunk " << i;
  }
  // The manifest on disk carries them, and parses back to the same record.
  auto reread = openArtifact(dir.str());
  ASSERT_TRUE(reread) << reread.message();
  EXPECT_EQ(reread->manifest(), written);
}

TEST_F(ChunkedArtifactTest, HeldBytesAreTheFilesBothWays) {
  for (HoldAs as : {HoldAs::Copy, HoldAs::Mapping}) {
    auto held = hold(as, DigestCheck::All);
    ASSERT_EQ(held.size(), 2u);
    ASSERT_TRUE(held[0]) << held[0].message();
    ASSERT_TRUE(held[1]) << held[1].message();
    EXPECT_EQ(held[0]->size(), shard->bytes);
    EXPECT_EQ(held[0]->mapsFile(), as == HoldAs::Mapping);
    std::string bytes = readText(dir / shard->path);
    EXPECT_EQ(std::memcmp(held[0]->data(), bytes.data(), bytes.size()), 0);
  }
}

TEST_F(ChunkedArtifactTest, FlippedByteNamesItsChunkAndRange) {
  fs::path path = dir / shard->path;
  std::string bytes = readText(path);
  size_t at = 2 * kChunk + 5; // in chunk 2
  bytes[at] ^= 0x10;
  writeText(path, bytes);
  std::string range = "SHA-256 mismatch in bytes [" +
                      std::to_string(2 * kChunk) + ", " +
                      std::to_string(3 * kChunk) + ") (chunk 2 of 4)";
  for (HoldAs as : {HoldAs::Copy, HoldAs::Mapping}) {
    auto held = hold(as);
    EXPECT_ERROR_CONTAINS(held[0], path.string() + ": " + range +
                                       ": the manifest expects " +
                                       shard->chunks->sha256[2]);
    EXPECT_TRUE(held[1]) << "the other file is unaffected";
  }
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()), range);
}

TEST_F(ChunkedArtifactTest, OnlyTheFullCheckSeesAWrongWholeDigest) {
  // A manifest whose SHA-256 disagrees with its own chunk digests: a load
  // hashes each byte once (the chunks) and takes it; L0 checks both.
  std::string wrong = hexOf('e');
  editManifest([&](json &j) {
    for (json &f : j["files"])
      if (f["role"] == "shard")
        f["sha256"] = wrong;
  });
  auto root = ArtifactRoot::open(dir.str());
  ASSERT_TRUE(root);
  auto m = readManifest(*root);
  ASSERT_TRUE(m && *m) << (m ? "" : m.message());
  const FileEntry *edited = nullptr;
  for (const FileEntry &f : (*m)->files)
    if (f.role == FileRole::Shard)
      edited = &f;
  ASSERT_NE(edited, nullptr);
  HoldOptions once;
  EXPECT_TRUE(holdVerifiedFile(*root, *edited, once));
  HoldOptions all;
  all.check = DigestCheck::All;
  EXPECT_ERROR_CONTAINS(holdVerifiedFile(*root, *edited, all),
                        "SHA-256 mismatch: the manifest expects " + wrong +
                            ", the file has " + shard->sha256);
  OpenOptions l0;
  l0.digests = DigestCheck::All;
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str(), l0), wrong);
}

TEST_F(ChunkedArtifactTest, TruncatedFileIsRefusedBeforeHashing) {
  fs::path path = dir / shard->path;
  fs::resize_file(path, shard->bytes - 1);
  auto held = hold(HoldAs::Copy);
  EXPECT_ERROR_CONTAINS(held[0], path.string() + ": size is " +
                                     std::to_string(shard->bytes - 1) +
                                     " bytes but the manifest says " +
                                     std::to_string(shard->bytes));
}

TEST_F(ChunkedArtifactTest, AnUnvalidatedChunkRecordIsRefusedNotDivided) {
  // holdVerifiedFiles is a library entry point: a caller may hand it a
  // record validateManifest never saw.
  auto root = ArtifactRoot::open(dir.str());
  ASSERT_TRUE(root);
  for (uint64_t bytes : {uint64_t(0), uint64_t(4096), kChunk * 2}) {
    FileEntry bad = *shard;
    bad.chunks->bytes = bytes;
    for (HoldAs as : {HoldAs::Copy, HoldAs::Mapping}) {
      HoldOptions options;
      options.as = as;
      EXPECT_ERROR_CONTAINS(holdVerifiedFile(*root, bad, options),
                            "-byte pieces, 4 digests) do not describe a file "
                            "of " +
                                std::to_string(shard->bytes) + " bytes");
    }
  }
}

TEST(ChunkDigestsManifest, BadChunkRecordsNameTheField) {
  auto withChunks = [](uint64_t fileBytes, uint64_t chunkBytes,
                       size_t digests) {
    Manifest m = fullManifest();
    m.files[0].bytes = fileBytes;
    m.files[0].chunks =
        ChunkDigests{chunkBytes, std::vector<std::string>(digests, hexOf('5'))};
    return m;
  };
  EXPECT_TRUE(validateManifest(withChunks(3 * kChunk + 1, kChunk, 4)));
  EXPECT_TRUE(validateManifest(withChunks(3 * kChunk, kChunk, 3)));
  EXPECT_ERROR_CONTAINS(validateManifest(withChunks(3 * kChunk + 1, kChunk, 3)),
                        "manifest.files[0].chunks.sha256: 3 digests, but a "
                        "file of 3145729 bytes has 4 pieces of 1048576 bytes");
  EXPECT_ERROR_CONTAINS(validateManifest(withChunks(3 * kChunk, 4096, 768)),
                        "manifest.files[0].chunks.bytes: 4096 is outside "
                        "[1048576, 4294967296]");
  EXPECT_ERROR_CONTAINS(validateManifest(withChunks(10, 0, 0)),
                        "manifest.files[0].chunks.bytes: 0 is outside");
  Manifest bad = withChunks(2 * kChunk, kChunk, 2);
  bad.files[0].chunks->sha256[1] = "ABC";
  EXPECT_ERROR_CONTAINS(validateManifest(bad),
                        "manifest.files[0].chunks.sha256[1]: expected 64 "
                        "lowercase hex digits");

  // The JSON form: an object of "bytes" and "sha256", nothing else.
  auto text = serializeManifest(withChunks(2 * kChunk, kChunk, 2));
  ASSERT_TRUE(text) << text.message();
  json j = json::parse(*text);
  EXPECT_EQ(j["files"][0]["chunks"]["bytes"], kChunk);
  EXPECT_EQ(j["files"][0]["chunks"]["sha256"].size(), 2u);
  EXPECT_FALSE(j["files"][1].contains("chunks"));
  j["files"][0]["chunks"]["extra"] = 1;
  EXPECT_ERROR_CONTAINS(parseManifest(j.dump()),
                        "manifest.files[0].chunks: unknown field \"extra\"");
  j["files"][0]["chunks"] = json::array();
  EXPECT_ERROR_CONTAINS(parseManifest(j.dump()), "manifest.files[0].chunks");
}

} // namespace
