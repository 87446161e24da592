//===- GGUFDescriptor.h - GGUF tensors as qtensor descriptors ---*- C++ -*-===//
//
// A GGUF tensor's stored codes keep their meaning: no re-quantization (seed
// M8.9 0x04A). Types whose block contract is an affine one are spelled as an
// affine descriptor plus the ggml block layout:
//
//   Q4_0  si4 offset_binary (q = u - 8), symmetric, groups of 32 along the
//         row (the last C-order axis, ne[0]), f16 scale
//   Q4_1  ui4, asymmetric with zero_point = min (x = d * q + m), groups of
//         32, f16 scale and min
//   Q5_0  si5 offset_binary (q = u - 16), symmetric, groups of 32, f16
//   Q5_1  ui5 with an f16 min, groups of 32
//   Q8_0  si8 two's complement, symmetric, groups of 32, f16 scale
//   Q2_K  ui2 with a min, groups of 16, f32 scale and min
//   Q3_K  si3 two's complement (q = low 2 bits - 4 unless the hmask bit
//         is set), symmetric, groups of 16, f32 scale
//   Q4_K  ui4 with a min, groups of 32, f32 scale and min
//   Q5_K  ui5 with a min, groups of 32, f32 scale and min
//   Q6_K  si6 offset_binary (q = u - 32), symmetric, groups of 16, f32
//
// with layout {family "ggml_block", version 1, encoding "q4_0" ... "q6_k",
// tile [1, ..., 1, block]}, block 32 or 256. The K-quants store their
// per-group scales (and mins) as 4-, 6- or 8-bit codes under f16 super-block
// scales; ggml decodes that second level first (d * sc_j, dmin * m_j), and
// each such product is exact in f32, so the f32 scale s_j = d * sc_j and
// min m_j = -(dmin * m_j) spell the same numbers as one affine level
// (x = s * q + m rounds exactly as ggml's d1 * q - m1). The descriptor's
// nested qparams (NestedQParams) keep the second level as it is stored: the
// 4-, 6- or 8-bit codes and the f16 d (and dmin) per super-block.
// Every other decodable type (codebooks, lattices, ternary) is described by
// its GGMLBlockContract alone.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_GGUFDESCRIPTOR_H
#define QTENSOR_FORMATS_GGUFDESCRIPTOR_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Descriptor/GGMLSpellings.h"
#include "qtensor/Formats/GGMLTypes.h"
#include "qtensor/Formats/GGUF.h"

#include <optional>
#include <vector>

namespace qtensor {

struct GGUFTensorDescriptor {
  /// Logical shape in C order: ne reversed (ne[0], the row, is last).
  std::vector<int64_t> shape;
  /// The block contract (every decodable type).
  GGMLBlockContract block;
  /// The affine spelling, for the types listed above.
  std::optional<QuantizedTensorDescriptor> affine;
};

/// The spelling of `type` (Descriptor/GGMLSpellings.h), or nullptr.
const GGMLAffineSpelling *ggmlAffineSpellingOf(GGMLType type);
/// Whether `type` has the affine spelling above (its codes can be kept).
bool hasAffineSpelling(GGMLType type);

/// The descriptor of `tensor`; "unsupported type NAME" for types without a
/// decoder.
Expected<GGUFTensorDescriptor> describeGGUFTensor(const GGUFTensorInfo &tensor);

/// The logical codes and qparams of a tensor with an affine spelling, read
/// from its blocks without re-quantizing: codes in C order, one scale (and
/// min) per group, as reconstructAffine takes them. Fails, naming the
/// block and element, unless s * q (+ m) in f32 equals ggml's decoding of
/// every element bit for bit.
struct GGMLAffineParts {
  std::vector<int32_t> codes;
  std::vector<double> scales;
  std::vector<double> zeros; ///< mins (Q4_1, Q5_1, Q4_K, Q5_K); else empty
  /// The K-quants' stored two levels (empty otherwise): scale (and min)
  /// codes one per group, d (and dmin) one per super-block; `scales` and
  /// `zeros` above are their exact products.
  std::vector<int32_t> scaleCodes, minCodes;
  std::vector<double> superScales, superMins;
};
Expected<GGMLAffineParts> disassembleGGMLAffine(const GGUFTensorInfo &tensor);

} // namespace qtensor

#endif // QTENSOR_FORMATS_GGUFDESCRIPTOR_H
