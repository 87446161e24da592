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
//   Q8_0  si8 two's complement, symmetric, groups of 32, f16 scale
//
// with layout {family "ggml_block", version 1, encoding "q4_0" / "q4_1" /
// "q8_0", tile [1, ..., 1, 32]}: each 32-code block stores its scale (and
// min) inline, and Q4_0/Q4_1 put code j in the low nibble of byte j and code
// j + 16 in its high nibble. Every other decodable type (5-bit codes,
// K-quants with nested 6-bit scales under an fp16 super-scale, codebooks,
// ternary) is described by its GGMLBlockContract alone until the dialect has
// a ggml family.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_GGUFDESCRIPTOR_H
#define QTENSOR_FORMATS_GGUFDESCRIPTOR_H

#include "qtensor/Descriptor/Descriptor.h"
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
  /// The affine spelling, for Q4_0, Q4_1 and Q8_0.
  std::optional<QuantizedTensorDescriptor> affine;
};

/// The descriptor of `tensor`; "unsupported type NAME" for types without a
/// decoder.
Expected<GGUFTensorDescriptor> describeGGUFTensor(const GGUFTensorInfo &tensor);

/// The logical codes and qparams of a Q4_0, Q4_1 or Q8_0 tensor, read from
/// its blocks without re-quantizing: codes in C order, one scale (and min)
/// per 32-element group, as reconstructAffine takes them.
struct GGMLAffineParts {
  std::vector<int32_t> codes;
  std::vector<double> scales;
  std::vector<double> zeros; ///< Q4_1 mins; empty otherwise
};
Expected<GGMLAffineParts> disassembleGGMLAffine(const GGUFTensorInfo &tensor);

} // namespace qtensor

#endif // QTENSOR_FORMATS_GGUFDESCRIPTOR_H
