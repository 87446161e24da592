//===- Checkpoint.cpp - Reading a model checkpoint for qtc compile --------===//

#include "Checkpoint.h"
#include "CheckpointDetail.h"

#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Formats/GGMLTypes.h"
#include "qtensor/Models/TensorNames.h"
#include "qtensor/Support/JsonObjectReader.h"
#include "qtensor/Support/MappedFile.h"
#include "qtensor/Support/Sha256.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <sys/stat.h>

namespace qtensor::compiler {
namespace {

constexpr int64_t kMaxDim = int64_t(1) << 20; // 1 Mi: above any real model
constexpr uint64_t kMaxConfigBytes = uint64_t(1) << 20;
constexpr unsigned kMaxConfigDepth = 32;

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// An integer field of config.json in [1, kMaxDim].
Status readDim(const nlohmann::json &cfg, const std::string &file,
               const char *key, int64_t &out,
               std::optional<int64_t> fallback = std::nullopt) {
  auto it = cfg.find(key);
  if (it == cfg.end()) {
    if (fallback) {
      out = *fallback;
      return Status::ok();
    }
    return makeError(file, ": missing field \"", key, "\"");
  }
  if (!it->is_number_integer())
    return makeError(file, ": field \"", key, "\" must be an integer, got ",
                     it->dump());
  int64_t v = it->get<int64_t>();
  if (v < 1 || v > kMaxDim)
    return makeError(file, ": field \"", key, "\" = ", v, " is outside [1, ",
                     kMaxDim, "]");
  out = v;
  return Status::ok();
}

Status checkConfig(ModelConfig &c, const std::string &file) {
  if (c.headDim == 0 && c.hidden % c.heads != 0)
    return makeError(file, ": hidden_size ", c.hidden,
                     " is not a multiple of num_attention_heads ", c.heads);
  if (c.kvHeads > c.heads || c.heads % c.kvHeads != 0)
    return makeError(file, ": num_key_value_heads ", c.kvHeads,
                     " must divide num_attention_heads ", c.heads);
  if (c.layers > 1024)
    return makeError(file, ": num_hidden_layers ", c.layers,
                     " is above the 1024 this compiler accepts");
  if (c.headDim == 0)
    c.headDim = c.hidden / c.heads;
  return Status::ok();
}

/// A positive finite number of config.json, or `fallback` when absent.
Status readPositive(const nlohmann::json &cfg, const std::string &file,
                    const char *key, double fallback, double &out) {
  auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null()) {
    out = fallback;
    return Status::ok();
  }
  if (!it->is_number() || !(it->get<double>() > 0) ||
      !std::isfinite(it->get<double>()))
    return makeError(file, ": field \"", key,
                     "\" must be a positive number, got ", it->dump());
  out = it->get<double>();
  return Status::ok();
}

/// An integer GGUF metadata value in [1, kMaxDim], or `fallback` when the
/// key is absent (an error without one); `file` names the file in errors.
Status readGGUFDim(const GGUFFile &g, const std::string &file,
                   const std::string &key, int64_t &out,
                   std::optional<int64_t> fallback) {
  const GGUFValue *v = g.findMetadata(key);
  if (!v) {
    if (fallback) {
      out = *fallback;
      return Status::ok();
    }
    return makeError(file, ": missing metadata ", key);
  }
  std::optional<uint64_t> u = v->asUnsigned();
  if (!u || *u < 1 || *u > uint64_t(kMaxDim))
    return makeError(file, ": metadata ", key, " must be an integer in [1, ",
                     kMaxDim, "]");
  out = static_cast<int64_t>(*u);
  return Status::ok();
}

/// The shapes a decoder config shares with the compiler's model config.
artifact::DecoderConfig decoderShapes(const ModelConfig &c) {
  artifact::DecoderConfig d;
  d.architecture = c.architecture;
  d.hidden = c.hidden;
  d.intermediate = c.intermediate;
  d.layers = c.layers;
  d.heads = c.heads;
  d.kvHeads = c.kvHeads;
  d.vocab = c.vocab;
  d.headDim = c.headDim;
  return d;
}

/// YaRN's frequency divisors, as transformers' _compute_yarn_parameters
/// and ggml's rope_yarn compute them alike: frequency i keeps extrapolation
/// weight e_i = 1 - clamp((i - low) / (high - low)) between the dimensions
/// where `betaFast` and `betaSlow` rotations fit in `original` positions
/// (rounded outward unless `truncate` is false), so its divisor is
/// 1 / ((1 - e_i) / factor + e_i).
std::vector<double> yarnDivisors(const artifact::DecoderConfig &d,
                                 double factor, double original,
                                 double betaFast, double betaSlow,
                                 bool truncate) {
  const double dim = double(d.ropeDim), base = d.ropeBase;
  auto correctionDim = [&](double rotations) {
    return dim * std::log(original / (rotations * 2 * M_PI)) /
           (2 * std::log(base));
  };
  double low = correctionDim(betaFast), high = correctionDim(betaSlow);
  if (truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, dim - 1);
  if (low == high)
    high += 0.001; // as transformers and ggml, against a division by zero
  std::vector<double> factors;
  for (int64_t i = 0; i < d.ropeDim / 2; ++i) {
    const double ramp = std::clamp((double(i) - low) / (high - low), 0.0, 1.0);
    const double extrapolation = 1 - ramp;
    factors.push_back(1.0 / ((1 - extrapolation) / factor + extrapolation));
  }
  return factors;
}

/// YaRN's magnitude scale of cos and sin at `factor`: 0.1 m ln(factor) + 1
/// (transformers' get_mscale, llama.cpp's the same).
double yarnMscale(double factor, double m) {
  return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0;
}

/// YaRN from a config.json rope_scaling: yarnDivisors with its
/// `original_max_position_embeddings` (else the context), `beta_fast` (32),
/// `beta_slow` (1) and `truncate`; and cos and sin scaled by
/// attention_factor (given, or from mscale and mscale_all_dim, else
/// 0.1 ln(factor) + 1).
template <typename Number>
Expected<std::optional<std::vector<double>>>
yarnFactors(const nlohmann::json &s, const std::string &where,
            const artifact::DecoderConfig &d, double &attentionFactor,
            Number &number) {
  double factor = 0, original = 0, betaFast = 0, betaSlow = 0;
  QTENSOR_TRY(number("factor", std::nullopt, factor));
  QTENSOR_TRY(
      number("original_max_position_embeddings", double(d.context), original));
  QTENSOR_TRY(number("beta_fast", 32.0, betaFast));
  QTENSOR_TRY(number("beta_slow", 1.0, betaSlow));
  bool truncate = true;
  if (auto t = s.find("truncate"); t != s.end() && !t->is_null()) {
    if (!t->is_boolean())
      return makeError(where, ".truncate: expected a boolean");
    truncate = t->get<bool>();
  }
  // mscale and mscale_all_dim may be 0 (then unused, as in transformers).
  auto scaleKey = [&](const char *key, double &out) -> Status {
    out = 0;
    auto v = s.find(key);
    if (v == s.end() || v->is_null())
      return Status::ok();
    if (!v->is_number() || !std::isfinite(v->get<double>()) ||
        v->get<double>() < 0 || v->get<double>() > 1e6)
      return makeError(where, ".", key, ": expected a number in [0, 1e6]");
    out = v->get<double>();
    return Status::ok();
  };
  double mscale = 0, mscaleAllDim = 0;
  QTENSOR_TRY(scaleKey("mscale", mscale));
  QTENSOR_TRY(scaleKey("mscale_all_dim", mscaleAllDim));
  if (s.contains("attention_factor") && !s["attention_factor"].is_null())
    QTENSOR_TRY(number("attention_factor", std::nullopt, attentionFactor));
  else if (mscale > 0 && mscaleAllDim > 0)
    attentionFactor =
        yarnMscale(factor, mscale) / yarnMscale(factor, mscaleAllDim);
  else
    attentionFactor = yarnMscale(factor, 1.0);
  return std::optional<std::vector<double>>(
      yarnDivisors(d, factor, original, betaFast, betaSlow, truncate));
}

/// A config.json rope_scaling as llama.cpp's per-frequency divisors (its
/// rope_freqs): "linear" divides every frequency by `factor`; "llama3"
/// divides the low frequencies (wavelength above original / low_freq_factor)
/// by `factor`, keeps the high ones (below original / high_freq_factor)
/// and blends in between, as transformers' _compute_llama3_parameters
/// does; "yarn" as yarnFactors, with `attentionFactor` set; `default`
/// scales nothing. None for any other type (the caller reports the gap).
Expected<std::optional<std::vector<double>>>
ropeScalingFactors(const nlohmann::json &s, const std::string &file,
                   const artifact::DecoderConfig &d, double &attentionFactor) {
  attentionFactor = 1.0;
  const std::string where = file + ": rope_scaling";
  if (!s.is_object())
    return makeError(where, ": expected an object");
  std::string type;
  for (const char *key : {"rope_type", "type"})
    if (auto t = s.find(key); t != s.end() && t->is_string())
      type = t->get<std::string>();
  auto number = [&](const char *key, std::optional<double> fallback,
                    double &out) -> Status {
    auto v = s.find(key);
    if (v == s.end() || v->is_null()) {
      if (!fallback)
        return makeError(where, ": missing number \"", key, "\"");
      out = *fallback;
      return Status::ok();
    }
    if (!v->is_number() || !std::isfinite(v->get<double>()) ||
        !(v->get<double>() > 0) || v->get<double>() > 1e6)
      return makeError(where, ".", key, ": expected a number in (0, 1e6]");
    out = v->get<double>();
    return Status::ok();
  };
  const int64_t half = d.ropeDim / 2;
  double factor = 0;
  if (type == "default") // transformers' plain RoPE: nothing scaled
    return std::optional<std::vector<double>>(std::vector<double>());
  if (type == "linear") {
    QTENSOR_TRY(number("factor", std::nullopt, factor));
    return std::optional<std::vector<double>>(
        std::vector<double>(size_t(half), factor));
  }
  if (type == "yarn")
    return yarnFactors(s, where, d, attentionFactor, number);
  if (type != "llama3")
    return std::optional<std::vector<double>>();
  double low = 0, high = 0, original = 0;
  QTENSOR_TRY(number("factor", std::nullopt, factor));
  QTENSOR_TRY(number("low_freq_factor", std::nullopt, low));
  QTENSOR_TRY(number("high_freq_factor", std::nullopt, high));
  QTENSOR_TRY(
      number("original_max_position_embeddings", std::nullopt, original));
  if (!(high > low))
    return makeError(where, ": high_freq_factor must exceed low_freq_factor");
  const double lowWavelen = original / low, highWavelen = original / high;
  std::vector<double> factors;
  for (int64_t i = 0; i < half; ++i) {
    const double freq =
        std::pow(d.ropeBase, -2.0 * double(i) / double(d.ropeDim));
    const double wavelen = 2 * M_PI / freq;
    double scaled = freq; // high frequencies: unchanged
    if (wavelen > lowWavelen) {
      scaled = freq / factor;
    } else if (wavelen >= highWavelen) {
      const double smooth = (original / wavelen - low) / (high - low);
      scaled = (1 - smooth) * freq / factor + smooth * freq;
    }
    factors.push_back(freq / scaled);
  }
  return std::optional<std::vector<double>>(std::move(factors));
}

/// The MLP gate's activation, `hidden_act` (transformers' ACT2FN names;
/// absent: silu, the default of these families): silu or swish, or
/// gelu_pytorch_tanh (the tanh GELU gemma3 uses). Another is a gap naming
/// it: running SiLU in its place would give another model's logits.
Status hfGateActivation(const nlohmann::json &cfg, const std::string &file,
                        artifact::DecoderConfig &d, std::string &gap,
                        const char *key = "hidden_act") {
  auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null())
    return Status::ok();
  if (!it->is_string())
    return makeError(file, ": field \"", key, "\" must be a string, got ",
                     it->dump());
  const std::string act = it->get<std::string>();
  if (act == "silu" || act == "swish")
    d.gate = artifact::GateActivation::Silu;
  else if (act == "gelu_pytorch_tanh")
    d.gate = artifact::GateActivation::GeluTanh;
  else
    gap = file + " declares " + key + " \"" + act +
          "\"; the decoder program's gates are silu and gelu_pytorch_tanh";
  return Status::ok();
}

