//===- Mixed2416InspectTest.cpp - Inspect and verify a mixed_2416 tensor --===//
//
// A hand-written artifact with one mixed_2416 tensor (no compiler writes
// the family yet): `qtc inspect` lists and decodes it with the reference
// decoder, and the ladder's L1 reads and checks its streams and L2
// compares its reconstruction with the digest the report records.
//
//===----------------------------------------------------------------------===//

#include "Formats/Manifest/Mixed2416TestData.h"

#include "qtensor/Inspect/Inspect.h"
#include "qtensor/Verify/Ladder.h"

namespace arttest {
namespace {

/// The small mixed artifact, with a report recording `digest` for it.
std::string writeArtifact(const TempDir &dir, const std::string &digest) {
  const Mixed2416Descriptor d = smallDescriptor();
  MixedArtifact fx(smallStreams(d));
  const std::string report =
      json{{"tensors", json::array({{{"name", kWeight},
                                     {"reconstruction_sha256", digest}}})}}
          .dump();
  Status added = fx.writer.addFile("report.json", FileRole::Report,
                                   {report.begin(), report.end()});
  EXPECT_TRUE(added) << added.message();
  auto written = fx.writer.write(dir.str());
  EXPECT_TRUE(written) << written.message();
  return dir.str();
}

std::vector<float> reference() {
  const Mixed2416Descriptor d = smallDescriptor();
  auto w = reconstructMixed2416(d, smallStreams(d));
  EXPECT_TRUE(bool(w));
  return w ? std::vector<float>(w->begin(), w->end()) : std::vector<float>();
}

std::string referenceDigest() {
  std::vector<float> f = reference();
  return *sha256Hex(reinterpret_cast<const uint8_t *>(f.data()),
                    f.size() * sizeof(float));
}

TEST(Mixed2416Inspect, ListsAndDecodesTheTensor) {
  TempDir dir;
  const std::string path = writeArtifact(dir, referenceDigest());
  qtensor::inspect::InspectReport r = qtensor::inspect::inspectPath(path);
  ASSERT_FALSE(r.error) << *r.error;
  const qtensor::inspect::InspectedTensor *row = nullptr;
  for (const auto &t : r.tensors)
    if (t.name == kWeight)
      row = &t;
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->type, "mixed_2416 g64 z8 replacement");
  EXPECT_EQ(row->shape, (std::vector<int64_t>{16, 128}));
  // Every stream's bytes: map 4, W2 256, W4 512, qs and z1 32 each, s2 and
  // z2 8 each, 16 outliers of 2 + 4 bytes, 17 row pointers of 4.
  EXPECT_EQ(row->bytes, 4u + 256 + 512 + 32 + 32 + 8 + 8 + 32 + 64 + 68);
  EXPECT_EQ(row->descriptor["descriptor"]["family"], "mixed_2416");
  auto values = qtensor::inspect::decodeTensorToF32(path, kWeight);
  ASSERT_TRUE(values) << values.message();
  EXPECT_EQ(*values, reference());
}

TEST(Mixed2416Inspect, LadderChecksStreamsAndReconstruction) {
  TempDir good;
  qtensor::verify::LadderResult ok =
      qtensor::verify::runLadder(writeArtifact(good, referenceDigest()));
  ASSERT_GE(ok.levels.size(), 3u);
  EXPECT_TRUE(ok.levels[0].ok) << ok.levels[0].detail;
  EXPECT_TRUE(ok.levels[1].ok) << ok.levels[1].detail;
  EXPECT_NE(ok.levels[1].detail.find("1 mixed_2416 tensors' streams verify"),
            std::string::npos)
      << ok.levels[1].detail;
  EXPECT_TRUE(ok.levels[2].ok) << ok.levels[2].detail;
  EXPECT_NE(ok.levels[2].detail.find("1 reconstructions match"),
            std::string::npos)
      << ok.levels[2].detail;
  // No kernel runs the family yet: L5 says so rather than passing.
  EXPECT_FALSE(ok.ok);

  TempDir bad;
  qtensor::verify::LadderResult wrong =
      qtensor::verify::runLadder(writeArtifact(bad, std::string(64, 'e')));
  ASSERT_GE(wrong.levels.size(), 3u);
  EXPECT_FALSE(wrong.levels[2].ok);
  EXPECT_NE(wrong.levels[2].detail.find(std::string(kWeight) +
                                        ": reconstruction digest"),
            std::string::npos)
      << wrong.levels[2].detail;
}

} // namespace
} // namespace arttest
