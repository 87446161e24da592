//===- DescriptorJsonTest.cpp - The manifest's tensor schema --------------===//

#include "qtensor/Descriptor/DescriptorJson.h"

#include <gtest/gtest.h>

using namespace qtensor;
using json = nlohmann::json;

namespace {
QuantizedTensorDescriptor sampleTensor() {
  QuantizedTensorDescriptor t;
  t.shape = {4096, 4096};
  t.elementType = FloatType::BF16;
  t.descriptor.code = {4, false};
  t.descriptor.scheme = QuantScheme::Asymmetric;
  t.descriptor.zeroPoint = ZeroPointKind::Integer;
  t.descriptor.granularity = Granularity::Group;
  t.descriptor.axis = 1;
  t.descriptor.groupSize = 128;
  t.descriptor.rounding = RoundingMode::NearestAway;
  t.layout.family = "tiled";
  t.layout.version = 2;
  t.layout.tile = {128, 64};
  t.layout.padding = {0, 0};
  return t;
}
} // namespace

TEST(DescriptorJson, TensorRoundTripsBothWays) {
  QuantizedTensorDescriptor t = sampleTensor();
  json j = toJson(t);
  auto back = tensorDescriptorFromJson(j);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, t);
  EXPECT_EQ(toJson(*back), j);
}

TEST(DescriptorJson, SpelledAsDocumented) {
  json j = toJson(sampleTensor());
  EXPECT_EQ(j["element_type"], "bf16");
  EXPECT_EQ(j["descriptor"]["family"], "affine");
  EXPECT_EQ(j["descriptor"]["code"]["bits"], 4);
  EXPECT_EQ(j["descriptor"]["code"]["signed"], false);
  EXPECT_EQ(j["descriptor"]["zero_point"], "integer");
  EXPECT_EQ(
      j["descriptor"]["granularity"],
      json::parse(
          R"({"kind":"group","axis":1,"group_size":128,"tail":"partial"})"));
  EXPECT_EQ(j["descriptor"]["rounding"], "nearest_away");
  EXPECT_EQ(j["layout"]["tile"], json::parse("[128, 64]"));
}

TEST(DescriptorJson, PermutationSurvives) {
  QuantizedTensorDescriptor t = sampleTensor();
  t.shape = {2, 4};
  t.descriptor.groupSize = 2;
  t.descriptor.permutation = std::vector<int64_t>{2, 0, 3, 1};
  t.layout = LayoutDescriptor{};
  auto back = tensorDescriptorFromJson(toJson(t));
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->descriptor.permutation, t.descriptor.permutation);
}

// ggml Q4_K as a nested descriptor: the second level survives the trip and
// is spelled as documented (docs/descriptor-json.md).
TEST(DescriptorJson, NestedQParamsSurvive) {
  QuantizedTensorDescriptor t;
  t.shape = {8, 512};
  t.elementType = FloatType::F32;
  AffineDescriptor &d = t.descriptor;
  d.code = {4, false};
  d.scheme = QuantScheme::Asymmetric;
  d.zeroPoint = ZeroPointKind::Min;
  d.granularity = Granularity::Group;
  d.axis = 1;
  d.groupSize = 32;
  d.tail = TailRule::Exact;
  d.scaleType = FloatType::F32;
  d.nested = NestedQParams{{6, false}, CodeType{6, false}, 256, FloatType::F16};
  json j = toJson(t);
  EXPECT_EQ(j["descriptor"]["nested"],
            json::parse(R"({"scale_code":{"bits":6,"signed":false},
                            "min_code":{"bits":6,"signed":false},
                            "super_group_size":256,"super_dtype":"f16"})"));
  auto back = tensorDescriptorFromJson(j);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, t);
  EXPECT_EQ(superQParamShape(d, t.shape), (std::vector<int64_t>{8, 2}));

  j["descriptor"]["nested"]["super_dtype"] = "f32";
  auto f32 = tensorDescriptorFromJson(j);
  ASSERT_FALSE(f32);
  EXPECT_NE(f32.message().find("second-level scales must be f16 or bf16"),
            std::string::npos)
      << f32.message();
  j["descriptor"]["nested"]["super_dtype"] = "f16";
  j["descriptor"]["nested"]["extra"] = 1;
  auto extra = tensorDescriptorFromJson(j);
  ASSERT_FALSE(extra);
  EXPECT_NE(extra.message().find("nested"), std::string::npos)
      << extra.message();
}