/// A config's `layer_types` (transformers 4.53 on), one flag per layer:
/// windowed ("sliding_attention") or global ("full_attention"); none when
/// the config lists none.
Status hfLayerTypes(const nlohmann::json &cfg, const std::string &file,
                    int64_t layers, std::optional<std::vector<bool>> &out) {
  auto types = cfg.find("layer_types");
  if (types == cfg.end() || types->is_null())
    return Status::ok();
  if (!types->is_array() || int64_t(types->size()) != layers)
    return makeError(file, ": field \"layer_types\" must list ", layers,
                     " layers");
  out.emplace();
  for (const nlohmann::json &t : *types) {
    if (t != "sliding_attention" && t != "full_attention")
      return makeError(file, ": layer_types holds ", t.dump(),
                       "; expected \"sliding_attention\" or "
                       "\"full_attention\"");
    out->push_back(t == "sliding_attention");
  }
  return Status::ok();
}

/// A Hugging Face config's sliding-window attention. mistral: every layer
/// attends to the last `sliding_window` positions (Mistral 7B v0.1: 4096
/// of a 32768 context; null or absent: none, as in v0.2 on). qwen2 and
/// qwen3 apply one only with `use_sliding_window` true, to the layers from
/// `max_window_layers` on (transformers' layer_types, which a config may
/// list itself: then those, when they are such a run). llama has none.
Status hfSlidingWindow(const nlohmann::json &cfg, const std::string &file,
                       artifact::DecoderConfig &d, std::string &gap) {
  if (d.architecture == "qwen2" || d.architecture == "qwen3") {
    auto use = cfg.find("use_sliding_window");
    if (use != cfg.end() && !use->is_null() && !use->is_boolean())
      return makeError(file,
                       ": field \"use_sliding_window\" must be a "
                       "boolean, got ",
                       use->dump());
    if (use == cfg.end() || !use->is_boolean() || !use->get<bool>())
      return Status::ok();
    auto window = cfg.find("sliding_window");
    if (window == cfg.end() || window->is_null())
      return Status::ok(); // transformers: no window
    QTENSOR_TRY(readDim(cfg, file, "sliding_window", d.slidingWindow));
    // transformers' Qwen2Config and Qwen3Config default: 28.
    QTENSOR_TRY(
        readDim(cfg, file, "max_window_layers", d.slidingFrom, int64_t(28)));
    std::optional<std::vector<bool>> windowed;
    QTENSOR_TRY(hfLayerTypes(cfg, file, d.layers, windowed));
    if (windowed) {
      const int64_t first =
          std::find(windowed->begin(), windowed->end(), true) -
          windowed->begin();
      for (int64_t l = first; l < d.layers; ++l)
        if (!(*windowed)[size_t(l)]) {
          gap = file + ": layer_types windows layers other than a run to "
                       "the last, which the decoder program cannot spell";
          return Status::ok();
        }
      d.slidingFrom = first;
    }
    if (d.slidingFrom >= d.layers || d.slidingWindow >= d.context) {
      d.slidingWindow = d.slidingFrom = 0; // no layer windowed
      return Status::ok();
    }
    d.slidingPattern = 0; // every layer from slidingFrom on
    d.ropeBaseLocal = d.ropeBase;
    return Status::ok();
  }
  // phi3 (transformers' Phi3 masks by its sliding_window, as mistral does).
  if (d.architecture != "mistral" && d.architecture != "phi3")
    return Status::ok();
  auto it = cfg.find("sliding_window");
  if (it == cfg.end() || it->is_null())
    return Status::ok();
  int64_t window = 0;
  QTENSOR_TRY(readDim(cfg, file, "sliding_window", window));
  if (window >= d.context) // every position is within it
    return Status::ok();
  d.slidingWindow = window;
  d.slidingPattern = 0;         // every layer
  d.ropeBaseLocal = d.ropeBase; // one RoPE base for all layers
  return Status::ok();
}

