//===- Quantize.cpp - Freezing codes and qparams for qtc compile ----------===//

#include "Quantize.h"

#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Formats/GGUFDescriptor.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Numerics/Groupwise.h"

#include "qtensor/Support/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace qtensor::compiler {
namespace {

const char *kQuantForms = "w4a16:gG[:sym|:asym], w8a16[:gG][:sym|:asym] "
                          "(G in 32, 64, 128, 256; no group: per output "
                          "channel), w8a8[:gG|:gch][:sym|:asym][:a8sym|"
                          ":a8asym] (G in 16, 32, 64, 128, 256), mxfp4, "
                          "nvfp4, fp8, "
                          "mixed2416[:budget=B] (B bits per weight, "
                          "default 3) or keep";

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end - start));
    if (end == std::string_view::npos)
      return parts;
    start = end + 1;
  }
}

uint16_t toBits(double value, FloatType type) {
  float f = static_cast<float>(value);
  return type == FloatType::BF16 ? floatToBFloat16Bits(f) : floatToHalfBits(f);
}

/// The error statistics of a reconstruction: values added one at a time in
/// index order, and partial sums (a block of rows each) added in order.
struct ErrorSums {
  double signal = 0, noise = 0, maxAbs = 0;
  void add(float exact, float approx) {
    const double e = static_cast<double>(approx) - exact;
    signal += static_cast<double>(exact) * exact;
    noise += e * e;
    maxAbs = std::max(maxAbs, std::fabs(e));
  }
  void add(const ErrorSums &other) {
    signal += other.signal;
    noise += other.noise;
    maxAbs = std::max(maxAbs, other.maxAbs);
  }
  void record(QuantizedWeight &out) const {
    out.relativeError = signal > 0 ? std::sqrt(noise / signal) : 0.0;
    out.maxAbsError = maxAbs;
    out.sqnrDb = noise > 0 ? 10.0 * std::log10(signal / noise)
                           : std::numeric_limits<double>::infinity();
  }
};

/// Error statistics of `approx` against `exact`.
Status measure(const std::vector<float> &exact,
               const std::vector<float> &approx, QuantizedWeight &out) {
  if (approx.size() != exact.size())
    return makeError("reconstruction has ", approx.size(),
                     " values, the "
                     "weight ",
                     exact.size());
  ErrorSums sums;
  for (size_t i = 0; i < exact.size(); ++i)
    sums.add(exact[i], approx[i]);
  sums.record(out);
  return Status::ok();
}

/// measure() against dequantizeGroupwise(q), each value reconstructed as
/// that function does and compared on the fly: the same numbers without a
/// second weight-sized buffer. Rows are summed in blocks of
/// kMeasureBlockRows over the pool, and the blocks' sums added in row
/// order: the same bits whatever the number of threads.
constexpr int64_t kMeasureBlockRows = 64;
Status measureGroupwise(const std::vector<float> &exact,
                        const GroupwiseQuantized &q, QuantizedWeight &out) {
  if (q.codes.size() != exact.size() || q.rows <= 0 || q.cols <= 0 ||
      q.groupSize <= 0)
    return makeError("reconstruction has ", q.codes.size(),
                     " values, the weight ", exact.size());
  const int64_t groups = groupsPerRow(q.cols, q.groupSize);
  const int64_t blocks = (q.rows + kMeasureBlockRows - 1) / kMeasureBlockRows;
  std::vector<ErrorSums> blockSums(static_cast<size_t>(blocks));
  defaultThreadPool().parallelRanges(
      blocks, q.rows * q.cols, int64_t(1) << 18,
      [&](int64_t firstBlock, int64_t endBlock) {
        for (int64_t b = firstBlock; b < endBlock; ++b) {
          ErrorSums &sums = blockSums[size_t(b)];
          const int64_t endRow = std::min(q.rows, (b + 1) * kMeasureBlockRows);
          for (int64_t n = b * kMeasureBlockRows; n < endRow; ++n)
            for (int64_t k = 0; k < q.cols; ++k) {
              const size_t meta = size_t(n * groups + k / q.groupSize);
              const size_t i = size_t(n * q.cols + k);
              const int64_t zero =
                  q.zeroPoints.empty() ? 0 : q.zeroPoints[meta];
              sums.add(exact[i], static_cast<float>(q.scales[meta] *
                                                    double(q.codes[i] - zero)));
            }
        }
      });
  ErrorSums sums;
  for (const ErrorSums &b : blockSums)
    sums.add(b);
  sums.record(out);
  return Status::ok();
}

