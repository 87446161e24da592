//===- LadderModel.cpp - L4: the whole model against float64 --------------===//
//
// Seed M8.9 0x09D/0x09E at model level, on the artifact's decoder program:
//  - the logits after a fixed prompt against the float64 reference forward
//    of the same reconstructed weights (ReferenceDecoder.h): the kernels'
//    error, with the activation dtype they used;
//  - greedy decoding, a step at a time: every step's logits within the
//    bound, and its token the reference's argmax there (with int8
//    activations, a near-tie the step's logits error allows);
//  - the KV cache: decoding a token after the prefill gives the logits of a
//    prefill of the longer prompt.
// The quantization error at model level, separately (seed 0x09D): the
// float64 forward of the source's float weights against the one of the
// reconstructed weights, on the same prompt. It needs the source, which an
// artifact does not carry: the compiler passes its checkpoint's weights
// (LadderOptions::sourceWeights) and records the result in the report's
// parity, which `qtc verify` then shows.
//
//===----------------------------------------------------------------------===//

#include "LadderLevels.h"

#include "qtensor/Numerics/ActivationQuant.h"
#include "qtensor/Runtime/Decoder.h"
#include "qtensor/Runtime/ReferenceDecoder.h"
#include "qtensor/Tokenizer/Tokenizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace qtensor::verify::detail {

namespace {

using namespace qtensor::runtime;

/// L4's bound on the relative L2 distance of the logits from the float64
/// forward (issue 12: activations in f16 or bf16 through a whole model).
constexpr double kLogitsBound = 0.015;
/// Where a T = 1 kernel (every linear of a decode step, the head after a
/// prefill) quantizes its activations to int8 per 32, as ggml's CPU
/// matmuls do, a step's bound grows by this many times Q, the relative L2
/// between the float64 forward that quantizes those activations the same
/// way and the one that does not (the quantization's own effect, measured
/// per step). The artifact is not held to the quantizing forward itself:
/// a value its f16 rounding moves across a boundary moves a whole step
/// there, so the two quantizations differ by up to about their own error
/// again (2 Q), and the quantizing forward is Q from the float one. An
/// estimate with a margin, not a theorem.
constexpr double kInt8EffectFactor = 3.0;
constexpr int64_t kGreedySteps = 3;
// The cache check reads the greedy loop's second step.
static_assert(kGreedySteps >= 2);

template <typename A, typename B>
double relativeL2(const std::vector<A> &x, const std::vector<B> &ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double d = double(x[i]) - double(ref[i]);
    num += d * d;
    den += double(ref[i]) * double(ref[i]);
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

template <typename T> int32_t argmaxOf(const std::vector<T> &v) {
  return int32_t(std::max_element(v.begin(), v.end()) - v.begin());
}

std::string percent(double x) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.3f%%", 100.0 * x);
  return b;
}

/// The model-level quantization error, separately from the kernels': the
/// float64 forward of the source's float weights against `promptRef` (the
/// one of the reconstructed weights), with the compiler's source weights,
/// or what the compile recorded. Also fills `metrics`.
Expected<std::string> quantizationError(const artifact::Artifact &a,
                                        const LoadedModel &model,
                                        const std::vector<int32_t> &prompt,
                                        const std::vector<double> &promptRef,
                                        const LadderOptions &options,
                                        nlohmann::ordered_json &metrics) {
  if (!options.sourceWeights) {
    // An artifact alone: the number its compile measured, if recorded.
    auto report = readReport(a);
    if (report && report->contains("parity"))
      for (const auto &level :
           (*report)["parity"].value("levels", nlohmann::json::array()))
        if (level.is_object() && level.value("level", "") == "L4" &&
            level.contains("metrics") && level["metrics"].is_object() &&
            level["metrics"].contains("quantization_error") &&
            level["metrics"]["quantization_error"].is_number()) {
          double q = level["metrics"]["quantization_error"].get<double>();
          metrics["quantization_error"] = q;
          metrics["quantization_error_source"] = "recorded at compile time";
          return "quantization error (recorded at compile time: the float64 "
                 "forward of the source's float weights vs of the "
                 "reconstructed ones): relative L2 " +
                 percent(q);
        }
    return std::string("quantization error: not measurable from the "
                       "artifact, and none recorded at compile time");
  }
  bool anyFloat = false;
  ReferenceWeights counted = [&](const std::string &tensor)
      -> Expected<std::optional<std::vector<float>>> {
    QTENSOR_ASSIGN_OR_RETURN(std::optional<std::vector<float>> w,
                             options.sourceWeights(tensor));
    anyFloat |= w.has_value();
    return w;
  };
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> source,
                           referenceLogits(model, prompt, 1, counted));
  if (!anyFloat)
    return std::string("quantization error: none (every quantized linear "
                       "keeps its source's codes)");
  const double q = relativeL2(promptRef, source);
  const bool sameTop = argmaxOf(promptRef) == argmaxOf(source);
  metrics["quantization_error"] = q;
  metrics["quantization_error_source"] = "source float weights";
  metrics["quantization_top1_equal"] = sameTop;
  return "quantization error (the float64 forward of the source's float "
         "weights vs of the reconstructed ones): relative L2 " +
         percent(q) + ", top-1 token " + (sameTop ? "equal" : "DIFFERS");
}

} // namespace

