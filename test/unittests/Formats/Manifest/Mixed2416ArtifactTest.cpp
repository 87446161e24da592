//===- Mixed2416ArtifactTest.cpp - mixed_2416 tensors in an artifact ------===//
//
// The manifest's "mixed_2416" tensor kind end to end at the format level:
// the writer stores the family's ten streams, the reader checks their
// dtypes and shapes against the descriptor, the resolver hands them back
// by key, readMixed2416Streams reads and verifies their bytes, and the L2
// digest is the reference decoder's. Malformed records and data are refused
// naming the field or stream.
//
//===----------------------------------------------------------------------===//

#include "ArtifactTestSupport.h"
#include "Mixed2416TestData.h"

#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Support/Sha256.h"

namespace arttest {
namespace {

TEST(Mixed2416Artifact, StreamsRoundTripThroughTheArtifact) {
  const Mixed2416Descriptor d = smallDescriptor();
  const Mixed2416Streams streams = smallStreams(d);
  ASSERT_TRUE(verifyMixed2416Streams(d, streams));
  MixedArtifact fx(streams);
  TempDir dir;
  auto written = fx.writer.write(dir.str());
  ASSERT_TRUE(written) << written.message();
  const TensorEntry *entry = written->manifest.findTensor(kWeight);
  ASSERT_NE(entry, nullptr);
  ASSERT_NE(entry->mixed2416(), nullptr);
  EXPECT_FALSE(entry->isQuantized());
  EXPECT_STREQ(entry->kind(), "mixed_2416");
  EXPECT_EQ(entry->logicalShape(), d.shape);
  EXPECT_EQ(entry->storedTensors().size(), 10u);
  // The support's record (used by the schema tests) is this tensor's.
  EXPECT_EQ(*entry, mixedTensorEntry(kWeight, entry->file));

  // The manifest on disk reads back equal, with the kind spelled out.
  json j = toJson(written->manifest);
  EXPECT_EQ(j["tensors"][0]["kind"], "mixed_2416");
  EXPECT_EQ(j["tensors"][0]["logical"]["descriptor"]["family"], "mixed_2416");
  auto parsed = parseManifest(readText(dir / kManifestFileName));
  ASSERT_TRUE(parsed) << parsed.message();
  EXPECT_EQ(*parsed, written->manifest);

  auto a = openArtifact(dir.str());
  ASSERT_TRUE(a) << a.message();
  auto resolved = a->tensor(kWeight);
  ASSERT_TRUE(resolved) << resolved.message();
  EXPECT_EQ(resolved->streams.size(), 10u);
  EXPECT_EQ(resolved->storedViews().size(), 10u);
  auto read = readMixed2416Streams(kWeight, d, resolved->streams);
  ASSERT_TRUE(read) << read.message();
  EXPECT_EQ(read->precisionMap, streams.precisionMap);
  EXPECT_EQ(read->w2Codes, streams.w2Codes);
  EXPECT_EQ(read->w4Codes, streams.w4Codes);
  EXPECT_EQ(read->firstScaleCodes, streams.firstScaleCodes);
  EXPECT_EQ(read->firstZeroPoints, streams.firstZeroPoints);
  EXPECT_EQ(read->secondScales, streams.secondScales);
  EXPECT_EQ(read->secondZeroPoints, streams.secondZeroPoints);
  EXPECT_EQ(read->sparseValues, streams.sparseValues);
  EXPECT_EQ(read->sparseColumns, streams.sparseColumns);
  EXPECT_EQ(read->sparseRowPointers, streams.sparseRowPointers);

  // L2's digest is the reference decoder's values as binary32.
  auto w = reconstructMixed2416(d, streams);
  ASSERT_TRUE(w);
  std::vector<float> f(w->begin(), w->end());
  auto digest = mixed2416ReconstructionDigest(d, *read);
  ASSERT_TRUE(digest) << digest.message();
  EXPECT_EQ(*digest, *sha256Hex(reinterpret_cast<const uint8_t *>(f.data()),
                                f.size() * 4));
}

TEST(Mixed2416Artifact, BadStreamDataIsRefusedByStream) {
  const Mixed2416Descriptor d = smallDescriptor();
  Mixed2416Streams streams = smallStreams(d);
  // Row 0's outliers out of column order: the shapes are right, the data
  // is not, so the manifest opens and reading the streams refuses.
  std::swap(streams.sparseColumns[0], streams.sparseColumns[1]);
  MixedArtifact fx(streams);
  TempDir dir;
  auto written = fx.writer.write(dir.str());
  ASSERT_TRUE(written) << written.message();
  auto a = openArtifact(dir.str());
  ASSERT_TRUE(a) << a.message();
  auto resolved = a->tensor(kWeight);
  ASSERT_TRUE(resolved) << resolved.message();
  EXPECT_ERROR_CONTAINS(readMixed2416Streams(kWeight, d, resolved->streams),
                        std::string(kWeight) + ": sparse_columns");

  Mixed2416Views missing = resolved->streams;
  missing.erase("w4_codes");
  EXPECT_ERROR_CONTAINS(readMixed2416Streams(kWeight, d, missing),
                        "its w4_codes stream is missing");
}

/// A manifest (not written) whose tensor 0 is the small mixed tensor.
Manifest mixedManifest() {
  Manifest m = baseManifest();
  m.files = {{kShard, 1000, hexOf('1'), FileRole::Shard}};
  m.tensors = {mixedTensorEntry(kWeight, kShard)};
  EXPECT_TRUE(validateManifest(m)) << validateManifest(m).message();
  return m;
}

json mixedManifestJson() { return toJson(mixedManifest()); }

TEST(Mixed2416Artifact, MalformedRecordsAreRefusedByField) {
  const json good = mixedManifestJson();
  ASSERT_TRUE(manifestFromJson(good)) << manifestFromJson(good).message();
  struct Case {
    const char *what;
    std::function<void(json &)> edit;
    const char *message;
  };
  const Case cases[] = {
      {"w4 bytes", [](json &t) { t["w4_codes"]["shape"] = {500}; },
       "manifest.tensors[0].w4_codes.shape: 500 bytes are not a whole number "
       "of W4 groups of 32 bytes"},
      {"w2 bytes", [](json &t) { t["w2_codes"]["shape"] = {48}; },
       "manifest.tensors[0].w2_codes.shape: with 16 W4 groups of 32, the W2 "
       "stream holds 256 bytes, got 48"},
      {"map", [](json &t) { t["precision_map"]["shape"] = {3}; },
       "manifest.tensors[0].precision_map.shape: expected [4], got [3]"},
      {"second dtype", [](json &t) { t["second_scales"]["dtype"] = "BF16"; },
       "manifest.tensors[0].second_scales.dtype: expected F16, got BF16"},
      {"qs shape", [](json &t) { t["first_scale_codes"]["shape"] = {2, 16}; },
       "manifest.tensors[0].first_scale_codes.shape: expected [16, 2], got "
       "[2, 16]"},
      {"columns", [](json &t) { t["sparse_columns"]["shape"] = {3}; },
       "manifest.tensors[0].sparse_columns.shape: expected [16], got [3]"},
      {"pointers", [](json &t) { t["sparse_row_pointers"]["dtype"] = "I64"; },
       "manifest.tensors[0].sparse_row_pointers.dtype: expected I32, got I64"},
      {"missing stream", [](json &t) { t.erase("sparse_values"); },
       "manifest.tensors[0].sparse_values"},
      {"unknown key", [](json &t) { t["codes"] = t["w2_codes"]; },
       "manifest.tensors[0]: unknown field \"codes\""},
      {"descriptor",
       [](json &t) {
         t["logical"]["descriptor"]["first_level"]["group_size"] = 96;
       },
       "manifest.tensors[0].logical"},
      {"kind", [](json &t) { t["kind"] = "mixed"; },
       "unknown tensor kind \"mixed\" (expected \"plain\", \"quantized\" or "
       "\"mixed_2416\")"},
  };
  for (const Case &c : cases) {
    json j = good;
    c.edit(j["tensors"][0]);
    EXPECT_ERROR_CONTAINS(manifestFromJson(j), c.message);
  }
}

TEST(Mixed2416Artifact, BindingsNameItAndOnlyAMixedKernelReadsIt) {
  // A binding may bind the mixed tensor (its kernel is the mixed GEMV,
  // KernelEntry::mixed); an affine kernel record may not name it.
  Manifest m = mixedManifest();
  OpBinding b;
  b.op = kWeight;
  b.n = 16;
  b.k = 128;
  b.ranks = {{0, 16, 0, 128}};
  b.phases = {{kernels::Phase::Decode, "mixed2416_decode_gemv", false}};
  m.bindings = {b};
  EXPECT_TRUE(validateManifest(m)) << validateManifest(m).message();
  m.files.push_back({"kernels/gemm_w4.ptx", 20, hexOf('3'), FileRole::Kernel});
  m.kernels = {
      gemvEntry("gemv_w4a16_g32", "kernels/gemm_w4.ptx", kWeight, 16, 128)};
  EXPECT_ERROR_CONTAINS(validateManifest(m),
                        "manifest.kernels[0].ops[0]: "
                        "\"layers.0.mlp.down.weight\" is not a quantized "
                        "tensor");
}

} // namespace
} // namespace arttest
