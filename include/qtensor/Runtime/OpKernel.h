//===- OpKernel.h - One op's executable kernel, on some backend -*- C++ -*-===//
//
// After load, each (op, kernel instance) pair is an OpKernel: y = x W^T
// (+ b) for T rows, with W already materialized where the kernel reads it.
// The implementations are the host kernels of kernels-host.so
// (HostNativeKernel), the CUDA kernels (CudaNativeKernel, CudaBackend.h)
// and the full-dequant fallback (FullDequantKernel). Activations and
// outputs cross this interface as host tensors in the op's dtypes.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_OPKERNEL_H
#define QTENSOR_RUNTIME_OPKERNEL_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Formats/Manifest.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Runtime/KernelInstance.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace qtensor::runtime {

/// A row-major [rows, cols] host tensor in f16, bf16 or f32.
struct HostTensor {
  FloatType dtype = FloatType::F16;
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> bytes;

  static size_t elementBytes(FloatType t) {
    return t == FloatType::F32 ? 4 : 2;
  }
  /// Zero-filled; the size is overflow-checked.
  static Expected<HostTensor> zeros(FloatType dtype, int64_t rows,
                                    int64_t cols);
  /// Each value rounded to nearest even in `dtype`.
  static Expected<HostTensor> fromDoubles(FloatType dtype, int64_t rows,
                                          int64_t cols,
                                          const std::vector<double> &values);
  std::vector<double> toDoubles() const;
  double at(size_t i) const;
  size_t size() const { return size_t(rows) * size_t(cols); }
};

/// X is [T >= 1, k] in the op's activation dtype; errors say what it is.
Status checkActivations(const HostTensor &x, FloatType activation, int64_t k);

/// `y` as [rows, cols] zeros in `dtype`, reusing its buffer when it holds
/// them (the decode loop then allocates nothing).
Status zeroedOutput(HostTensor &y, FloatType dtype, int64_t rows, int64_t cols);

/// body(t0, rows) for consecutive chunks of at most `chunk` of `tokens`
/// rows: on the thread pool when there are several (a static-T kernel's
/// chunks write disjoint rows of y), else on this thread. The first failing
/// chunk in order is the one reported.
Status forTokenChunks(int64_t tokens, int64_t chunk,
                      const std::function<Status(int64_t, int64_t)> &body);

class OpKernel {
public:
  virtual ~OpKernel();
  /// y = x W^T (+ b): x is [T, K] in the op's activation dtype, y becomes
  /// [T, N] in its output dtype.
  virtual Status run(const HostTensor &x, HostTensor &y) = 0;
  /// "host", "cuda" or "host (full-dequant fallback)".
  virtual const char *backend() const = 0;
  /// The instance name, or the registry id of the fallback.
  virtual const std::string &name() const = 0;
};

/// The operands a native kernel reads besides x and y, in host memory.
/// Pointers borrow from the mapping or from `owned` buffers.
struct WeightOperands {
  const void *w = nullptr;
  uint64_t wBytes = 0;
  const void *s = nullptr;
  uint64_t sBytes = 0;
  const void *z = nullptr;
  uint64_t zBytes = 0;
  /// A nested kernel's second levels (KernelEntry::nested).
  const void *s2 = nullptr, *z2 = nullptr;
  uint64_t s2Bytes = 0, z2Bytes = 0;
  const void *b = nullptr;
  uint64_t bBytes = 0;
  /// A mixed_2416 kernel's operands besides x, b and y (KernelEntry::mixed),
  /// by argument role: the stored streams (in place where aligned) and
  /// rw4, derived at load. `elements` fills a stream's dynamic length.
  struct Stream {
    const void *data = nullptr;
    uint64_t bytes = 0;
    int64_t elements = 0;
  };
  std::map<ArgRole, Stream> streams;
  std::vector<std::vector<uint8_t>> owned;
  /// What was copied rather than read in place ("aligned copy X.codes",
  /// "repacked X.codes (decode_gemv)", "bias X"), with its bytes.
  std::vector<std::pair<std::string, uint64_t>> copies;
  bool repacked = false; ///< codes repacked into the kernel's layout

  /// Everything but the codes (w, or a mixed tensor's w2 and w4).
  uint64_t qparamBytes() const {
    uint64_t bytes = sBytes + s2Bytes + zBytes + z2Bytes + bBytes;
    for (const auto &[role, stream] : streams)
      if (role != ArgRole::W2 && role != ArgRole::W4)
        bytes += stream.bytes;
    return bytes;
  }
};

