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
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::runtime {

/// Other float weights for the quantized linears, by tensor name: W [N, K]
/// row-major in f32 (widened to float64 a block of rows at a time), or none
/// to keep the reconstruction (a linear whose source held codes, not
/// floats). The compiler passes its checkpoint's weights, so that L4 can
/// measure the quantization error at model level.
using ReferenceWeights =
    std::function<Expected<std::optional<std::vector<float>>>(
        const std::string &tensor)>;

/// The logits (vocab values) after each of the last `positions` of `ids`,
/// one row after the other, for `model` loaded with its decoder program.
/// A causal forward gives every prefix's logits at once, so one call checks
/// a whole greedy continuation (teacher forcing). `positions` is clamped
/// to [1, ids.size()].
/// With `weights`, a quantized linear uses the float weights it gives
/// instead of its reconstruction (its bias stays the artifact's).
/// With `singleTokenFrom` = P, the rows the artifact computes with T = 1
/// calls (positions from P on, the head's every row) go into a linear
/// whose T = 1 kernel quantizes its activations quantized the same way
/// (OpPlan::kernelActivations): the float64 effect of that quantization,
/// which L4 measures against the forward without it.
Expected<std::vector<double>>
referenceLogits(const LoadedModel &model, const std::vector<int32_t> &ids,
                int64_t positions = 1,
                const ReferenceWeights &weights = ReferenceWeights(),
                std::optional<int64_t> singleTokenFrom = std::nullopt);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_REFERENCEDECODER_H
