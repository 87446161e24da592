//===- Sampler.h - Choosing the next token from logits ----------*- C++ -*-===//
//
// Sampling as llama.cpp's default chain orders it: top-k, top-p and min-p
// cut the candidates on the raw logits, then the temperature scales what
// is left and one token is drawn from softmax(logits / T). Greedy decoding
// (temperature 0) is the argmax kernel's, not this. Pure host code: the
// caller owns the generator, so a seed gives the same tokens every run.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_SAMPLER_H
#define QTENSOR_RUNTIME_SAMPLER_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <random>
#include <vector>

namespace qtensor::runtime {

struct SamplerOptions {
  double temperature = 1.0; ///< > 0
  int64_t topK = 0;         ///< keep the K largest logits; 0: off
  double topP = 1.0;        ///< keep the smallest prefix of mass >= P; 1: off
  double minP = 0.0;        ///< keep p >= minP * p_max; 0: off
};

/// A temperature in (0, 100], K >= 0, P in (0, 1], minP in [0, 1].
Status validateSamplerOptions(const SamplerOptions &o);

/// The tokens a draw may give, ascending, with their unnormalized weights
/// exp((logit - max) / T). At least one token survives every cut (the
/// largest logit; the lower id on a tie). The logits must be finite.
struct SamplingCandidates {
  std::vector<int32_t> ids;
  std::vector<double> weights;
};
SamplingCandidates samplingCandidates(const std::vector<float> &logits,
                                      const SamplerOptions &o);

/// llama.cpp's repetition penalties, applied before every cut: a token
/// seen c > 0 times among the last `lastN` of the history (the prompt's
/// included) has its logit divided by `repeat` when positive, multiplied
/// by it when not, then lowered by c * frequency + presence (in f32, as
/// llama.cpp). Off: repeat 1, frequency and presence 0, or lastN 0.
struct PenaltyOptions {
  double repeat = 1.0, frequency = 0.0, presence = 0.0;
  int64_t lastN = 64;
  bool active() const {
    return lastN > 0 && (repeat != 1.0 || frequency != 0.0 || presence != 0.0);
  }
};

/// repeat in (0, 100], frequency and presence in [-100, 100], lastN >= 0.
Status validatePenaltyOptions(const PenaltyOptions &o);

/// Applies `o` to `logits` in place; a history id outside the vocabulary
/// is an error naming it.
Status applyPenalties(std::vector<float> &logits,
                      const std::vector<int32_t> &history,
                      const PenaltyOptions &o);

/// The first largest logit: the argmax kernel's rule, on the host (for
/// greedy decoding of penalized logits).
int32_t firstArgmax(const std::vector<float> &logits);

/// One token drawn from samplingCandidates(logits, o) with `rng`. Errors:
/// no logits, or a non-finite one (named by its id).
Expected<int32_t> sampleToken(const std::vector<float> &logits,
                              const SamplerOptions &o, std::mt19937_64 &rng);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_SAMPLER_H
