//===- GGMLSpellings.cpp - ggml block types as affine descriptors ---------===//

#include "qtensor/Descriptor/GGMLSpellings.h"

using namespace qtensor;

const std::vector<GGMLAffineSpelling> &qtensor::ggmlAffineSpellings() {
  using SE = SignedEncoding;
  using ZP = ZeroPointKind;
  using FT = FloatType;
  // Q4_K and Q5_K: 6-bit scale and min codes per 32, f16 d and dmin per
  // 256; Q6_K: int8 scale codes per 16, f16 d per 256.
  static const NestedQParams kMin6{
      {6, false}, CodeType{6, false}, 256, FT::F16};
  static const NestedQParams kSigned8{{8, true}, std::nullopt, 256, FT::F16};
  // Q2_K: 4-bit scale and min codes per 16 under f16 d and dmin per 256;
  // Q3_K: signed 6-bit scale codes (stored + 32) per 16 under an f16 d.
  static const NestedQParams kMin4{
      {4, false}, CodeType{4, false}, 256, FT::F16};
  static const NestedQParams kSigned6{{6, true}, std::nullopt, 256, FT::F16};
  static const std::vector<GGMLAffineSpelling> table = {
      {"q4_0", {4, true}, SE::OffsetBinary, ZP::None, 32, FT::F16, 32, 18},
      {"q4_1", {4, false}, SE::TwosComplement, ZP::Min, 32, FT::F16, 32, 20},
      {"q5_0", {5, true}, SE::OffsetBinary, ZP::None, 32, FT::F16, 32, 22},
      {"q5_1", {5, false}, SE::TwosComplement, ZP::Min, 32, FT::F16, 32, 24},
      {"q8_0", {8, true}, SE::TwosComplement, ZP::None, 32, FT::F16, 32, 34},
      {"q2_k",
       {2, false},
       SE::TwosComplement,
       ZP::Min,
       16,
       FT::F32,
       256,
       84,
       kMin4},
      {"q3_k",
       {3, true},
       SE::TwosComplement,
       ZP::None,
       16,
       FT::F32,
       256,
       110,
       kSigned6},
      {"q4_k",
       {4, false},
       SE::TwosComplement,
       ZP::Min,
       32,
       FT::F32,
       256,
       144,
       kMin6},
      {"q5_k",
       {5, false},
       SE::TwosComplement,
       ZP::Min,
       32,
       FT::F32,
       256,
       176,
       kMin6},
      {"q6_k",
       {6, true},
       SE::OffsetBinary,
       ZP::None,
       16,
       FT::F32,
       256,
       210,
       kSigned8},
      {"iq4_nl",
       {4, false},
       SE::TwosComplement,
       ZP::None,
       32,
       FT::F16,
       32,
       18,
       std::nullopt,
       Codebook::IQ4NL},
      // IQ4_XS: 6-bit scale codes stored + 32 per 32 under an f16 d.
      {"iq4_xs",
       {4, false},
       SE::TwosComplement,
       ZP::None,
       32,
       FT::F32,
       256,
       136,
       kSigned6,
       Codebook::IQ4NL},
      // MXFP4: one e8m0 byte + 16 bytes of nibbles per 32.
      {"mxfp4",
       {4, false},
       SE::TwosComplement,
       ZP::None,
       32,
       FT::F32,
       32,
       17,
       std::nullopt,
       Codebook::E2M1,
       ScaleFormat::E8M0},
      // NVFP4 (ggml): four ue4m3 bytes + 32 bytes of nibbles per 64.
      {"nvfp4",
       {4, false},
       SE::TwosComplement,
       ZP::None,
       16,
       FT::F32,
       64,
       36,
       std::nullopt,
       Codebook::E2M1,
       ScaleFormat::UE4M3},
  };
  return table;
}

const GGMLAffineSpelling *
qtensor::findGGMLAffineSpelling(std::string_view encoding) {
  for (const GGMLAffineSpelling &s : ggmlAffineSpellings())
    if (encoding == s.encoding)
      return &s;
  return nullptr;
}

AffineDescriptor qtensor::spelledDescriptor(const GGMLAffineSpelling &s,
                                            int64_t axis) {
  AffineDescriptor d;
  d.code = s.code;
  d.encoding = s.signedEncoding;
  d.zeroPoint = s.zeroPoint;
  d.scheme = d.zeroPoint == ZeroPointKind::None ? QuantScheme::Symmetric
                                                : QuantScheme::Asymmetric;
  d.granularity = Granularity::Group;
  d.axis = axis;
  d.groupSize = s.group;
  d.tail = TailRule::Exact;
  d.scaleType = s.scaleType;
  d.nested = s.nested;
  d.codebook = s.codebook;
  d.scaleFormat = s.scaleFormat;
  return d;
}