/// A soft cap of a Hugging Face gemma config: `fallback` when the key is
/// absent (transformers' default), none when it is null.
Status hfSoftcap(const nlohmann::json &cfg, const std::string &file,
                 const char *key, double fallback, double &out) {
  auto it = cfg.find(key);
  if (it != cfg.end() && it->is_null()) {
    out = 0;
    return Status::ok();
  }
  return readPositive(cfg, file, key, fallback, out);
}

/// Which layers of a Hugging Face gemma are windowed: `layer_types` where
/// the config lists them (transformers 4.53 on), else the family's
/// pattern (gemma2: every other layer from layer 0; gemma3: five of six,
/// `sliding_window_pattern`). The program spells a pattern n (layer l
/// windowed when (l + 1) % n != 0), so other lists are a gap.
Status hfGemmaPattern(const nlohmann::json &cfg, const std::string &file,
                      artifact::DecoderConfig &d, std::string &gap) {
  d.slidingPattern = 2;
  if (d.architecture == "gemma3")
    QTENSOR_TRY(readDim(cfg, file, "sliding_window_pattern", d.slidingPattern,
                        int64_t(6)));
  std::optional<std::vector<bool>> listed;
  QTENSOR_TRY(hfLayerTypes(cfg, file, d.layers, listed));
  if (!listed)
    return Status::ok();
  const std::vector<bool> &windowed = *listed;
  auto fits = [&](int64_t n) {
    for (int64_t l = 0; l < d.layers; ++l)
      if (windowed[size_t(l)] != (n == 0 || (l + 1) % n != 0))
        return false;
    return true;
  };
  if (std::find(windowed.begin(), windowed.end(), true) == windowed.end()) {
    d.slidingWindow = 0; // every layer global
    return Status::ok();
  }
  for (int64_t n : {d.slidingPattern, int64_t(0)})
    if (fits(n)) {
      d.slidingPattern = n;
      return Status::ok();
    }
  for (int64_t n = 2; n <= d.layers + 1; ++n)
    if (fits(n)) {
      d.slidingPattern = n;
      return Status::ok();
    }
  gap = file + ": layer_types windows layers in an order the decoder "
               "program cannot spell (every n-th layer global)";
  return Status::ok();
}

/// transformers' Gemma, Gemma2 and Gemma3 (text) forward: embeddings x
/// sqrt(hidden), RMSNorm by 1 + w (the checkpoint stores w - 1), GeGLU
/// with hidden_activation; gemma2 and gemma3 then q.k scaled by
/// query_pre_attn_scalar^-1/2, the output norms, windowed layers (gemma3's
/// with their own RoPE base, rope_local_base_freq, never scaled) and the
/// soft caps.
Status hfGemma(const nlohmann::json &cfg, const std::string &file,
               artifact::DecoderConfig &d, std::string &gap) {
  const bool gemma3 = d.architecture == "gemma3";
  d.embedScale = std::sqrt(double(d.hidden));
  d.normWeightOffset = 1.0;
  // The tanh GELU unless hidden_activation says otherwise (transformers
  // ignores Gemma 1 configs' hidden_act "gelu").
  d.gate = artifact::GateActivation::GeluTanh;
  QTENSOR_TRY(hfGateActivation(cfg, file, d, gap, "hidden_activation"));
  if (d.architecture == "gemma") // q.k by 1/sqrt(head_dim); no windows, caps
    return Status::ok();
  double scalar = 0;
  QTENSOR_TRY(readPositive(cfg, file, "query_pre_attn_scalar", 256.0, scalar));
  d.attentionScale = 1.0 / std::sqrt(scalar);
  QTENSOR_TRY(hfSoftcap(cfg, file, "attn_logit_softcapping",
                        gemma3 ? 0.0 : 50.0, d.attnSoftcap));
  QTENSOR_TRY(hfSoftcap(cfg, file, "final_logit_softcapping",
                        gemma3 ? 0.0 : 30.0, d.finalSoftcap));
  d.slidingWindow = 4096;
  if (auto it = cfg.find("sliding_window"); it != cfg.end() && !it->is_null())
    QTENSOR_TRY(readDim(cfg, file, "sliding_window", d.slidingWindow));
  d.ropeBaseLocal = d.ropeBase;
  if (gemma3) {
    QTENSOR_TRY(readPositive(cfg, file, "rope_local_base_freq", 10000.0,
                             d.ropeBaseLocal));
    d.ropeScalesLocal = false;
  }
  return hfGemmaPattern(cfg, file, d, gap);
}

/// The dimensions of a head RoPE rotates: all, or the first
/// partial_rotary_factor of them (phi3's Phi-4-mini: 0.75), as
/// transformers' rotary_ndims = int(head_dim * factor).
Status hfRotaryDims(const nlohmann::json &cfg, const std::string &file,
                    artifact::DecoderConfig &d) {
  double factor = 1.0;
  QTENSOR_TRY(readPositive(cfg, file, "partial_rotary_factor", 1.0, factor));
  if (factor > 1.0)
    return makeError(file, ": partial_rotary_factor must be in (0, 1], got ",
                     factor);
  d.ropeDim = int64_t(double(d.headDim) * factor);
  if (d.ropeDim < 2 || d.ropeDim % 2)
    return makeError(file, ": partial_rotary_factor ", factor, " of head_dim ",
                     d.headDim, " rotates ", d.ropeDim,
                     " dimensions; RoPE needs an even number");
  return Status::ok();
}

bool isLongRope(const nlohmann::json &s) {
  if (!s.is_object())
    return false;
  for (const char *key : {"rope_type", "type"})
    if (auto t = s.find(key); t != s.end() && *t == "longrope")
      return true;
  return false;
}

/// transformers' longrope (_compute_longrope_parameters, phi3's 128k
/// models): short_factor and long_factor divide the frequencies, the long
/// ones for a sequence beyond original_max_position_embeddings; cos and
/// sin scale by attention_factor, else by sqrt(1 + ln(f) / ln(original))
/// with f = max_position_embeddings / original (1 when f <= 1).
Status hfLongRope(const nlohmann::json &cfg, const nlohmann::json &s,
                  const std::string &file, artifact::DecoderConfig &d) {
  const std::string where = file + ": rope_scaling";
  auto factors = [&](const char *key, std::vector<double> &out) -> Status {
    auto v = s.find(key);
    if (v == s.end() || !v->is_array() || v->size() != size_t(d.ropeDim / 2))
      return makeError(where, ".", key, ": expected ", d.ropeDim / 2,
                       " numbers (rotated dimensions / 2)");
    for (const nlohmann::json &x : *v) {
      if (!x.is_number() || !(x.get<double>() > 0))
        return makeError(where, ".", key, ": expected positive numbers");
      out.push_back(x.get<double>());
    }
    return Status::ok();
  };
  QTENSOR_TRY(factors("short_factor", d.ropeFreqFactors));
  QTENSOR_TRY(factors("long_factor", d.ropeFreqFactorsLong));
  const bool topLevel = cfg.contains("original_max_position_embeddings");
  const nlohmann::json &from = topLevel ? cfg : s;
  if (!from.contains("original_max_position_embeddings"))
    return makeError(where, ": longrope needs "
                            "original_max_position_embeddings");
  QTENSOR_TRY(
      readDim(from, file, "original_max_position_embeddings", d.ropeLongFrom));
  double factor = double(d.context) / double(d.ropeLongFrom);
  if (!topLevel && s.contains("factor"))
    QTENSOR_TRY(readPositive(s, where, "factor", factor, factor));
  double attention =
      factor <= 1.0 ? 1.0
                    : std::sqrt(1.0 + std::log(factor) /
                                          std::log(double(d.ropeLongFrom)));
  QTENSOR_TRY(readPositive(s, where, "attention_factor", attention, attention));
  d.ropeMscale = attention; // on cos and sin: the rotated dimensions only
  return Status::ok();
}

