//===- Descriptor.cpp - Invariants of the quantized-tensor contract -------===//
//
// The checks of seed M8.9 0x05C that a descriptor can make by itself or
// against a shape. Messages are complete sentences without a subject; the
// dialect prefixes nothing and reports them as verifier diagnostics.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Descriptor/Descriptor.h"

#include "qtensor/Descriptor/ScaleFormat.h"

#include "qtensor/Support/EnumSpelling.h"

#include "qtensor/Support/CheckedMath.h"

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace qtensor;

bool AffineDescriptor::operator==(const AffineDescriptor &o) const {
  return code == o.code && scheme == o.scheme && zeroPoint == o.zeroPoint &&
         granularity == o.granularity && axis == o.axis &&
         groupSize == o.groupSize && tail == o.tail &&
         scaleType == o.scaleType && rounding == o.rounding &&
         saturation == o.saturation && narrowRange == o.narrowRange &&
         encoding == o.encoding && permutation == o.permutation &&
         decoderVersion == o.decoderVersion && nested == o.nested &&
         codebook == o.codebook && scaleFormat == o.scaleFormat;
}

bool LayoutDescriptor::operator==(const LayoutDescriptor &o) const {
  return family == o.family && version == o.version && encoding == o.encoding &&
         tile == o.tile && padding == o.padding;
}