/// What --quant gives a float [n, k] weight.
QuantizedTensorDescriptor affineLogical(const QuantSpec &spec, int64_t n,
                                        int64_t k, FloatType elementType) {
  if (spec.fp4)
    return fp4Logical(*spec.fp4, n, k, elementType);
  if (spec.fp8)
    return fp8Logical(n, k, elementType);
  QuantizedTensorDescriptor logical;
  AffineDescriptor &d = logical.descriptor;
  d.code = CodeType{spec.bits, spec.symmetric};
  d.scheme = spec.symmetric ? QuantScheme::Symmetric : QuantScheme::Asymmetric;
  d.zeroPoint = spec.symmetric ? ZeroPointKind::None : ZeroPointKind::Integer;
  if (spec.groupSize) {
    d.granularity = Granularity::Group;
    d.axis = 1;
    d.groupSize = spec.groupSize;
  } else {
    d.granularity = Granularity::PerAxis;
    d.axis = 0;
  }
  d.scaleType =
      elementType == FloatType::BF16 ? FloatType::BF16 : FloatType::F16;
  logical.shape = {n, k};
  logical.elementType = elementType;
  return logical;
}

/// The logical descriptor of a linear's stored codes (a packed linear's, or
/// a ggml type's), or why they cannot be kept.
Expected<QuantizedTensorDescriptor> keptLogical(const SourceLinear &linear,
                                                FloatType elementType) {
  if (linear.weight.packed) {
    QuantizedTensorDescriptor logical = linear.weight.packed->descriptor;
    logical.elementType = elementType;
    return logical;
  }
  if (!linear.weight.gguf)
    return makeError("tensor ", linear.name, " has dtype ", linear.weight.dtype,
                     "; a linear weight must be F32, F16 or BF16");
  QTENSOR_ASSIGN_OR_RETURN(GGUFTensorDescriptor described,
                           describeGGUFTensor(*linear.weight.gguf));
  if (!described.affine)
    return makeError("tensor ", linear.name, " (", linear.weight.dtype,
                     "): no affine descriptor for this ggml type, so its "
                     "codes cannot be kept (supported: Q4_0, Q4_1, Q5_0, "
                     "Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)");
  QuantizedTensorDescriptor logical = *described.affine;
  logical.layout = LayoutDescriptor{}; // logical: codes moved out of blocks
  logical.elementType = elementType;
  return logical;
}

/// A packed linear (GPTQ, AWQ, compressed-tensors, ONNX): its stored codes
/// and qparams in the logical layout, moved out of their words and bytes.
Expected<QuantizedWeight> keepPacked(const Checkpoint &checkpoint,
                                     const SourceLinear &linear,
                                     FloatType elementType) {
  const PackedSource &p = *linear.weight.packed;
  QuantizedWeight out;
  QTENSOR_ASSIGN_OR_RETURN(out.logical, keptLogical(linear, elementType));
  QTENSOR_ASSIGN_OR_RETURN(hfquant::LogicalParts parts, p.unpack());
  checkpoint.releaseSource(linear.weight);
  out.codes = std::move(parts.codes);
  out.scales = std::move(parts.scales); // stored values, exact in their dtype
  out.zeros = std::move(parts.zeros);
  out.keptStoredCodes = true;
  out.sourceDType = linear.weight.dtype;
  out.sqnrDb = std::numeric_limits<double>::infinity();
  return out;
}

/// A GGUF type with an affine spelling: the stored codes and qparams,
/// unchanged, in the logical layout (a code-preserving move out of ggml's
/// blocks, proven element by element by disassembleGGMLAffine).
Expected<QuantizedWeight> keepStored(const Checkpoint &checkpoint,
                                     const SourceLinear &linear,
                                     FloatType elementType) {
  QuantizedWeight out;
  QTENSOR_ASSIGN_OR_RETURN(out.logical, keptLogical(linear, elementType));
  const GGUFTensorInfo &info = *linear.weight.gguf; // keptLogical checked it
  QTENSOR_ASSIGN_OR_RETURN(GGMLAffineParts parts, disassembleGGMLAffine(info));
  checkpoint.releaseSource(linear.weight);
  out.codes = std::move(parts.codes);
  // Mins are stored in the scale dtype as zero-point `min`. Each value is
  // one of the scale dtype (ggml's f16 d and m; a K-quant's exact f32
  // products), so the codes and qparams are the stored ones and the error
  // against the decoded tensor is 0.
  const FloatType type = out.logical.descriptor.scaleType;
  auto keep = [&](const std::vector<double> &from, std::vector<float> &to,
                  const char *what) -> Status {
    to.reserve(from.size());
    for (size_t i = 0; i < from.size(); ++i) {
      float f = static_cast<float>(from[i]);
      if (double(f) != from[i] ||
          roundToFormat(f, floatFormatOf(type)) != double(f))
        return makeError("tensor ", linear.name, ": block ", what, " ", i,
                         " is not an ", toString(type), " value");
      to.push_back(f);
    }
    return Status::ok();
  };
  QTENSOR_TRY(keep(parts.scales, out.scales, "scale"));
  QTENSOR_TRY(keep(parts.zeros, out.zeroFloats, "min"));
  if (out.logical.descriptor.nested) {
    // The second level as stored; the exporter proves it decodes to the
    // first level above (decodeNestedQParams) before writing it.
    out.scaleCodes = std::move(parts.scaleCodes);
    out.minCodes = std::move(parts.minCodes);
    out.superScales.assign(parts.superScales.begin(), parts.superScales.end());
    out.superMins.assign(parts.superMins.begin(), parts.superMins.end());
  }
  out.keptStoredCodes = true;
  out.sourceDType = linear.weight.dtype;
  out.relativeError = 0.0;
  out.maxAbsError = 0.0;
  out.sqnrDb = std::numeric_limits<double>::infinity();
  return out;
}

} // namespace