/// granite's four multipliers (transformers' GraniteConfig, whose defaults
/// are 1): the embeddings, each residual branch, q.k (it replaces
/// 1/sqrt(head dim); a YaRN factor already folded in stays) and the logits'
/// divisor.
Status hfGranite(const nlohmann::json &cfg, const std::string &file,
                 artifact::DecoderConfig &d) {
  double attention = 1.0;
  QTENSOR_TRY(
      readPositive(cfg, file, "embedding_multiplier", 1.0, d.embedScale));
  QTENSOR_TRY(
      readPositive(cfg, file, "residual_multiplier", 1.0, d.residualScale));
  QTENSOR_TRY(readPositive(cfg, file, "attention_multiplier", 1.0, attention));
  QTENSOR_TRY(readPositive(cfg, file, "logits_scaling", 1.0, d.logitScale));
  d.attentionScale =
      attention * (d.attentionScale > 0
                       ? d.attentionScale * std::sqrt(double(d.headDim))
                       : 1.0);
  return Status::ok();
}

/// The decoder of a Hugging Face config.json (llama, mistral, qwen2, qwen3: the
/// NeoX RoPE pairing, the head dim hidden/heads unless head_dim says
/// otherwise). A declared RoPE scaling is a gap, not an error: the linears
/// still compile.
Status hfDecoder(const nlohmann::json &cfg, const std::string &file,
                 const ModelConfig &c,
                 std::optional<artifact::DecoderConfig> &out,
                 std::string &gap) {
  artifact::DecoderConfig d = decoderShapes(c);
  QTENSOR_TRY(
      readDim(cfg, file, "max_position_embeddings", d.context, int64_t(2048)));
  QTENSOR_TRY(readPositive(cfg, file, "rms_norm_eps", 1e-6, d.rmsEps));
  QTENSOR_TRY(readPositive(cfg, file, "rope_theta", 10000.0, d.ropeBase));
  QTENSOR_TRY(hfRotaryDims(cfg, file, d));
  d.rope = artifact::RopeStyle::Half;
  if (auto it = cfg.find("rope_scaling"); it != cfg.end() && isLongRope(*it)) {
    QTENSOR_TRY(hfLongRope(cfg, *it, file, d));
  } else if (it != cfg.end() && !it->is_null()) {
    double attentionFactor = 1.0;
    QTENSOR_ASSIGN_OR_RETURN(std::optional<std::vector<double>> factors,
                             ropeScalingFactors(*it, file, d, attentionFactor));
    if (!factors) {
      gap = file + " declares rope_scaling " + it->dump() +
            ", which the decoder program does not implement yet (linear, "
            "llama3 and yarn are)";
      return Status::ok();
    }
    d.ropeFreqFactors = std::move(*factors);
    // YaRN scales cos and sin, so q and k: their product by its square
    // when RoPE rotates whole heads, else the rotated dimensions only.
    if (attentionFactor != 1.0 && d.ropeDim == d.headDim)
      d.attentionScale =
          attentionFactor * attentionFactor / std::sqrt(double(d.headDim));
    else if (attentionFactor != 1.0)
      d.ropeMscale = attentionFactor;
  }
  const models::Family family =
      models::findArchitecture(d.architecture)->family;
  if (family == models::Family::Granite)
    QTENSOR_TRY(hfGranite(cfg, file, d));
  if (models::isGemma(family)) {
    QTENSOR_TRY(hfGemma(cfg, file, d, gap));
  } else {
    QTENSOR_TRY(hfGateActivation(cfg, file, d, gap));
    if (gap.empty())
      QTENSOR_TRY(hfSlidingWindow(cfg, file, d, gap));
  }
  if (!gap.empty())
    return Status::ok();
  QTENSOR_TRY(artifact::validateDecoderConfig(d, file));
  out = d;
  return Status::ok();
}

/// A GGUF `rope.scaling.type yarn` as current llama.cpp runs it
/// (llama_context's yarn_attn_factor with ggml's rope_yarn): the YaRN
/// divisors of `rope.scaling.factor` over `original_context_length` (else
/// the context) between `yarn_beta_fast` (32) and `yarn_beta_slow` (1),
/// truncated, times any rope_freqs divisors already in `factors`; cos and
/// sin scaled by 0.1 ln(factor) + 1, or by its ratio to the same with
/// `yarn_log_multiplier` as mscale_all_dim where that is not 0, on top of
/// `attentionFactor`. A `yarn_ext_factor` other than 1 (a partial blend) is
/// a gap.
Status ggufYarn(const GGUFFile &g, const std::string &file,
                const std::string &arch, const artifact::DecoderConfig &d,
                std::vector<double> &factors, double &attentionFactor,
                std::string &gap) {
  // A beta or the factor must be positive; the others may be 0.
  auto number = [&](const std::string &key, double fallback, bool positive,
                    double &v) -> Status {
    v = fallback;
    const GGUFValue *value = g.findMetadata(arch + key);
    if (!value)
      return Status::ok();
    std::optional<double> x = value->asDouble();
    if (!x || !std::isfinite(*x) || *x < 0 || (positive && *x == 0) || *x > 1e6)
      return makeError(file, ": metadata ", arch, key, " must be a ",
                       positive ? "positive " : "non-negative ",
                       "FLOAT32 or FLOAT64 up to 1e6");
    v = *x;
    return Status::ok();
  };
  double factor = 0, betaFast = 0, betaSlow = 0, ext = 0, logMul = 0;
  QTENSOR_TRY(number("rope.scaling.factor", 0.0, true, factor));
  if (!g.findMetadata(arch + "rope.scaling.factor"))
    return makeError(file, ": metadata ", arch,
                     "rope.scaling.factor is missing; yarn needs it");
  int64_t original = 0;
  QTENSOR_TRY(readGGUFDim(g, file,
                          arch + "rope.scaling.original_context_length",
                          original, d.context));
  QTENSOR_TRY(number("rope.scaling.yarn_beta_fast", 32.0, true, betaFast));
  QTENSOR_TRY(number("rope.scaling.yarn_beta_slow", 1.0, true, betaSlow));
  QTENSOR_TRY(number("rope.scaling.yarn_ext_factor", 1.0, false, ext));
  QTENSOR_TRY(number("rope.scaling.yarn_log_multiplier", 0.0, false, logMul));
  if (ext != 1.0) {
    gap = file + " declares " + arch + "rope.scaling.yarn_ext_factor " +
          std::to_string(ext) +
          "; the decoder program implements YaRN's full blend (1) only";
    return Status::ok();
  }
  std::vector<double> yarn =
      yarnDivisors(d, factor, double(original), betaFast, betaSlow, true);
  if (factors.empty())
    factors.assign(yarn.size(), 1.0);
  for (size_t i = 0; i < yarn.size(); ++i)
    factors[i] *= yarn[i];
  attentionFactor *= logMul != 0
                         ? yarnMscale(factor, 1.0) / yarnMscale(factor, logMul)
                         : yarnMscale(factor, 1.0);
  return Status::ok();
}