/// The stored tensors of one op that a native kernel's operands come from.
struct OpTensorViews {
  const safetensors::TensorView *codes = nullptr;
  /// The first level as a kernel without nested scales reads it: decoded
  /// (f32) for a nested descriptor or a scale format, else as stored.
  const safetensors::TensorView *scales = nullptr, *zeros = nullptr;
  /// A nested descriptor's levels as stored, which a kernel with nested
  /// scales reads.
  const safetensors::TensorView *scaleCodes = nullptr, *minCodes = nullptr;
  const safetensors::TensorView *superScales = nullptr, *superMins = nullptr;
};

/// The host operands of kernel `k` for one op, from its stored tensors:
/// read in place where aligned (w to 16 bytes for its 128-bit loads, the
/// rest per element), else copied; codes stored in another layout repacked
/// code-preservingly (unpack, then pack for the kernel); a nested kernel's
/// scale and min codes and second levels as stored; the bias (`bias`,
/// empty when the op has none; zeros when the kernel takes b but this rank
/// adds none) converted to the kernel's b dtype.
Expected<std::shared_ptr<WeightOperands>>
makeHostOperands(const KernelInstance &k, const artifact::TensorEntry &entry,
                 const OpTensorViews &views, const std::vector<double> &bias);

/// A mixed_2416 kernel's host operands (KernelEntry::mixed): each stream
/// of `entry` (`views` by manifest key, as the artifact stores them; 16-byte
/// aligned copies of w2 and w4 where the shard does not align them), `rw4`
/// (mixed2416RowW4Groups of the streams, which the caller has verified),
/// and the bias as makeHostOperands gives it. Sizes are checked against the
/// record's shapes; an empty stream gets a valid pointer the kernel never
/// reads.
Expected<std::shared_ptr<WeightOperands>> makeMixed2416HostOperands(
    const KernelInstance &k, const artifact::TensorEntry &entry,
    const std::map<std::string, const safetensors::TensorView *, std::less<>>
        &views,
    const std::vector<int32_t> &rw4, const std::vector<double> &bias);

/// A host mixed_2416 kernel instance: T rows as calls of at most the
/// instance's largest T (each entry point takes one T), each on the whole
/// N (the kernel indexes its streams by absolute row).
std::unique_ptr<OpKernel>
makeMixed2416HostKernel(const KernelInstance &instance,
                        std::vector<void *> functions,
                        std::shared_ptr<const WeightOperands> operands,
                        FloatType activation, FloatType output);

/// A host W8A8 instance (KernelEntry::activationQuant): per chunk of at
/// most its largest T, the quantizer's entry for that T (x -> xq, sx, [zx]
/// in per-thread scratch), then the GEMV's; `functions` holds the GEMV's
/// entry points followed by the quantizer's. The affine operands (w, s,
/// [z], [b]) are makeHostOperands'.
std::unique_ptr<OpKernel>
makeW8A8HostKernel(const KernelInstance &instance,
                   std::vector<void *> functions,
                   std::shared_ptr<const WeightOperands> operands,
                   FloatType activation, FloatType output);

/// A host kernel instance: calls the entry point whose T range holds T
/// (`functions` parallel to instance.entries) through callMlirCInterface
/// with the operands in the instance's argument order.
std::unique_ptr<OpKernel>
makeHostNativeKernel(const KernelInstance &instance,
                     std::vector<void *> functions,
                     std::shared_ptr<const WeightOperands> operands,
                     FloatType activation, FloatType output);

/// Act-order (a descriptor with a permutation P of K): runs `inner`, a
/// native kernel that reads the weight in its layout's group order, on x
/// with its columns gathered the same way (position i <- column P[i]).
std::unique_ptr<OpKernel>
makePermutedInputKernel(std::vector<int64_t> permutation,
                        std::unique_ptr<OpKernel> inner);

/// Seed M8.9 0x08D: the reference reconstruction of the whole weight held
/// as f32 [N, K], a float64 accumulation per output, the bias added, the
/// result rounded once to the output dtype.
std::unique_ptr<OpKernel> makeFullDequantKernel(std::vector<float> weight,
                                                int64_t n, int64_t k,
                                                std::vector<double> bias,
                                                FloatType activation,
                                                FloatType output);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_OPKERNEL_H
