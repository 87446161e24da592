//===- GGMLTypes.cpp - The ggml type table and block contracts ------------===//
//
// Block sizes and type sizes follow ggml's type_traits table (ggml.c) and the
// block structs of ggml-common.h at llama.cpp c392e5094d. Note Q8_1: ggml's
// block_q8_1 is {half d, half s, int8 qs[32]} = 36 bytes; gguf-py still lists
// 40 (the old float d/s layout). The C layout is what gguf_init_from_file sizes
// tensors with, so it is used here.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/GGMLTypes.h"

#include "qtensor/Support/CheckedMath.h"

#include <array>

using namespace qtensor;

namespace {
constexpr uint32_t QK_K = 256;

const std::vector<GGMLTypeTraits> &table() {
  static const std::vector<GGMLTypeTraits> types = {
      {GGMLType::F32, "F32", 1, 4, false},
      {GGMLType::F16, "F16", 1, 2, false},
      {GGMLType::Q4_0, "Q4_0", 32, 2 + 16, true},
      {GGMLType::Q4_1, "Q4_1", 32, 2 + 2 + 16, true},
      {GGMLType::Q5_0, "Q5_0", 32, 2 + 4 + 16, true},
      {GGMLType::Q5_1, "Q5_1", 32, 2 + 2 + 4 + 16, true},
      {GGMLType::Q8_0, "Q8_0", 32, 2 + 32, true},
      {GGMLType::Q8_1, "Q8_1", 32, 2 + 2 + 32, true},
      {GGMLType::Q2_K, "Q2_K", QK_K, QK_K / 16 + QK_K / 4 + 2 + 2, true},
      {GGMLType::Q3_K, "Q3_K", QK_K, QK_K / 8 + QK_K / 4 + 12 + 2, true},
      {GGMLType::Q4_K, "Q4_K", QK_K, 2 + 2 + 12 + QK_K / 2, true},
      {GGMLType::Q5_K, "Q5_K", QK_K, 2 + 2 + 12 + QK_K / 8 + QK_K / 2, true},
      {GGMLType::Q6_K, "Q6_K", QK_K, QK_K / 2 + QK_K / 4 + QK_K / 16 + 2, true},
      {GGMLType::Q8_K, "Q8_K", QK_K, 4 + QK_K + QK_K / 16 * 2, true},
      {GGMLType::IQ2_XXS, "IQ2_XXS", QK_K, 2 + QK_K / 8 * 2, true},
      {GGMLType::IQ2_XS, "IQ2_XS", QK_K, 2 + QK_K / 8 * 2 + QK_K / 32, true},
      {GGMLType::IQ3_XXS, "IQ3_XXS", QK_K, 2 + 3 * (QK_K / 8), true},
      {GGMLType::IQ1_S, "IQ1_S", QK_K, 2 + QK_K / 8 + QK_K / 16, true},
      {GGMLType::IQ4_NL, "IQ4_NL", 32, 2 + 16, true},
      {GGMLType::IQ3_S, "IQ3_S", QK_K, 2 + 13 * (QK_K / 32) + QK_K / 64, true},
      {GGMLType::IQ2_S, "IQ2_S", QK_K, 2 + QK_K / 4 + QK_K / 16, true},
      {GGMLType::IQ4_XS, "IQ4_XS", QK_K, 2 + 2 + QK_K / 64 + QK_K / 2, true},
      {GGMLType::I8, "I8", 1, 1, false},
      {GGMLType::I16, "I16", 1, 2, false},
      {GGMLType::I32, "I32", 1, 4, false},
      {GGMLType::I64, "I64", 1, 8, false},
      {GGMLType::F64, "F64", 1, 8, false},
      {GGMLType::IQ1_M, "IQ1_M", QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32, true},
      {GGMLType::BF16, "BF16", 1, 2, false},
      {GGMLType::TQ1_0, "TQ1_0", QK_K,
       (QK_K - 4 * QK_K / 64) / 5 + QK_K / 64 + 2, true},
      {GGMLType::TQ2_0, "TQ2_0", QK_K, QK_K / 4 + 2, true},
      {GGMLType::MXFP4, "MXFP4", 32, 1 + 16, true},
      {GGMLType::NVFP4, "NVFP4", 64, 4 + 32, true},
  };
  return types;
}

/// id -> index into table(), -1 where the id is not a type.
const std::array<int, kGGMLTypeIdLimit> &indexById() {
  static const std::array<int, kGGMLTypeIdLimit> index = [] {
    std::array<int, kGGMLTypeIdLimit> idx;
    idx.fill(-1);
    const auto &types = table();
    for (size_t i = 0; i < types.size(); ++i)
      idx[static_cast<uint32_t>(types[i].type)] = static_cast<int>(i);
    return idx;
  }();
  return index;
}

char upper(char c) { return (c >= 'a' && c <= 'z') ? char(c - 'a' + 'A') : c; }
} // namespace

