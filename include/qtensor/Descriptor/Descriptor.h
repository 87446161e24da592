//===- Descriptor.h - The logical contract of a tensor ----------*- C++ -*-===//
//
// What stored codes mean (seed M8.9 0x01B): code type, zero-point kind, group
// axis and size, tail rule, scale dtype, rounding, permutation, decoder
// version; and how they are laid out physically (family, version, encoding,
// tiles, padding). These plain structs are the MLIR-free spelling of the
// `#qtensor.affine` and `#qtensor.layout` attributes and the manifest's tensor
// schema; the invariants every spelling must satisfy are checked here, once.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_DESCRIPTOR_DESCRIPTOR_H
#define QTENSOR_DESCRIPTOR_DESCRIPTOR_H

#include "qtensor/Numerics/Enums.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor {

/// Float dtypes used for reconstructed elements and for scales.
enum class FloatType : uint8_t { F16, BF16, F32 };

/// The format roundToFormat rounds values of `t` to (FloatFormats.h).
FloatFormat floatFormatOf(FloatType t);

/// The integer type of one stored code.
struct CodeType {
  unsigned bits = 4; ///< 2, 3, 4, 5, 6 or 8 (5 and 6: ggml Q5_x, Q6_K)
  bool isSigned = false;
  bool operator==(const CodeType &o) const {
    return bits == o.bits && isSigned == o.isSigned;
  }
  bool operator!=(const CodeType &o) const { return !(*this == o); }
};

enum class QuantScheme : uint8_t { Symmetric, Asymmetric };

/// How the zero-point (if any) enters reconstruction.
enum class ZeroPointKind : uint8_t {
  None,    ///< x = s * q                 (symmetric)
  Integer, ///< x = s * (q - z), z a code  (M8.1 0x02)
  Float,   ///< x = s * (q - z), z real, stored in the scale dtype
  Min,     ///< x = s * q + m, m stored in the scale dtype (ggml Q4_1 "min")
};

enum class Granularity : uint8_t {
  PerTensor, ///< one scale for the whole tensor
  PerAxis,   ///< one scale per index of `axis`
  Group,     ///< row-bounded groups of `groupSize` along `axis` (M8.1 0x04)
};

/// What a short final group along the group axis means.
enum class TailRule : uint8_t {
  Partial, ///< a short tail group stores its own qparams
  Exact,   ///< the axis must be a multiple of the group size
};

/// Second-level qparams (seed M8.9 0x07D, 0x01B): the first-level scales
/// (and mins) are stored as integer codes, and every super-group of
/// `superGroupSize` elements along the group axis shares one second-level
/// scale (and one min scale). Decoding runs the second level first:
///
///   s_j = d_J * c_j          m_j = -(dmin_J * mc_j)      (J = super-group)
///
/// as ggml's K-quants do (d1 = d * sc; m1 = dmin * m; x = d1 * q - m1). Each
/// product of an f16/bf16 value and a code of at most 8 bits is exact in
/// f32, so the descriptor's `f32` scale type names exactly these values:
/// IR operands carry the decoded first level, an artifact stores both.
struct NestedQParams {
  CodeType scaleCode{6, false};         ///< ui6 (Q4_K, Q5_K), si8 (Q6_K)
  std::optional<CodeType> minCode;      ///< present iff the zero-point is `min`
  int64_t superGroupSize = 0;           ///< a multiple of the group size
  FloatType superType = FloatType::F16; ///< f16 or bf16 (products exact)

  bool operator==(const NestedQParams &o) const {
    return scaleCode == o.scaleCode && minCode == o.minCode &&
           superGroupSize == o.superGroupSize && superType == o.superType;
  }
  bool operator!=(const NestedQParams &o) const { return !(*this == o); }
};

/// A declared value table a code indexes (seed M8.9 0x07D: codebooks are
/// part of the code contract). With a codebook, reconstruction is
/// x = s * table[q] instead of s * q; the table's identity is its name, and
/// every spelling that carries its values (the manifest) must carry exactly
/// these.
enum class Codebook : uint8_t {
  None,
  IQ4NL, ///< ggml's kvalues_iq4nl: 16 int8 values (IQ4_NL, IQ4_XS)
  NF4,   ///< QLoRA's NormalFloat4: 16 quantiles of N(0, 1) in [-1, 1]
  E2M1,  ///< OCP FP4: sign in bit 3, then 2 exponent and 1 mantissa bits
  E4M3,  ///< OCP FP8 E4M3 (the FN variant): 256 ui8 codes, 0x7f/0xff NaN
};

/// How each scale is stored when it is a compact float code rather than a
/// value of the scale dtype (OCP microscaling and NVFP4). The decoded scale
/// is exact in f32, so the descriptor's scale dtype is `f32` and IR
/// operands carry decoded values; an artifact stores one byte per scale.
enum class ScaleFormat : uint8_t {
  Plain, ///< stored as values of the scale dtype
  E8M0,  ///< s = 2^(c - 127), c in [0, 254] (255 is NaN); MXFP4
  UE4M3, ///< unsigned e4m3, bias 7: c in [0, 0x7E] (0x7F NaN); NVFP4
};

/// The values of `c`'s table, indexed by code (empty for None). Every value
/// is an f32 (exactly; IQ4_NL's are integers); E4M3's NaN codes (0x7f,
/// 0xff) hold NaN, and every reader refuses a code whose value is NaN.
const std::vector<float> &codebookValues(Codebook c);