// ggml IQ4_NL: the table's name and values travel together; a reader
// decodes with its own copy, so a changed value is refused by index.
TEST(DescriptorJson, CodebookCarriesItsTable) {
  QuantizedTensorDescriptor t;
  t.shape = {8, 64};
  t.elementType = FloatType::F16;
  AffineDescriptor &d = t.descriptor;
  d.code = {4, false};
  d.granularity = Granularity::Group;
  d.axis = 1;
  d.groupSize = 32;
  d.tail = TailRule::Exact;
  d.codebook = Codebook::IQ4NL;
  json j = toJson(t);
  EXPECT_EQ(j["descriptor"]["codebook"]["name"], "iq4_nl");
  EXPECT_EQ(j["descriptor"]["codebook"]["values"],
            json::parse("[-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, "
                        "25, 38, 53, 69, 89, 113]"));
  auto back = tensorDescriptorFromJson(j);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, t);

  // NF4's values are f32 and survive the text exactly.
  d.codebook = Codebook::NF4;
  auto nf4 = tensorDescriptorFromJson(json::parse(toJson(t).dump()));
  ASSERT_TRUE(nf4) << nf4.message();
  EXPECT_EQ(*nf4, t);

  auto rejects = [&](json bad, const std::string &message) {
    auto r = tensorDescriptorFromJson(bad);
    ASSERT_FALSE(r) << bad.dump();
    EXPECT_NE(r.message().find(message), std::string::npos) << r.message();
  };
  json tampered = j;
  tampered["descriptor"]["codebook"]["values"][3] = -60;
  rejects(tampered, "tensor.descriptor.codebook.values[3]: iq4_nl's entry 3 "
                    "is -65.0, got -60");
  json shortTable = j;
  shortTable["descriptor"]["codebook"]["values"].erase(15);
  rejects(shortTable, "iq4_nl has 16 entries, got 15");
  json none = j;
  none["descriptor"]["codebook"]["name"] = "none";
  rejects(none, "\"none\" is spelled by leaving codebook out");
  json nf5 = j;
  nf5["descriptor"]["codebook"]["name"] = "nf5";
  rejects(nf5, "tensor.descriptor.codebook.name: unknown value \"nf5\"");
  json signedCodes = j;
  signedCodes["descriptor"]["code"]["signed"] = true;
  rejects(signedCodes, "codebook iq4_nl is indexed by unsigned codes, got si4");
  json extra = j;
  extra["descriptor"]["codebook"]["bits"] = 4;
  rejects(extra, "codebook");
}

// MXFP4: e2m1 codes, e8m0 scales; the format is a name, the values f32.
TEST(DescriptorJson, ScaleFormatRoundTrips) {
  QuantizedTensorDescriptor t;
  t.shape = {8, 64};
  AffineDescriptor &d = t.descriptor;
  d.code = {4, false};
  d.granularity = Granularity::Group;
  d.axis = 1;
  d.groupSize = 32;
  d.tail = TailRule::Exact;
  d.scaleType = FloatType::F32;
  d.codebook = Codebook::E2M1;
  d.scaleFormat = ScaleFormat::E8M0;
  json j = toJson(t);
  EXPECT_EQ(j["descriptor"]["scale_format"], "e8m0");
  EXPECT_EQ(j["descriptor"]["codebook"]["values"],
            json::parse("[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 0.0, -0.5, "
                        "-1.0, -1.5, -2.0, -3.0, -4.0, -6.0]"));
  auto back = tensorDescriptorFromJson(json::parse(j.dump()));
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, t);
  d.scaleFormat = ScaleFormat::Plain;
  EXPECT_FALSE(toJson(t)["descriptor"].contains("scale_format"));

  auto rejects = [&](json bad, const std::string &message) {
    auto r = tensorDescriptorFromJson(bad);
    ASSERT_FALSE(r) << bad.dump();
    EXPECT_NE(r.message().find(message), std::string::npos) << r.message();
  };
  json plain = j;
  plain["descriptor"]["scale_format"] = "plain";
  rejects(plain, "\"plain\" is spelled by leaving scale_format out");
  json e5m2 = j;
  e5m2["descriptor"]["scale_format"] = "e5m2";
  rejects(e5m2, "tensor.descriptor.scale_format: unknown value \"e5m2\"");
  json f16 = j;
  f16["descriptor"]["scale_dtype"] = "f16";
  rejects(f16, "scale_format e8m0 decodes to exact f32 values");
}