/// The decoder of a GGUF llama, qwen2, qwen3 or gemma3 file: `<arch>.*`
/// hyperparameters with llama.cpp's defaults where a key may be absent;
/// llama: ggml's normal RoPE pairing (the converter permuted q and k for
/// it); qwen2, qwen3, gemma3: NeoX.
Status ggufDecoder(const GGUFFile &g, const std::string &file,
                   const ModelConfig &c,
                   std::optional<artifact::DecoderConfig> &out,
                   std::string &gap) {
  artifact::DecoderConfig d = decoderShapes(c);
  const std::string arch = c.architecture + ".";
  auto integer = [&](const std::string &key, int64_t fallback,
                     int64_t &v) -> Status {
    return readGGUFDim(g, file, arch + key, v, fallback);
  };
  auto real = [&](const std::string &key, double fallback,
                  double &v) -> Status {
    const GGUFValue *value = g.findMetadata(arch + key);
    if (!value) {
      v = fallback;
      return Status::ok();
    }
    std::optional<double> x = value->asDouble();
    if (!x || !(*x > 0) || !std::isfinite(*x))
      return makeError(file, ": metadata ", arch, key,
                       " must be a positive FLOAT32 or FLOAT64");
    v = *x;
    return Status::ok();
  };
  int64_t valueLength = 0;
  QTENSOR_TRY(integer("attention.value_length", d.headDim, valueLength));
  if (valueLength != d.headDim) {
    gap = file + ": attention.value_length " + std::to_string(valueLength) +
          " differs from key_length " + std::to_string(d.headDim) +
          "; the decoder program needs them equal";
    return Status::ok();
  }
  QTENSOR_TRY(integer("context_length", 2048, d.context));
  QTENSOR_TRY(integer("rope.dimension_count", d.headDim, d.ropeDim));
  QTENSOR_TRY(real("attention.layer_norm_rms_epsilon", 1e-5, d.rmsEps));
  QTENSOR_TRY(real("rope.freq_base", 10000.0, d.ropeBase));
  // As llama.cpp's graph for the architecture applies RoPE.
  const models::Architecture &family =
      *models::findArchitecture(c.architecture);
  d.rope = family.ggufRotatesHalves ? artifact::RopeStyle::Half
                                    : artifact::RopeStyle::Interleaved;
  if (family.family == models::Family::Phi3) {
    // llama.cpp's phi3 graph: llama's block (its projections fused in the
    // file, split by the reader) with NeoX RoPE. It ignores
    // attention.sliding_window (its phi3 SWA is disabled), and so does the
    // program. LongRoPE (below) comes as rope_factors_long/short.
  }
  if (models::isGemma(family.family)) {
    // Both of llama.cpp's gemma graphs: embeddings x sqrt(hidden), GeGLU,
    // q.k scaled by shape (ggufGemmaQueryScale); the norms' +1 is in the
    // file.
    d.embedScale = std::sqrt(double(d.hidden));
    d.attentionScale = models::ggufGemmaQueryScale(
        family.family, d.layers, d.hidden, d.heads, d.headDim);
    d.gate = artifact::GateActivation::GeluTanh;
  }
  if (family.family == models::Family::Gemma2) {
    // gemma2: one RoPE base, every other layer windowed (from layer 0),
    // the attention scores and the logits soft-capped (defaults 50 and 30
    // when the keys are absent).
    QTENSOR_TRY(integer("attention.sliding_window", 4096, d.slidingWindow));
    d.slidingPattern = 2;
    d.ropeBaseLocal = d.ropeBase;
    QTENSOR_TRY(real("attn_logit_softcapping", 50.0, d.attnSoftcap));
    QTENSOR_TRY(real("final_logit_softcapping", 30.0, d.finalSoftcap));
  }
  if (family.family == models::Family::Gemma3) {
    // gemma3: five sliding-window layers (RoPE base 10000, never scaled:
    // llama.cpp's rope_freq_scale_train_swa is 1) for each global one, the
    // logits soft-capped when final_logit_softcapping says.
    QTENSOR_TRY(integer("attention.sliding_window", 0, d.slidingWindow));
    d.slidingPattern = d.slidingWindow ? 6 : 0;
    d.ropeBaseLocal = 10000.0;
    d.ropeScalesLocal = false;
    if (g.findMetadata(arch + "final_logit_softcapping"))
      QTENSOR_TRY(real("final_logit_softcapping", 0.0, d.finalSoftcap));
    if (g.findMetadata(arch + "attn_logit_softcapping")) {
      gap = file + " declares attn_logit_softcapping, which llama.cpp's "
                   "gemma3 graph does not apply; the decoder program will "
                   "not guess";
      return Status::ok();
    }
  }
  if (family.family == models::Family::Granite) {
    // llama.cpp's granite graph: embeddings, each residual branch and the
    // logits (by 1 / logit_scale) scaled, q.k by attention.scale; a key
    // absent leaves its step out (1/sqrt(head dim) for q.k), but
    // logit_scale, which llama.cpp requires.
    double embedding = 0, residual = 0, attention = 0;
    QTENSOR_TRY(real("embedding_scale", 0.0, embedding));
    QTENSOR_TRY(real("residual_scale", 0.0, residual));
    QTENSOR_TRY(real("attention.scale", 0.0, attention));
    if (!g.findMetadata(arch + "logit_scale"))
      return makeError(file, ": granite without ", arch,
                       "logit_scale (llama.cpp requires it)");
    QTENSOR_TRY(real("logit_scale", 1.0, d.logitScale));
    if (embedding != 0)
      d.embedScale = embedding;
    if (residual != 0)
      d.residualScale = residual;
    d.attentionScale = attention;
  }
  // RoPE scaling as llama.cpp applies it: rope_freqs.weight divides each
  // frequency (llama3), rope.scaling.type linear divides them all, yarn
  // blends (ggufYarn); rope.scaling.attn_factor scales cos and sin
  // whatever the type.
  std::vector<double> factors;
  double attentionFactor = 1.0;
  QTENSOR_TRY(real("rope.scaling.attn_factor", 1.0, attentionFactor));
  auto divisors = [&](const char *name,
                      std::vector<double> &out) -> Expected<bool> {
    const GGUFTensorInfo *t = g.findTensor(name);
    if (!t)
      return false;
    if (t->ne.size() != 1 || t->ne[0] != d.ropeDim / 2)
      return makeError(file, ": ", name,
                       " must hold rope_dim / 2 = ", d.ropeDim / 2, " values");
    QTENSOR_ASSIGN_OR_RETURN(std::vector<float> f, g.decode(*t));
    out.assign(f.begin(), f.end());
    return true;
  };
  QTENSOR_ASSIGN_OR_RETURN(bool hasFreqs,
                           divisors("rope_freqs.weight", factors));
  // LongRoPE (phi3's 128k models): llama.cpp rotates with the long
  // divisors when its context exceeds original_context_length, the
  // program when a forward's positions do (transformers' rule; the same
  // for every run of at most that many positions).
  std::vector<double> shortFactors;
  QTENSOR_ASSIGN_OR_RETURN(bool hasLong, divisors("rope_factors_long.weight",
                                                  d.ropeFreqFactorsLong));
  QTENSOR_ASSIGN_OR_RETURN(bool hasShort,
                           divisors("rope_factors_short.weight", shortFactors));
  if (hasLong != hasShort || (hasLong && hasFreqs))
    return makeError(file, ": LongRoPE needs both rope_factors_long and "
                           "rope_factors_short, and no rope_freqs");
  if (hasLong) {
    factors = shortFactors;
    QTENSOR_TRY(readGGUFDim(g, file,
                            arch + "rope.scaling.original_context_length",
                            d.ropeLongFrom, d.context));
  }
  if (const GGUFValue *s = g.findMetadata(arch + "rope.scaling.type")) {
    auto type = s->get<std::string_view>();
    if (type && *type == "linear") {
      double factor = 0;
      QTENSOR_TRY(real("rope.scaling.factor", 0.0, factor));
      if (!(factor > 0))
        return makeError(file, ": metadata ", arch,
                         "rope.scaling.factor must be positive");
      if (factors.empty())
        factors.assign(size_t(d.ropeDim / 2), 1.0);
      for (double &f : factors)
        f *= factor;
    } else if (type && *type == "yarn") {
      QTENSOR_TRY(ggufYarn(g, file, arch, d, factors, attentionFactor, gap));
      if (!gap.empty())
        return Status::ok();
    } else if (!type || *type != "none") {
      gap = file + " declares " + arch +
            "rope.scaling.type, which the decoder program does not "
            "implement yet (linear and yarn are)";
      return Status::ok();
    }
  }
  d.ropeFreqFactors = std::move(factors);
  // The factor scales cos and sin: q and k's rotated dimensions, so their
  // product by its square when RoPE rotates whole heads (as the program
  // has always said it), else on cos and sin themselves.
  if (attentionFactor != 1.0 && d.ropeDim == d.headDim)
    d.attentionScale = attentionFactor * attentionFactor * d.qkScale();
  else if (attentionFactor != 1.0)
    d.ropeMscale = attentionFactor;
  QTENSOR_TRY(artifact::validateDecoderConfig(d, file));
  out = d;
  return Status::ok();
}

