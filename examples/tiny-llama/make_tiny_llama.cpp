//===- make_tiny_llama.cpp - The embedded default checkpoint --------------===//
//
// Writes a small llama-style Hugging Face checkpoint, deterministically (the
// same bytes on every machine): `config.json` plus `model.safetensors` in
// bf16, or sharded with `model.safetensors.index.json` (--shards N). Its
// shapes follow the tiny llama GGUF files of the shared corpus (hidden 256,
// FFN 512, 2 layers, 4 heads, 2 KV heads, vocabulary 384).
//
// Weights are N(0, 0.02) from a counter-based generator, with a few heavier
// rows and columns so that quantization error is not uniform (real
// checkpoints have outlier channels).
//
//   make-tiny-llama OUT_DIR [--shards N] [--dtype bf16|f16|f32] [--layers N]
//                   [--tied] (no lm_head.weight: the head is the embedding)
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Numerics/FloatFormats.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace qtensor;

namespace {

struct Config {
  int64_t hidden = 256, intermediate = 512, layers = 2, heads = 4, kvHeads = 2,
          vocab = 384;
};

/// splitmix64 of (tensor seed, index): order-independent, platform-exact.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// A standard normal from two uniforms (Box-Muller). The uniforms are exact;
/// log/sqrt/cos may differ in the last bit between libm builds, which the
/// rounding to bf16/f16 absorbs in all but very rare cases. make-tiny-llama
/// prints nothing machine-specific; tests compare its output by value.
double normal(uint64_t seed, uint64_t i) {
  uint64_t a = mix(seed * 0x100000001B3ull + 2 * i);
  uint64_t b = mix(seed * 0x100000001B3ull + 2 * i + 1);
  double u1 = (static_cast<double>(a >> 11) + 0.5) * 0x1p-53;
  double u2 = static_cast<double>(b >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

uint64_t nameSeed(const std::string &name) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (unsigned char c : name)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

Tensor weight(const std::string &name, int64_t rows, int64_t cols) {
  Tensor t{name, {rows, cols}, std::vector<float>(rows * cols)};
  uint64_t seed = nameSeed(name);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double scale = 0.02;
      if (c % 61 == 7)
        scale *= 4; // an outlier input channel
      if (r % 97 == 3)
        scale *= 2; // a heavier output row
      t.values[r * cols + c] =
          static_cast<float>(scale * normal(seed, r * cols + c));
    }
  return t;
}

Tensor norm(const std::string &name, int64_t n) {
  Tensor t{name, {n}, std::vector<float>(n)};
  uint64_t seed = nameSeed(name);
  for (int64_t i = 0; i < n; ++i)
    t.values[i] = static_cast<float>(1.0 + 0.05 * normal(seed, i));
  return t;
}

int fail(const std::string &message) {
  std::cerr << "make-tiny-llama: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::cerr << "usage: make-tiny-llama OUT_DIR [--shards N] "
                 "[--dtype bf16|f16|f32] [--layers N] [--tied]\n";
    return 2;
  }
  std::string dir = argv[1];
  int64_t shards = 1;
  std::string dtypeName = "bf16";
  Config config;
  bool tied = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--tied") {
      tied = true;
      continue;
    }
    if (i + 1 >= argc)
      return fail("option " + arg + " needs a value");
    std::string value = argv[++i];
    char *end = nullptr;
    long long n = std::strtoll(value.c_str(), &end, 10);
    bool isNumber = end && *end == '\0' && !value.empty();
    if (arg == "--shards" && isNumber && n >= 1 && n <= 16)
      shards = n;
    else if (arg == "--layers" && isNumber && n >= 1 && n <= 64)
      config.layers = n;
    else if (arg == "--dtype" &&
             (value == "bf16" || value == "f16" || value == "f32"))
      dtypeName = value;
    else
      return fail("bad option " + arg + " " + value +
                  " (--shards 1..16, --layers 1..64, --dtype bf16|f16|f32)");
  }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    return fail("cannot create " + dir + ": " + std::strerror(errno));

  const int64_t h = config.hidden, f = config.intermediate,
                kv = h / config.heads * config.kvHeads;
  std::vector<Tensor> tensors;
  tensors.push_back(weight("model.embed_tokens.weight", config.vocab, h));
  for (int64_t l = 0; l < config.layers; ++l) {
    std::string p = "model.layers." + std::to_string(l) + ".";
    tensors.push_back(norm(p + "input_layernorm.weight", h));
    tensors.push_back(weight(p + "self_attn.q_proj.weight", h, h));
    tensors.push_back(weight(p + "self_attn.k_proj.weight", kv, h));
    tensors.push_back(weight(p + "self_attn.v_proj.weight", kv, h));
    tensors.push_back(weight(p + "self_attn.o_proj.weight", h, h));
    tensors.push_back(norm(p + "post_attention_layernorm.weight", h));
    tensors.push_back(weight(p + "mlp.gate_proj.weight", f, h));
    tensors.push_back(weight(p + "mlp.up_proj.weight", f, h));
    tensors.push_back(weight(p + "mlp.down_proj.weight", h, f));
  }
  tensors.push_back(norm("model.norm.weight", h));
  if (!tied)
    tensors.push_back(weight("lm_head.weight", config.vocab, h));

  safetensors::DType dtype = dtypeName == "bf16"  ? safetensors::DType::BF16
                             : dtypeName == "f16" ? safetensors::DType::F16
                                                  : safetensors::DType::F32;
  std::vector<safetensors::SafetensorsWriter> writers(shards);
  std::vector<std::string> shardNames;
  for (int64_t s = 0; s < shards; ++s) {
    char name[64];
    std::snprintf(name, sizeof(name), "model-%05lld-of-%05lld.safetensors",
                  static_cast<long long>(s + 1),
                  static_cast<long long>(shards));
    shardNames.push_back(shards == 1 ? "model.safetensors" : name);
    (void)writers[s].setMetadata("format", "pt");
  }
  nlohmann::ordered_json weightMap = nlohmann::ordered_json::object();
  uint64_t totalBytes = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor &t = tensors[i];
    std::vector<uint8_t> bytes;
    for (float v : t.values) {
      if (dtype == safetensors::DType::F32) {
        uint8_t b[4];
        std::memcpy(b, &v, 4);
        bytes.insert(bytes.end(), b, b + 4);
        continue;
      }
      uint16_t bits = dtype == safetensors::DType::BF16 ? floatToBFloat16Bits(v)
                                                        : floatToHalfBits(v);
      bytes.push_back(static_cast<uint8_t>(bits & 0xFF));
      bytes.push_back(static_cast<uint8_t>(bits >> 8));
    }
    totalBytes += bytes.size();
    size_t shard = i * shards / tensors.size();
    weightMap[t.name] = shardNames[shard];
    if (Status s =
            writers[shard].addTensor(t.name, dtype, t.shape, std::move(bytes));
        !s)
      return fail(t.name + ": " + s.message());
  }
  for (int64_t s = 0; s < shards; ++s)
    if (auto written = writers[s].writeFile(dir + "/" + shardNames[s]);
        !written)
      return fail(written.message());
  if (shards > 1) {
    nlohmann::ordered_json index;
    index["metadata"]["total_size"] = totalBytes;
    index["weight_map"] = weightMap;
    std::ofstream(dir + "/model.safetensors.index.json")
        << index.dump(2) << "\n";
  }

  nlohmann::ordered_json cfg;
  cfg["architectures"] = {"LlamaForCausalLM"};
  cfg["model_type"] = "llama";
  cfg["hidden_size"] = h;
  cfg["intermediate_size"] = f;
  cfg["num_hidden_layers"] = config.layers;
  cfg["num_attention_heads"] = config.heads;
  cfg["num_key_value_heads"] = config.kvHeads;
  cfg["vocab_size"] = config.vocab;
  cfg["max_position_embeddings"] = 128;
  cfg["rms_norm_eps"] = 1e-5;
  cfg["rope_theta"] = 10000.0;
  cfg["tie_word_embeddings"] = tied;
  cfg["torch_dtype"] = dtypeName == "bf16"  ? "bfloat16"
                       : dtypeName == "f16" ? "float16"
                                            : "float32";
  cfg["_name_or_path"] = "qtensor/tiny-llama";
  std::ofstream out(dir + "/config.json");
  out << cfg.dump(2) << "\n";
  if (!out)
    return fail("cannot write " + dir + "/config.json");
  std::cout << "wrote " << dir << ": " << tensors.size() << " tensors, "
            << shards << " shard(s), " << dtypeName << "\n";
  return 0;
}
