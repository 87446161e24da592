//===- SafetensorsIndexTest.cpp - Sharded checkpoint index ----------------===//

#include "qtensor/Formats/SafetensorsIndex.h"

#include "SafetensorsTestSupport.h"

#include <gmock/gmock.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace qtensor;
using namespace qtensor::safetensors;
using namespace sttest;
using ::testing::HasSubstr;

namespace {

//===----------------------------------------------------------------------===//
// Corpus
//===----------------------------------------------------------------------===//

class CorpusIndex : public ::testing::TestWithParam<json> {};

TEST_P(CorpusIndex, Verdict) {
  const json &entry = GetParam();
  const std::string rel = entry["path"];
  const fs::path full = corpusDir() / rel;
  auto index = SafetensorsIndex::open(full.string());
  if (entry["expect"] == "reject") {
    if (index && entry.value("lenient_ok", false))
      GTEST_SKIP() << rel << ": accepted; tolerated (lenient_ok)";
    ASSERT_FALSE(index) << rel;
    EXPECT_THAT(index.message(), HasSubstr(full.filename().string()));
    return;
  }
  ASSERT_TRUE(index) << index.message();
  EXPECT_EQ(index->totalSize(),
            entry["index_metadata"]["total_size"].get<uint64_t>());
  EXPECT_EQ(index->tensorBytes(), index->totalSize());
  std::map<std::string, std::string> want =
      entry["weight_map"].get<std::map<std::string, std::string>>();
  EXPECT_EQ(index->weightMap(), want);
  std::set<std::string> shardNames;
  for (const auto &[tensor, shard] : want)
    shardNames.insert(shard);
  EXPECT_EQ(index->shardNames(),
            std::vector<std::string>(shardNames.begin(), shardNames.end()));
  ASSERT_EQ(index->shards().size(), shardNames.size());

  // Cross-check with the manifest entries of the shard files themselves.
  std::map<std::string, json> shardTensors; // "shard/tensor" -> manifest entry
  fs::path dir = fs::path(rel).parent_path();
  for (const json &e : manifestEntries("safetensors"))
    if (fs::path(e["path"].get<std::string>()).parent_path() == dir)
      for (const json &t : e["tensors"])
        shardTensors
            [fs::path(e["path"].get<std::string>()).filename().string() + "/" +
             t["name"].get<std::string>()] = t;
  for (const auto &[tensor, shard] : want) {
    SCOPED_TRACE(tensor);
    const TensorView *v = index->find(tensor);
    ASSERT_NE(v, nullptr);
    const SafetensorsFile *file = index->shardOf(tensor);
    ASSERT_NE(file, nullptr);
    EXPECT_EQ(fs::path(file->path()).filename().string(), shard);
    EXPECT_EQ(file->find(tensor), v);
    auto it = shardTensors.find(shard + "/" + tensor);
    if (it != shardTensors.end()) {
      EXPECT_EQ(dtypeName(v->dtype), it->second["dtype"].get<std::string>());
      EXPECT_EQ(v->absoluteOffset(), it->second["abs_offset"].get<uint64_t>());
      EXPECT_EQ(hexDigest(v->data, v->byteSize()),
                it->second["bytes_sha256"].get<std::string>());
    }
  }
  EXPECT_EQ(index->find("no such tensor"), nullptr);
  EXPECT_EQ(index->shardOf("no such tensor"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(
    Manifest, CorpusIndex,
    ::testing::ValuesIn(manifestEntries("safetensors-index-json")),
    [](const ::testing::TestParamInfo<json> &info) {
      return caseName(info.param["path"]);
    });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusIndex);

TEST(CorpusIndexManifest, HasAnIndex) {
  ST_REQUIRE_CORPUS();
  EXPECT_FALSE(manifestEntries("safetensors-index-json").empty());
}

//===----------------------------------------------------------------------===//
// Hand-made checkpoints
//===----------------------------------------------------------------------===//

class SafetensorsIndexTest : public ::testing::Test {
protected:
  TempDir tmp;

  /// Writes a shard holding `tensors` (name -> U8 byte count) at `rel`.
  void shard(const std::string &rel,
             const std::vector<std::pair<std::string, int64_t>> &tensors) {
    SafetensorsWriter w;
    for (const auto &[name, n] : tensors)
      ASSERT_TRUE(w.addTensor(name, DType::U8, {n},
                              std::vector<uint8_t>(static_cast<size_t>(n), 1)));
    ASSERT_TRUE(w.setMetadata("format", "pt"));
    fs::create_directories((tmp / rel).parent_path());
    ASSERT_TRUE(w.writeFile((tmp / rel).string()));
  }
  std::string index(const std::string &text,
                    const std::string &name = "model.safetensors.index.json") {
    return tmp.write(name, text);
  }
  /// The standard two-shard set: a, b in s1; c in s2 (total 10 bytes).
  void twoShards() {
    shard("s1.safetensors", {{"a", 3}, {"b", 4}});
    shard("s2.safetensors", {{"c", 3}});
  }
  static std::string standardIndex(uint64_t total = 10) {
    return "{\"metadata\":{\"total_size\":" + std::to_string(total) +
           "},\"weight_map\":{\"a\":\"s1.safetensors\",\"b\":\"s1."
           "safetensors\","
           "\"c\":\"s2.safetensors\"}}";
  }
  void expectReject(const Expected<SafetensorsIndex> &r,
                    const std::string &path,
                    std::initializer_list<const char *> fragments) {
    ASSERT_FALSE(r) << "accepted " << path;
    EXPECT_THAT(r.message(), HasSubstr(path + ": "));
    for (const char *f : fragments)
      EXPECT_THAT(r.message(), HasSubstr(f));
  }
};

TEST_F(SafetensorsIndexTest, ValidTwoShardCheckpoint) {
  twoShards();
  auto r = SafetensorsIndex::open(index(standardIndex()));
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->totalSize(), 10u);
  EXPECT_EQ(r->tensorBytes(), 10u);
  EXPECT_EQ(r->shardNames(),
            (std::vector<std::string>{"s1.safetensors", "s2.safetensors"}));
  ASSERT_NE(r->find("b"), nullptr);
  EXPECT_EQ(r->find("b")->byteSize(), 4u);
  EXPECT_EQ(r->shardOf("c"), &r->shards()[1]);
  // Extra top-level and metadata keys are ignored.
  auto extra = SafetensorsIndex::open(
      index("{\"metadata\":{\"total_size\":10,\"total_parameters\":10},"
            "\"weight_map\":{\"a\":\"s1.safetensors\",\"b\":\"s1.safetensors\","
            "\"c\":\"s2.safetensors\"},\"note\":[1,{\"x\":null}]}",
            "extra.index.json"));
  EXPECT_TRUE(extra) << extra.message();
}

TEST_F(SafetensorsIndexTest, TotalSizeCountsTensorBytes) {
  twoShards();
  std::string p = index(standardIndex(11));
  expectReject(SafetensorsIndex::open(p), p,
               {"metadata.total_size is 11 but the shards' tensors hold 10"});
  // Counting whole shard files would be wrong too.
  uint64_t files = fs::file_size(tmp / "s1.safetensors") +
                   fs::file_size(tmp / "s2.safetensors");
  std::string q = index(standardIndex(files), "files.index.json");
  EXPECT_FALSE(SafetensorsIndex::open(q));
  IndexOptions lax;
  lax.checkTotalSize = false;
  auto r = SafetensorsIndex::open(p, lax);
  ASSERT_TRUE(r) << r.message();
  EXPECT_EQ(r->totalSize(), 11u);
  EXPECT_EQ(r->tensorBytes(), 10u);
}

TEST_F(SafetensorsIndexTest, IndexJsonShape) {
  twoShards();
  struct Case {
    std::string text;
    const char *fragment;
  } cases[] = {
      {"", "empty"},
      {"[]", "index is an array"},
      {"{\"weight_map\":{}}", "missing \"metadata\""},
      {"{\"metadata\":[],\"weight_map\":{}}", "\"metadata\" is an array"},
      {"{\"metadata\":{},\"weight_map\":{}}", "missing \"total_size\""},
      {"{\"metadata\":{\"total_size\":-1},\"weight_map\":{}}", "negative"},
      {"{\"metadata\":{\"total_size\":1.5},\"weight_map\":{}}", "a number"},
      {"{\"metadata\":{\"total_size\":\"10\"},\"weight_map\":{}}", "a string"},
      {"{\"metadata\":{\"total_size\":0}}", "missing \"weight_map\""},
      {"{\"metadata\":{\"total_size\":0},\"weight_map\":[]}",
       "\"weight_map\" is an array"},
      {"{\"metadata\":{\"total_size\":0},\"weight_map\":{\"a\":1}}",
       "weight_map[\"a\"] is a number"},
      {"{\"metadata\":{\"total_size\":0},\"weight_map\":{\"a\":\"s1."
       "safetensors\","
       "\"a\":\"s2.safetensors\"}}",
       "duplicate key \"a\""},
      {"{\"metadata\":{\"total_size\":0},\"metadata\":{\"total_size\":0}}",
       "duplicate key \"metadata\""},
      {"{\"metadata\":{\"total_size\":0},\"weight_map\":{}", "not valid JSON"},
      {"{\"metadata\":{\"total_size\":0},\"weight_map\":{\"\xff\":\"x\"}}",
       "not valid UTF-8 at byte offset 44"},
      {std::string("{\"metadata\":{\"total_size\":0},\"weight_map\":{}}\0x",
                   47),
       "contains a NUL byte at byte offset 45"},
      {"{\"x\":" + std::string(1000, '[') + std::string(1000, ']') + "}",
       "nesting deeper than 32 levels"},
  };
  int i = 0;
  for (const Case &c : cases) {
    std::string p = index(c.text, "bad" + std::to_string(i++) + ".json");
    expectReject(SafetensorsIndex::open(p), p, {c.fragment});
  }
  auto empty = SafetensorsIndex::open(
      index("{\"metadata\":{\"total_size\":0},\"weight_map\":{}}", "e.json"));
  ASSERT_TRUE(empty) << empty.message();
  EXPECT_TRUE(empty->shards().empty());
}

TEST_F(SafetensorsIndexTest, ShardNamesMustStayInside) {
  twoShards();
  fs::create_directories(tmp / "sub");
  for (const char *bad :
       {"../s1.safetensors", "/etc/passwd", "sub/../s1.safetensors",
        "./s1.safetensors", "", "sub//s1.safetensors", "sub\\\\s1.safetensors",
        "sub/", ".."}) {
    std::string p = index("{\"metadata\":{\"total_size\":3},\"weight_map\":"
                          "{\"a\":\"" +
                              std::string(bad) + "\"}}",
                          "sub/names.json");
    auto r = SafetensorsIndex::open(p);
    expectReject(r, p, {"weight_map[\"a\"]: shard name"});
  }
  // A real subdirectory is fine.
  shard("sub/deep/s3.safetensors", {{"d", 2}});
  auto ok = SafetensorsIndex::open(
      index("{\"metadata\":{\"total_size\":2},\"weight_map\":"
            "{\"d\":\"deep/s3.safetensors\"}}",
            "sub/ok.json"));
  EXPECT_TRUE(ok) << ok.message();
}

TEST_F(SafetensorsIndexTest, SymlinksMustNotEscapeTheRoot) {
  fs::create_directories(tmp / "repo/snap");
  fs::create_directories(tmp / "repo/blobs");
  shard("repo/blobs/real1", {{"a", 3}});
  shard("repo/snap/inside.safetensors", {{"b", 2}});
  // A symlink escaping the index directory.
  fs::create_symlink("../blobs/real1", tmp / "repo/snap/s1.safetensors");
  std::string p = index("{\"metadata\":{\"total_size\":3},\"weight_map\":"
                        "{\"a\":\"s1.safetensors\"}}",
                        "repo/snap/model.safetensors.index.json");
  expectReject(SafetensorsIndex::open(p), p,
               {"shard \"s1.safetensors\" resolves to", "outside the allowed "
                                                        "root"});
  // Allowed when the root is the repository (the Hugging Face cache layout).
  IndexOptions repo;
  repo.root = (tmp / "repo").string();
  auto ok = SafetensorsIndex::open(p, repo);
  ASSERT_TRUE(ok) << ok.message();
  EXPECT_EQ(ok->find("a")->byteSize(), 3u);
  // A symlink that stays inside the directory is followed.
  fs::create_symlink("inside.safetensors", tmp / "repo/snap/link.safetensors");
  auto inside = SafetensorsIndex::open(
      index("{\"metadata\":{\"total_size\":2},\"weight_map\":"
            "{\"b\":\"link.safetensors\"}}",
            "repo/snap/link.index.json"));
  EXPECT_TRUE(inside) << inside.message();
  // A symlinked subdirectory pointing outside is caught too.
  fs::create_directories(tmp / "outside");
  shard("outside/s.safetensors", {{"z", 1}});
  fs::create_directory_symlink(tmp / "outside", tmp / "repo/snap/dirlink");
  std::string q = index("{\"metadata\":{\"total_size\":1},\"weight_map\":"
                        "{\"z\":\"dirlink/s.safetensors\"}}",
                        "repo/snap/dirlink.index.json");
  expectReject(SafetensorsIndex::open(q), q, {"outside the allowed root"});
}

TEST_F(SafetensorsIndexTest, ShardsMustExistAndBeValid) {
  twoShards();
  std::string p = index("{\"metadata\":{\"total_size\":3},\"weight_map\":"
                        "{\"a\":\"missing.safetensors\"}}");
  expectReject(SafetensorsIndex::open(p), p,
               {"shard \"missing.safetensors\"", "cannot open"});
  tmp.write("corrupt.safetensors", stBytes("{}", "trailing"));
  std::string q = index("{\"metadata\":{\"total_size\":0},\"weight_map\":"
                        "{\"a\":\"corrupt.safetensors\"}}",
                        "corrupt.json");
  expectReject(SafetensorsIndex::open(q), q,
               {"shard \"corrupt.safetensors\" is invalid",
                "corrupt.safetensors: trailing bytes"});
  fs::create_directories(tmp / "adir");
  std::string d = index("{\"metadata\":{\"total_size\":0},\"weight_map\":"
                        "{\"a\":\"adir\"}}",
                        "dir.json");
  expectReject(SafetensorsIndex::open(d), d, {"not a regular file"});
  ASSERT_EQ(::mkfifo((tmp / "fifo.safetensors").c_str(), 0600), 0);
  std::string f = index("{\"metadata\":{\"total_size\":0},\"weight_map\":"
                        "{\"a\":\"fifo.safetensors\"}}",
                        "fifo.json");
  expectReject(SafetensorsIndex::open(f), f, {"not a regular file"});
  expectReject(SafetensorsIndex::open((tmp / "absent.json").string()),
               (tmp / "absent.json").string(), {"cannot open"});
}

TEST_F(SafetensorsIndexTest, InventoryMustMatchExactly) {
  twoShards();
  // A shard tensor missing from weight_map.
  std::string p = index("{\"metadata\":{\"total_size\":10},\"weight_map\":"
                        "{\"a\":\"s1.safetensors\",\"c\":\"s2.safetensors\"}}",
                        "unlisted.json");
  expectReject(SafetensorsIndex::open(p), p,
               {"tensor \"b\" is in shard \"s1.safetensors\" but not in "
                "weight_map"});
  // weight_map names the wrong shard.
  std::string q = index("{\"metadata\":{\"total_size\":10},\"weight_map\":"
                        "{\"a\":\"s1.safetensors\",\"b\":\"s1.safetensors\","
                        "\"c\":\"s1.safetensors\"}}",
                        "wrong.json");
  expectReject(SafetensorsIndex::open(q), q,
               {"weight_map[\"c\"] names shard \"s1.safetensors\" but that "
                "shard has no such tensor"});
  // A tensor in two shards.
  shard("s3.safetensors", {{"c", 3}});
  std::string r = index("{\"metadata\":{\"total_size\":13},\"weight_map\":"
                        "{\"a\":\"s1.safetensors\",\"b\":\"s1.safetensors\","
                        "\"c\":\"s2.safetensors\",\"x\":\"s3.safetensors\"}}",
                        "twice.json");
  expectReject(SafetensorsIndex::open(r), r,
               {"tensor \"c\" is in shard \"s3.safetensors\" but weight_map "
                "assigns it to \"s2.safetensors\""});
  // A weight_map entry whose shard lacks it.
  std::string s =
      index("{\"metadata\":{\"total_size\":10},\"weight_map\":"
            "{\"a\":\"s1.safetensors\",\"b\":\"s1.safetensors\","
            "\"c\":\"s2.safetensors\",\"ghost\":\"s2.safetensors\"}}",
            "ghost.json");
  expectReject(SafetensorsIndex::open(s), s,
               {"weight_map[\"ghost\"] names shard \"s2.safetensors\""});
}

TEST_F(SafetensorsIndexTest, ShardCountIsBounded) {
  twoShards();
  IndexOptions one;
  one.maxShards = 1;
  std::string p = index(standardIndex());
  expectReject(SafetensorsIndex::open(p, one), p, {"more than 1 shards"});
  IndexOptions tiny;
  tiny.maxIndexBytes = 16;
  expectReject(SafetensorsIndex::open(p, tiny), p, {"above the limit of 16"});
}

} // namespace