/// The block linears, with their expected [N, K].
struct RoleShape {
  models::BlockLinear linear;
  int64_t n, k;
  std::string role() const { return std::string(models::roleName(linear)); }
};
std::vector<RoleShape> roleShapes(const ModelConfig &c) {
  using models::BlockLinear;
  return {{BlockLinear::Q, c.qWidth(), c.hidden},
          {BlockLinear::K, c.kvWidth(), c.hidden},
          {BlockLinear::V, c.kvWidth(), c.hidden},
          {BlockLinear::O, c.hidden, c.qWidth()},
          {BlockLinear::Gate, c.intermediate, c.hidden},
          {BlockLinear::Up, c.intermediate, c.hidden},
          {BlockLinear::Down, c.hidden, c.intermediate}};
}

/// The codes a packed tensor stores, for the selection's kernel check.
const AffineDescriptor *storedCodes(const SourceTensor &t) {
  return t.packed ? &t.packed->descriptor.descriptor : nullptr;
}

} // namespace

std::string detail::shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Expected<std::string> detail::digestFiles(const std::vector<std::string> &paths,
                                          const std::atomic<bool> *cancel) {
  std::string lines;
  for (const std::string &path : paths) {
    QTENSOR_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
    QTENSOR_ASSIGN_OR_RETURN(Sha256Stream sha, Sha256Stream::create());
    // 8 MiB at a time, each chunk's pages given back once hashed.
    constexpr size_t kChunk = size_t(8) << 20;
    for (size_t at = 0; at < file.size(); at += kChunk) {
      if (cancel && cancel->load(std::memory_order_relaxed))
        return makeError(path, ": hashing cancelled");
      const size_t n = std::min(kChunk, file.size() - at);
      QTENSOR_TRY(sha.update(file.data() + at, n));
      releaseMappedPages(file.data() + at, n);
    }
    QTENSOR_ASSIGN_OR_RETURN(std::string hex, sha.finishHex());
    std::string base = path.substr(path.find_last_of('/') + 1);
    lines += base + " " + hex + "\n";
  }
  return sha256Hex(reinterpret_cast<const uint8_t *>(lines.data()),
                   lines.size());
}

safetensors::DType Checkpoint::storedPlainDType(const SourceTensor &t) {
  return t.view && safetensors::isFloatDType(t.view->dtype)
             ? t.view->dtype
             : safetensors::DType::F32;
}

Expected<std::vector<float>>
Checkpoint::readFloat(const SourceTensor &t) const {
  if (t.view)
    return safetensors::toFloat32(*t.view);
  if (t.packed) {
    const PackedSource &p = *t.packed;
    QTENSOR_ASSIGN_OR_RETURN(hfquant::LogicalParts parts, p.unpack());
    std::vector<double> scales(parts.scales.begin(), parts.scales.end());
    std::vector<double> zeros(parts.zeros.begin(), parts.zeros.end());
    QTENSOR_ASSIGN_OR_RETURN(
        std::vector<double> values,
        reconstructAffine(p.descriptor, parts.codes, scales, zeros));
    return std::vector<float>(values.begin(), values.end());
  }
  if (t.gguf)
    return ggufFile->decode(*t.gguf);
  return makeError(t.name, ": no data");
}

void Checkpoint::releaseSource(const SourceTensor &t) const {
  // Every view points into a mapping this Checkpoint opened from a path
  // (never a caller's buffer, where the advice would discard data).
  if (t.view)
    releaseMappedPages(t.view->data, t.view->byteSize());
  else if (t.packed)
    t.packed->release();
  else if (t.gguf)
    releaseMappedPages(t.gguf->data, t.gguf->byteSize);
}

Status Checkpoint::listSafetensors(const std::string &file, bool isIndex,
                                   std::vector<SourceTensor> &all) {
  std::vector<const safetensors::TensorView *> views;
  if (isIndex) {
    QTENSOR_ASSIGN_OR_RETURN(safetensors::SafetensorsIndex idx,
                             safetensors::SafetensorsIndex::open(file));
    index = std::make_shared<safetensors::SafetensorsIndex>(std::move(idx));
    inputs.push_back(file);
    std::string dir = file.substr(0, file.find_last_of('/') + 1);
    for (const std::string &shard : index->shardNames())
      inputs.push_back(dir + shard);
    for (const auto &[name, shard] : index->weightMap())
      views.push_back(index->find(name));
  } else {
    QTENSOR_ASSIGN_OR_RETURN(safetensors::SafetensorsFile f,
                             safetensors::SafetensorsFile::open(file));
    single = std::make_shared<safetensors::SafetensorsFile>(std::move(f));
    inputs.push_back(file);
    for (const auto &view : single->tensors())
      views.push_back(&view);
  }
  for (const safetensors::TensorView *view : views) {
    if (!view)
      return makeError(file, ": a weight_map entry has no tensor");
    SourceTensor t;
    t.name = view->name;
    t.view = view;
    t.shape = view->shape;
    t.dtype = std::string(safetensors::dtypeName(view->dtype));
    all.push_back(std::move(t));
  }
  return Status::ok();
}

Status Checkpoint::listPacked(const hfquant::QuantizationConfig &config,
                              const std::string &configPath,
                              std::vector<SourceTensor> &all,
                              std::vector<bool> &components) {
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < all.size(); ++i)
    byName[all[i].name] = i;
  components.assign(all.size(), false);
  auto component =
      [&](const std::string &module,
          const std::string &suffix) -> const safetensors::TensorView * {
    auto it =
        suffix.empty() ? byName.end() : byName.find(module + "." + suffix);
    if (it == byName.end())
      return nullptr;
    components[it->second] = true;
    return all[it->second].view;
  };
  struct Module {
    std::string name;
    int64_t n, k;
  };
  std::vector<Module> modules;
  for (int64_t layer = 0; layer < cfg.layers; ++layer)
    for (const RoleShape &rs : roleShapes(cfg)) {
      std::string name = models::linearWeightName(models::Naming::HuggingFace,
                                                  layer, rs.linear);
      modules.push_back({name.substr(0, name.size() - 7), rs.n, rs.k});
    }
  modules.push_back({"lm_head", cfg.vocab, cfg.hidden});
  for (const Module &m : modules) {
    QTENSOR_ASSIGN_OR_RETURN(std::optional<hfquant::WeightScheme> scheme,
                             config.schemeFor(m.name));
    bool stored = false;
    for (const char *codes : {"qweight", "weight_packed"})
      stored |= byName.count(m.name + "." + codes) != 0;
    // FP8 codes sit in `weight` itself; its dtype and a weight_scale (or
    // weight_scale_inv) say so (read as plain floats, they would lose the
    // scale).
    auto weight = byName.find(m.name + ".weight");
    const bool fp8Weight =
        weight != byName.end() &&
        (all[weight->second].view->dtype == safetensors::DType::F8_E4M3 ||
         all[weight->second].view->dtype == safetensors::DType::F8_E5M2);
    stored |= fp8Weight && (byName.count(m.name + ".weight_scale") != 0 ||
                            byName.count(m.name + ".weight_scale_inv") != 0);
    if (!scheme) {
      if (stored)
        return makeError(configPath, ": ", m.name,
                         " stores quantized codes, but its "
                         "quantization_config does not quantize it");
      continue;
    }
    hfquant::ComponentNames names = hfquant::componentNames(*scheme);
    // A head the config would cover but that is stored in float (or tied)
    // stays what it is; a block linear without its codes is an error
    // (describe names the missing tensor).
    bool floatWeight =
        weight != byName.end() && !fp8Weight &&
        safetensors::isFloatDType(all[weight->second].view->dtype);
    if (m.name == "lm_head" && !stored &&
        (floatWeight || weight == byName.end()))
      continue;
    if (stored && floatWeight)
      return makeError(configPath, ": ", m.name, " stores both ", m.name,
                       ".weight and ", m.name, ".", names.codes);
    auto source = std::make_shared<PackedSource>();
    source->module = m.name;
    hfquant::PackedTensors tensors = {
        component(m.name, names.codes),  component(m.name, names.zeros),
        component(m.name, names.scales), component(m.name, names.groupIndex),
        component(m.name, names.shape),  component(m.name, names.globalScale)};
    component(m.name, names.unused); // consumed, deliberately unread
    QTENSOR_ASSIGN_OR_RETURN(
        source->descriptor,
        hfquant::describe(*scheme, tensors, m.n, m.k, m.name));
    source->unpack = [scheme = *scheme, tensors, source = source.get()] {
      return hfquant::unpack(scheme, tensors, source->descriptor,
                             source->module);
    };
    source->release = [tensors] {
      // Views into this Checkpoint's mappings, opened from paths.
      for (const safetensors::TensorView *v :
           {tensors.codes, tensors.zeros, tensors.scales, tensors.groupIndex,
            tensors.globalScale})
        if (v)
          releaseMappedPages(v->data, v->byteSize());
    };
    SourceTensor t;
    t.name = m.name + ".weight";
    t.packed = source.get();
    t.shape = {m.n, m.k};
    t.dtype = hfquant::storedTypeName(*scheme);
    packedSources.push_back(std::move(source));
    all.push_back(std::move(t));
  }
  components.resize(all.size(), false);
  return Status::ok();
}

