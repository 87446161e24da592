//===- GGMLTypes.h - ggml types, block contracts, decoders ------*- C++ -*-===//
//
// The ggml_type table as GGUF files use it (numbering of llama.cpp commit
// c392e5094deaf2d1a7c18683214f007fad3fe42b, where GGML_TYPE_COUNT = 39), the
// block contract of each quantized type in plain terms, and decoders to float32
// that are bit-exact with ggml's reference `dequantize_row_*` (ggml-quants.c).
//
// Element order everywhere is ggml's: ne[0] is the contiguous row, and a block
// never crosses a row (a reader rejects ne[0] that is not a multiple of the
// block size), so a tensor decodes as one run of ne[0]*ne[1]*... elements.
//
// Bit-exactness: every decoder rounds each product to float32 separately, in
// ggml's evaluation order (e.g. Q6_K is (d * scale) * q, Q4_K is
// (d*sc)*q - (dmin*m)); the library is compiled with -ffp-contract=off so no
// multiply-add is fused. This is what ggml's generic C (and gguf-py's numpy
// port) computes on x86-64, where the corpus references were produced.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_GGMLTYPES_H
#define QTENSOR_FORMATS_GGMLTYPES_H

#include "qtensor/Numerics/Enums.h"
#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace qtensor {

/// ggml tensor types with their on-disk numeric ids. Ids 4, 5 (Q4_2, Q4_3),
/// 31..33 (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8) and 36..38 (IQ4_NL_4_4/4_8/8_8) were
/// removed from GGUF files and are not valid; 39 and above are undefined at
/// the pinned llama.cpp commit.
enum class GGMLType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,
};

/// Ids this build knows are below this: MXFP4 and NVFP4 included (gguf-py
/// 0.18's numbering), Q1_0 (41) and later unknown.
inline constexpr uint32_t kGGMLTypeIdLimit = 41;

/// Storage facts of one type (ggml's type_traits: blck_size, type_size).
struct GGMLTypeTraits {
  GGMLType type;
  std::string_view name; ///< upper case, as gguf-py spells it: "Q4_0", "BF16"
  uint32_t blockSize;    ///< elements per block (1 for plain types)
  uint32_t typeSize;     ///< bytes per block
  bool quantized;        ///< a block format with scales (not a plain scalar)
};

/// Every defined type, in id order.
const std::vector<GGMLTypeTraits> &allGGMLTypes();

/// Traits of `id`, or nullptr where the id names no type (removed or unknown).
const GGMLTypeTraits *lookupGGMLType(uint32_t id);

/// The type with that id; the error is "unknown ggml type <id>".
Expected<GGMLType> ggmlTypeFromId(uint32_t id);

/// Traits of a valid enumerator.
const GGMLTypeTraits &ggmlTypeTraits(GGMLType type);

/// "Q4_0", "IQ2_XXS", ...
std::string_view ggmlTypeName(GGMLType type);

/// Parses a name as ggmlTypeName spells it (case-insensitive, so ggml's own
/// lower-case "q4_K" is accepted too).
Expected<GGMLType> ggmlTypeFromName(std::string_view name);

/// True for the types decodeRow supports: F32, F16, BF16, Q4_0, Q4_1, Q5_0,
/// Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0,
/// MXFP4, NVFP4,
/// and the lattice types IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
/// IQ1_M. Q8_1 and Q8_K (ggml's activation formats) are not.
bool isDecodable(GGMLType type);

/// Bytes of `elements` contiguous elements of `type` (elements must be a
/// multiple of the block size); errors on a partial block or on overflow.
Expected<uint64_t> ggmlByteSize(GGMLType type, uint64_t elements);

//===----------------------------------------------------------------------===//
// Block contracts: what the stored codes mean, without re-quantizing.
//===----------------------------------------------------------------------===//

/// How a decoded value is formed from the stored code q of its element.
enum class GGMLEncodingKind : uint8_t {
  Float,           ///< x is the stored IEEE value (F32, F16, BF16)
  LinearSymmetric, ///< x = d * q, one fp16 d per block (Q4_0, Q5_0, Q8_0)
  LinearAffine,    ///< x = d * q + m, fp16 d and m per block (Q4_1, Q5_1)
  KQuantSymmetric, ///< x = (d * s_j) * q; s_j a sub-block scale (Q3_K, Q6_K)
  KQuantAffine,    ///< x = (d * s_j) * q - (dmin * m_j) (Q2_K, Q4_K, Q5_K)
  Codebook,        ///< x = d * table[q] (IQ4_NL; IQ4_XS with (d * s_j))
  Ternary,         ///< x = d * t, t in {-1, 0, +1} (TQ1_0, TQ2_0)
  /// x = d_j * grid[index][k] * sign: a code names a point of a fixed
  /// lattice table of 8 (IQ3: 4) elements (IQ2_*, IQ3_*; IQ1_* add a
  /// signed delta to the ternary point before scaling).
  Lattice,
};

