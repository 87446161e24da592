//===- ArtifactReaderTest.cpp - openArtifact on good and bad directories --===//

#include "ArtifactTestSupport.h"

#include <cstring>
#include <fcntl.h>
#include <functional>
#include <unistd.h>

using namespace arttest;

namespace {

/// Writes the fixture's artifact into a fresh directory.
class ReaderTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto r = fixture.writer.write(dir.str());
    ASSERT_TRUE(r) << r.message();
    written = r->manifest;
  }

  std::string shardPath(size_t i = 0) const { return written.files[i].path; }

  void editManifest(const std::function<void(json &)> &edit) {
    json j = json::parse(readText(dir / "manifest.json"));
    edit(j);
    writeText(dir / "manifest.json", j.dump(2));
  }

  /// Index of the manifest tensor named `name`.
  size_t tensorIndex(const std::string &name) const {
    for (size_t i = 0; i < written.tensors.size(); ++i)
      if (written.tensors[i].name == name)
        return i;
    ADD_FAILURE() << "no tensor " << name;
    return 0;
  }

  ArtifactFixture fixture;
  TempDir dir;
  Manifest written;
};

TEST_F(ReaderTest, OpensWhatTheWriterWrote) {
  auto a = openArtifact(dir.str());
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a->manifest(), written);
  EXPECT_EQ(a->directory(), dir.str());
  ASSERT_NE(a->shard(shardPath(0)), nullptr);
  EXPECT_EQ(a->shard(shardPath(0))->size(), 4u);
  EXPECT_EQ(a->shard("graph.mlir"), nullptr);

  auto q = a->tensor("layers.0.mlp.up.weight");
  ASSERT_TRUE(q) << q.message();
  ASSERT_TRUE(q->entry->isQuantized());
  ASSERT_NE(q->codes, nullptr);
  ASSERT_NE(q->scales, nullptr);
  ASSERT_NE(q->zeros, nullptr);
  EXPECT_EQ(q->data, nullptr);
  EXPECT_EQ(q->codes->shape, (std::vector<int64_t>{8, 32}));
  EXPECT_EQ(q->scales->dtype, DType::F16);
  auto codes = pattern(8 * 32, 1);
  EXPECT_EQ(std::memcmp(q->codes->data, codes.data(), codes.size()), 0);

  auto p = a->tensor("layers.1.norm.weight");
  ASSERT_TRUE(p) << p.message();
  ASSERT_NE(p->data, nullptr);
  auto plain = pattern(4096, 1 + 10 + 3);
  ASSERT_EQ(p->data->byteSize(), plain.size());
  EXPECT_EQ(std::memcmp(p->data->data, plain.data(), plain.size()), 0);

  // Shards are page-aligned by default (DESIGN.md: page-aligned payloads).
  EXPECT_EQ(a->shard(shardPath(0))->bufferOffset() % 4096, 0u);

  const FileEntry *graph = nullptr;
  for (const FileEntry &f : written.files)
    if (f.role == FileRole::Graph)
      graph = &f;
  ASSERT_NE(graph, nullptr);
  const MappedFile *g = a->file(graph->path);
  ASSERT_NE(g, nullptr);
  auto graphBytes = pattern(100, 1 + 1000);
  ASSERT_EQ(g->size(), graphBytes.size());
  EXPECT_EQ(std::memcmp(g->data(), graphBytes.data(), graphBytes.size()), 0);

  EXPECT_ERROR_CONTAINS(a->tensor("nope"),
                        "no tensor \"nope\" in the manifest");
}

TEST_F(ReaderTest, ArtifactStaysValidAfterMove) {
  auto a = openArtifact(dir.str());
  ASSERT_TRUE(a);
  Artifact moved = a.take();
  auto p = moved.tensor("layers.0.norm.weight");
  ASSERT_TRUE(p);
  auto plain = pattern(4096, 1 + 3);
  EXPECT_EQ(std::memcmp(p->data->data, plain.data(), plain.size()), 0);
}

TEST_F(ReaderTest, FlippedByteIsASha256Mismatch) {
  fs::path shard = dir / shardPath(1);
  std::string bytes = readText(shard);
  bytes[bytes.size() - 7] ^= 0x01;
  writeText(shard, bytes);
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        shard.string() +
                            ": SHA-256 mismatch: the manifest "
                            "expects " +
                            written.files[1].sha256);
}

TEST_F(ReaderTest, TruncatedFileIsASizeMismatch) {
  fs::path shard = dir / shardPath(0);
  fs::resize_file(shard, written.files[0].bytes - 1);
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        shard.string() + ": size is " +
                            std::to_string(written.files[0].bytes - 1) +
                            " bytes but the manifest says " +
                            std::to_string(written.files[0].bytes));
}

TEST_F(ReaderTest, MissingFile) {
  fs::path shard = dir / shardPath(1);
  fs::remove(shard);
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        shard.string() + ": missing (the manifest lists it)");
}

TEST_F(ReaderTest, SymlinkedShardIsRefusedEvenWithTheRightBytes) {
  fs::path shard = dir / shardPath(0);
  fs::rename(shard, dir / "real.bin");
  fs::create_symlink("real.bin", shard);
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()), "is a symbolic link");
}

TEST_F(ReaderTest, ManifestIsOpenedUnderThePolicyToo) {
  fs::rename(dir / "manifest.json", dir / "m.json");
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        dir.str() + "/manifest.json: missing (not an artifact "
                                    "directory");
  fs::create_symlink("m.json", dir / "manifest.json");
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        "manifest.json: is a symbolic link");
}

