//===- QuantizedStorage.h - Stored codes <-> logical codes ------*- C++ -*-===//
//
// The packer's contract for an artifact's quantized tensors, in one place:
// which bytes a (descriptor, layout) pair stores its codes in, and how
// qparams are stored. The exporter packs with it, `qtc verify` and the
// runtime unpack with it, so a layout has exactly one implementation.
//
//   logical (v1, lsb_first)    Numerics/Packing.h: rows byte-aligned, first
//                              code in the low bits, the descriptor's signed
//                              encoding; stored shape = logical shape with
//                              the last dim in bytes.
//   decode_gemv / prefill_mma  Numerics/KernelLayout.h (2-D, 4 or 8 bits);
//                              stored shape [bytes]. With an act-order
//                              permutation P, a kernel layout holds K in
//                              group order (its column i is logical column
//                              P[i]), so a kernel reads whole groups; the
//                              runtime gathers x the same way.
//
// Everything else (e.g. ggml_block, which interleaves qparams with codes) is
// not a storage layout of this artifact version and is refused by name.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_QUANTIZEDSTORAGE_H
#define QTENSOR_FORMATS_QUANTIZEDSTORAGE_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Formats/SafetensorsDType.h"
#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Support/Expected.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qtensor::artifact {

/// The stored code tensor's shape for `t` (U8 bytes).
Expected<std::vector<int64_t>>
storedCodeShape(const QuantizedTensorDescriptor &t);

/// Logical codes (row-major, one per element) -> stored bytes.
Expected<std::vector<uint8_t>>
packStoredCodes(const QuantizedTensorDescriptor &t,
                const std::vector<int32_t> &codes);

/// Stored bytes -> logical codes; padding must be zero and every code inside
/// the descriptor's range (errors name the element).
Expected<std::vector<int32_t>>
unpackStoredCodes(const QuantizedTensorDescriptor &t, const uint8_t *bytes,
                  size_t numBytes);

/// Rows of `t` that are stored together: 1 for row-major layouts
/// (logical, decode_gemv), a panel for prefill_mma, all of them for a
/// tensor that is not 2-D. A reader of rows unpacks whole units.
int64_t storedCodeRowUnit(const QuantizedTensorDescriptor &t);

/// Logical codes of rows [firstRow, firstRow + rowCount) of the stored
/// tensor `bytes` (all of it, numBytes checked against `t`), unpacking only
/// the units (storedCodeRowUnit) that hold them; checked like
/// unpackStoredCodes, errors naming elements of the whole tensor.
Expected<std::vector<int32_t>>
unpackStoredCodeRows(const QuantizedTensorDescriptor &t, const uint8_t *bytes,
                     size_t numBytes, int64_t firstRow, int64_t rowCount);

/// Logical codes [rows, cols] packed into a kernel layout, columns in the
/// descriptor's permuted order (position i holds logical column P[i]).
Expected<std::vector<uint8_t>>
packKernelCodes(const AffineDescriptor &d, KernelLayoutKind kind,
                const std::vector<int32_t> &codes, int64_t rows, int64_t cols);

/// The safetensors dtype scales (and float zero-points) are stored in.
safetensors::DType scaleDType(const AffineDescriptor &d);
/// The safetensors dtype of a float type.
safetensors::DType floatDType(FloatType t);

/// The float type of a stored F32, F16 or BF16 dtype; none for any other.
std::optional<FloatType> floatTypeOfDType(safetensors::DType d);

/// Stored qparams (F16/BF16/F32 floats, or integer zero-points of any
/// integer dtype) as doubles.
Expected<std::vector<double>>
readQParams(safetensors::DType dtype, const uint8_t *bytes, size_t numBytes);
/// The same for a stored tensor of integer codes (a nested descriptor's
/// scale and min codes).
Expected<std::vector<int32_t>>
readQParamCodes(const safetensors::TensorView &codes);

/// The reconstruction x_hat = s * (q - z) as little-endian float32 bytes
/// (each value rounded once from float64): what L2 digests and what
/// `qtc export-gguf --dequantize` writes.
Expected<std::vector<uint8_t>> reconstructionF32Bytes(
    const QuantizedTensorDescriptor &t, const std::vector<int32_t> &codes,
    const std::vector<double> &scales, const std::vector<double> &zeros);

