//===- GGUFWriterTest.cpp - Whole GGUF files, read back -------------------===//

#include "qtensor/Formats/GGUFWriter.h"

#include "InjectedFileFaults.h"
#include "TestTempDir.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace qtensor;

namespace {

GGUFTensorToWrite tensor(std::string name, GGMLType type,
                         std::vector<uint64_t> ne, std::vector<uint8_t> bytes) {
  GGUFTensorToWrite t;
  t.name = std::move(name);
  t.type = type;
  t.ne = std::move(ne);
  t.bytes = [bytes]() -> Expected<std::vector<uint8_t>> { return bytes; };
  return t;
}

} // namespace

TEST(GGUFWriter, WritesWhatTheReaderReads) {
  test::TempDir dir("gguf-writer");
  GGUFFileWriter w;
  w.setString("general.architecture", "llama");
  w.setUInt32("llama.block_count", 3);
  w.setFloat32("llama.rope.freq_base", 10000.0f);
  // 3 f32 values (12 bytes, so the next tensor needs padding to 32), then
  // one Q8_0 block (34 bytes).
  ASSERT_TRUE(w.addTensor(
      tensor("a", GGMLType::F32, {3}, std::vector<uint8_t>(12, 0x41))));
  std::vector<uint8_t> block(34, 7);
  ASSERT_TRUE(w.addTensor(tensor("b", GGMLType::Q8_0, {32, 1}, block)));
  EXPECT_EQ(w.dataBytes(), 32u + 34u);
  std::string path = (dir / "m.gguf").string();
  ASSERT_TRUE(w.write(path));

  auto f = GGUFFile::open(path);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(f->findMetadata("general.architecture")->get<std::string_view>(),
            "llama");
  EXPECT_EQ(f->findMetadata("llama.block_count")->asUnsigned(), 3u);
  EXPECT_EQ(f->findMetadata("llama.rope.freq_base")->asDouble(), 10000.0);
  ASSERT_EQ(f->tensors().size(), 2u);
  const GGUFTensorInfo &b = f->tensors()[1];
  EXPECT_EQ(b.type, GGMLType::Q8_0);
  EXPECT_EQ(std::vector<uint8_t>(b.data, b.data + b.byteSize), block);
  EXPECT_TRUE(f->hasCanonicalLayout());
}

TEST(GGUFWriter, RefusesAndLeavesNothing) {
  test::TempDir dir("gguf-writer");
  GGUFFileWriter w;
  EXPECT_EQ(w.addTensor(tensor("q", GGMLType::Q4_0, {48}, {})).message(),
            "GGUF tensor q: ne[0] = 48 is not a multiple of the 32-element "
            "blocks of Q4_0");
  ASSERT_TRUE(w.addTensor(tensor("x", GGMLType::F32, {2}, {1, 2, 3})));
  EXPECT_EQ(w.addTensor(tensor("x", GGMLType::F32, {2}, {})).message(),
            "GGUF tensor x is added twice");
  std::string path = (dir / "m.gguf").string();
  Status s = w.write(path);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), path + ": tensor x has 3 bytes, F32 needs 8");
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

// Issue 14: a full disk while the file is written (qtc export-gguf) names
// the file and the offset, and leaves neither the file nor a temporary.
TEST(GGUFWriter, AFullDiskLeavesNothing) {
  test::TempDir dir("gguf-writer");
  GGUFFileWriter w;
  w.setString("general.architecture", "llama");
  ASSERT_TRUE(w.addTensor(
      tensor("a", GGMLType::F32, {1024}, std::vector<uint8_t>(4096, 1))));
  std::string path = (dir / "m.gguf").string();
  test::InjectedFileFaults faults;
  faults.spaceLeft = 2000;
  ScopedFileLayer scoped(faults);
  Status s = w.write(path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(": write failed at byte offset 2000: No space "
                             "left on device"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}