const int8_t qtensor::kIQ4NLCodebook[16] = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

const int8_t qtensor::kMXFP4Codebook[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

const std::vector<GGMLTypeTraits> &qtensor::allGGMLTypes() { return table(); }

const GGMLTypeTraits *qtensor::lookupGGMLType(uint32_t id) {
  if (id >= kGGMLTypeIdLimit)
    return nullptr;
  int i = indexById()[id];
  return i < 0 ? nullptr : &table()[static_cast<size_t>(i)];
}

Expected<GGMLType> qtensor::ggmlTypeFromId(uint32_t id) {
  if (const GGMLTypeTraits *t = lookupGGMLType(id))
    return t->type;
  return makeError("unknown ggml type ", id);
}

const GGMLTypeTraits &qtensor::ggmlTypeTraits(GGMLType type) {
  const GGMLTypeTraits *t = lookupGGMLType(static_cast<uint32_t>(type));
  assert(t && "not a ggml type");
  return *t;
}

std::string_view qtensor::ggmlTypeName(GGMLType type) {
  const GGMLTypeTraits *t = lookupGGMLType(static_cast<uint32_t>(type));
  return t ? t->name : std::string_view("INVALID");
}

Expected<GGMLType> qtensor::ggmlTypeFromName(std::string_view name) {
  for (const GGMLTypeTraits &t : table()) {
    if (t.name.size() != name.size())
      continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i)
      same = upper(name[i]) == t.name[i];
    if (same)
      return t.type;
  }
  return makeError("unknown ggml type name '", name, "'");
}

bool qtensor::isDecodable(GGMLType type) {
  // One fact: a type decodes exactly when it has a block contract.
  return bool(describeGGMLType(type));
}

Expected<uint64_t> qtensor::ggmlByteSize(GGMLType type, uint64_t elements) {
  const GGMLTypeTraits *t = lookupGGMLType(static_cast<uint32_t>(type));
  if (!t)
    return makeError("unknown ggml type ", static_cast<uint32_t>(type));
  if (elements % t->blockSize != 0)
    return makeError(elements, " elements of ", t->name,
                     " are not a whole number of ", t->blockSize,
                     "-element blocks");
  auto bytes = checkedMul(elements / t->blockSize, t->typeSize);
  if (!bytes)
    return makeError("byte size of ", elements, " elements of ", t->name,
                     " overflows 64 bits");
  return *bytes;
}