/// The affine family: x = s * (q - z) with declared granularity; with a
/// codebook, x = s * table[q].
struct AffineDescriptor {
  CodeType code;
  QuantScheme scheme = QuantScheme::Symmetric;
  ZeroPointKind zeroPoint = ZeroPointKind::None;
  Granularity granularity = Granularity::PerTensor;
  int64_t axis = -1;     ///< PerAxis and Group only
  int64_t groupSize = 0; ///< Group only
  TailRule tail = TailRule::Partial;
  FloatType scaleType = FloatType::F16;
  RoundingMode rounding = RoundingMode::NearestEven;
  SaturationMode saturation = SaturationMode::Clamp;
  /// Restricted symmetric range [-Q, Q] (M8.1 0x02B); signed symmetric only.
  bool narrowRange = false;
  SignedEncoding encoding = SignedEncoding::TwosComplement;
  /// Optional permutation of the group axis (act-order); must be a bijection.
  std::optional<std::vector<int64_t>> permutation;
  uint32_t decoderVersion = 1;
  /// Scales (and mins) stored as codes under a second level; none: stored
  /// as values of `scaleType`.
  std::optional<NestedQParams> nested;
  /// The table unsigned codes index, or None (codes are their own values).
  Codebook codebook = Codebook::None;
  /// Scales stored as float codes of this format (scaleType then f32).
  ScaleFormat scaleFormat = ScaleFormat::Plain;

  bool operator==(const AffineDescriptor &o) const;
  bool operator!=(const AffineDescriptor &o) const { return !(*this == o); }
};

/// Physical arrangement of the codes (seed M8.9 0x01D, 0x03C).
struct LayoutDescriptor {
  std::string family = "logical"; ///< "logical": row-major, rows byte-aligned
  uint32_t version = 1;
  std::string encoding = "lsb_first";
  std::vector<int64_t> tile;    ///< empty, or one tile size per dimension
  std::vector<int64_t> padding; ///< empty, or padding elements per dimension

  bool isLogical() const { return family == "logical"; }
  bool operator==(const LayoutDescriptor &o) const;
  bool operator!=(const LayoutDescriptor &o) const { return !(*this == o); }
};

/// A quantized tensor's full logical + physical contract.
struct QuantizedTensorDescriptor {
  std::vector<int64_t> shape;
  FloatType elementType = FloatType::F16;
  AffineDescriptor descriptor;
  LayoutDescriptor layout;

  bool operator==(const QuantizedTensorDescriptor &o) const {
    return shape == o.shape && elementType == o.elementType &&
           descriptor == o.descriptor && layout == o.layout;
  }
};

/// Smallest and largest code the descriptor allows.
struct CodeBounds {
  int64_t min, max;
};
CodeBounds codeBounds(const AffineDescriptor &d);
/// The full range of a code type (no narrow range).
CodeBounds codeBounds(const CodeType &c);

/// Checks the descriptor on its own: bit widths, scheme vs zero-point kind,
/// granularity fields, narrow range, encoding.
Status verifyDescriptor(const AffineDescriptor &d);
/// Checks the descriptor against a tensor shape: axis range, group tail rule,
/// permutation bijection.
Status verifyDescriptorForShape(const AffineDescriptor &d,
                                const std::vector<int64_t> &shape);
/// Checks the layout on its own: family, version, positive tiles,
/// non-negative padding; `logical` is version 1, "lsb_first", untiled.
Status verifyLayout(const LayoutDescriptor &l);
/// verifyLayout, then against a shape: one tile and padding per dimension,
/// padding below its tile, tile multiples.
Status verifyLayoutForShape(const LayoutDescriptor &l,
                            const std::vector<int64_t> &shape);
/// All three checks, for a whole tensor.
Status verifyTensorDescriptor(const QuantizedTensorDescriptor &t);

/// Shape of the scale (and zero-point) tensor: [] per tensor, [dim] per axis,
/// and for groups the shape with the group axis replaced by ceil(dim / G).
std::vector<int64_t> qparamShape(const AffineDescriptor &d,
                                 const std::vector<int64_t> &shape);

/// Shape of the second-level qparams of a nested descriptor: the shape with
/// the group axis replaced by dim / superGroupSize.
std::vector<int64_t> superQParamShape(const AffineDescriptor &d,
                                      const std::vector<int64_t> &shape);

/// Spellings shared by the MLIR attributes and the JSON form.
const char *toString(FloatType t);
const char *toString(QuantScheme s);
const char *toString(ZeroPointKind k);
const char *toString(Granularity g);
const char *toString(TailRule t);
const char *toString(RoundingMode r);
const char *toString(SaturationMode s);
const char *toString(SignedEncoding e);
const char *toString(Codebook c);
const char *toString(ScaleFormat f);
std::optional<FloatType> parseFloatType(const std::string &s);
std::optional<QuantScheme> parseQuantScheme(const std::string &s);
std::optional<ZeroPointKind> parseZeroPointKind(const std::string &s);
std::optional<Granularity> parseGranularity(const std::string &s);
std::optional<TailRule> parseTailRule(const std::string &s);
std::optional<RoundingMode> parseRoundingMode(const std::string &s);
std::optional<SaturationMode> parseSaturationMode(const std::string &s);
std::optional<SignedEncoding> parseSignedEncoding(const std::string &s);
std::optional<Codebook> parseCodebook(const std::string &s);
std::optional<ScaleFormat> parseScaleFormat(const std::string &s);

/// "[3, 5]" for diagnostics.
std::string shapeToString(const std::vector<int64_t> &shape);

} // namespace qtensor

#endif // QTENSOR_DESCRIPTOR_DESCRIPTOR_H
