//===- Architecture.cpp - The decoder families qtensor compiles -----------===//

#include "qtensor/Models/Architecture.h"

#include <cmath>

using namespace qtensor::models;

const char *qtensor::models::toString(Naming n) {
  return n == Naming::GGUF ? "GGUF" : "Hugging Face";
}

const std::vector<Architecture> &qtensor::models::architectures() {
  // Keep docs/model.md ("Families") in step.
  static const std::vector<Architecture> kAll = {
      {Family::Llama, "llama", /*fromHuggingFace=*/true, /*fromGGUF=*/true,
       "llama", /*ggufRotatesHalves=*/false, /*qkNorm=*/false,
       /*sandwichNorms=*/false, /*hasSchema=*/true},
      // llama.cpp has no mistral graph of its own: it runs mistral as llama,
      // so a GGUF mistral declares itself llama.
      {Family::Mistral, "mistral", true, false, "llama", false, false, false,
       true},
      {Family::Qwen2, "qwen2", true, true, "qwen2", true, false, false, true},
      // qwen2's block without its q, k, v biases, with per-head q/k norms.
      {Family::Qwen3, "qwen3", true, true, "qwen3", true, true, false, true},
      // Fused q/k/v and gate/up projections.
      {Family::Phi3, "phi3", true, true, "phi3", true, false, false, true,
       /*fusedProjections=*/true},
      // Gemma 1 (and CodeGemma): llama's block in gemma's way (isGemma).
      {Family::Gemma, "gemma", true, true, "gemma", true, false, false, true},
      // As gemma3: the output norms, no q/k norms, logit soft-capping.
      {Family::Gemma2, "gemma2", true, true, "gemma2", true, false, true, true},
      {Family::Gemma3, "gemma3", true, true, "gemma3", true, true, true, true},
      // llama's block with four multipliers (embeddings, residual branches,
      // q.k, logits: DecoderConfig's embedScale, residualScale,
      // attentionScale, logitScale).
      {Family::Granite, "granite", true, true, "granite", false, false, false,
       true},
  };
  return kAll;
}

const Architecture *qtensor::models::findArchitecture(std::string_view name) {
  for (const Architecture &a : architectures())
    if (a.name == name)
      return &a;
  return nullptr;
}

namespace {
bool readsFrom(const Architecture &a, Naming naming) {
  return naming == Naming::GGUF ? a.fromGGUF : a.fromHuggingFace;
}

template <typename Keep> std::string listOf(Keep keep) {
  std::string out;
  for (const Architecture &a : architectures())
    if (keep(a))
      out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}
} // namespace

const Architecture *
qtensor::models::architectureFromCheckpoint(Naming naming,
                                            std::string_view name) {
  const Architecture *a = findArchitecture(name);
  return a && readsFrom(*a, naming) ? a : nullptr;
}

std::string qtensor::models::checkpointArchitectureList(Naming naming) {
  return listOf([&](const Architecture &a) { return readsFrom(a, naming); });
}

std::string qtensor::models::architectureList() {
  return listOf([](const Architecture &) { return true; });
}

double qtensor::models::ggufGemmaQueryScale(Family family, int64_t layers,
                                            int64_t hidden, int64_t heads,
                                            int64_t headDim) {
  const int64_t layers27B = family == Family::Gemma2   ? 46
                            : family == Family::Gemma3 ? 62
                                                       : -1;
  return 1.0 / std::sqrt(layers == layers27B ? double(hidden) / double(heads)
                                             : double(headDim));
}