/// How a reconstruction's digest is formed; both hash the values x_hat =
/// s * (q - z) (Descriptor/Reconstruct.h), each rounded once to binary32,
/// little-endian, in row-major order.
enum class DigestForm : uint8_t {
  /// SHA-256: the report's `reconstruction_sha256` (artifacts of earlier
  /// compilers).
  Sha256,
  /// XXH3-128 (Support/Xxh3.h): the report's `reconstruction_xxh3_128`.
  /// L2 compares two computations of the project's own, and the report
  /// that records the compiler's is covered by the manifest's SHA-256; a
  /// checksum at tens of GB/s replaces a second SHA-256 pass over four
  /// bytes per weight on each side (7 GB for an 876 M-weight model).
  Xxh3,
};

/// The digest of the reconstruction: the value a compile records and
/// `qtc verify` recomputes from the reopened artifact (parity level L2).
Expected<std::string> reconstructionDigest(const QuantizedTensorDescriptor &t,
                                           const std::vector<int32_t> &codes,
                                           const std::vector<double> &scales,
                                           const std::vector<double> &zeros,
                                           DigestForm form);

/// reconstructionDigest of stored codes, unpacked a block of rows at a
/// time (forEachStoredRowBlock): the same digest, with memory for one
/// block's codes whatever the tensor's size.
Expected<std::string>
storedReconstructionDigest(const QuantizedTensorDescriptor &t,
                           const uint8_t *bytes, size_t numBytes,
                           const std::vector<double> &scales,
                           const std::vector<double> &zeros, DigestForm form);

/// The stored bytes [first, first + second) of rows [firstRow, firstRow +
/// rowCount), which must be whole units (storedCodeRowUnit; the last may
/// end at the tensor's last row).
Expected<std::pair<uint64_t, uint64_t>>
storedRowsByteRange(const QuantizedTensorDescriptor &t, int64_t firstRow,
                    int64_t rowCount);

/// Calls visit(firstRow, rowCount, codes) for consecutive blocks of whole
/// stored units of about `elements` codes, in row order, each block's codes
/// from unpackStoredCodeRows; stops at the first error.
Status forEachStoredRowBlock(
    const QuantizedTensorDescriptor &t, const uint8_t *bytes, size_t numBytes,
    uint64_t elements,
    const std::function<Status(int64_t, int64_t, const std::vector<int32_t> &)>
        &visit);

/// A nested tensor's first level, decoded once from its stored levels
/// (Descriptor/Reconstruct.h: decodeNestedQParams), with views that stand
/// in for the stored scale (and min) codes: F32 in the qparam shape, which
/// is what kernels and reference decoders read as "scales" and "zeros".
/// The stored bytes stay what L0 hashes and L1 compares.
struct DecodedQParams {
  std::vector<float> scales, mins;
  safetensors::TensorView scalesView, minsView;
};

/// Decodes `name`'s stored levels (scale codes, second-level scales, and
/// with a min the min codes and second-level mins); errors name the tensor.
Expected<std::unique_ptr<DecodedQParams>>
decodeStoredNestedQParams(const std::string &name,
                          const QuantizedTensorDescriptor &t,
                          const safetensors::TensorView &scaleCodes,
                          const safetensors::TensorView &superScales,
                          const safetensors::TensorView *minCodes,
                          const safetensors::TensorView *superMins);

/// A mixed_2416 tensor's stream views by manifest key.
using Mixed2416Views =
    std::map<std::string, const safetensors::TensorView *, std::less<>>;

/// Reads `name`'s streams out of their views into the family's struct
/// (second-level values and outliers widened from their 16-bit dtype) and
/// checks them with verifyMixed2416Streams: sizes against the map, every
/// code in range, CSR order and bounds, replacement outliers in W2 groups.
/// Errors name the tensor and the stream.
Expected<Mixed2416Streams> readMixed2416Streams(const std::string &name,
                                                const Mixed2416Descriptor &d,
                                                const Mixed2416Views &views);

/// SHA-256 of reconstructMixed2416(d, s) as little-endian binary32 (each
/// value rounded once from float64): the mixed_2416 family's L2 digest,
/// defined as reconstructionDigest is for the affine family.
Expected<std::string>
mixed2416ReconstructionDigest(const Mixed2416Descriptor &d,
                              const Mixed2416Streams &s);

/// A scale-format tensor's scales (ScaleFormat: e8m0, ue4m3), decoded once
/// from their stored U8 codes into `scales`; errors name the tensor and the
/// index of a code that names no scale (NaN, or outside the format).
Expected<std::unique_ptr<DecodedQParams>>
decodeStoredScaleCodes(const std::string &name,
                       const QuantizedTensorDescriptor &t,
                       const safetensors::TensorView &scaleCodes);

} // namespace qtensor::artifact

#endif // QTENSOR_FORMATS_QUANTIZEDSTORAGE_H