Expected<std::vector<uint16_t>> readBias(const Checkpoint &checkpoint,
                                         const SourceLinear &linear,
                                         FloatType type) {
  std::vector<uint16_t> bits;
  if (!linear.bias)
    return bits;
  QTENSOR_ASSIGN_OR_RETURN(std::vector<float> values,
                           checkpoint.readFloat(*linear.bias));
  for (float v : values)
    bits.push_back(toBits(v, type));
  return bits;
}

Expected<QuantSpec> parseQuantSpec(std::string_view text) {
  QuantSpec spec;
  spec.text = std::string(text);
  std::vector<std::string_view> parts = split(text, ':');
  if (parts[0] == "keep" && parts.size() == 1) {
    spec.keep = true;
    return spec;
  }
  if ((parts[0] == "mxfp4" || parts[0] == "nvfp4") && parts.size() == 1) {
    spec.fp4 = parts[0] == "mxfp4" ? FP4Format::MXFP4 : FP4Format::NVFP4;
    spec.bits = 4;
    spec.groupSize = fp4GroupSize(*spec.fp4);
    return spec;
  }
  if (parts[0] == "fp8" && parts.size() == 1) {
    spec.fp8 = true;
    spec.bits = 8;
    spec.groupSize = 0;
    return spec;
  }
  if (parts[0] == "mixed2416") {
    spec.mixed2416Budget = Mixed2416Options().budget;
    if (parts.size() > 2)
      return makeError("--quant ", text, ": expected mixed2416[:budget=B]");
    if (parts.size() == 2) {
      std::string_view p = parts[1];
      const std::string_view key = "budget=";
      if (p.substr(0, key.size()) != key)
        return makeError("--quant ", text, ": unexpected \"", p,
                         "\"; expected mixed2416[:budget=B]");
      std::string digits(p.substr(key.size()));
      char *end = nullptr;
      double b = digits.empty() ? 0.0 : std::strtod(digits.c_str(), &end);
      if (digits.empty() || end != digits.c_str() + digits.size() ||
          !std::isfinite(b) || b <= 0.0)
        return makeError("--quant ", text, ": budget \"", digits,
                         "\" is not a positive finite number of bits per "
                         "weight");
      spec.mixed2416Budget = b;
    }
    spec.bits = 4;
    spec.groupSize = 64;
    return spec;
  }
  if (parts[0] == "w4a16") {
    spec.bits = 4;
    spec.groupSize = 128;
  } else if (parts[0] == "w8a16" || parts[0] == "w8a8") {
    spec.bits = 8;
    spec.groupSize = 0;
  } else {
    return makeError("--quant ", text, ": expected ", kQuantForms);
  }
  // w8a8: the weights as w8a16's, the activations quantized per token at
  // run time by the W8A8 kernels (symmetric unless a8asym); its GEMV also
  // takes groups of 16 (whole 16-code chunks) and spells per channel gch.
  const bool w8a8 = parts[0] == "w8a8";
  if (w8a8)
    spec.activationQuant = kernels::ActivationQuant::PerTokenSym;
  bool sawGroup = false, sawScheme = false, sawActivations = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    if (!sawGroup && w8a8 && p == "gch") {
      spec.groupSize = 0;
      sawGroup = true;
    } else if (!sawGroup && p.size() > 1 && p[0] == 'g') {
      std::string digits(p.substr(1));
      if (!(w8a8 && digits == "16") && digits != "32" && digits != "64" &&
          digits != "128" && digits != "256")
        return makeError("--quant ", text, ": group size ", digits,
                         " is not one of ", w8a8 ? "16, " : "",
                         "32, 64, 128, 256", w8a8 ? " or ch" : "");
      spec.groupSize = std::stoll(digits);
      sawGroup = true;
    } else if (!sawScheme && (p == "sym" || p == "asym")) {
      spec.symmetric = p == "sym";
      sawScheme = true;
    } else if (w8a8 && !sawActivations && (p == "a8sym" || p == "a8asym")) {
      spec.activationQuant = p == "a8sym"
                                 ? kernels::ActivationQuant::PerTokenSym
                                 : kernels::ActivationQuant::PerTokenAsym;
      sawActivations = true;
    } else {
      return makeError("--quant ", text, ": unexpected \"", p, "\"; expected ",
                       kQuantForms);
    }
  }
  return spec;
}

