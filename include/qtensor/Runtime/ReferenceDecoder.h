//===- ReferenceDecoder.h - The decoder in float64 --------------*- C++ -*-===//
//
// The oracle of level L4 (seed M8.9 0x09D, 0x09E): the decoder program's
// forward computed in float64 with the reference reconstruction of every
// quantized weight (Reference.h) and the plain tensors as stored, every
// activation kept in float64 (no rounding to the kernels' activation dtype),
// from position 0 with no cache. It reads one weight at a time (memory
// follows the largest weight, not the model) and shares no code with the
// model kernels: the formulas are written out again here.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_REFERENCEDECODER_H
#define QTENSOR_RUNTIME_REFERENCEDECODER_H

#include "qtensor/Runtime/Loader.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <vector>

namespace qtensor::runtime {

/// The logits (vocab values) after each of the last `positions` of `ids`,
/// one row after the other, for `model` loaded with its decoder program.
/// A causal forward gives every prefix's logits at once, so one call checks
/// a whole greedy continuation (teacher forcing). `positions` is clamped
/// to [1, ids.size()].
Expected<std::vector<double>> referenceLogits(const LoadedModel &model,
                                              const std::vector<int32_t> &ids,
                                              int64_t positions = 1);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_REFERENCEDECODER_H