std::string qtensor::shapeToString(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

namespace {
Status verifyCodeWidth(const char *what, const CodeType &c) {
  if (c.bits < 2 || c.bits > 8)
    return makeError("nested ", what, " codes must be 2 to 8 bits wide, got ",
                     c.bits);
  return Status::ok();
}

/// The second level's own rules; exactness of s_j = d_J * c_j in f32 is
/// what lets `scale = f32` name the decoded first level.
Status verifyNested(const AffineDescriptor &d, const NestedQParams &n) {
  if (d.granularity != Granularity::Group)
    return makeError("nested qparams need group granularity");
  if (d.tail != TailRule::Exact)
    return makeError("nested qparams need tail rule 'exact'");
  if (d.permutation)
    return makeError("nested qparams take no permutation");
  if (d.scaleType != FloatType::F32)
    return makeError("nested qparams decode to exact f32 products; the "
                     "scale type must be f32, got ",
                     toString(d.scaleType));
  if (d.zeroPoint != ZeroPointKind::None && d.zeroPoint != ZeroPointKind::Min)
    return makeError("nested qparams take zero-point none or min, got ",
                     toString(d.zeroPoint));
  QTENSOR_TRY(verifyCodeWidth("scale", n.scaleCode));
  if (d.zeroPoint == ZeroPointKind::Min && !n.minCode)
    return makeError("a nested descriptor with zero-point min needs min "
                     "codes (min_code)");
  if (d.zeroPoint != ZeroPointKind::Min && n.minCode)
    return makeError("min codes (min_code) need zero-point min, got ",
                     toString(d.zeroPoint));
  if (n.minCode)
    QTENSOR_TRY(verifyCodeWidth("min", *n.minCode));
  if (n.superGroupSize <= 0 || n.superGroupSize % d.groupSize != 0)
    return makeError("super_group_size must be a positive multiple of the "
                     "group size ",
                     d.groupSize, ", got ", n.superGroupSize);
  if (n.superType == FloatType::F32)
    return makeError("second-level scales must be f16 or bf16 (their "
                     "products with 8-bit codes are exact in f32), got f32");
  return Status::ok();
}
/// A code indexes the table: every unsigned code of the width names one
/// entry, and the entry is the value (no zero-point, no sign handling).
Status verifyCodebook(const AffineDescriptor &d) {
  const size_t entries = codebookValues(d.codebook).size();
  if (d.code.isSigned)
    return makeError("codebook ", toString(d.codebook),
                     " is indexed by unsigned codes, got si", d.code.bits);
  if ((size_t(1) << d.code.bits) != entries)
    return makeError("codebook ", toString(d.codebook), " has ", entries,
                     " entries, one per ui", d.code.bits, " code would need ",
                     size_t(1) << d.code.bits);
  if (d.zeroPoint != ZeroPointKind::None)
    return makeError("codebook ", toString(d.codebook),
                     " takes zero-point none (x = s * table[q]), got ",
                     toString(d.zeroPoint));
  return Status::ok();
}
/// Compact float scales decode to exact f32 values of one sign: the scale
/// dtype names the decoded value, and nothing else shares the byte.
Status verifyScaleFormat(const AffineDescriptor &d) {
  const char *name = toString(d.scaleFormat);
  if (d.scaleType != FloatType::F32)
    return makeError("scale_format ", name,
                     " decodes to exact f32 values; the scale type must be "
                     "f32, got ",
                     toString(d.scaleType));
  if (d.zeroPoint != ZeroPointKind::None)
    return makeError("scale_format ", name,
                     " stores scales only; it takes zero-point none, got ",
                     toString(d.zeroPoint));
  if (d.nested)
    return makeError("scale_format ", name,
                     " and nested qparams both encode the scales; a "
                     "descriptor takes one");
  return Status::ok();
}
} // namespace

const std::vector<float> &qtensor::codebookValues(Codebook c) {
  static const std::vector<float> none;
  // ggml-common.h kvalues_iq4nl.
  static const std::vector<float> iq4nl = {
      -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  // bitsandbytes' NF4 table (QLoRA, Dettmers et al. 2023), as f32.
  static const std::vector<float> nf4 = {-1.0f,
                                         -0.6961928009986877f,
                                         -0.5250730514526367f,
                                         -0.39491748809814453f,
                                         -0.28444138169288635f,
                                         -0.18477343022823334f,
                                         -0.09105003625154495f,
                                         0.0f,
                                         0.07958029955625534f,
                                         0.16093020141124725f,
                                         0.24611230194568634f,
                                         0.33791524171829224f,
                                         0.44070982933044434f,
                                         0.5626170039176941f,
                                         0.7229568362236023f,
                                         1.0f};
  // OCP MX v1.0 FP4 (E2M1): bit 3 the sign, the rest 0, 0.5, 1, 1.5, 2, 3,
  // 4, 6. Code 8 (OCP's -0) is +0 as in ggml's kvalues_mxfp4: the sign of
  // a zero weight changes no product's sum, and ggml decodes it so.
  static const std::vector<float> e2m1 = {
      0.0f, 0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
      0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  // OCP FP8 E4M3 (FN): bit 7 the sign, the other 7 bits an unsigned e4m3
  // (NVFP4's scale format: bias 7, subnormals m * 2^-9), S.1111.111 NaN.
  static const std::vector<float> e4m3 = [] {
    std::vector<float> v(256);
    for (uint32_t c = 0; c < 256; ++c) {
      Expected<float> magnitude = decodeScaleCode(ScaleFormat::UE4M3, c & 0x7F);
      v[c] = !magnitude ? NAN : c & 0x80 ? -*magnitude : *magnitude;
    }
    return v;
  }();
  switch (c) {
  case Codebook::None:
    return none;
  case Codebook::E2M1:
    return e2m1;
  case Codebook::E4M3:
    return e4m3;
  case Codebook::IQ4NL:
    return iq4nl;
  case Codebook::NF4:
    return nf4;
  }
  return none;
}

CodeBounds qtensor::codeBounds(const CodeType &c) {
  if (!c.isSigned)
    return {0, (int64_t(1) << c.bits) - 1};
  int64_t q = (int64_t(1) << (c.bits - 1)) - 1;
  return {-q - 1, q};
}

CodeBounds qtensor::codeBounds(const AffineDescriptor &d) {
  CodeBounds b = codeBounds(d.code);
  if (d.narrowRange)
    b.min = -b.max;
  return b;
}

Status qtensor::verifyDescriptor(const AffineDescriptor &d) {
  unsigned b = d.code.bits;
  if (b < 2 || b > 8 || b == 7)
    return makeError("code type must be 2, 3, 4, 5, 6 or 8 bits wide, got ", b);
  bool symmetric = d.scheme == QuantScheme::Symmetric;
  if (symmetric && d.zeroPoint != ZeroPointKind::None)
    return makeError("symmetric scheme cannot have a zero-point (got ",
                     toString(d.zeroPoint), ")");
  if (!symmetric && d.zeroPoint == ZeroPointKind::None)
    return makeError(
        "asymmetric scheme needs a zero-point kind (integer, float or min)");
  if (d.narrowRange && !(symmetric && d.code.isSigned))
    return makeError(
        "narrow_range (the restricted range [-Q, Q]) needs a signed code type "
        "and the symmetric scheme");
  if (d.encoding == SignedEncoding::OffsetBinary && !d.code.isSigned)
    return makeError("offset_binary encoding applies to signed codes only");
  switch (d.granularity) {
  case Granularity::PerTensor:
    if (d.axis != -1)
      return makeError("per_tensor granularity takes no axis (got ", d.axis,
                       ")");
    if (d.groupSize != 0)
      return makeError("per_tensor granularity takes no group_size");
    if (d.permutation)
      return makeError("a permutation needs a per_axis or group axis");
    break;
  case Granularity::PerAxis:
    if (d.axis < 0)
      return makeError("per_axis granularity needs a non-negative axis");
    if (d.groupSize != 0)
      return makeError("per_axis granularity takes no group_size");
    break;
  case Granularity::Group:
    if (d.axis < 0)
      return makeError("group granularity needs a non-negative axis");
    if (d.groupSize <= 0)
      return makeError("group granularity needs a positive group_size, got ",
                       d.groupSize);
    break;
  }
  if (d.tail == TailRule::Exact && d.granularity != Granularity::Group)
    return makeError("tail rule 'exact' applies to group granularity only");
  if (d.decoderVersion == 0)
    return makeError("decoder_version must be at least 1");
  if (d.codebook != Codebook::None)
    QTENSOR_TRY(verifyCodebook(d));
  if (d.scaleFormat != ScaleFormat::Plain)
    QTENSOR_TRY(verifyScaleFormat(d));
  if (d.nested)
    return verifyNested(d, *d.nested);
  return Status::ok();
}

Status qtensor::verifyDescriptorForShape(const AffineDescriptor &d,
                                         const std::vector<int64_t> &shape) {
  if (Status s = verifyDescriptor(d); !s)
    return s;
  int64_t rank = static_cast<int64_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return makeError("dimension ", i, " is ", shape[i],
                       "; quantized tensors need static non-negative shapes");
  if (d.granularity == Granularity::PerTensor)
    return Status::ok();
  if (d.axis >= rank)
    return makeError("axis ", d.axis, " is out of range for a rank-", rank,
                     " tensor");
  int64_t dim = shape[d.axis];
  if (d.granularity == Granularity::Group && d.tail == TailRule::Exact &&
      dim % d.groupSize != 0)
    return makeError("tail rule 'exact' needs dimension ", d.axis, " (", dim,
                     ") to be a multiple of the group size ", d.groupSize);
  if (d.nested && dim % d.nested->superGroupSize != 0)
    return makeError("nested qparams need dimension ", d.axis, " (", dim,
                     ") to be a multiple of the super-group size ",
                     d.nested->superGroupSize);
  if (d.permutation) {
    const std::vector<int64_t> &perm = *d.permutation;
    if (static_cast<int64_t>(perm.size()) != dim)
      return makeError("permutation has ", perm.size(), " entries but axis ",
                       d.axis, " has ", dim);
    std::vector<bool> seen(perm.size(), false);
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] < 0 || perm[i] >= dim)
        return makeError("permutation entry ", i, " (", perm[i],
                         ") is outside [0, ", dim, ")");
      if (seen[perm[i]])
        return makeError("permutation is not a bijection: ", perm[i],
                         " appears twice");
      seen[perm[i]] = true;
    }
  }
  return Status::ok();
}