bool keepsStoredCodes(const SourceLinear &linear) {
  const std::string &dtype = linear.weight.dtype;
  return dtype != "F32" && dtype != "F16" && dtype != "BF16";
}

Expected<std::optional<Mixed2416Descriptor>>
describeMixed2416Linear(const SourceLinear &linear, const QuantSpec &spec,
                        FloatType elementType) {
  if (!spec.mixed2416Budget || keepsStoredCodes(linear))
    return std::optional<Mixed2416Descriptor>();
  if (elementType != FloatType::F16 && elementType != FloatType::BF16)
    return makeError("tensor ", linear.name,
                     ": --quant mixed2416 needs f16 "
                     "or bf16 activations, the linear has ",
                     toString(elementType));
  Mixed2416Descriptor d;
  d.shape = {linear.n(), linear.k()};
  d.elementType = elementType;
  d.firstGroupSize = 64;
  if (d.cols() % d.firstGroupSize != 0)
    return makeError("tensor ", linear.name, ": --quant mixed2416 groups K ",
                     "by 64 (first level), and K = ", d.cols(),
                     " is not a multiple of 64");
  d.secondGroupSize = 0;
  for (int64_t g2 : {16, 8, 4, 2})
    if (d.rows() % g2 == 0) {
      d.secondGroupSize = g2;
      break;
    }
  if (d.secondGroupSize == 0)
    return makeError(
        "tensor ", linear.name, ": --quant mixed2416 groups N ",
        "by 16, 8, 4 or 2 (second level), and none divides N = ", d.rows());
  d.secondType = elementType;
  d.sparseType = elementType;
  if (Status s = verifyMixed2416(d); !s)
    return makeError("tensor ", linear.name, ": ", s.message());
  // Refused here, before any kernel is built or value read.
  const double floor = mixed2416MinimumRate(d, mixed2416OptionsFor(d, spec));
  if (*spec.mixed2416Budget < floor)
    return makeError("tensor ", linear.name, ": --quant ", spec.text,
                     ": a budget of ", *spec.mixed2416Budget,
                     " bits per weight is below this tensor's smallest rate, ",
                     floor, " (every group 2-bit, with its outliers)");
  return std::optional<Mixed2416Descriptor>(std::move(d));
}

Mixed2416Options mixed2416OptionsFor(const Mixed2416Descriptor &d,
                                     const QuantSpec &spec) {
  Mixed2416Options o;
  o.budget = spec.mixed2416Budget.value_or(o.budget);
  o.firstGroupSize = d.firstGroupSize;
  o.secondGroupSize = d.secondGroupSize;
  o.elementType = d.elementType;
  o.secondType = d.secondType;
  o.sparseType = d.sparseType;
  return o;
}

Expected<QuantizedTensorDescriptor> describeLinear(const SourceLinear &linear,
                                                   const QuantSpec &spec,
                                                   FloatType elementType) {
  const std::string &dtype = linear.weight.dtype;
  if (keepsStoredCodes(linear))
    return keptLogical(linear, elementType);
  if (spec.mixed2416Budget)
    return makeError("tensor ", linear.name, " is ", dtype,
                     ": --quant mixed2416 makes it a mixed_2416 tensor, "
                     "which has no affine descriptor");
  if (spec.keep)
    return makeError("tensor ", linear.name, " is ", dtype,
                     ": --quant keep keeps existing codes, and this weight "
                     "has none; choose w4a16 or w8a16");
  return affineLogical(spec, linear.n(), linear.k(), elementType);
}