Expected<GGMLBlockContract> qtensor::describeGGMLType(GGMLType type) {
  const GGMLTypeTraits *t = lookupGGMLType(static_cast<uint32_t>(type));
  if (!t)
    return makeError("unknown ggml type ", static_cast<uint32_t>(type));
  GGMLBlockContract c{};
  c.type = type;
  c.blockElements = t->blockSize;
  c.blockBytes = t->typeSize;
  c.codeEncoding = SignedEncoding::OffsetBinary;
  c.codebook = nullptr;
  c.codebookSize = 0;
  switch (type) {
  case GGMLType::F32:
  case GGMLType::F16:
  case GGMLType::BF16:
    c.kind = GGMLEncodingKind::Float;
    c.groupSize = 1;
    c.codeBits = static_cast<uint8_t>(t->typeSize * 8);
    c.codesSigned = true;
    c.formula = type == GGMLType::F32   ? "x = stored binary32"
                : type == GGMLType::F16 ? "x = (float)stored binary16 (exact)"
                                        : "x = bits(stored bfloat16) << 16";
    return c;
  case GGMLType::Q4_0:
    c.kind = GGMLEncodingKind::LinearSymmetric;
    c.groupSize = 32;
    c.codeBits = 4;
    c.codesSigned = true;
    c.codeOffset = 8;
    c.scaleBits = 16;
    c.formula = "block {fp16 d; u8 qs[16]}: element j (j<16) is the low nibble "
                "of qs[j], element j+16 the high nibble; x = (u - 8) * d";
    return c;
  case GGMLType::Q4_1:
    c.kind = GGMLEncodingKind::LinearAffine;
    c.groupSize = 32;
    c.codeBits = 4;
    c.codesSigned = false;
    c.scaleBits = 16;
    c.hasMin = true;
    c.formula = "block {fp16 d; fp16 m; u8 qs[16]}: nibbles as Q4_0; "
                "x = u * d + m (product rounded, then the sum)";
    return c;
  case GGMLType::Q5_0:
    c.kind = GGMLEncodingKind::LinearSymmetric;
    c.groupSize = 32;
    c.codeBits = 5;
    c.codesSigned = true;
    c.codeOffset = 16;
    c.scaleBits = 16;
    c.formula = "block {fp16 d; u32 qh; u8 qs[16]}: low 4 bits as Q4_0, bit 4 "
                "of element j is bit j of qh (little-endian); x = (u - 16) * d";
    return c;
  case GGMLType::Q5_1:
    c.kind = GGMLEncodingKind::LinearAffine;
    c.groupSize = 32;
    c.codeBits = 5;
    c.codesSigned = false;
    c.scaleBits = 16;
    c.hasMin = true;
    c.formula = "block {fp16 d; fp16 m; u32 qh; u8 qs[16]}: codes as Q5_0; "
                "x = u * d + m";
    return c;
  case GGMLType::Q8_0:
    c.kind = GGMLEncodingKind::LinearSymmetric;
    c.groupSize = 32;
    c.codeBits = 8;
    c.codesSigned = true;
    c.codeEncoding = SignedEncoding::TwosComplement;
    c.scaleBits = 16;
    c.formula = "block {fp16 d; int8 qs[32]}: x = q * d";
    return c;
  case GGMLType::Q2_K:
    c.kind = GGMLEncodingKind::KQuantAffine;
    c.groupSize = 16;
    c.codeBits = 2;
    c.codesSigned = false;
    c.scaleBits = 16;
    c.hasMin = true;
    c.subScaleBits = 4;
    c.subMinBits = 4;
    c.formula =
        "super-block {u8 scales[16]; u8 qs[64]; fp16 d; fp16 dmin} of 16 "
        "groups of 16: scales[j] = s_j | m_j << 4; per 128 elements, 32 bytes "
        "of qs hold 4 2-bit planes (shift 0,2,4,6), bytes 0-15 for one group "
        "and "
        "16-31 for the next; x = (d*s_j)*u - (dmin*m_j)";
    return c;
  case GGMLType::Q3_K:
    c.kind = GGMLEncodingKind::KQuantSymmetric;
    c.groupSize = 16;
    c.codeBits = 3;
    c.codesSigned = true;
    c.codeOffset = 4;
    c.scaleBits = 16;
    c.subScaleBits = 6;
    c.subScalesSigned = true;
    c.formula =
        "super-block {u8 hmask[32]; u8 qs[64]; u8 scales[12]; fp16 d}: "
        "low 2 bits laid out as Q2_K, bit 2 of element 32k+l is bit k "
        "of hmask[l]; q = u - 4; 6-bit s_j packed (low nibbles "
        "in bytes 0-7, high pairs in 8-11), minus 32; x = (d*(s_j-32))*q";
    return c;
  case GGMLType::Q4_K:
    c.kind = GGMLEncodingKind::KQuantAffine;
    c.groupSize = 32;
    c.codeBits = 4;
    c.codesSigned = false;
    c.scaleBits = 16;
    c.hasMin = true;
    c.subScaleBits = 6;
    c.subMinBits = 6;
    c.formula =
        "super-block {fp16 d; fp16 dmin; u8 scales[12]; u8 qs[128]} of 8 "
        "groups of 32: 6-bit s_j/m_j packed as get_scale_min_k4; per 64 "
        "elements 32 bytes, low nibbles first group, high nibbles the "
        "next; x = (d*s_j)*u - (dmin*m_j)";
    return c;
  case GGMLType::Q5_K:
    c.kind = GGMLEncodingKind::KQuantAffine;
    c.groupSize = 32;
    c.codeBits = 5;
    c.codesSigned = false;
    c.scaleBits = 16;
    c.hasMin = true;
    c.subScaleBits = 6;
    c.subMinBits = 6;
    c.formula = "super-block {fp16 d; fp16 dmin; u8 scales[12]; u8 qh[32]; u8 "
                "qs[128]}: as Q4_K, bit 4 of element 32g+l is bit g of qh[l]; "
                "x = (d*s_j)*u - (dmin*m_j)";
    return c;
  case GGMLType::Q6_K:
    c.kind = GGMLEncodingKind::KQuantSymmetric;
    c.groupSize = 16;
    c.codeBits = 6;
    c.codesSigned = true;
    c.codeOffset = 32;
    c.scaleBits = 16;
    c.subScaleBits = 8;
    c.subScalesSigned = true;
    c.formula =
        "super-block {u8 ql[128]; u8 qh[64]; int8 scales[16]; fp16 d} "
        "of 16 groups of 16: low 4 bits from ql nibbles, high 2 bits from "
        "qh pairs; q = u - 32; x = (d*s_j)*q";
    return c;
  case GGMLType::IQ4_NL:
    c.kind = GGMLEncodingKind::Codebook;
    c.groupSize = 32;
    c.codeBits = 4;
    c.codesSigned = false;
    c.scaleBits = 16;
    c.codebook = kIQ4NLCodebook;
    c.codebookSize = 16;
    c.formula = "block {fp16 d; u8 qs[16]}: nibbles as Q4_0; "
                "x = d * kvalues_iq4nl[u]";
    return c;
  case GGMLType::TQ1_0:
    c.kind = GGMLEncodingKind::Ternary;
    c.groupSize = QK_K;
    c.codeBits = 0;
    c.codesSigned = true;
    c.codeOffset = 1;
    c.scaleBits = 16;
    c.formula =
        "super-block {u8 qs[48]; u8 qh[4]; fp16 d}: each byte holds 5 "
        "(qh: 4) trits as a base-3 fixed-point fraction; trit n of byte "
        "b is ((u8)(b * 3^n) * 3) >> 8; x = (t - 1) * d";
    return c;
  case GGMLType::TQ2_0:
    c.kind = GGMLEncodingKind::Ternary;
    c.groupSize = QK_K;
    c.codeBits = 2;
    c.codesSigned = true;
    c.codeOffset = 1;
    c.scaleBits = 16;
    c.formula = "super-block {u8 qs[64]; fp16 d}: per 128 elements 32 bytes of "
                "four 2-bit planes (shift 0,2,4,6); x = (u - 1) * d";
    return c;
  case GGMLType::IQ2_XXS:
  case GGMLType::IQ2_XS:
  case GGMLType::IQ2_S:
  case GGMLType::IQ3_XXS:
  case GGMLType::IQ3_S:
  case GGMLType::IQ1_S:
  case GGMLType::IQ1_M:
    // Codes are lattice points of 8 (IQ3: 4) elements, not per element.
    c.kind = GGMLEncodingKind::Lattice;
    c.codeBits = 0;
    c.codesSigned = true;
    c.scaleBits = 16;
    c.subScaleBits = type == GGMLType::IQ1_S || type == GGMLType::IQ1_M ? 3 : 4;
    switch (type) {
    case GGMLType::IQ2_XXS:
      c.groupSize = 32;
      c.formula = "super-block {fp16 d; u32 pairs[16]}: per 32 elements, word "
                  "0 holds 4 indices into the 256-point iq2xxs grid, word 1 "
                  "four 7-bit ksigns indices and s (bits 28-31); "
                  "x = (d*(0.5+s)*0.25) * grid * sign";
      break;
    case GGMLType::IQ2_XS:
      c.groupSize = 16;
      c.formula = "super-block {fp16 d; u16 qs[32]; u8 scales[8]}: each u16 "
                  "is a 9-bit iq2xs grid index and a 7-bit ksigns index; "
                  "4-bit s per 16; x = (d*(0.5+s)*0.25) * grid * sign";
      break;
    case GGMLType::IQ2_S:
      c.groupSize = 16;
      c.formula = "super-block {fp16 d; u8 qs[32]; u8 signs[32]; u8 qh[8]; u8 "
                  "scales[8]}: 10-bit iq2s grid indices (high bits in qh), "
                  "explicit sign bytes, 4-bit s per 16; "
                  "x = (d*(0.5+s)*0.25) * grid * sign";
      break;
    case GGMLType::IQ3_XXS:
      c.groupSize = 32;
      c.formula = "super-block {fp16 d; u8 qs[64]; u32 ss[8]}: indices into "
                  "the 256-point iq3xxs grid (4 elements each); per 32 "
                  "elements four 7-bit ksigns indices and s (bits 28-31); "
                  "x = (d*(0.5+s)*0.5) * grid * sign";
      break;
    case GGMLType::IQ3_S:
      c.groupSize = 32;
      c.formula = "super-block {fp16 d; u8 qs[64]; u8 qh[8]; u8 signs[32]; u8 "
                  "scales[4]}: 9-bit iq3s grid indices (bit 8 in qh), sign "
                  "bytes, 4-bit s per 32; x = (d*(1+2s)) * grid * sign";
      break;
    case GGMLType::IQ1_S:
      c.groupSize = 32;
      c.formula = "super-block {fp16 d; u8 qs[32]; u16 qh[8]}: 11-bit indices "
                  "into the 2048-point ternary iq1s grid; per 32 a 3-bit s "
                  "(qh bits 12-14) and the delta's sign (bit 15); "
                  "x = (d*(2s+1)) * (grid +- 0.125)";
      break;
    default: // IQ1_M
      c.groupSize = 16;
      c.formula = "super-block {u8 qs[32]; u8 qh[16]; u16 scales[4]}: as "
                  "IQ1_S with a 3-bit s per 16 and a delta sign per 8; fp16 d "
                  "is the top nibbles of the four scale words; "
                  "x = (d*(2s+1)) * (grid +- 0.125)";
      break;
    }
    return c;
  case GGMLType::IQ4_XS:
    c.kind = GGMLEncodingKind::Codebook;
    c.groupSize = 32;
    c.codeBits = 4;
    c.codesSigned = false;
    c.scaleBits = 16;
    c.subScaleBits = 6;
    c.subScalesSigned = true;
    c.codebook = kIQ4NLCodebook;
    c.codebookSize = 16;
    c.formula = "super-block {fp16 d; u16 scales_h; u8 scales_l[4]; u8 "
                "qs[128]}: per 32 elements a 6-bit s (low nibble in scales_l, "
                "high pair in scales_h) and 16 bytes of nibbles as IQ4_NL; "
                "x = (d*(s-32)) * kvalues_iq4nl[u]";
    return c;
  case GGMLType::MXFP4:
  case GGMLType::NVFP4: {
    const bool mx = t->type == GGMLType::MXFP4;
    c.kind = GGMLEncodingKind::Codebook;
    c.groupSize = mx ? 32 : 16;
    c.codeBits = 4;
    c.codesSigned = false;
    c.scaleBits = 8;
    c.codebook = kMXFP4Codebook;
    c.codebookSize = 16;
    c.formula =
        mx ? "block {u8 e; u8 qs[16]}: nibbles as Q4_0 index kvalues_mxfp4 "
             "(E2M1 doubled); x = 2^(e-128) * kvalues_mxfp4[u]"
           : "block {u8 d[4]; u8 qs[32]}: per 16 elements an unsigned e4m3 "
             "d (bias 7) and 8 bytes of nibbles, low nibbles first; "
             "x = (d/2) * kvalues_mxfp4[u]";
    return c;
  }
  default:
    return makeError("unsupported type ", t->name);
  }
}
