//===- Runtime.cpp - Loading and running a model behind C -----------------===//

#include "CAPISupport.h"

#include "qtensor-c/Runtime.h"
#include "qtensor/Runtime/Decoder.h"
#include "qtensor/Runtime/Loader.h"

#include <algorithm>
#include <cstring>

using namespace qtensor;

struct QtensorModel {
  std::unique_ptr<runtime::LoadedModel> model;
  std::unique_ptr<runtime::Decoder> decoder;
};

extern "C" QtensorModel *qtensorModelLoad(const char *dir, char **error) {
  try {
    capi::installBuilders();
    if (!dir) {
      capi::setError(error, "the directory is null");
      return nullptr;
    }
    runtime::LoadOptions options;
    options.decoder = true;
    auto loaded = runtime::loadModel(dir, options);
    if (!loaded) {
      capi::setError(error, loaded.message());
      return nullptr;
    }
    auto m = std::make_unique<QtensorModel>();
    m->model = loaded.take();
    auto decoder = runtime::Decoder::create(*m->model);
    if (!decoder) {
      capi::setError(error, decoder.message());
      return nullptr;
    }
    m->decoder = decoder.take();
    return m.release();
  } catch (const std::exception &e) {
    capi::setError(error, e.what());
    return nullptr;
  }
}

extern "C" void qtensorModelDestroy(QtensorModel *model) { delete model; }

extern "C" int64_t qtensorModelVocabSize(const QtensorModel *model) {
  return model ? model->decoder->config().vocab : 0;
}

extern "C" int qtensorModelGenerate(QtensorModel *model, const int32_t *prompt,
                                    size_t n, int64_t maxTokens,
                                    int32_t *tokens, size_t capacity,
                                    size_t *count, float *logits,
                                    char **error) {
  try {
    if (!model || (!prompt && n) || (!tokens && capacity) || !count) {
      capi::setError(error, "qtensorModelGenerate: a null argument");
      return 1;
    }
    if (n == 0 || maxTokens < 0) {
      capi::setError(error, "qtensorModelGenerate: the prompt is empty or "
                            "maxTokens is negative");
      return 1;
    }
    auto cache = model->decoder->newCache();
    if (!cache) {
      capi::setError(error, cache.message());
      return 1;
    }
    runtime::GenerateOptions options;
    options.maxTokens = maxTokens;
    auto r = model->decoder->generate(std::vector<int32_t>(prompt, prompt + n),
                                      *cache, options);
    if (!r) {
      capi::setError(error, r.message());
      return 1;
    }
    *count = std::min(capacity, r->tokens.size());
    std::copy_n(r->tokens.begin(), *count, tokens);
    if (logits)
      std::memcpy(logits, r->promptLogits.data(),
                  r->promptLogits.size() * sizeof(float));
    return 0;
  } catch (const std::exception &e) {
    capi::setError(error, e.what());
    return 1;
  }
}
