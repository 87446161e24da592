//===- Reference.h - The reference weight and matmul of one op --*- C++ -*-===//
//
// The slow, explicit oracle every fast path is compared with (seed M8.9
// 0x09C, 0x09D): stored codes unpacked by the packer's own inverse
// (Formats/QuantizedStorage.h), qparams read as stored, and the reference
// decoder (Descriptor/Reconstruct.h) giving W_hat in float64; then
// Y = X W_hat^T (+ b) accumulated in float64. The full-dequant fallback,
// `qtc run --check` and the parity ladder's operator level share it.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_REFERENCE_H
#define QTENSOR_RUNTIME_REFERENCE_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Formats/Manifest.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace qtensor::runtime {

/// W_hat [N, K] of a quantized tensor from its stored physical tensors
/// (`part`: or its rounding magnitudes, ReconstructedPart). Errors name the
/// tensor and the physical tensor that failed.
Expected<std::vector<double>> reconstructWeight(
    const artifact::TensorEntry &entry, const safetensors::TensorView &codes,
    const safetensors::TensorView &scales, const safetensors::TensorView *zeros,
    ReconstructedPart part = ReconstructedPart::Value);

/// Rows `rows` of W_hat, in that order: [rows.size(), K], row i being
/// weight row rows[i]. What a sampled check needs, without the float64
/// values of the other rows (at 7B shapes a whole W_hat is 8 bytes per
/// weight: 360 MB for one FFN projection). A row outside [0, N) is an
/// error naming it.
Expected<std::vector<double>> reconstructWeightRows(
    const artifact::TensorEntry &entry, const safetensors::TensorView &codes,
    const safetensors::TensorView &scales, const safetensors::TensorView *zeros,
    const std::vector<int64_t> &rows,
    ReconstructedPart part = ReconstructedPart::Value);

/// A weight [N, K] handed to a float64 reference a run of rows at a time,
/// so that the whole weight is never held in float64 (8 bytes a weight).
class WeightRows {
public:
  virtual ~WeightRows() = default;
  virtual int64_t rows() const = 0;
  virtual int64_t cols() const = 0;
  /// Rows [first, first + count) into out ([count, K]) in float64. Safe
  /// from several threads.
  virtual Status fill(int64_t first, int64_t count, double *out) const = 0;
  /// Rows that are read together: a block that starts and ends on a
  /// multiple of it reads nothing twice.
  virtual int64_t rowUnit() const { return 1; }
};

/// Float weights held as stored (f32), widened a run of rows at a time.
class FloatWeightRows : public WeightRows {
public:
  /// `values` is [n, k] row-major; a size that is not n k is an error.
  static Expected<std::unique_ptr<FloatWeightRows>>
  make(std::vector<float> values, int64_t n, int64_t k,
       const std::string &name);
  int64_t rows() const override { return n; }
  int64_t cols() const override { return k; }
  Status fill(int64_t first, int64_t count, double *out) const override;

private:
  FloatWeightRows() = default;
  std::vector<float> values;
  int64_t n = 0, k = 0;
  std::string name;
};

/// W_hat of a quantized tensor by rows: any run of rows reconstructed in
/// float64 when asked, from those rows' codes alone (the stored units that
/// hold them, unpacked then), so neither the unpacked codes (4 bytes a
/// weight) nor W_hat (8) is ever whole. Borrows the stored codes: the
/// views' mapping must outlive it.
class ReferenceRows : public WeightRows {
public:
  /// Errors name the tensor and the physical tensor that failed. `part`:
  /// what fill gives (W_hat, or its rounding magnitudes).
  static Expected<std::unique_ptr<ReferenceRows>>
  open(const artifact::TensorEntry &entry, const safetensors::TensorView &codes,
       const safetensors::TensorView &scales,
       const safetensors::TensorView *zeros,
       ReconstructedPart part = ReconstructedPart::Value);
  ~ReferenceRows() override;

  int64_t rows() const override { return n; }
  int64_t cols() const override { return k; }
  /// Rows [first, first + count) of W_hat into out ([count, K]), the
  /// values reconstructWeight gives them. Safe from several threads.
  Status fill(int64_t first, int64_t count, double *out) const override;
  /// storedCodeRowUnit: 1, or prefill_mma's panel.
  int64_t rowUnit() const override;

private:
  struct Parts;
  ReferenceRows() = default;
  std::string name;
  int64_t n = 0, k = 0;
  ReconstructedPart part = ReconstructedPart::Value;
  std::unique_ptr<Parts> parts;
  std::unique_ptr<AffineReconstruction> reconstruction;
};