Status qtensor::verifyLayout(const LayoutDescriptor &l) {
  if (l.family.empty())
    return makeError("layout family must not be empty");
  if (l.version == 0)
    return makeError("layout version must be at least 1");
  if (l.isLogical()) {
    // The one layout every reader unpacks itself: no variants of it.
    if (l.version != 1 || l.encoding != "lsb_first")
      return makeError("the logical layout is version 1 with encoding "
                       "\"lsb_first\"; got version ",
                       l.version, " with encoding \"", l.encoding, "\"");
    if (!l.tile.empty() || !l.padding.empty())
      return makeError("the logical layout has no tiles or padding");
  }
  for (size_t i = 0; i < l.tile.size(); ++i)
    if (l.tile[i] <= 0)
      return makeError("tile size ", l.tile[i], " of dimension ", i,
                       " must be positive");
  for (size_t i = 0; i < l.padding.size(); ++i)
    if (l.padding[i] < 0)
      return makeError("padding ", l.padding[i], " of dimension ", i,
                       " must be non-negative");
  return Status::ok();
}

Status qtensor::verifyLayoutForShape(const LayoutDescriptor &l,
                                     const std::vector<int64_t> &shape) {
  QTENSOR_TRY(verifyLayout(l));
  if (!l.tile.empty() && l.tile.size() != shape.size())
    return makeError("layout has ", l.tile.size(), " tile sizes for a rank-",
                     shape.size(), " tensor");
  if (!l.padding.empty() && l.padding.size() != shape.size())
    return makeError("layout has ", l.padding.size(),
                     " padding entries for a rank-", shape.size(), " tensor");
  for (size_t i = 0; i < l.padding.size(); ++i) {
    if (!l.tile.empty() && l.padding[i] >= l.tile[i])
      return makeError("padding ", l.padding[i], " of dimension ", i,
                       " must be smaller than its tile ", l.tile[i]);
  }
  for (size_t i = 0; i < l.tile.size(); ++i) {
    int64_t pad = l.padding.empty() ? 0 : l.padding[i];
    auto padded = checkedAdd(static_cast<uint64_t>(shape[i]), pad);
    if (!padded)
      return makeError("padded dimension ", i, " overflows");
    if (*padded % l.tile[i] != 0)
      return makeError("dimension ", i, " (", shape[i], " + padding ", pad,
                       ") is not a multiple of the tile size ", l.tile[i]);
  }
  return Status::ok();
}

