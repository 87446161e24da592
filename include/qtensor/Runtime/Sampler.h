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

/// One token drawn from samplingCandidates(logits, o) with `rng`. Errors:
/// no logits, or a non-finite one (named by its id).
Expected<int32_t> sampleToken(const std::vector<float> &logits,
                              const SamplerOptions &o, std::mt19937_64 &rng);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_SAMPLER_H
