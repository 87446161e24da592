//===- Reconstruct.h - Reference decoder of an affine tensor ----*- C++ -*-===//
//
// The slow, explicit decoder of seed M8.9 0x09C (parity level 2): logical
// codes + qparams -> values, by the descriptor alone. Kernels are checked
// against it; it is never the fast path.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_DESCRIPTOR_RECONSTRUCT_H
#define QTENSOR_DESCRIPTOR_RECONSTRUCT_H

#include "qtensor/Descriptor/Descriptor.h"

#include <cstdint>
#include <vector>

namespace qtensor {

/// Index into the qparam tensor for each element of `shape` (row-major), per
/// the descriptor's granularity. With a permutation P of the group axis,
/// position i of that axis holds logical index P[i] and groups are formed
/// over positions: logical index k belongs to group inverse(P)[k] / G.
Expected<std::vector<int64_t>>
qparamIndexOfElements(const AffineDescriptor &d,
                      const std::vector<int64_t> &shape);

/// What a reconstruction gives for each element: its value, or the
/// magnitude a kernel's f32 rounding error scales with. That is |x| for
/// every kind but a min: x = s q + m may be summed by a kernel as s q and m
/// apart (the host GEMM with int8 activations does), so its magnitude is
/// |s q| + |m|, which |x| understates where the two nearly cancel.
enum class ReconstructedPart { Value, RoundingMagnitude };

/// Whether the descriptor's rounding magnitudes differ from |W_hat| (a
/// min zero-point): where they do not, |W_hat| serves.
inline bool hasOwnRoundingMagnitudes(const AffineDescriptor &d) {
  return d.zeroPoint == ZeroPointKind::Min;
}

/// The reconstruction of one tensor, prepared once (sizes checked, the
/// qparam index of every position known) and evaluated on any range of
/// flat indices, so callers can stream a tensor in pieces or split it over
/// threads. Borrows `codes`, `scales` and `zeros`: they must outlive it.
class AffineReconstruction {
public:
  static Expected<AffineReconstruction> make(const QuantizedTensorDescriptor &t,
                                             const std::vector<int32_t> &codes,
                                             const std::vector<double> &scales,
                                             const std::vector<double> &zeros);
  /// The same, prepared without the codes: they are handed to rangeOf a
  /// block at a time (a reader that unpacks only the rows it needs).
  static Expected<AffineReconstruction>
  makeWithoutCodes(const QuantizedTensorDescriptor &t,
                   const std::vector<double> &scales,
                   const std::vector<double> &zeros);
  /// The tensor's element count.
  size_t size() const { return elements; }
  /// Values of elements [begin, end) into out[0, end - begin), as
  /// reconstructAffine computes them; a code outside the descriptor's range
  /// is an error naming its flat index. Only for make()'s reconstructions.
  /// `part`: values, or their rounding magnitudes (ReconstructedPart).
  Status range(size_t begin, size_t end, double *out,
               ReconstructedPart part = ReconstructedPart::Value) const;
  /// range() with the codes of elements [blockBegin, blockBegin + n) given
  /// as block[0, n), which must cover [begin, end).
  Status rangeOf(const int32_t *block, size_t blockBegin, size_t begin,
                 size_t end, double *out,
                 ReconstructedPart part = ReconstructedPart::Value) const;

private:
  AffineReconstruction(const AffineDescriptor &d,
                       const std::vector<int32_t> *codes,
                       const std::vector<double> &scales,
                       const std::vector<double> &zeros)
      : d(d), codes(codes), scales(scales), zeros(zeros) {}
  static Expected<AffineReconstruction>
  prepare(const QuantizedTensorDescriptor &t, const std::vector<int32_t> *codes,
          const std::vector<double> &scales, const std::vector<double> &zeros);
  AffineDescriptor d;
  const std::vector<int32_t> *codes; ///< null: rangeOf only
  const std::vector<double> &scales, &zeros;
  size_t elements = 0;
  bool rowGroups = false, perRow = false;
  int64_t cols = 1, groups = 1;
  std::vector<int64_t> groupOfColumn, index;
};

/// x = s * (q - z) (integer and float zero-points), s * q + m (min), s * q
/// (none), s * table[q] (a codebook), for every element in row-major order. `codes` are logical codes
/// (one per element); `scales` and `zeros` hold one value per qparam
/// (`zeros` empty when the kind is none). Codes outside the descriptor's
/// range are an error naming the flat index.
Expected<std::vector<double>> reconstructAffine(
    const QuantizedTensorDescriptor &t, const std::vector<int32_t> &codes,
    const std::vector<double> &scales, const std::vector<double> &zeros);

/// The first level of a nested descriptor from its two stored levels, second
/// level first (NestedQParams): s_j = d_J * c_j and, with zero-point `min`,
/// m_j = -(dmin_J * mc_j), each an f32 product (exact). Codes are one per
/// group in the qparam shape, d and dmin one per super-group in
/// superQParamShape; `minCodes`/`superMins` are empty without a min. Sizes,
/// code ranges and second-level values that are not of their declared type
/// are errors naming the index.
struct NestedFirstLevel {
  std::vector<float> scales;
  std::vector<float> mins; ///< empty without a min
};
Expected<NestedFirstLevel> decodeNestedQParams(
    const AffineDescriptor &d, const std::vector<int64_t> &shape,
    const std::vector<int32_t> &scaleCodes,
    const std::vector<double> &superScales,
    const std::vector<int32_t> &minCodes, const std::vector<double> &superMins);

} // namespace qtensor

#endif // QTENSOR_DESCRIPTOR_RECONSTRUCT_H
