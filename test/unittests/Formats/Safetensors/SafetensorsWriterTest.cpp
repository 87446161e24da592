//===- SafetensorsWriterTest.cpp - Writer, round trips, compatibility -----===//

#include "SafetensorsTestSupport.h"

#include <gmock/gmock.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <unistd.h>

using namespace qtensor;
using namespace qtensor::safetensors;
using namespace sttest;
using ::testing::HasSubstr;

namespace {

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(n);
  for (uint8_t &b : out)
    b = static_cast<uint8_t>(rng());
  return out;
}

/// Size in bytes of `shape` x dtype (small test shapes only).
size_t bytesFor(DType t, const std::vector<int64_t> &shape) {
  size_t n = dtypeSize(t);
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

struct Spec {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// One tensor of every dtype plus a scalar, empty tensors and odd names.
std::vector<Spec> sampleSpecs() {
  std::vector<Spec> specs;
  uint32_t seed = 1;
  for (unsigned i = 0; i < kNumDTypes; ++i) {
    DType t = static_cast<DType>(i);
    std::vector<int64_t> shape = {3, static_cast<int64_t>(i % 4) + 1};
    std::vector<uint8_t> bytes = randomBytes(bytesFor(t, shape), seed++);
    if (t == DType::BOOL)
      for (uint8_t &b : bytes)
        b &= 1;
    specs.push_back({"t." + std::string(dtypeName(t)), t, shape, bytes});
  }
  specs.push_back({"scalar", DType::F32, {}, randomBytes(4, 99)});
  specs.push_back({"empty", DType::F64, {0, 7}, {}});
  specs.push_back({"", DType::U8, {2}, {7, 9}});
  specs.push_back({"quote\"back\\slash\nnewline \xc3\xa9",
                   DType::I16,
                   {1},
                   randomBytes(2, 5)});
  return specs;
}

class SafetensorsWriterTest : public ::testing::Test {
protected:
  TempDir tmp;
};

TEST_F(SafetensorsWriterTest, RoundTripPreservesEverything) {
  std::vector<Spec> specs = sampleSpecs();
  SafetensorsWriter w;
  for (const Spec &s : specs)
    ASSERT_TRUE(w.addTensor(s.name, s.dtype, s.shape, s.bytes));
  ASSERT_TRUE(w.setMetadata("format", "pt"));
  ASSERT_TRUE(
      w.setMetadata("note", "t\xc3\xabst \"quoted\" \xe6\xa8\xa1\xe5\x9e\x8b"));
  ASSERT_TRUE(w.setMetadata("format", "np")); // replaces
  std::string path = (tmp / "rt.safetensors").string();
  auto written = w.writeFile(path);
  ASSERT_TRUE(written) << written.message();
  auto expectedSize = w.fileSize();
  ASSERT_TRUE(expectedSize);
  EXPECT_EQ(*written, *expectedSize);
  EXPECT_EQ(*written, fs::file_size(path));

  auto f = SafetensorsFile::open(path);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(f->size(), specs.size());
  EXPECT_EQ(f->metadata(),
            (std::map<std::string, std::string>{
                {"format", "np"},
                {"note", "t\xc3\xabst \"quoted\" \xe6\xa8\xa1\xe5\x9e\x8b"}}));
  EXPECT_EQ(f->bufferOffset() % 8, 0u);
  for (const Spec &s : specs) {
    const TensorView *v = f->find(s.name);
    ASSERT_NE(v, nullptr) << s.name;
    EXPECT_EQ(v->dtype, s.dtype);
    EXPECT_EQ(v->shape, s.shape);
    ASSERT_EQ(v->byteSize(), s.bytes.size());
    EXPECT_TRUE(std::equal(s.bytes.begin(), s.bytes.end(), v->data)) << s.name;
    // Descending-alignment order: every payload is aligned to its element.
    EXPECT_EQ(v->absoluteOffset() % dtypeSize(v->dtype), 0u) << s.name;
  }
  // The header is the JSON plus space padding only.
  std::string bytes = readAll(path);
  std::string header = bytes.substr(8, f->headerLength());
  size_t close = header.find_last_of('}');
  EXPECT_EQ(header.find_first_not_of(' ', close + 1), std::string::npos);
  EXPECT_LT(header.size() - close - 1, 8u);

  // Re-writing what was read reproduces the file byte for byte.
  SafetensorsWriter again;
  for (const TensorView &v : f->tensors())
    ASSERT_TRUE(again.addTensor(v));
  for (const auto &[k, val] : f->metadata())
    ASSERT_TRUE(again.setMetadata(k, val));
  std::string path2 = (tmp / "rt2.safetensors").string();
  ASSERT_TRUE(again.writeFile(path2));
  EXPECT_EQ(readAll(path2), bytes);
}

TEST_F(SafetensorsWriterTest, ExactBytesOfSmallFiles) {
  // One F32 [1,2,3] tensor: 64-byte header, no padding needed (8 + 64 = 72).
  std::vector<uint8_t> data;
  for (float x : {0.f, 1.f, 2.f, 3.f, 4.f, 5.f}) {
    uint8_t b[4];
    std::memcpy(b, &x, 4);
    data.insert(data.end(), b, b + 4);
  }
  SafetensorsWriter w;
  ASSERT_TRUE(w.addTensor("attn.0", DType::F32, {1, 2, 3}, data));
  auto h = w.header();
  ASSERT_TRUE(h);
  EXPECT_EQ(*h, "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],"
                "\"data_offsets\":[0,24]}}");
  // A 5-character name needs 7 spaces of padding.
  SafetensorsWriter w2;
  ASSERT_TRUE(w2.addTensor("attn0", DType::F32, {1, 1, 2, 3}, data));
  auto h2 = w2.header();
  ASSERT_TRUE(h2);
  EXPECT_EQ(*h2, "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],"
                 "\"data_offsets\":[0,24]}}       ");
  // Empty file: "{}" + 6 spaces; metadata only.
  SafetensorsWriter empty;
  std::string p = (tmp / "empty.safetensors").string();
  auto n = empty.writeFile(p);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 16u);
  EXPECT_EQ(readAll(p), stBytes("{}      "));
  SafetensorsWriter metaOnly;
  ASSERT_TRUE(metaOnly.setMetadata("framework", "pt"));
  auto h3 = metaOnly.header();
  ASSERT_TRUE(h3);
  EXPECT_EQ(*h3, "{\"__metadata__\":{\"framework\":\"pt\"}}     ");
  EXPECT_TRUE(SafetensorsFile::open(p));
}

TEST_F(SafetensorsWriterTest, PageAlignedBuffer) {
  SafetensorsWriter::Options opts;
  opts.bufferAlignment = SafetensorsWriter::kPageSize;
  SafetensorsWriter w(opts);
  for (const Spec &s : sampleSpecs())
    ASSERT_TRUE(w.addTensor(s.name, s.dtype, s.shape, s.bytes));
  std::string path = (tmp / "paged.safetensors").string();
  ASSERT_TRUE(w.writeFile(path));
  auto f = SafetensorsFile::open(path);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(f->bufferOffset() % 4096, 0u);
  EXPECT_EQ(f->tensors().front().absoluteOffset() % 4096, 0u);
  // Payloads stay contiguous: no holes for the reader to reject.
  uint64_t cursor = 0;
  for (const TensorView &v : f->tensors()) {
    EXPECT_EQ(v.begin, cursor);
    cursor = v.end;
  }
  for (uint64_t bad : {0ull, 4ull, 12ull, 4097ull}) {
    SafetensorsWriter::Options o;
    o.bufferAlignment = bad;
    SafetensorsWriter x(o);
    auto e = x.header();
    ASSERT_FALSE(e) << bad;
    EXPECT_THAT(e.message(), HasSubstr("not a power of two >= 8"));
  }
}

TEST_F(SafetensorsWriterTest, RejectsBadTensors) {
  SafetensorsWriter w;
  ASSERT_TRUE(w.addTensor("a", DType::F32, {2}, std::vector<uint8_t>(8)));
  auto dup = w.addTensor("a", DType::F32, {2}, std::vector<uint8_t>(8));
  ASSERT_FALSE(dup);
  EXPECT_THAT(dup.message(), HasSubstr("tensor \"a\": duplicate tensor name"));
  auto reserved = w.addTensor("__metadata__", DType::U8, {1}, {0});
  ASSERT_FALSE(reserved);
  EXPECT_THAT(reserved.message(), HasSubstr("reserved"));
  auto neg = w.addTensor("n", DType::U8, {-1}, {});
  ASSERT_FALSE(neg);
  EXPECT_THAT(neg.message(), HasSubstr("shape[0] = -1 is negative"));
  auto mismatch = w.addTensor("m", DType::F16, {3}, std::vector<uint8_t>(5));
  ASSERT_FALSE(mismatch);
  EXPECT_THAT(mismatch.message(), HasSubstr("F16 shape needs 6 bytes but 5"));
  auto overflow = w.addTensorRef("o", DType::F64, {INT64_MAX, 4}, nullptr, 0);
  ASSERT_FALSE(overflow);
  EXPECT_THAT(overflow.message(), HasSubstr("overflows 64 bits"));
  auto utf = w.addTensor("bad\xff", DType::U8, {1}, {0});
  ASSERT_FALSE(utf);
  EXPECT_THAT(utf.message(), HasSubstr("not valid UTF-8"));
  auto nullData = w.addTensorRef("z", DType::U8, {2}, nullptr, 2);
  ASSERT_FALSE(nullData);
  EXPECT_FALSE(w.setMetadata("k\xc0", "v"));
  EXPECT_FALSE(w.setMetadata("k", "\xed\xa0\x80"));
  std::vector<int64_t> rank33(33, 1);
  EXPECT_FALSE(w.addTensor("r", DType::U8, rank33, {0}));
  EXPECT_EQ(w.tensorCount(), 1u); // nothing failed was added

  SafetensorsWriter::Options tight;
  tight.limits.maxTensors = 1;
  tight.limits.maxHeaderBytes = 16;
  SafetensorsWriter t(tight);
  ASSERT_TRUE(t.addTensor("x", DType::U8, {1}, {0}));
  EXPECT_FALSE(t.addTensor("y", DType::U8, {1}, {0}));
  auto h = t.header();
  ASSERT_FALSE(h);
  EXPECT_THAT(h.message(), HasSubstr("exceeds the limit of 16"));
}

TEST_F(SafetensorsWriterTest, WriteErrorsAreReported) {
  SafetensorsWriter w;
  ASSERT_TRUE(w.addTensor("a", DType::U8, {4096}, std::vector<uint8_t>(4096)));
  int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (full >= 0) {
    auto r = w.write(full, "/dev/full");
    ::close(full);
    ASSERT_FALSE(r);
    EXPECT_THAT(r.message(),
                HasSubstr("/dev/full: write failed at byte offset 0"));
    EXPECT_THAT(r.message(), HasSubstr(std::strerror(ENOSPC)));
  }
  auto bad = w.write(-1);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.message(), HasSubstr("file descriptor -1"));
  auto noDir = w.writeFile((tmp / "missing/dir/x.safetensors").string());
  ASSERT_FALSE(noDir);
  EXPECT_THAT(noDir.message(), HasSubstr("missing/dir/x.safetensors"));
  // A successful atomic write leaves no temporary behind.
  ASSERT_TRUE(w.writeFile((tmp / "ok.safetensors").string()));
  size_t entries = 0;
  for (const auto &e : fs::directory_iterator(tmp.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
  if (full < 0)
    GTEST_SKIP() << "/dev/full is not available; ENOSPC path not exercised";
}

TEST_F(SafetensorsWriterTest, WriteToDescriptorAppendsAtPosition) {
  SafetensorsWriter w;
  ASSERT_TRUE(w.addTensor("a", DType::I32, {2}, randomBytes(8, 3)));
  std::string path = (tmp / "fd.safetensors").string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  auto n = w.write(fd, path);
  ::close(fd);
  ASSERT_TRUE(n) << n.message();
  EXPECT_EQ(*n, fs::file_size(path));
  EXPECT_TRUE(SafetensorsFile::open(path));
}

//===----------------------------------------------------------------------===//
// Compatibility with the corpus
//===----------------------------------------------------------------------===//

/// Re-writes a file from its views and metadata.
Expected<uint64_t> rewrite(const SafetensorsFile &f, const std::string &out) {
  SafetensorsWriter w;
  for (const TensorView &v : f.tensors())
    QTENSOR_TRY(w.addTensor(v));
  for (const auto &[k, val] : f.metadata())
    QTENSOR_TRY(w.setMetadata(k, val));
  return w.writeFile(out);
}

TEST_F(SafetensorsWriterTest, EveryAcceptedCorpusFileSurvivesRewrite) {
  ST_REQUIRE_CORPUS();
  size_t checked = 0;
  for (const json &e : manifestEntries("safetensors")) {
    if (e["expect"] != "accept")
      continue;
    const std::string rel = e["path"];
    SCOPED_TRACE(rel);
    auto f = SafetensorsFile::open((corpusDir() / rel).string());
    ASSERT_TRUE(f) << f.message();
    std::string out = (tmp / ("rw" + std::to_string(checked++))).string();
    ASSERT_TRUE(rewrite(*f, out));
    auto g = SafetensorsFile::open(out);
    ASSERT_TRUE(g) << g.message();
    EXPECT_EQ(g->metadata(), f->metadata());
    ASSERT_EQ(g->size(), f->size());
    for (const TensorView &v : f->tensors()) {
      const TensorView *u = g->find(v.name);
      ASSERT_NE(u, nullptr) << v.name;
      EXPECT_EQ(u->dtype, v.dtype);
      EXPECT_EQ(u->shape, v.shape);
      ASSERT_EQ(u->byteSize(), v.byteSize());
      EXPECT_TRUE(std::equal(v.data, v.data + v.byteSize(), u->data));
    }
  }
  EXPECT_GT(checked, 0u);
}

TEST_F(SafetensorsWriterTest, ByteIdenticalToTheReferenceWriter) {
  ST_REQUIRE_CORPUS();
  // Files the manifest says were written by the reference safetensors writer
  // (safetensors.torch / safetensors.numpy >= 0.3, padded headers) with at
  // most sorted metadata keys: ours must match them byte for byte.
  const char *files[] = {
      "safetensors/real/FluxML_SafeTensors.jl/model.numpy.safetensors",
      "safetensors/real/FluxML_SafeTensors.jl/model.with_metadata.safetensors",
      "safetensors/real/FluxML_SafeTensors.jl/sharded/"
      "model-00001-of-00006.safetensors",
      "safetensors/real/FluxML_SafeTensors.jl/sharded/"
      "model-00002-of-00006.safetensors",
      "safetensors/real/FluxML_SafeTensors.jl/sharded/"
      "model-00003-of-00006.safetensors",
      "safetensors/real/FluxML_SafeTensors.jl/sharded/"
      "model-00004-of-00006.safetensors",
      "safetensors/real/FluxML_SafeTensors.jl/sharded/"
      "model-00005-of-00006.safetensors",
      "safetensors/real/FluxML_SafeTensors.jl/sharded/"
      "model-00006-of-00006.safetensors",
      "safetensors/real/syoyo_safetensors-cpp/model.safetensors",
      "safetensors/real/tmanabe_safetensors-java/sample.safetensors",
  };
  size_t compared = 0;
  for (const char *rel : files) {
    fs::path p = corpusDir() / rel;
    if (!fs::exists(p))
      continue;
    SCOPED_TRACE(rel);
    auto f = SafetensorsFile::open(p.string());
    ASSERT_TRUE(f) << f.message();
    std::string out = (tmp / ("ref" + std::to_string(compared++))).string();
    ASSERT_TRUE(rewrite(*f, out));
    EXPECT_EQ(readAll(out), readAll(p));
  }
  EXPECT_GT(compared, 0u);
}

} // namespace