Expected<GroupwiseQuantized>
quantizeRowsInParallel(const float *values, int64_t rows, int64_t cols,
                       const GroupwiseConfig &config) {
  // One result for the whole weight, its rows quantized in place in ranges
  // of at least 2^18 weights, at most one per thread.
  QTENSOR_ASSIGN_OR_RETURN(GroupwiseQuantized whole,
                           prepareGroupwise(rows, cols, config));
  std::vector<Status> parts(defaultThreadPool().threads(), Status::ok());
  defaultThreadPool().parallelParts(rows, rows * cols, int64_t(1) << 18,
                                    [&](size_t part, int64_t r0, int64_t r1) {
                                      parts[part] = quantizeGroupwiseRows(
                                          values, r0, r1, config, whole);
                                    });
  // Parts cover the rows in order and each stops at its first error: the
  // first failed part's error is the first in row order.
  for (Status &s : parts)
    if (!s)
      return s.error();
  return whole;
}

Expected<QuantizedWeight> quantizeLinear(const Checkpoint &checkpoint,
                                         const SourceLinear &linear,
                                         const QuantSpec &spec,
                                         FloatType elementType) {
  const std::string &dtype = linear.weight.dtype;
  bool isFloat = !keepsStoredCodes(linear);
  QuantizedWeight out;
  if (linear.weight.packed) {
    QTENSOR_ASSIGN_OR_RETURN(out, keepPacked(checkpoint, linear, elementType));
  } else if (!isFloat) {
    QTENSOR_ASSIGN_OR_RETURN(out, keepStored(checkpoint, linear, elementType));
  } else {
    if (spec.keep)
      return makeError("tensor ", linear.name, " is ", dtype,
                       ": --quant keep keeps existing codes, and this weight "
                       "has none; choose w4a16 or w8a16");
    QTENSOR_ASSIGN_OR_RETURN(std::vector<float> values,
                             checkpoint.readFloat(linear.weight));
    int64_t n = linear.n(), k = linear.k();
    // A float-code family (FP8, FP4): codes and scales from its quantizer,
    // the error measured on its exact f32 reconstruction.
    auto floatCodes = [&](auto quantized,
                          auto dequantize) -> Expected<QuantizedWeight> {
      if (!quantized)
        return makeError("tensor ", linear.name, ": ", quantized.message());
      checkpoint.releaseSource(linear.weight);
      if (Status s = measure(values, dequantize(*quantized, k), out); !s)
        return makeError("tensor ", linear.name, ": ", s.message());
      out.codes = std::move(quantized->codes);
      out.scales = std::move(quantized->scales);
      out.sourceDType = dtype;
      QTENSOR_ASSIGN_OR_RETURN(out.bias,
                               readBias(checkpoint, linear, elementType));
      return std::move(out);
    };
    if (spec.fp8 || spec.fp4)
      out.logical = affineLogical(spec, n, k, elementType);
    if (spec.fp8)
      return floatCodes(
          quantizeFP8(values.data(), n, k, out.logical.descriptor.scaleType),
          dequantizeFP8);
    if (spec.fp4)
      return floatCodes(quantizeFP4(*spec.fp4, values.data(), n, k),
                        dequantizeFP4);
    GroupwiseConfig config;
    config.bits = spec.bits;
    config.symmetric = spec.symmetric;
    config.groupSize = spec.groupSize ? spec.groupSize : k;
    // Scales in the activation type: the kernels multiply them with
    // activations in that type (docs/kernels.md).
    config.scaleFormat =
        elementType == FloatType::BF16 ? FloatFormat::BF16 : FloatFormat::F16;
    // An all-zero group (pruned rows) is legitimate in real checkpoints.
    config.constantPolicy = ConstantGroupPolicy::UnitScale;
    auto q = quantizeRowsInParallel(values.data(), n, k, config);
    if (!q)
      return makeError("tensor ", linear.name, ": ", q.message());

    // The source's pages are not needed again: one linear at a time stays
    // resident (the checkpoint's files are mappings it opened itself).
    checkpoint.releaseSource(linear.weight);
    out.logical = affineLogical(spec, n, k, elementType);
    if (Status s = measureGroupwise(values, *q, out); !s)
      return makeError("tensor ", linear.name, ": ", s.message());
    out.codes = std::move(q->codes);
    // Rounded to the scale format before any code was computed: exact.
    for (double s : q->scales)
      out.scales.push_back(static_cast<float>(s));
    out.zeros = std::move(q->zeroPoints);
    out.sourceDType = dtype;
  }
  QTENSOR_ASSIGN_OR_RETURN(out.bias, readBias(checkpoint, linear, elementType));
  return out;
}

} // namespace qtensor::compiler
