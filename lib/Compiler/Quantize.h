//===- Quantize.h - Freezing codes and qparams for qtc compile --*- C++ -*-===//
//
// `--quant w4a16:g128[:sym|:asym] | w8a16[:gG][:sym|:asym] | mxfp4 | nvfp4
// | fp8 | mixed2416[:budget=B] | keep`. A float
// weight is quantized group-wise with its scales rounded to f16 before any
// code is computed; a weight that already has codes (a GGUF type with an
// affine spelling, GGUFDescriptor.h) keeps them bit for bit, whatever --quant says (seed M8.9 0x04A: never
// re-quantize codes that exist). The result is the logical form: one code per
// value, row-major, plus qparams; packing into a kernel layout comes later.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_QUANTIZE_H
#define QTENSOR_LIB_COMPILER_QUANTIZE_H

#include "Checkpoint.h"
#include "QuantizeFP4.h"
#include "QuantizeFP8.h"
#include "QuantizeMixed2416.h"

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Kernels/Capability.h"
#include "qtensor/Numerics/Groupwise.h"
#include "qtensor/Support/Expected.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor::compiler {

struct QuantSpec {
  bool keep = false;     ///< only kept codes are allowed
  unsigned bits = 4;     ///< 4 or 8
  int64_t groupSize = 0; ///< 0: one scale per output channel
  bool symmetric = true;
  /// mxfp4 / nvfp4: E2M1 codes under one-byte float scales (QuantizeFP4.h);
  /// bits, groupSize and symmetric then do not apply.
  std::optional<FP4Format> fp4;
  /// fp8: E4M3 codes with a scale per output channel (QuantizeFP8.h).
  bool fp8 = false;
  /// mixed2416[:budget=B]: float linears become the mixed 2/4/16 family
  /// (QuantizeMixed2416.h) at B bits per weight, whole tensor.
  std::optional<double> mixed2416Budget;
  /// w8a8: the weights as w8a16's; the activations quantized per token at
  /// run time (per_token_sym, or per_token_asym with :a8asym), which only
  /// the W8A8 kernels admit. None for every other form.
  kernels::ActivationQuant activationQuant = kernels::ActivationQuant::None;
  std::string text; ///< as given, for the report
};

/// Parses the --quant value; errors list the accepted forms.
Expected<QuantSpec> parseQuantSpec(std::string_view text);

/// The mixed_2416 descriptor `linear` gets under --quant mixed2416, or
/// none when the linear keeps the codes its checkpoint stores (a ggml
/// type: the family applies to float linears only). G1 = 64 along K (it
/// must divide K: the kernel's vector steps and the finest precision map);
/// G2 = the largest of 16, 8, 4, 2 dividing N; the element, second-level
/// and outlier types are the activation type `elementType` (f16 or bf16).
/// Errors name the tensor and the extent no group divides, or the
/// tensor's smallest rate when the budget is below it.
Expected<std::optional<Mixed2416Descriptor>>
describeMixed2416Linear(const SourceLinear &linear, const QuantSpec &spec,
                        FloatType elementType);

/// The converter's options for a linear planned as `d` under `spec`.
Mixed2416Options mixed2416OptionsFor(const Mixed2416Descriptor &d,
                                     const QuantSpec &spec);

/// A linear weight in logical form.
struct QuantizedWeight {
  QuantizedTensorDescriptor logical; ///< logical layout
  std::vector<int32_t> codes;        ///< [N, K] row-major
  /// Scales in the qparam shape, each value exact in the scale dtype.
  std::vector<float> scales;
  std::vector<int32_t> zeros;    ///< integer zero-points, or empty
  std::vector<float> zeroFloats; ///< `min`/`float` zero-points, like scales
  /// A nested descriptor's stored levels (NestedQParams): scale (and min)
  /// codes like `scales`, second-level scales (and mins) one per
  /// super-group; `scales` and `zeroFloats` are their decoded first level.
  std::vector<int32_t> scaleCodes, minCodes;
  std::vector<float> superScales, superMins;
  std::vector<uint16_t> bias;   ///< element-type bits [N], or empty
  bool keptStoredCodes = false; ///< codes came from the checkpoint
  std::string sourceDType;
  /// Error of the reconstruction against the source floats (for kept codes
  /// the source floats are the decoded codes: 0 by construction).
  double relativeError = 0.0; ///< ||W - W_hat||_F / ||W||_F
  double maxAbsError = 0.0;
  double sqnrDb = 0.0; ///< 10 log10(||W||^2 / ||W - W_hat||^2); inf if exact
};

/// Whether `linear` keeps the codes the checkpoint stores (a ggml type)
/// rather than being quantized from floats (F32, F16, BF16).
bool keepsStoredCodes(const SourceLinear &linear);

/// The logical descriptor quantizeLinear gives `linear`, without reading a
/// value: the graph and the pipeline are built from these, and the weights
/// are quantized afterwards, one at a time, as they are exported. Refuses
/// what quantizeLinear refuses (no data needed to tell).
Expected<QuantizedTensorDescriptor> describeLinear(const SourceLinear &linear,
                                                   const QuantSpec &spec,
                                                   FloatType elementType);

/// quantizeGroupwise on ranges of rows across the process's thread pool:
/// groups never cross rows, so the result equals one call's, bit for bit.
/// When a range fails, the whole tensor is quantized once more on this
/// thread, so the error names the row exactly as one call would.
Expected<GroupwiseQuantized>
quantizeRowsInParallel(const float *values, int64_t rows, int64_t cols,
                       const GroupwiseConfig &config);

/// Quantizes (or keeps) one block linear. `elementType` is the activation
/// and reconstruction type (A16: f16 or bf16).
Expected<QuantizedWeight> quantizeLinear(const Checkpoint &checkpoint,
                                         const SourceLinear &linear,
                                         const QuantSpec &spec,
                                         FloatType elementType);

/// The linear's bias in `elementType` bits (empty without a bias).
Expected<std::vector<uint16_t>> readBias(const Checkpoint &checkpoint,
                                         const SourceLinear &linear,
                                         FloatType elementType);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_QUANTIZE_H