/// W_hat of a mixed_2416 tensor by rows (reconstructMixed2416Rows), from
/// its verified streams: the values reconstructMixed2416 gives, or their
/// rounding magnitudes.
class Mixed2416WeightRows : public WeightRows {
public:
  /// Errors name the tensor (the row table's limit).
  static Expected<std::unique_ptr<Mixed2416WeightRows>>
  make(const std::string &name, Mixed2416Descriptor d, Mixed2416Streams s,
       Mixed2416Part part = Mixed2416Part::Value);
  int64_t rows() const override { return d.rows(); }
  int64_t cols() const override { return d.cols(); }
  Status fill(int64_t first, int64_t count, double *out) const override;

private:
  Mixed2416WeightRows() = default;
  std::string name;
  Mixed2416Descriptor d;
  Mixed2416Streams s;
  std::vector<int32_t> rowW4;
  Mixed2416Part part = Mixed2416Part::Value;
};

/// Y [T, N] = X [T, K] W [N, K]^T (+ b [N]) in float64.
std::vector<double> referenceLinear(const std::vector<double> &x,
                                    const std::vector<double> &w, int64_t t,
                                    int64_t n, int64_t k,
                                    const std::vector<double> &bias = {});

/// The same with W by rows: each output has the value referenceLinear
/// gives it on the whole weight in float64, computed a block of rows at a
/// time (per thread), so the float64 weight is never whole.
Expected<std::vector<double>> referenceLinear(const std::vector<double> &x,
                                              const WeightRows &w, int64_t t,
                                              const std::vector<double> &bias);

/// Per output, sum_k |x_k w_k| (the magnitude a rounding bound scales
/// with); [T, N] like referenceLinear.
std::vector<double> absoluteProducts(const std::vector<double> &x,
                                     const std::vector<double> &w, int64_t t,
                                     int64_t n, int64_t k);

/// The largest |y_kernel - y_ref| a correct kernel may show for one output
/// whose reference is `yRef`, with `absSum` = sum_k |x_k| a_k over an
/// accumulation of `k` terms, f32 accumulators and one final rounding to
/// `output`; a_k is |w_k|, or with a min zero-point |s q_k| + |m| (a kernel
/// may sum s q x and m x apart: ReconstructedPart). With u = 2^-24 (f32)
/// and gamma(m) = m u / (1 - m u):
///  - every term x_k * s * (q - z) is rounded at most twice in f32: (q - z)
///    is exact, s (q - z) is exact (an 11- or 8-bit significand times a
///    9-bit integer), x times it, or s times a partial sum, round once each
///    (with a min, s q x and m x each so, or s q + m once and its product);
///  - any summation order of K terms (serial, chunked, butterfly, split-K)
///    is within gamma(K - 1) sum|terms| (Higham, Accuracy and Stability of
///    Numerical Algorithms, 2nd ed., eq. 4.4 and its order-free form);
///  so the f32 result is within gamma(K + 2) absSum of y_ref; rounding it to
///  f16 / bf16 adds half an ulp, u_out |y| (u_out = 2^-11, 2^-8; 0 for
///  f32), plus half the smallest f16 subnormal (2^-25) for underflow.
/// A bound, not an estimate: a kernel beyond it has a bug, not bad luck.
double kernelErrorBound(double absSum, double yRef, int64_t k,
                        FloatType output);

/// A kernel's output against the float64 reference (seed 0x09D's E_kernel,
/// elementwise): the largest |y - y_ref| and the largest ratio of it to
/// kernelErrorBound (the bias's magnitude included in the sum, as it is
/// added in f32). `worstRatio <= 1` for a correct kernel. `magnitudes`,
/// shaped like w: W's rounding magnitudes (ReconstructedPart), which the
/// bound scales with; null where they are |w| (hasOwnRoundingMagnitudes).
struct KernelError {
  double maxAbsError = 0;
  double worstRatio = 0;
  size_t worstIndex = 0;     ///< flat [T, N] index of the worst ratio
  bool finite = true;        ///< every output and error is finite
  size_t nonFiniteIndex = 0; ///< flat index of the first that is not
  bool within() const { return finite && worstRatio <= 1.0; }
};
KernelError measureKernelError(const std::vector<double> &x,
                               const std::vector<double> &w,
                               const std::vector<double> &bias,
                               const std::vector<double> &y, int64_t t,
                               int64_t n, int64_t k, FloatType output,
                               const std::vector<double> *magnitudes = nullptr);
/// The same for the outputs of the weight rows `rows` only (every row of
/// T, those columns of y): what a sampled check costs, K T |rows| instead
/// of K T N. `wRows` holds just those rows (reconstructWeightRows: row i
/// is weight row rows[i]). Every output is still looked at for non-finite
/// values.
KernelError measureKernelErrorOnRows(
    const std::vector<double> &x, const std::vector<double> &wRows,
    const std::vector<double> &bias, const std::vector<double> &y, int64_t t,
    int64_t n, int64_t k, FloatType output, const std::vector<int64_t> &rows,
    const std::vector<double> *magnitudes = nullptr);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_REFERENCE_H