Status qtensor::verifyTensorDescriptor(const QuantizedTensorDescriptor &t) {
  if (Status s = verifyDescriptorForShape(t.descriptor, t.shape); !s)
    return s;
  return verifyLayoutForShape(t.layout, t.shape);
}

std::vector<int64_t> qtensor::qparamShape(const AffineDescriptor &d,
                                          const std::vector<int64_t> &shape) {
  switch (d.granularity) {
  case Granularity::PerTensor:
    return {};
  case Granularity::PerAxis:
    return {shape[d.axis]};
  case Granularity::Group: {
    std::vector<int64_t> result = shape;
    result[d.axis] = static_cast<int64_t>(ceilDiv(shape[d.axis], d.groupSize));
    return result;
  }
  }
  return {};
}

std::vector<int64_t>
qtensor::superQParamShape(const AffineDescriptor &d,
                          const std::vector<int64_t> &shape) {
  std::vector<int64_t> result = shape;
  if (d.nested && d.axis >= 0 && d.axis < int64_t(shape.size()))
    result[d.axis] = shape[d.axis] / d.nested->superGroupSize;
  return result;
}

//===----------------------------------------------------------------------===//
// Spellings
//===----------------------------------------------------------------------===//

namespace {

const std::pair<const char *, FloatType> kFloatTypes[] = {
    {"f16", FloatType::F16},
    {"bf16", FloatType::BF16},
    {"f32", FloatType::F32}};
const std::pair<const char *, QuantScheme> kSchemes[] = {
    {"symmetric", QuantScheme::Symmetric},
    {"asymmetric", QuantScheme::Asymmetric}};
const std::pair<const char *, ZeroPointKind> kZeroPoints[] = {
    {"none", ZeroPointKind::None},
    {"integer", ZeroPointKind::Integer},
    {"float", ZeroPointKind::Float},
    {"min", ZeroPointKind::Min}};
const std::pair<const char *, Granularity> kGranularities[] = {
    {"per_tensor", Granularity::PerTensor},
    {"per_axis", Granularity::PerAxis},
    {"group", Granularity::Group}};
const std::pair<const char *, TailRule> kTails[] = {
    {"partial", TailRule::Partial}, {"exact", TailRule::Exact}};
const std::pair<const char *, RoundingMode> kRoundings[] = {
    {"nearest_even", RoundingMode::NearestEven},
    {"nearest_away", RoundingMode::NearestAway},
    {"toward_zero", RoundingMode::TowardZero}};
const std::pair<const char *, SaturationMode> kSaturations[] = {
    {"clamp", SaturationMode::Clamp}, {"reject", SaturationMode::Reject}};
const std::pair<const char *, SignedEncoding> kEncodings[] = {
    {"twos_complement", SignedEncoding::TwosComplement},
    {"offset_binary", SignedEncoding::OffsetBinary}};
const std::pair<const char *, Codebook> kCodebooks[] = {
    {"none", Codebook::None},
    {"iq4_nl", Codebook::IQ4NL},
    {"nf4", Codebook::NF4},
    {"e2m1", Codebook::E2M1},
    {"e4m3", Codebook::E4M3}};
const std::pair<const char *, ScaleFormat> kScaleFormats[] = {
    {"plain", ScaleFormat::Plain},
    {"e8m0", ScaleFormat::E8M0},
    {"ue4m3", ScaleFormat::UE4M3}};
} // namespace