TEST_F(ReaderTest, OversizedManifestIsRefusedBeforeReading) {
  // A sparse file: the limit is checked on the size, nothing is read.
  fs::resize_file(dir / "manifest.json", kMaxManifestBytes + 1);
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        "manifest.json: 67108865 bytes exceed the limit of "
                        "67108864");
}

TEST_F(ReaderTest, ManifestErrorsNameTheField) {
  editManifest([](json &j) { j["versions"]["graph"] = 7; });
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        "manifest.versions.graph: unsupported version 7 (this "
                        "build reads 1)");
  editManifest([](json &j) {
    j["versions"]["graph"] = 1;
    j["files"][0]["path"] = "../escape.safetensors";
  });
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        "manifest.files[0].path: path "
                        "\"../escape.safetensors\": has a '..' component");
}

TEST_F(ReaderTest, DeclaredShapeAndDtypeMustMatchTheShard) {
  size_t i = tensorIndex("layers.0.norm.weight");
  editManifest([&](json &j) { j["tensors"][i]["shape"] = {2048, 2}; });
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        ": tensor \"layers.0.norm.weight\" (tensor "
                        "\"layers.0.norm.weight\"): shape is [4096] but the "
                        "manifest declares [2048, 2]");
  editManifest([&](json &j) {
    j["tensors"][i]["shape"] = {4096};
    j["tensors"][i]["dtype"] = "I8";
  });
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        "dtype is U8 but the manifest declares I8");
}

TEST_F(ReaderTest, DeclaredTensorMustExist) {
  size_t i = tensorIndex("layers.0.mlp.up.weight");
  editManifest([&](json &j) {
    j["tensors"][i]["scales"]["tensor"] = "layers.0.mlp.up.weight.s";
  });
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        "tensor \"layers.0.mlp.up.weight.s\" (scales of tensor "
                        "\"layers.0.mlp.up.weight\", manifest.tensors[" +
                            std::to_string(i) + "]) is missing from the shard");
}

TEST_F(ReaderTest, UndeclaredTensorsAreRejectedUnlessAllowed) {
  size_t i = tensorIndex("layers.0.norm.weight");
  editManifest([&](json &j) { j["tensors"].erase(i); });
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        "tensor \"layers.0.norm.weight\" is not declared by "
                        "any manifest tensor (strict inventory)");
  OpenOptions lenient;
  lenient.allowUndeclaredTensors = true;
  auto a = openArtifact(dir.str(), lenient);
  EXPECT_TRUE(a) << a.message();
}

TEST_F(ReaderTest, CorruptShardWithMatchingHashFailsInTheContainerParser) {
  // The hash only proves identity (0x0CB): a manifest that vouches for
  // garbage still fails in the safetensors reader.
  fs::path shard = dir / shardPath(0);
  std::string garbage = "\x10\x00\x00\x00\x00\x00\x00\x00{not json}      ";
  garbage.resize(24 + 16);
  writeText(shard, garbage);
  auto sha = sha256Hex(reinterpret_cast<const uint8_t *>(garbage.data()),
                       garbage.size());
  editManifest([&](json &j) {
    j["files"][0]["sha256"] = *sha;
    j["files"][0]["bytes"] = garbage.size();
  });
  auto a = openArtifact(dir.str());
  ASSERT_FALSE(a);
  EXPECT_NE(a.message().find(shard.string()), std::string::npos) << a.message();
}

/// A hand-built shard whose scales disagree with the descriptor.
TEST(ReaderQuantized, ScaleShapeMustMatchTheDescriptorAndTheShard) {
  TempDir dir;
  safetensors::SafetensorsWriter w;
  std::vector<uint8_t> codes(8 * 32), scales(8 * 3 * 2), zeros(8 * 2);
  ASSERT_TRUE(w.addTensorRef("w.codes", DType::U8, {8, 32}, codes.data(),
                             codes.size()));
  ASSERT_TRUE(w.addTensorRef("w.scales", DType::F16, {8, 3}, scales.data(),
                             scales.size()));
  ASSERT_TRUE(
      w.addTensorRef("w.zeros", DType::U8, {8, 2}, zeros.data(), zeros.size()));
  ASSERT_TRUE(w.writeFile((dir / "s.safetensors").string()));
  std::string bytes = readText(dir / "s.safetensors");
  Manifest m = baseManifest();
  m.files.push_back({"s.safetensors", bytes.size(),
                     *sha256Hex(reinterpret_cast<const uint8_t *>(bytes.data()),
                                bytes.size()),
                     FileRole::Shard});
  TensorEntry t;
  t.name = "w";
  t.file = "s.safetensors";
  t.data = quantizedParts("w", 8, 64); // scales declared [8, 2]: consistent
  m.tensors.push_back(t);
  writeText(dir / "manifest.json", *serializeManifest(m));
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        "s.safetensors: tensor \"w.scales\" (scales of tensor "
                        "\"w\"): shape is [8, 3] but the manifest declares "
                        "[8, 2]");

  // Declaring what the shard holds contradicts the descriptor instead.
  json j = toJson(m);
  j["tensors"][0]["scales"]["shape"] = {8, 3};
  writeText(dir / "manifest.json", j.dump());
  EXPECT_ERROR_CONTAINS(openArtifact(dir.str()),
                        "manifest.tensors[0].scales.shape: expected [8, 2] "
                        "(the descriptor's qparam shape for [8, 64]), got "
                        "[8, 3]");
}

} // namespace
