// llama.cpp's own logits after a prompt of token ids, the cross-check
// bench/llama-logits.sh runs beside `qtc run --logits-out`:
//
//   llama_logits MODEL.gguf ID,ID,... OUT.f32 [N_CTX]
//
// Writes the last position's logits as raw little-endian float32 (n_vocab
// values, the format of --logits-out) and prints llama.cpp's top-1. One
// thread, a context of N_CTX positions (default 256; llama.cpp picks
// LongRoPE's long factors by it), llama.cpp's defaults otherwise (its KV
// cache is f16; its quantized matmuls quantize activations to 8 bits).
// Built by the script against a llama.cpp build (LLAMA_CPP_DIR); not part
// of the project's build.
#include "llama.h"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr,
                 "usage: llama_logits MODEL.gguf ID,ID,... OUT [N_CTX]\n");
    return 2;
  }
  std::vector<llama_token> ids;
  const std::string list = argv[2];
  for (size_t at = 0; at < list.size();) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos)
      comma = list.size();
    ids.push_back(llama_token(std::stol(list.substr(at, comma - at))));
    at = comma + 1;
  }
  llama_backend_init();
  llama_model *model =
      llama_model_load_from_file(argv[1], llama_model_default_params());
  if (!model) {
    std::fprintf(stderr, "%s: llama.cpp cannot load it\n", argv[1]);
    return 1;
  }
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = cp.n_batch = argc == 5 ? uint32_t(std::stoul(argv[4])) : 256;
  cp.n_threads = 1;
  llama_context *ctx = llama_init_from_model(model, cp);
  if (!ctx ||
      llama_decode(ctx, llama_batch_get_one(ids.data(), int32_t(ids.size())))) {
    std::fprintf(stderr, "llama.cpp cannot run the prompt\n");
    return 1;
  }
  const float *logits = llama_get_logits_ith(ctx, -1);
  const int32_t n = llama_vocab_n_tokens(llama_model_get_vocab(model));
  FILE *out = std::fopen(argv[3], "wb");
  if (!out || std::fwrite(logits, sizeof(float), size_t(n), out) != size_t(n))
    return 1;
  std::fclose(out);
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i)
    if (logits[i] > logits[best])
      best = i;
  std::printf("llama.cpp top-1 %d of %d\n", best, n);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
