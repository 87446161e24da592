//===- LadderModel.cpp - L4: the whole model against float64 --------------===//
//
// Seed M8.9 0x09D/0x09E at model level, on the artifact's decoder program:
//  - the logits after a fixed prompt against the float64 reference forward
//    of the same reconstructed weights (ReferenceDecoder.h): the kernels'
//    error, with the activation dtype they used;
//  - greedy decoding: the artifact's tokens equal the reference's;
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
constexpr int64_t kGreedySteps = 3;

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

  // 1. Logits after the prompt.
  GenerateOptions go;
  go.maxTokens = kGreedySteps;
  go.stopAtEos = false;
  auto run = d.generate(prompt, *cache, go);
  if (!run) {
    r.detail = run.message();
    return r;
  }
  // One reference forward over the prompt and the artifact's greedy tokens
  // gives the logits after the prompt and after each of its extensions.
  std::vector<int32_t> sequence = prompt;
  const int64_t steps = int64_t(run->tokens.size());
  sequence.insert(sequence.end(), run->tokens.begin(),
                  run->tokens.end() - (steps > 0 ? 1 : 0));
  auto ref = referenceLogits(model, sequence, std::max<int64_t>(steps, 1));
  if (!ref) {
    r.detail = ref.message();
    return r;
  }
  const size_t vocab = size_t(c.vocab);
  const std::vector<double> promptRef(ref->begin(), ref->begin() + vocab);
  const double kernelError = relativeL2(run->promptLogits, promptRef);
  auto quantization =
      quantizationError(a, model, prompt, promptRef, options, r.metrics);
  if (!quantization) {
    r.detail = quantization.message();
    return r;
  }

  // 2. Greedy tokens against the reference's own greedy continuation:
  // teacher-forced on the artifact's tokens, which equals the reference's
  // continuation exactly when every step agrees (by induction); the first
  // disagreement is the reference's own token there.
  std::vector<int32_t> refTokens;
  for (int64_t i = 0; i < steps; ++i) {
    const std::vector<double> row(ref->begin() + size_t(i) * vocab,
                                  ref->begin() + size_t(i + 1) * vocab);
    refTokens.push_back(argmaxOf(row));
    if (refTokens.back() != run->tokens[size_t(i)])
      break;
  }

  // 3. The KV cache: prefill + one decode step vs one longer prefill.
  std::vector<int32_t> longer = prompt;
  longer.push_back(run->tokens.empty() ? prompt.back() : run->tokens[0]);
  auto decodeCache = d.newCache(cache->capacity());
  auto prefillCache = d.newCache(cache->capacity());
  if (!decodeCache || !prefillCache) {
    r.detail = "cannot allocate the KV caches for the cache check";
    return r;
  }
  std::vector<float> stepped, whole;
  auto first = d.forward(prompt, *decodeCache);
  auto b = first ? d.forward({longer.back()}, *decodeCache) : first;
  if (b)
    stepped = **b;
  auto w = b ? d.forward(longer, *prefillCache) : b;
  if (!w) {
    r.detail = w.message();
    return r;
  }
  whole = **w;
  const double cacheError = relativeL2(stepped, whole);

  const std::string act = toString(model.program()->activation);
  r.detail =
      promptText + " (" + std::to_string(prompt.size()) +
      " tokens): logits vs the float64 forward of the reconstructed "
      "weights: relative L2 " +
      percent(kernelError) + " (bound " + percent(kLogitsBound) + ", " + act +
      " activations); greedy " + std::to_string(kGreedySteps) + " tokens " +
      (run->tokens == refTokens ? "equal" : "DIFFER") +
      "; decode after prefill vs longer prefill: " + percent(cacheError) +
      "; " + *quantization;
  r.ok = kernelError <= kLogitsBound && run->tokens == refTokens &&
         cacheError <= kLogitsBound;
  if (run->tokens != refTokens) {
    std::string got, want;
    for (int32_t t : run->tokens)
      got += " " + std::to_string(t);
    for (int32_t t : refTokens)
      want += " " + std::to_string(t);
    r.detail += " (artifact:" + got +
                "; reference, up to the first "
                "difference:" +
                want + ")";
  }
  return r;
}

} // namespace qtensor::verify::detail