const char *qtensor::toString(FloatType t) { return spellEnum(t, kFloatTypes); }
const char *qtensor::toString(QuantScheme s) { return spellEnum(s, kSchemes); }
const char *qtensor::toString(ZeroPointKind k) {
  return spellEnum(k, kZeroPoints);
}
const char *qtensor::toString(Granularity g) {
  return spellEnum(g, kGranularities);
}
const char *qtensor::toString(TailRule t) { return spellEnum(t, kTails); }
const char *qtensor::toString(RoundingMode r) {
  return spellEnum(r, kRoundings);
}
const char *qtensor::toString(SaturationMode s) {
  return spellEnum(s, kSaturations);
}
const char *qtensor::toString(SignedEncoding e) {
  return spellEnum(e, kEncodings);
}

const char *qtensor::toString(Codebook c) { return spellEnum(c, kCodebooks); }
const char *qtensor::toString(ScaleFormat f) {
  return spellEnum(f, kScaleFormats);
}

std::optional<FloatType> qtensor::parseFloatType(const std::string &s) {
  return lookupEnum(s, kFloatTypes);
}
std::optional<QuantScheme> qtensor::parseQuantScheme(const std::string &s) {
  return lookupEnum(s, kSchemes);
}
std::optional<ZeroPointKind> qtensor::parseZeroPointKind(const std::string &s) {
  return lookupEnum(s, kZeroPoints);
}
std::optional<Granularity> qtensor::parseGranularity(const std::string &s) {
  return lookupEnum(s, kGranularities);
}
std::optional<TailRule> qtensor::parseTailRule(const std::string &s) {
  return lookupEnum(s, kTails);
}
std::optional<RoundingMode> qtensor::parseRoundingMode(const std::string &s) {
  return lookupEnum(s, kRoundings);
}
std::optional<SaturationMode>
qtensor::parseSaturationMode(const std::string &s) {
  return lookupEnum(s, kSaturations);
}
std::optional<SignedEncoding>
qtensor::parseSignedEncoding(const std::string &s) {
  return lookupEnum(s, kEncodings);
}
std::optional<Codebook> qtensor::parseCodebook(const std::string &s) {
  return lookupEnum(s, kCodebooks);
}
std::optional<ScaleFormat> qtensor::parseScaleFormat(const std::string &s) {
  return lookupEnum(s, kScaleFormats);
}

FloatFormat qtensor::floatFormatOf(FloatType t) {
  switch (t) {
  case FloatType::F16:
    return FloatFormat::F16;
  case FloatType::BF16:
    return FloatFormat::BF16;
  case FloatType::F32:
    return FloatFormat::F32;
  }
  return FloatFormat::F32;
}