Status Checkpoint::listGGUF(const std::string &file,
                            std::vector<SourceTensor> &all) {
  QTENSOR_ASSIGN_OR_RETURN(GGUFFile f, GGUFFile::open(file));
  ggufFile = std::make_shared<GGUFFile>(std::move(f));
  inputs.push_back(file);
  for (const GGUFTensorInfo &info : ggufFile->tensors()) {
    SourceTensor t;
    t.name = std::string(info.name);
    t.gguf = &info;
    t.shape.assign(info.ne.rbegin(), info.ne.rend());
    t.dtype = std::string(ggmlTypeName(info.type));
    all.push_back(std::move(t));
  }
  return Status::ok();
}

Expected<Checkpoint> Checkpoint::open(const std::string &path,
                                      WeightSelection &selection) {
  Checkpoint cp;
  std::vector<SourceTensor> all;
  std::vector<bool> components; // stored tensors of packed linears
  std::map<std::string, size_t> byName;

  if (isDirectory(path)) {
    cp.kind = "safetensors";
    std::string configPath = path + "/config.json";
    QTENSOR_ASSIGN_OR_RETURN(
        nlohmann::json top,
        readStrictJsonFile(configPath, kMaxConfigBytes, kMaxConfigDepth));
    if (!top.is_object())
      return makeError(configPath, ": not a JSON object");
    auto type = top.find("model_type");
    if (type == top.end() || !type->is_string())
      return makeError(configPath, ": missing string field \"model_type\"");
    cp.cfg.architecture = type->get<std::string>();
    // Gemma3ForCausalLM's config (the 270M and 1B models) says
    // gemma3_text; a "gemma3" config is the vision-language model, whose
    // language model's config is its text_config (VisionLanguage.cpp).
    // Both rely on transformers' defaults for the keys they leave out.
    const bool visionLanguage = cp.cfg.architecture == "gemma3";
    if (visionLanguage) {
      auto text = top.find("text_config");
      if (text == top.end() || !text->is_object())
        return makeError(configPath,
                         ": a gemma3 config (Gemma3ForConditionalGeneration) "
                         "needs a text_config object");
    }
    if (cp.cfg.architecture == "gemma3_text")
      cp.cfg.architecture = "gemma3";
    nlohmann::json cfg = visionLanguage ? top["text_config"] : top;
    QTENSOR_TRY(detail::spellRopeParameters(
        cfg, visionLanguage ? configPath + " text_config" : configPath));
    if (cp.cfg.architecture == "gemma3")
      cfg = detail::gemma3TextDefaults(cfg);
    if (!models::architectureFromCheckpoint(models::Naming::HuggingFace,
                                            cp.cfg.architecture))
      return makeError(
          configPath, ": model_type \"", cp.cfg.architecture,
          "\" is not supported (",
          models::checkpointArchitectureList(models::Naming::HuggingFace), ")");
    // Errors about the language model's config name where it is.
    const std::string where =
        visionLanguage ? configPath + " text_config" : configPath;
    QTENSOR_TRY(readDim(cfg, where, "hidden_size", cp.cfg.hidden));
    QTENSOR_TRY(readDim(cfg, where, "intermediate_size", cp.cfg.intermediate));
    QTENSOR_TRY(readDim(cfg, where, "num_hidden_layers", cp.cfg.layers));
    QTENSOR_TRY(readDim(cfg, where, "num_attention_heads", cp.cfg.heads));
    QTENSOR_TRY(readDim(cfg, where, "num_key_value_heads", cp.cfg.kvHeads,
                        cp.cfg.heads));
    QTENSOR_TRY(readDim(cfg, where, "vocab_size", cp.cfg.vocab));
    QTENSOR_TRY(readDim(cfg, where, "head_dim", cp.cfg.headDim, int64_t(0)));
    QTENSOR_TRY(checkConfig(cp.cfg, where));
    // Transformers' default is an untied head, but a tied one for gemma.
    cp.cfg.tiedHead =
        models::isGemma(models::findArchitecture(cp.cfg.architecture)->family);
    if (auto t = cfg.find("tie_word_embeddings"); t != cfg.end()) {
      if (!t->is_boolean())
        return makeError(where,
                         ": field \"tie_word_embeddings\" must "
                         "be true or false, got ",
                         t->dump());
      cp.cfg.tiedHead = t->get<bool>();
    }
    if (auto n = top.find("_name_or_path"); n != top.end() && n->is_string())
      cp.cfg.name = n->get<std::string>();
    if (cp.cfg.name.empty())
      cp.cfg.name = path.substr(path.find_last_of('/') + 1);
    cp.noDecoder.clear();
    QTENSOR_TRY(hfDecoder(cfg, where, cp.cfg, cp.dec, cp.noDecoder));

    cp.inputs.push_back(configPath);
    std::string indexPath = path + "/model.safetensors.index.json";
    std::string singlePath = path + "/model.safetensors";
    if (exists(indexPath))
      QTENSOR_TRY(cp.listSafetensors(indexPath, /*isIndex=*/true, all));
    else if (exists(singlePath))
      QTENSOR_TRY(cp.listSafetensors(singlePath, /*isIndex=*/false, all));
    else
      return makeError(path, ": neither model.safetensors nor "
                             "model.safetensors.index.json exists");
    if (visionLanguage)
      QTENSOR_TRY(cp.takeLanguageModel(path, all));
    QTENSOR_TRY(cp.splitFusedProjections(path, all));
    if (auto q = top.find("quantization_config");
        q != top.end() && !q->is_null()) {
      QTENSOR_ASSIGN_OR_RETURN(
          hfquant::QuantizationConfig quant,
          hfquant::parseQuantizationConfig(*q, configPath));
      QTENSOR_TRY(cp.listPacked(quant, configPath, all, components));
      cp.quantText = quant.text;
    }
  } else {
    cp.kind = "gguf";
    QTENSOR_TRY(cp.listGGUF(path, all));
    const GGUFFile &g = *cp.ggufFile;
    auto str = [&](const char *key) -> std::string {
      const GGUFValue *v = g.findMetadata(key);
      auto s = v ? v->get<std::string_view>() : std::nullopt;
      return s ? std::string(*s) : std::string();
    };
    cp.cfg.architecture = str("general.architecture");
    if (!models::architectureFromCheckpoint(models::Naming::GGUF,
                                            cp.cfg.architecture))
      return makeError(path, ": general.architecture \"", cp.cfg.architecture,
                       "\" is not supported (",
                       models::checkpointArchitectureList(models::Naming::GGUF),
                       ")");
    const std::string arch = cp.cfg.architecture + ".";
    cp.cfg.name = str("general.name");
    auto dim = [&](const std::string &key, int64_t &out,
                   std::optional<int64_t> fallback) {
      return readGGUFDim(g, path, key, out, fallback);
    };
    QTENSOR_TRY(dim(arch + "embedding_length", cp.cfg.hidden, std::nullopt));
    QTENSOR_TRY(
        dim(arch + "feed_forward_length", cp.cfg.intermediate, std::nullopt));
    QTENSOR_TRY(dim(arch + "block_count", cp.cfg.layers, std::nullopt));
    QTENSOR_TRY(dim(arch + "attention.head_count", cp.cfg.heads, std::nullopt));
    QTENSOR_TRY(
        dim(arch + "attention.head_count_kv", cp.cfg.kvHeads, cp.cfg.heads));
    QTENSOR_TRY(dim(arch + "vocab_size", cp.cfg.vocab, int64_t(1)));
    QTENSOR_TRY(dim(arch + "attention.key_length", cp.cfg.headDim, int64_t(0)));
    QTENSOR_TRY(checkConfig(cp.cfg, path));
    QTENSOR_TRY(cp.splitFusedProjections(path, all));
    cp.noDecoder.clear();
    QTENSOR_TRY(ggufDecoder(g, path, cp.cfg, cp.dec, cp.noDecoder));
  }
  components.resize(all.size(), false);
  for (size_t i = 0; i < all.size(); ++i)
    if (!components[i]) // an I8 `weight` is under its packed linear's name
      byName[all[i].name] = i;

  // The block linears, by each format's names.
  const models::Naming naming = cp.naming();
  std::vector<bool> used(all.size(), false);
  // Quantized linears go to `lin`; excluded ones stay plain tensors (not
  // marked used) and are remembered for the graph.
  auto place = [&](SourceLinear linear, TensorKind kind) -> Status {
    QTENSOR_ASSIGN_OR_RETURN(
        SelectionDecision d,
        selection.decideStored(linear.name, kind, linear.weight.dtype,
                               storedCodes(linear.weight)));
    if (!d.quantize) {
      cp.floatLin.push_back(std::move(linear));
      return Status::ok();
    }
    if (auto it = byName.find(linear.weight.name);
        it != byName.end() && linear.name == linear.weight.name)
      used[it->second] = true;
    if (linear.bias) {
      used[byName.at(linear.bias->name)] = true;
      selection.noteBias(linear.bias->name);
    }
    cp.lin.push_back(std::move(linear));
    return Status::ok();
  };
  for (int64_t layer = 0; layer < cp.cfg.layers; ++layer) {
    for (const RoleShape &rs : roleShapes(cp.cfg)) {
      std::string name = models::linearWeightName(naming, layer, rs.linear);
      auto it = byName.find(name);
      if (it == byName.end())
        return makeError(path, ": missing tensor ", name, " (layer ", layer,
                         " of ", cp.cfg.layers, ")");
      const SourceTensor &w = all[it->second];
      std::vector<int64_t> expected = {rs.n, rs.k};
      if (w.shape != expected)
        return makeError(path, ": tensor ", name, " has shape ",
                         detail::shapeText(w.shape), ", config says ",
                         detail::shapeText(expected), " ([N, K] for ",
                         rs.role(), ")");
      SourceLinear linear;
      linear.layer = layer;
      linear.role = rs.role();
      linear.name = name;
      linear.weight = w;
      std::string biasName = name.substr(0, name.size() - 6) + "bias";
      if (auto b = byName.find(biasName); b != byName.end()) {
        const SourceTensor &bias = all[b->second];
        if (bias.shape != std::vector<int64_t>{rs.n})
          return makeError(path, ": tensor ", biasName, " has shape ",
                           detail::shapeText(bias.shape), ", expected [", rs.n,
                           "]");
        linear.bias = bias;
      }
      QTENSOR_TRY(place(std::move(linear), TensorKind::Linear));
    }
  }

  // The output head: its own tensor, or tied to the embedding. A quantized
  // tied head is a quantized copy under the head's name; the embedding
  // stays plain (a lookup needs the float rows).
  const bool gguf = cp.kind == "gguf";
  const std::string headName(models::tensorNames(naming).head);
  const std::string embedName(models::tensorNames(naming).embed);
  auto head = byName.find(headName);
  bool tied = head == byName.end();
  // GGUF (llama.cpp's rule): no output.weight means tied. A Hugging Face
  // config says so; a missing head it does not declare tied is a broken
  // checkpoint (a lost shard), not a tied one.
  if (tied && !gguf && !cp.cfg.tiedHead)
    return makeError(path, ": ", headName,
                     " is missing and config.json does "
                     "not declare the head tied "
                     "(tie_word_embeddings is ",
                     "false or absent)");
  if (tied)
    head = byName.find(embedName);
  if (head == byName.end())
    return makeError(path, ": neither the output head ", headName,
                     " nor the embedding ", embedName,
                     " it could be tied "
                     "to exists");
  const SourceTensor &headTensor = all[head->second];
  if (headTensor.shape.size() != 2 || headTensor.shape[1] != cp.cfg.hidden ||
      (!gguf && headTensor.shape[0] != cp.cfg.vocab))
    return makeError(path, ": tensor ", headTensor.name, " has shape ",
                     detail::shapeText(headTensor.shape), ", expected [",
                     gguf ? std::string("vocab") : std::to_string(cp.cfg.vocab),
                     ", ", cp.cfg.hidden, "] (the output head)");
  SourceLinear headLinear;
  headLinear.layer = -1;
  headLinear.role = "lm_head";
  headLinear.name = headName;
  headLinear.weight = headTensor;
  QTENSOR_TRY(place(std::move(headLinear), TensorKind::Head));
  if (tied && !cp.floatLin.empty() && cp.floatLin.back().role == "lm_head")
    cp.floatLin.back().name = embedName; // the float head is the embedding

  for (size_t i = 0; i < all.size(); ++i) {
    if (used[i] || components[i])
      continue;
    cp.rest.push_back(all[i]);
    TensorKind kind = kindFromName(all[i].name);
    if (kind == TensorKind::Head) // another family's head name: not ours
      kind = TensorKind::Other;
    for (const SourceLinear &f : cp.floatLin)
      if (f.weight.name == all[i].name)
        kind = f.role == "lm_head" ? TensorKind::Head : TensorKind::Linear;
    if (tied && all[i].name == embedName)
      kind = TensorKind::Embedding; // also the (float) head
    QTENSOR_ASSIGN_OR_RETURN(SelectionDecision d,
                             selection.decideStored(all[i].name, kind,
                                                    all[i].dtype,
                                                    storedCodes(all[i])));
    std::string reason = d.reason;
    if (d.quantize) // only possible for a tied head's embedding
      return makeError("internal: ", all[i].name, " selected twice");
    if (tied && all[i].name == embedName)
      reason +=
          cp.lin.empty() || cp.lin.back().role != "lm_head"
              ? "; also the tied output head"
              : "; the tied output head is a quantized copy named " + headName;
    cp.keptList.push_back({all[i].name, kind, reason});
  }
  QTENSOR_TRY(selection.checkAllPatternsUsed(path));

  cp.digest = SourceDigest::start(cp.inputs);
  return cp;
}

} // namespace qtensor::compiler
