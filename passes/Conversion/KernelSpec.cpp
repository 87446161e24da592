//===- KernelSpec.cpp - Kernel specialization: text form, name, limits ----===//

#include "qtensor/Conversion/KernelSpec.h"

#include "SpecText.h"

#include "qtensor/Numerics/FloatFormats.h"

#include <cmath>
#include <utility>

#include <vector>

namespace qtensor {

using conversion::parsePrefixed;

namespace {

/// The largest N or K a generated kernel takes: index math stays far from
/// overflow and the padded buffers stay below 2^40 bytes.
constexpr int64_t kMaxExtent = int64_t(1) << 20;

std::string_view familyName(KernelFamily family) {
  switch (family) {
  case KernelFamily::DecodeGemv:
    return "decode_gemv";
  case KernelFamily::PrefillMma:
    return "prefill_mma";
  case KernelFamily::HostGemm:
    break;
  }
  return "host_gemm";
}

} // namespace

int64_t QuantKernelSpec::groupsPerRow() const {
  const int64_t g = effectiveGroupSize();
  return g <= 0 ? 0 : (k + g - 1) / g;
}

int64_t QuantKernelSpec::superGroupsPerRow() const {
  return nested && nested->superGroupSize > 0 ? k / nested->superGroupSize : 0;
}

namespace {

std::string nestedOption(const QuantKernelSpec::NestedScales &n) {
  return "sup" + std::to_string(n.superGroupSize) +
         (n.signedCodes ? "i8" : "u8") + toString(n.superType);
}

/// `supS{i8|u8}{f16|bf16}`; none when `o` is not one.
std::optional<QuantKernelSpec::NestedScales>
parseNestedOption(std::string_view o) {
  if (o.substr(0, 3) != "sup")
    return std::nullopt;
  size_t digits = 3;
  while (digits < o.size() && o[digits] >= '0' && o[digits] <= '9')
    ++digits;
  int64_t size;
  if (digits == 3 || digits - 3 > 6 ||
      !parsePrefixed(o.substr(0, digits), "sup", size))
    return std::nullopt;
  std::string_view rest = o.substr(digits);
  QuantKernelSpec::NestedScales n;
  n.superGroupSize = size;
  if (rest.substr(0, 2) == "i8")
    n.signedCodes = true;
  else if (rest.substr(0, 2) != "u8")
    return std::nullopt;
  std::optional<FloatType> super = conversion::parseSpecFloat(rest.substr(2));
  if (!super || *super == FloatType::F32)
    return std::nullopt;
  n.superType = *super;
  return n;
}

} // namespace

KernelLayoutSpec QuantKernelSpec::layout() const {
  // The host GEMM reads the GEMV's rows of 16-byte chunks.
  return {family == KernelFamily::PrefillMma ? KernelLayoutKind::PrefillMma
                                             : KernelLayoutKind::DecodeGemv,
          bits, symmetric && codebook == Codebook::None};
}

std::string QuantKernelSpec::name() const {
  std::string out = "qt_";
  out += familyName(family);
  out += "_w" + std::to_string(bits) +
         (codebook != Codebook::None ? toString(codebook)
          : symmetric                ? "sym"
          : minZero                  ? "min"
                                     : "asym");
  out += groupSize == 0 ? "_gch" : "_g" + std::to_string(groupSize);
  out += std::string("_") + toString(activation);
  out += dynamicRows() ? std::string("_tdyn") : "_t" + std::to_string(rows);
  out += "_n" + std::to_string(n) + "_k" + std::to_string(k) + "_s" +
         std::to_string(splitK);
  // Defaults add nothing, so the names of existing kernels stay stable.
  if (std::string_view(toString(scaleType())) != toString(activation))
    out += std::string("_sc") + toString(scaleType());
  return out + conversion::outputNameSuffix(output, bias) +
         (quantizedActivations ? "_xq8" : "") +
         (nested ? "_" + nestedOption(*nested) : "");
}

Status validateQuantKernelSpec(const QuantKernelSpec &spec) {
  // Every family reads 2-, 3-, 5- and 6-bit codes one per byte field.
  const bool mma = spec.family == KernelFamily::PrefillMma;
  if (spec.activation == FloatType::F32)
    return makeError("activations must be f16 or bf16, got f32");
  if (spec.bits < 2 || spec.bits == 7 || spec.bits > 8)
    return makeError("code width must be 2, 3, 4, 5, 6 or 8 bits, got ",
                     spec.bits);
  // Groups of 16: one k16 step of the tensor-core GEMM; for the row
  // kernels a whole chunk of byte fields, or half a W4 chunk whose two
  // scales the host GEMM and the decode GEMV apply per lane; such a half
  // carries no zero-point (NVFP4, symmetric codes).
  const bool smallGroup =
      spec.groupSize == 16 &&
      (mma || spec.chunkCodes() == 16 ||
       (spec.chunkCodes() == 32 && !spec.takesZeroPoints() && !spec.minZero));
  if (spec.groupSize != 0 && spec.groupSize != 32 && spec.groupSize != 64 &&
      spec.groupSize != 128 && !smallGroup)
    return makeError("group size must be ", mma ? "16, " : "", "32, 64, 128",
                     mma ? ""
                         : " (16 for byte codes, or W4 codes without a "
                           "zero-point)",
                     " or per-channel, got ", spec.groupSize);
  if (spec.minZero && spec.symmetric)
    return makeError("a min zero-point needs unsigned codes");
  if (spec.codebook != Codebook::None) {
    if (spec.symmetric || spec.minZero)
      return makeError("codebook ", toString(spec.codebook),
                       " codes are unsigned indices with no zero-point");
    if ((size_t(1) << spec.bits) != codebookValues(spec.codebook).size())
      return makeError("codebook ", toString(spec.codebook), " has ",
                       codebookValues(spec.codebook).size(),
                       " entries; its codes cannot be ", spec.bits,
                       " bits wide");
    // The tensor cores multiply the table values themselves.
    if (mma)
      for (float v : codebookValues(spec.codebook))
        if (!std::isnan(v) && // E4M3's NaN codes never reach a kernel
            roundToFormat(v, spec.activation == FloatType::BF16
                                 ? FloatFormat::BF16
                                 : FloatFormat::F16) != double(v))
          return makeError("codebook ", toString(spec.codebook), " value ", v,
                           " is not exact in ", toString(spec.activation),
                           ", which the tensor-core GEMM multiplies");
  }
  if (spec.quantizedActivations && spec.family != KernelFamily::HostGemm)
    return makeError("only the host GEMM quantizes its activations");
  if (spec.nested) {
    const int64_t super = spec.nested->superGroupSize;
    if (spec.groupSize == 0 || super <= 0 || super % spec.groupSize != 0 ||
        super / spec.groupSize > 64)
      return makeError("nested scales need super-groups of 1 to 64 groups, "
                       "got ",
                       super, " codes over groups of ", spec.groupSize);
    if (spec.k % super != 0)
      return makeError("nested scales need K a multiple of the super-group ",
                       super, ", got ", spec.k);
    // Only the host GEMM decodes a row's first level into stack rows; the
    // GPU kernels decode each group's value where they load it.
    if (spec.family == KernelFamily::HostGemm &&
        spec.groupsPerRow() > kMaxNestedGroupsPerRow)
      return makeError("nested scales take at most ", kMaxNestedGroupsPerRow,
                       " groups a row in the host GEMM, got ",
                       spec.groupsPerRow());
    if (spec.scaleType() != FloatType::F32)
      return makeError("nested scales decode to f32 (the exact products of "
                       "the two levels), not ",
                       toString(spec.scaleType()));
    if (spec.takesZeroPoints() && !spec.minZero)
      return makeError("nested scales take a min or no zero-point, not "
                       "integer zero-points");
  }
  if (spec.n < 1 || spec.n > kMaxExtent || spec.k < 1 || spec.k > kMaxExtent)
    return makeError("weight shape [", spec.n, ", ", spec.k,
                     "] must have extents in [1, ", kMaxExtent, "]");
  if (spec.family == KernelFamily::DecodeGemv) {
    if (!spec.dynamicRows() && (spec.rows < 1 || spec.rows > 16))
      return makeError("decode kernels take T in [1, 16] rows, got ",
                       spec.rows);
    const int64_t chunks = (spec.k + spec.chunkCodes() - 1) / spec.chunkCodes();
    if (spec.splitK < 1 || spec.splitK > chunks)
      return makeError("split-K must be in [1, ", chunks, "] (the ",
                       spec.chunkCodes(), "-code chunks of K = ", spec.k,
                       "), got ", spec.splitK);
    // Split partial sums meet in y through f32 atomics; a 16-bit y would
    // round every partial sum (and bf16 atomics need sm_90).
    if (spec.splitK > 1 && spec.output != FloatType::F32)
      return makeError("split-K ", spec.splitK,
                       " needs an f32 output (partial sums are added "
                       "atomically), got ",
                       toString(spec.output));
  } else if (spec.family == KernelFamily::HostGemm) {
    if (!spec.dynamicRows() && (spec.rows < 1 || spec.rows > kMaxExtent))
      return makeError("host GEMM kernels take T in [1, ", kMaxExtent,
                       "] rows, got ", spec.rows);
    if (spec.splitK != 1)
      return makeError("host GEMM kernels do not split K, got split ",
                       spec.splitK);
    if (spec.quantizedActivations) {
      if (spec.codebook != Codebook::None)
        return makeError("int8 activations take no codebook");
      // Unsigned fields meet X in a u8 x s8 multiply whose pair sums stay
      // below 2^15 only for fields below 2^7.
      if (!spec.symmetric && spec.bits > 7)
        return makeError("int8 activations take unsigned codes (with a "
                         "zero-point or min) of at most 7 bits, got ",
                         spec.bits);
      if (spec.groupSize != 0 && spec.groupSize % spec.chunkCodes() != 0)
        return makeError("int8 activations need groups of whole ",
                         spec.chunkCodes(), "-code chunks, got ",
                         spec.groupSize);
      if (spec.k > kMaxQuantizedActivationRow)
        return makeError("int8 activations take K up to ",
                         kMaxQuantizedActivationRow, ", got ", spec.k);
    }
  } else {
    if (!spec.dynamicRows() && (spec.rows < 1 || spec.rows > kMaxExtent))
      return makeError("prefill kernels take T in [1, ", kMaxExtent,
                       "] rows, got ", spec.rows);
    if (spec.splitK != 1)
      return makeError("prefill kernels do not split K, got split ",
                       spec.splitK);
    if (spec.k % 8 != 0)
      return makeError("prefill kernels stage X in 16-byte cp.async copies, "
                       "so K must be a multiple of 8, got ",
                       spec.k);
  }
  return Status::ok();
}

Expected<QuantKernelSpec> parseQuantKernelSpec(std::string_view text) {
  text = conversion::trimSpecText(text);
  auto fail = [&](std::string_view what) -> Error {
    return makeError(
        "kernel spec '", text, "': ", what,
        " (expected family:wB:gG|gch:sym|asym|min|iq4_nl|nf4|e2m1|e4m3:"
        "f16|bf16:"
        "tT|tdyn:nN:kK[:sS][:scf16|scbf16|scf32][:of16|obf16|"
        "of32][:bias][:xq8][:supS{i8|u8}{f16|bf16}])");
  };
  std::vector<std::string_view> f = conversion::specFields(text);
  // A prefill or host GEMM serves any T: `prefill_mma:...:nN:kK` means tdyn.
  if (f.size() >= 7 && (f[0] == "prefill_mma" || f[0] == "host_gemm") &&
      !f[5].empty() && f[5][0] == 'n')
    f.insert(f.begin() + 5, "tdyn");
  if (f.size() < 8)
    return fail("wrong number of fields");
  QuantKernelSpec spec;
  if (f[0] == "decode_gemv")
    spec.family = KernelFamily::DecodeGemv;
  else if (f[0] == "prefill_mma")
    spec.family = KernelFamily::PrefillMma;
  else if (f[0] == "host_gemm")
    spec.family = KernelFamily::HostGemm;
  else
    return fail("unknown family '" + std::string(f[0]) +
                "', expected decode_gemv, prefill_mma or host_gemm");
  int64_t bits;
  if (!parsePrefixed(f[1], "w", bits))
    return fail("bad code width '" + std::string(f[1]) + "'");
  // Any width up to 64 reaches validation, which names the family's.
  spec.bits = static_cast<unsigned>(bits >= 1 && bits <= 64 ? bits : 0);
  if (f[2] == "gch")
    spec.groupSize = 0;
  else if (!parsePrefixed(f[2], "g", spec.groupSize) || spec.groupSize == 0)
    return fail("bad group '" + std::string(f[2]) + "'");
  std::optional<Codebook> codebook = parseCodebook(std::string(f[3]));
  if (f[3] != "sym" && f[3] != "asym" && f[3] != "min" &&
      (!codebook || *codebook == Codebook::None))
    return fail("bad code kind '" + std::string(f[3]) + "'");
  spec.symmetric = f[3] == "sym";
  spec.minZero = f[3] == "min";
  spec.codebook = codebook.value_or(Codebook::None);
  std::optional<FloatType> activation = conversion::parseSpecFloat(f[4]);
  if (!activation || *activation == FloatType::F32)
    return fail("bad activation type '" + std::string(f[4]) + "'");
  spec.activation = *activation;
  if (f[5] == "tdyn")
    spec.rows = kDynamicRows;
  else if (!parsePrefixed(f[5], "t", spec.rows) || spec.rows == kDynamicRows)
    return fail("bad rows '" + std::string(f[5]) + "'");
  if (!parsePrefixed(f[6], "n", spec.n) || !parsePrefixed(f[7], "k", spec.k))
    return fail("bad extent");
  // Trailing options, each at most once.
  bool seenSplit = false, seenScale = false, seenOutput = false;
  for (size_t i = 8; i < f.size(); ++i) {
    std::string_view o = f[i];
    bool repeated = false;
    if (o == "bias") {
      repeated = spec.bias;
      spec.bias = true;
    } else if (o == "xq8") {
      repeated = spec.quantizedActivations;
      spec.quantizedActivations = true;
    } else if (auto nested = parseNestedOption(o)) {
      repeated = spec.nested.has_value();
      spec.nested = *nested;
    } else if (auto scale = conversion::parseFloatOption(o, "sc")) {
      repeated = std::exchange(seenScale, true);
      spec.scale = *scale;
    } else if (auto output = conversion::parseFloatOption(o, "o")) {
      repeated = std::exchange(seenOutput, true);
      spec.output = *output;
    } else if (parsePrefixed(o, "s", spec.splitK)) {
      repeated = seenSplit;
      seenSplit = true;
    } else {
      return fail("unknown option '" + std::string(o) + "'");
    }
    if (repeated)
      return fail("option '" + std::string(o) + "' given twice");
  }
  if (bits < 1 || bits > 64)
    return fail("code width must be 2, 3, 4, 5, 6 or 8 bits, got " +
                std::to_string(bits));
  if (Status status = validateQuantKernelSpec(spec); !status)
    return fail(status.message());
  return spec;
}

} // namespace qtensor