// E4M3's 256 entries travel too; JSON has no NaN, so its two NaN entries
// are null, and only there.
TEST(DescriptorJson, E4M3TableSpellsNaNAsNull) {
  QuantizedTensorDescriptor t;
  t.shape = {4, 64};
  AffineDescriptor &d = t.descriptor;
  d.code = {8, false};
  d.granularity = Granularity::PerAxis;
  d.axis = 0;
  d.codebook = Codebook::E4M3;
  json j = json::parse(toJson(t).dump());
  const json &values = j["descriptor"]["codebook"]["values"];
  ASSERT_EQ(values.size(), 256u);
  EXPECT_TRUE(values[0x7F].is_null());
  EXPECT_TRUE(values[0xFF].is_null());
  EXPECT_EQ(values[0x7E], 448.0);
  EXPECT_EQ(values[0xB8], -1.0);
  auto back = tensorDescriptorFromJson(j);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, t);
  json moved = j;
  moved["descriptor"]["codebook"]["values"][0x7E] = nullptr;
  auto r = tensorDescriptorFromJson(moved);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("values[126]: e4m3's entry 126 is 448.0, got "
                             "null"),
            std::string::npos)
      << r.message();
  json filled = j;
  filled["descriptor"]["codebook"]["values"][0x7F] = 480.0;
  auto f = tensorDescriptorFromJson(filled);
  ASSERT_FALSE(f);
  EXPECT_NE(f.message().find("e4m3's entry 127 is null (NaN), got 480.0"),
            std::string::npos)
      << f.message();
}

struct BadCase {
  const char *mutation; // JSON merge patch applied to a valid tensor
  const char *message;
};

// gtest would print a case as its bytes (two pointers), which made the
// discovered ctest names differ from build to build.
void PrintTo(const BadCase &c, std::ostream *os) { *os << c.mutation; }

class DescriptorJsonReject : public ::testing::TestWithParam<BadCase> {};

TEST_P(DescriptorJsonReject, NamesThePath) {
  json j = toJson(sampleTensor());
  j.merge_patch(json::parse(GetParam().mutation));
  auto result = tensorDescriptorFromJson(j);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Strict, DescriptorJsonReject,
    ::testing::Values(
        BadCase{R"({"descriptor":{"family":"codebook"}})",
                "tensor.descriptor.family: unknown descriptor family "
                "\"codebook\" (this build knows: affine)"},
        BadCase{R"({"descriptor":{"decoder_version":null}})",
                "tensor.descriptor.decoder_version: required field is missing"},
        BadCase{R"({"descriptor":{"code":{"bits":"4"}}})",
                "tensor.descriptor.code.bits: expected an integer, got string"},
        BadCase{R"({"descriptor":{"granularity":{"group_size":0}}})",
                "tensor.descriptor.granularity.group_size: 0 is outside [1, "
                "9223372036854775807]"},
        BadCase{R"({"descriptor":{"scale_dtype":"f64"}})",
                "tensor.descriptor.scale_dtype: unknown value \"f64\""},
        BadCase{R"({"descriptor":{"extra":1}})",
                "tensor.descriptor: unknown field \"extra\""},
        BadCase{R"({"descriptor":{"zero_point":"none"}})",
                "tensor.descriptor: asymmetric scheme needs a zero-point kind "
                "(integer, float or min)"},
        BadCase{R"({"descriptor":{"code":{"bits":7}}})",
                "tensor.descriptor: code type must be 2, 3, 4, 5, 6 or 8 bits "
                "wide, got 7"},
        BadCase{R"({"shape":[4096, 4000]})",
                "tensor: dimension 1 (4000 + padding 0) is not a multiple of "
                "the tile size 64"},
        BadCase{R"({"shape":[4096, -1]})",
                "tensor: dimension 1 is -1; quantized tensors need static "
                "non-negative shapes"},
        BadCase{R"({"layout":{"version":0}})",
                "tensor.layout.version: 0 is outside [1, 4294967295]"},
        BadCase{R"({"element_type":"int8"})",
                "tensor.element_type: unknown value \"int8\""},
        BadCase{R"({"layout":null})",
                "tensor.layout: required field is missing"},
        BadCase{
            R"({"layout":{"family":"logical","tile":[],"padding":[],"encoding":"msb_first"}})",
            "tensor: the logical layout is version 1 with encoding "
            "\"lsb_first\"; got version 2 with encoding \"msb_first\""}),
    [](const ::testing::TestParamInfo<BadCase> &info) {
      return "case" + std::to_string(info.index);
    });

TEST(DescriptorJson, RejectsNonObject) {
  auto result = affineDescriptorFromJson(json::array());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.message(), "descriptor: expected a JSON object, got array");
}
