//===- GGMLSpellings.cpp - ggml block types as affine descriptors ---------===//

#include "qtensor/Descriptor/GGMLSpellings.h"

using namespace qtensor;

const std::vector<GGMLAffineSpelling> &qtensor::ggmlAffineSpellings() {
  using SE = SignedEncoding;
  using ZP = ZeroPointKind;
  using FT = FloatType;
  static const std::vector<GGMLAffineSpelling> table = {
      {"q4_0", {4, true}, SE::OffsetBinary, ZP::None, 32, FT::F16, 32, 18},
      {"q4_1", {4, false}, SE::TwosComplement, ZP::Min, 32, FT::F16, 32, 20},
      {"q5_0", {5, true}, SE::OffsetBinary, ZP::None, 32, FT::F16, 32, 22},
      {"q5_1", {5, false}, SE::TwosComplement, ZP::Min, 32, FT::F16, 32, 24},
      {"q8_0", {8, true}, SE::TwosComplement, ZP::None, 32, FT::F16, 32, 34},
      {"q4_k", {4, false}, SE::TwosComplement, ZP::Min, 32, FT::F32, 256, 144},
      {"q5_k", {5, false}, SE::TwosComplement, ZP::Min, 32, FT::F32, 256, 176},
      {"q6_k", {6, true}, SE::OffsetBinary, ZP::None, 16, FT::F32, 256, 210},
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