/// The block contract of a GGUF tensor type: enough to keep the stored codes
/// and scales as they are (a descriptor, not a re-quantization). Groups always
/// run along ne[0] (the contiguous row) and never cross a row.
///
///   type   kind             block bytes group code        scales
///   Q4_0   LinearSymmetric  32    18    32    u4, q=u-8   fp16 d
///   Q4_1   LinearAffine     32    20    32    u4, q=u     fp16 d, fp16 m
///   Q5_0   LinearSymmetric  32    22    32    u5, q=u-16  fp16 d
///   Q5_1   LinearAffine     32    24    32    u5, q=u     fp16 d, fp16 m
///   Q8_0   LinearSymmetric  32    34    32    int8        fp16 d
///   Q2_K   KQuantAffine     256   84    16    u2          fp16 d,dmin; 4-bit s_j, m_j
///   Q3_K   KQuantSymmetric  256   110   16    u3, q=u-4   fp16 d; 6-bit s_j-32
///   Q4_K   KQuantAffine     256   144   32    u4          fp16 d,dmin; 6-bit s_j, m_j
///   Q5_K   KQuantAffine     256   176   32    u5          fp16 d,dmin; 6-bit s_j, m_j
///   Q6_K   KQuantSymmetric  256   210   16    u6, q=u-32  fp16 d; int8 s_j
///   IQ4_NL Codebook         32    18    32    u4 index    fp16 d; 16-entry table
///   IQ4_XS Codebook         256   136   32    u4 index    fp16 d; 6-bit s_j-32
///   IQ2_XXS Lattice         256   66    32    8-el points fp16 d; 4-bit s_j
///   IQ2_XS Lattice          256   74    16    8-el points fp16 d; 4-bit s_j
///   IQ2_S  Lattice          256   82    16    8-el points fp16 d; 4-bit s_j
///   IQ3_XXS Lattice         256   98    32    4-el points fp16 d; 4-bit s_j
///   IQ3_S  Lattice          256   110   32    4-el points fp16 d; 4-bit s_j
///   IQ1_S  Lattice          256   50    32    8-el trits  fp16 d; 3-bit s_j
///   IQ1_M  Lattice          256   56    16    8-el trits  fp16 d split; 3-bit
///   TQ1_0  Ternary          256   54    256   base-3 trits fp16 d
///   TQ2_0  Ternary          256   66    256   u2, q=u-1   fp16 d
///   MXFP4  Codebook         32    17    32    e2m1 index  e8m0 e (2^(e-128) * 2x)
///   NVFP4  Codebook         64    36    16    e2m1 index  4 ue4m3 (d/2 * 2x)
struct GGMLBlockContract {
  GGMLType type;
  GGMLEncodingKind kind;
  uint32_t blockElements; ///< elements per stored block
  uint32_t blockBytes;    ///< bytes per stored block
  /// Elements sharing one effective scale (and min): the block for the
  /// simple types, the sub-block for K-quants, 1 for floats.
  uint32_t groupSize;
  /// Bits of one stored element code (0 where elements have no code of
  /// their own: TQ1_0's 5 trits share a byte, a lattice index names 8).
  uint8_t codeBits;
  /// Whether q (after removing codeOffset) is signed.
  bool codesSigned;
  /// How a signed q is stored: OffsetBinary (stored u, q = u - codeOffset) or
  /// TwosComplement (Q8_0's int8). Unsigned codes report OffsetBinary with
  /// codeOffset 0.
  SignedEncoding codeEncoding;
  int32_t codeOffset;
  /// Bits of the block/super-block scale d (16 = IEEE binary16; 0 = none).
  uint8_t scaleBits;
  /// Whether a min is subtracted/added (Q4_1/Q5_1 "+ m", K-quants "- dmin*m_j").
  bool hasMin;
  /// K-quants: sub-block scale and min widths (0 when there are none) and
  /// whether the sub-scale is signed (Q3_K: 6-bit minus 32; Q6_K: int8).
  uint8_t subScaleBits;
  uint8_t subMinBits;
  bool subScalesSigned;
  /// Codebook types: the table q indexes (nullptr otherwise).
  const int8_t *codebook;
  uint32_t codebookSize;
  /// The dequantization formula and byte layout, in words.
  std::string_view formula;
};

/// The contract of a decodable type; "unsupported type NAME" otherwise.
Expected<GGMLBlockContract> describeGGMLType(GGMLType type);

/// ggml's IQ4_NL codebook (kvalues_iq4nl).
extern const int8_t kIQ4NLCodebook[16];
/// ggml's FP4 (E2M1) values doubled (kvalues_mxfp4), which MXFP4 and NVFP4
/// scale by half their stored scale.
extern const int8_t kMXFP4Codebook[16];

//===----------------------------------------------------------------------===//
// Decoders.
//===----------------------------------------------------------------------===//

/// IEEE binary16 -> binary32, exact for every input: subnormals are
/// normalized, infinities kept, NaNs keep sign and payload with the quiet bit
/// set (what F16C and ggml's generic converter produce).
float fp16ToFp32(uint16_t bits);

/// bfloat16 -> binary32: the bits shifted into the top half (ggml's
/// ggml_compute_bf16_to_fp32; NaN payloads are preserved as they are).
float bf16ToFp32(uint16_t bits);

/// Decodes `n` contiguous elements of `type` from `src` (`srcBytes` readable
/// bytes; at least ggmlByteSize(type, n) are needed) into `dst[0..n)`. n must
/// be a multiple of the block size. Types outside isDecodable() fail with
/// "unsupported type NAME".
Status decodeRow(GGMLType type, const uint8_t *src, size_t srcBytes, int64_t n,
                 float *dst);

/// Decodes a whole tensor of shape `ne` (ggml order, ne[0] fastest) into a new
/// vector in ggml element order. `srcBytes` must hold exactly the tensor's
/// bytes or more; ne[0] must be a multiple of the block size. Nothing is
/// allocated before the shape and byte counts have been checked.
Expected<std::vector<float>> decodeTensor(GGMLType type, const uint8_t *src,
                                          size_t srcBytes,
                                          const std::vector<int64_t> &ne);

} // namespace qtensor

#endif // QTENSOR_FORMATS_GGMLTYPES_H
