//===- Sampler.cpp - Choosing the next token from logits ------------------===//

#include "qtensor/Runtime/Sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

using namespace qtensor;
using namespace qtensor::runtime;

Status runtime::validateSamplerOptions(const SamplerOptions &o) {
  if (!(o.temperature > 0 && o.temperature <= 100))
    return makeError("sampling: the temperature must be in (0, 100], got ",
                     o.temperature);
  if (o.topK < 0)
    return makeError("sampling: top-k must be >= 0, got ", o.topK);
  if (!(o.topP > 0 && o.topP <= 1))
    return makeError("sampling: top-p must be in (0, 1], got ", o.topP);
  if (!(o.minP >= 0 && o.minP <= 1))
    return makeError("sampling: min-p must be in [0, 1], got ", o.minP);
  return Status::ok();
}

SamplingCandidates runtime::samplingCandidates(const std::vector<float> &logits,
                                               const SamplerOptions &o) {
  if (logits.empty())
    return {};
  // Every token, ascending. A sampled decode step runs this over the whole
  // vocabulary (262144 tokens for Gemma 3), so only the cuts that need an
  // order pay for one: top-k selects, top-p sorts what top-k left.
  std::vector<int32_t> kept(logits.size());
  std::iota(kept.begin(), kept.end(), 0);
  // Descending logit, the lower id first on a tie.
  auto before = [&](int32_t a, int32_t b) {
    return logits[size_t(a)] != logits[size_t(b)]
               ? logits[size_t(a)] > logits[size_t(b)]
               : a < b;
  };
  bool reordered = false;
  if (o.topK > 0 && size_t(o.topK) < kept.size()) {
    std::nth_element(kept.begin(), kept.begin() + long(o.topK), kept.end(),
                     before);
    kept.resize(size_t(o.topK));
    reordered = true;
  }
  const double top =
      logits[size_t(*std::min_element(kept.begin(), kept.end(), before))];
  // top-p and min-p on the probabilities of the raw logits that are left.
  auto p = [&](int32_t id) {
    return std::exp(double(logits[size_t(id)]) - top);
  };
  if (o.topP < 1) {
    std::sort(kept.begin(), kept.end(), before);
    reordered = true;
    double sum = 0;
    for (int32_t id : kept)
      sum += p(id);
    double mass = 0;
    size_t n = 0;
    while (n < kept.size() && (n == 0 || mass < o.topP * sum))
      mass += p(kept[n++]);
    kept.resize(n);
  }
  if (o.minP > 0) // the likeliest has p = 1 and always stays
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](int32_t id) { return p(id) < o.minP; }),
               kept.end());
  if (reordered)
    std::sort(kept.begin(), kept.end());
  SamplingCandidates c;
  c.ids = std::move(kept);
  c.weights.reserve(c.ids.size());
  for (int32_t id : c.ids)
    c.weights.push_back(
        std::exp((double(logits[size_t(id)]) - top) / o.temperature));
  return c;
}

Expected<int32_t> runtime::sampleToken(const std::vector<float> &logits,
                                       const SamplerOptions &o,
                                       std::mt19937_64 &rng) {
  if (logits.empty())
    return makeError("sampling: no logits");
  for (size_t i = 0; i < logits.size(); ++i)
    if (!std::isfinite(logits[i]))
      return makeError("sampling: the logit of token ", i, " is ", logits[i],
                       "; a finite value is needed to sample");
  SamplingCandidates c = samplingCandidates(logits, o);
  std::discrete_distribution<size_t> dist(c.weights.begin(), c.weights.end());
  return c.ids[dist(rng)];
}

Status runtime::validatePenaltyOptions(const PenaltyOptions &o) {
  if (!(o.repeat > 0 && o.repeat <= 100))
    return makeError("sampling: the repeat penalty must be in (0, 100], got ",
                     o.repeat);
  for (auto [name, v] :
       {std::pair<const char *, double>{"frequency", o.frequency},
        {"presence", o.presence}})
    if (!(v >= -100 && v <= 100))
      return makeError("sampling: the ", name,
                       " penalty must be in [-100, 100], got ", v);
  if (o.lastN < 0)
    return makeError("sampling: the penalty window must be >= 0, got ",
                     o.lastN);
  return Status::ok();
}

Status runtime::applyPenalties(std::vector<float> &logits,
                               const std::vector<int32_t> &history,
                               const PenaltyOptions &o) {
  if (!o.active())
    return Status::ok();
  const size_t from =
      history.size() > size_t(o.lastN) ? history.size() - size_t(o.lastN) : 0;
  std::unordered_map<int32_t, int> counts;
  for (size_t i = from; i < history.size(); ++i) {
    const int32_t id = history[i];
    if (id < 0 || size_t(id) >= logits.size())
      return makeError("sampling: history token ", id, " is outside the ",
                       logits.size(), "-token vocabulary");
    ++counts[id];
  }
  const float repeat = float(o.repeat), frequency = float(o.frequency),
              presence = float(o.presence);
  for (const auto &[id, count] : counts) {
    float &logit = logits[size_t(id)];
    logit = logit <= 0 ? logit * repeat : logit / repeat;
    logit -= float(count) * frequency + presence;
  }
  return Status::ok();
}

int32_t runtime::firstArgmax(const std::vector<float> &logits) {
  return int32_t(std::max_element(logits.begin(), logits.end()) -
                 logits.begin());
}