LevelResult levelModel(const artifact::Artifact &a, const std::string &dir,
                       const LadderOptions &options) {
  LevelResult r{"L4", "model parity", false, ""};
  // No program is not a failure: nothing claims to be a model.
  const artifact::Manifest &m = a.manifest();
  if (std::none_of(m.files.begin(), m.files.end(), [](const auto &f) {
        return f.role == artifact::FileRole::Program;
      })) {
    r.ok = true;
    std::string why;
    if (auto report = readReport(a); report && report->contains("program") &&
                                     (*report)["program"].is_object())
      why = (*report)["program"].value("none", "");
    r.detail = "not run: the artifact has no decoder program" +
               (why.empty() ? std::string() : " (" + why + ")");
    return r;
  }
  uint64_t all = 0, quantized = 0;
  for (const artifact::TensorEntry &t : m.tensors) {
    const std::vector<int64_t> &shape = t.logicalShape();
    uint64_t n = 1;
    for (int64_t d : shape)
      n *= uint64_t(d);
    all += n;
    quantized += t.plain() ? 0 : n;
  }
  const bool twins = std::any_of(
      m.kernels.begin(), m.kernels.end(), [](const artifact::KernelEntry &k) {
        return k.target.backend != kernels::Backend::Host;
      });
  if (!options.exhaustive && all > uint64_t(options.modelAboveWeights)) {
    r.ok = true;
    r.detail = "not run: " + std::to_string(all) + " weights are above " +
               std::to_string(options.modelAboveWeights) +
               ": the float64 reference forward takes minutes at this size; "
               "--exhaustive runs it";
    return r;
  }
  if (!options.exhaustive && twins &&
      quantized > uint64_t(options.twinModelAboveWeights)) {
    r.ok = true;
    r.detail = "not run: " + std::to_string(quantized) +
               " quantized weights are above " +
               std::to_string(options.twinModelAboveWeights) +
               " for a GPU artifact, whose host twins emulate the GPU per "
               "lane (minutes per token); --exhaustive runs it";
    return r;
  }
  LoadOptions lo;
  lo.code = options.code;
  lo.decoder = true;
  lo.backend = BackendChoice::Host;
  lo.warmup = false;
  auto loaded = loadModel(dir, lo);
  if (!loaded) {
    r.detail = loaded.message();
    return r;
  }
  LoadedModel &model = **loaded;
  auto decoder = Decoder::create(model);
  if (!decoder) {
    r.detail = decoder.message();
    return r;
  }
  Decoder &d = **decoder;
  const artifact::DecoderConfig &c = d.config();

  // The fixed prompt: "hello world, the" through the artifact's tokenizer,
  // else ids spread over the vocabulary.
  std::vector<int32_t> prompt;
  std::string promptText;
  if (auto tok = d.tokenizer()) {
    prompt = (*tok)->encode("hello world, the", /*addSpecial=*/true);
    promptText = "\"hello world, the\"";
  }
  if (prompt.empty()) {
    for (int64_t i = 0; i < 5; ++i)
      prompt.push_back(int32_t((1 + 7919 * i) % c.vocab));
    promptText = "5 fixed ids";
  }
  const int64_t needed = int64_t(prompt.size()) + kGreedySteps + 1;
  auto cache = d.newCache(std::min<int64_t>(c.context, needed));
  if (!cache || cache->capacity() < needed) {
    r.detail =
        cache ? "the context is too short for L4's prompt" : cache.message();
    return r;
  }

  // 1. Greedy decoding a step at a time, with the logits of each step
  // (after the prompt, then after each decoded token) and the token the
  // program's argmax kernel picks from them.
  std::vector<std::vector<float>> stepLogits;
  std::vector<int32_t> tokens, feed = prompt;
  for (int64_t i = 0; i < kGreedySteps; ++i) {
    auto logits = d.forward(feed, *cache);
    auto next = logits ? d.argmax() : Expected<int32_t>(logits.error());
    if (!next) {
      r.detail = next.message();
      return r;
    }
    stepLogits.push_back(**logits);
    tokens.push_back(*next);
    feed = {*next};
  }
  // One reference forward over the prompt and the artifact's greedy tokens
  // gives the logits after the prompt and after each of its extensions
  // (teacher-forced on the artifact's tokens).
  const int64_t steps = kGreedySteps;
  std::vector<int32_t> sequence = prompt;
  sequence.insert(sequence.end(), tokens.begin(), tokens.end() - 1);
  auto ref = referenceLogits(model, sequence, steps);
  if (!ref) {
    r.detail = ref.message();
    return r;
  }
  const size_t vocab = size_t(c.vocab);
  // Row i (the logits of step i) of a forward's [steps, vocab] logits.
  auto rowOf = [&](const std::vector<double> &logits, int64_t i) {
    return std::vector<double>(logits.begin() + size_t(i) * vocab,
                               logits.begin() + size_t(i + 1) * vocab);
  };
  auto refRow = [&](int64_t i) { return rowOf(*ref, i); };
  const std::vector<double> promptRef = refRow(0);
  const double kernelError = relativeL2(stepLogits[0], promptRef);
  const bool int8 =
      std::any_of(model.plan().ops.begin(), model.plan().ops.end(),
                  [](const OpPlan &op) { return op.quantizesActivations(1); });
  // Each step's bound; with int8 activations, from their own effect Q.
  std::vector<double> bounds(size_t(steps), kLogitsBound), effects;
  if (int8) {
    const int64_t p = int64_t(prompt.size());
    auto quantizing =
        referenceLogits(model, sequence, steps, {}, p == 1 ? 0 : p);
    if (!quantizing) {
      r.detail = quantizing.message();
      return r;
    }
    for (int64_t i = 0; i < steps; ++i) {
      effects.push_back(relativeL2(rowOf(*quantizing, i), refRow(i)));
      bounds[size_t(i)] += kInt8EffectFactor * effects.back();
    }
  }
  const double bound = bounds[0];
  auto quantization =
      quantizationError(a, model, prompt, promptRef, options, r.metrics);
  if (!quantization) {
    r.detail = quantization.message();
    return r;
  }

  // 2. Each step's logits against the reference's, and its token against
  // the reference's argmax there. With int8 activations a differing token
  // is a near-tie when the step's logits are within the bound: the
  // artifact then prefers its token by less than the logits' error (the
  // reference's margin is reported). With float activations tokens must
  // be equal, as before.
  double worstStep = 0;
  int64_t equal = 0;
  std::string ties;
  bool tokensOk = true;
  for (int64_t i = 0; i < steps; ++i) {
    const std::vector<double> row = refRow(i);
    const double error = relativeL2(stepLogits[size_t(i)], row);
    worstStep = std::max(worstStep, error / bounds[size_t(i)]);
    const int32_t want = argmaxOf(row), got = tokens[size_t(i)];
    if (want == got) {
      ++equal;
      continue;
    }
    tokensOk = tokensOk && int8 && error <= bounds[size_t(i)];
    char margin[160];
    std::snprintf(margin, sizeof(margin),
                  "%sstep %lld: %d, the reference's %d by %.4g over it",
                  ties.empty() ? "" : ", ", static_cast<long long>(i), got,
                  want, row[size_t(want)] - row[size_t(got)]);
    ties += margin;
  }
  std::string greedy =
      "greedy " + std::to_string(kGreedySteps) + " tokens " +
      (equal == steps
           ? std::string("equal")
           : std::to_string(equal) + " equal, " +
                 (tokensOk ? "near-ties " : "DIFFER ") + "(" + ties + ")");
  char worst[64];
  std::snprintf(worst, sizeof(worst), "%.3g", worstStep);
  greedy +=
      "; every step's logits at most " + std::string(worst) + " of its bound";

  // 3. The KV cache: prefill + one decode step (the greedy loop's second
  // step, decoding tokens[0] after the prompt) vs one longer prefill.
  std::vector<int32_t> longer = prompt;
  longer.push_back(tokens[0]);
  auto prefillCache = d.newCache(cache->capacity());
  if (!prefillCache) {
    r.detail = "cannot allocate the KV cache for the cache check";
    return r;
  }
  auto whole = d.forward(longer, *prefillCache);
  if (!whole) {
    r.detail = whole.message();
    return r;
  }
  const double cacheError = relativeL2(stepLogits[1], **whole);
  // The decode step quantizes where the longer prefill's linears do not.
  const double cacheBound = bounds[1];

  const std::string act = toString(model.program()->activation);
  r.detail = promptText + " (" + std::to_string(prompt.size()) +
             " tokens): logits vs the float64 forward of the reconstructed "
             "weights: relative L2 " +
             percent(kernelError) + " (bound " + percent(bound) + ", " + act +
             " activations";
  if (int8) {
    char factor[16];
    std::snprintf(factor, sizeof(factor), "%g", kInt8EffectFactor);
    // W8A8 ops quantize per token at every T; the host GEMM's int8 path
    // per 32 at T = 1, and at every T where it runs on AMX tiles.
    const int64_t prefillRows = kernels::kMaxDecodeTokens + 1;
    const auto &ops = model.plan().ops;
    const bool perToken =
        std::any_of(ops.begin(), ops.end(), [&](const OpPlan &op) {
          const KernelInstance *k = op.instanceFor(prefillRows);
          return k && k->activationQuant;
        });
    const bool everyT =
        std::any_of(ops.begin(), ops.end(), [&](const OpPlan &op) {
          return op.quantizesActivations(prefillRows);
        });
    const std::string perBlock =
        ", int8 per " + std::to_string(kActivationBlock) + " into the ";
    r.detail += perToken ? ", int8 per token into the W8A8 linears"
                : everyT ? perBlock + "linears at every T (AMX tiles at "
                                      "T > 1) as ggml quantizes them"
                         : perBlock + "T = 1 linears as ggml quantizes them";
    r.detail +=
        ": " + percent(kLogitsBound) + " + " + factor + " x their own effect";
  }
  r.detail += "); " + greedy + "; decode after prefill vs longer prefill: " +
              percent(cacheError);
  if (int8) {
    // The activation quantization's own effect is quantization error, as
    // the weights' below: reported, not bounded.
    const double most = *std::max_element(effects.begin(), effects.end());
    r.metrics["int8_activation_effect"] = most;
    r.detail += " (bound " + percent(cacheBound) +
                "); int8 activations' own effect (the float64 forward "
                "quantizing them as the kernels do, vs not): at most " +
                percent(most) + " over the steps";
  }
  r.detail += "; " + *quantization;
  r.ok = worstStep <= 1.0 && tokensOk && cacheError <= cacheBound;
  return r;
}

} // namespace qtensor::verify::detail
