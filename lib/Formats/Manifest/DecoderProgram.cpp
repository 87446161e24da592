//===- DecoderProgram.cpp - program.json, written and read once -----------===//

#include "qtensor/Formats/DecoderProgram.h"

#include "qtensor/Formats/Manifest.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Models/Architecture.h"
#include "qtensor/Support/JsonObjectReader.h"

#include <cmath>

using namespace qtensor;
using namespace qtensor::artifact;
using json = nlohmann::json;

namespace {

/// Largest dimension accepted; products are checked separately.
constexpr int64_t kMaxDim = int64_t(1) << 24;
/// Largest vocab x hidden (the embedding) and context x kvWidth (one layer's
/// cache rows) the runtime will size a buffer from.
constexpr int64_t kMaxElements = int64_t(1) << 34;

} // namespace

const char *artifact::toString(RopeStyle s) {
  return s == RopeStyle::Interleaved ? "interleaved" : "half";
}

std::optional<RopeStyle> artifact::parseRopeStyle(const std::string &s) {
  if (s == "interleaved")
    return RopeStyle::Interleaved;
  if (s == "half")
    return RopeStyle::Half;
  return std::nullopt;
}

const char *artifact::toString(GateActivation a) {
  return a == GateActivation::Silu ? "silu" : "gelu_tanh";
}

std::optional<GateActivation>
artifact::parseGateActivation(const std::string &s) {
  if (s == "silu")
    return GateActivation::Silu;
  if (s == "gelu_tanh")
    return GateActivation::GeluTanh;
  return std::nullopt;
}

double DecoderConfig::qkScale() const {
  return attentionScale > 0 ? attentionScale : 1.0 / std::sqrt(double(headDim));
}

int64_t DecoderConfig::windowOf(int64_t layer) const {
  if (layer < slidingFrom)
    return 0;
  if (!slidingWindow || !slidingPattern)
    return slidingWindow; // none, or every layer's
  return (layer + 1) % slidingPattern != 0 ? slidingWindow : 0;
}

double DecoderConfig::ropeBaseOf(int64_t layer) const {
  return windowOf(layer) ? ropeBaseLocal : ropeBase;
}

const std::vector<double> &
DecoderConfig::ropeFreqFactorsOf(int64_t layer) const {
  static const std::vector<double> kNone;
  return !ropeScalesLocal && windowOf(layer) ? kNone : ropeFreqFactors;
}

bool DecoderConfig::operator==(const DecoderConfig &o) const {
  return embedScale == o.embedScale && attentionScale == o.attentionScale &&
         gate == o.gate && slidingWindow == o.slidingWindow &&
         slidingPattern == o.slidingPattern && slidingFrom == o.slidingFrom &&
         ropeBaseLocal == o.ropeBaseLocal && architecture == o.architecture &&
         hidden == o.hidden && intermediate == o.intermediate &&
         layers == o.layers && heads == o.heads && kvHeads == o.kvHeads &&
         headDim == o.headDim && vocab == o.vocab && context == o.context &&
         ropeDim == o.ropeDim && rmsEps == o.rmsEps && ropeBase == o.ropeBase &&
         rope == o.rope && ropeFreqFactors == o.ropeFreqFactors &&
         attnSoftcap == o.attnSoftcap && finalSoftcap == o.finalSoftcap &&
         ropeScalesLocal == o.ropeScalesLocal &&
         normWeightOffset == o.normWeightOffset &&
         ropeFreqFactorsLong == o.ropeFreqFactorsLong &&
         ropeLongFrom == o.ropeLongFrom && ropeMscale == o.ropeMscale &&
         residualScale == o.residualScale && logitScale == o.logitScale;
}
bool ProgramLinear::operator==(const ProgramLinear &o) const {
  return tensor == o.tensor && kernel == o.kernel && bias == o.bias;
}
bool ProgramLayer::operator==(const ProgramLayer &o) const {
  return attnNorm == o.attnNorm && ffnNorm == o.ffnNorm && q == o.q &&
         k == o.k && v == o.v && this->o == o.o && gate == o.gate &&
         up == o.up && down == o.down && qNorm == o.qNorm && kNorm == o.kNorm &&
         postAttnNorm == o.postAttnNorm && postFfnNorm == o.postFfnNorm &&
         ropeQ == o.ropeQ && ropeK == o.ropeK && attention == o.attention &&
         ropeQLong == o.ropeQLong && ropeKLong == o.ropeKLong;
}
bool ModelKernelSymbols::operator==(const ModelKernelSymbols &o) const {
  return embed == o.embed && norm == o.norm && finalNorm == o.finalNorm &&
         storeV == o.storeV && gateMul == o.gateMul &&
         residualAdd == o.residualAdd && argmax == o.argmax &&
         headNorm == o.headNorm && outputNorm == o.outputNorm &&
         finalSoftcap == o.finalSoftcap && logitScale == o.logitScale;
}
bool DecoderProgram::operator==(const DecoderProgram &o) const {
  return config == o.config && activation == o.activation &&
         kvCache == o.kvCache && kernelFile == o.kernelFile &&
         hostCpu == o.hostCpu && kernels == o.kernels && embed == o.embed &&
         finalNorm == o.finalNorm && head == o.head && layers == o.layers &&
         tokenizerFile == o.tokenizerFile;
}

std::vector<const ProgramLinear *> DecoderProgram::linears() const {
  std::vector<const ProgramLinear *> out = {&head};
  for (const ProgramLayer &l : layers)
    out.insert(out.end(), {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down});
  return out;
}

std::vector<std::string> DecoderProgram::tensors() const {
  std::vector<std::string> out = {embed, finalNorm};
  for (const ProgramLinear *l : linears()) {
    out.push_back(l->tensor);
    if (l->bias)
      out.push_back(*l->bias);
  }
  for (const ProgramLayer &l : layers) {
    out.insert(out.end(), {l.attnNorm, l.ffnNorm});
    for (const std::optional<std::string> *t :
         {&l.qNorm, &l.kNorm, &l.postAttnNorm, &l.postFfnNorm})
      if (*t)
        out.push_back(**t);
  }
  return out;
}

std::vector<std::string> DecoderProgram::modelKernelSymbols() const {
  const ModelKernelSymbols &k = kernels;
  std::vector<std::string> out = {k.embed,  k.norm,    k.finalNorm,
                                  k.storeV, k.gateMul, k.residualAdd,
                                  k.argmax};
  for (const std::optional<std::string> *o :
       {&k.headNorm, &k.outputNorm, &k.finalSoftcap, &k.logitScale})
    if (*o)
      out.push_back(**o);
  for (const ProgramLayer &l : layers) {
    out.insert(out.end(), {l.ropeQ, l.ropeK, l.attention});
    for (const std::optional<std::string> *o : {&l.ropeQLong, &l.ropeKLong})
      if (*o)
        out.push_back(**o);
  }
  return out;
}

Status artifact::validateDecoderConfig(const DecoderConfig &c,
                                       const std::string &where) {
  if (!models::findArchitecture(c.architecture))
    return makeError(where, ".architecture: \"", c.architecture,
                     "\" is not a decoder this runtime runs (",
                     models::architectureList(), ")");
  struct Dim {
    const char *name;
    int64_t value;
  };
  for (const Dim &d :
       {Dim{"hidden", c.hidden}, Dim{"intermediate", c.intermediate},
        Dim{"layers", c.layers}, Dim{"heads", c.heads},
        Dim{"kv_heads", c.kvHeads}, Dim{"head_dim", c.headDim},
        Dim{"vocab", c.vocab}, Dim{"context", c.context},
        Dim{"rope_dim", c.ropeDim}})
    if (d.value < 1 || d.value > kMaxDim)
      return makeError(where, ".", d.name, ": ", d.value, " is outside [1, ",
                       kMaxDim, "]");
  if (c.heads % c.kvHeads != 0)
    return makeError(where, ": heads (", c.heads,
                     ") must be a multiple of kv_heads (", c.kvHeads, ")");
  if (c.ropeDim % 2 != 0 || c.ropeDim > c.headDim)
    return makeError(where, ".rope_dim: ", c.ropeDim,
                     " must be even and at most head_dim (", c.headDim, ")");
  if (c.qWidth() > kMaxDim || c.kvWidth() > kMaxDim)
    return makeError(where, ": heads x head_dim exceeds ", kMaxDim);
  if (c.vocab * c.hidden > kMaxElements ||
      c.context * c.kvWidth() > kMaxElements)
    return makeError(where, ": vocab x hidden or context x kv width exceeds ",
                     kMaxElements, " elements");
  if (!std::isfinite(c.rmsEps) || c.rmsEps <= 0 || c.rmsEps > 1)
    return makeError(where, ".rms_eps: must be in (0, 1]");
  if (!std::isfinite(c.ropeBase) || c.ropeBase <= 1 ||
      !std::isfinite(c.ropeBaseLocal) || c.ropeBaseLocal <= 1)
    return makeError(where, ".rope_base, rope_base_local: must be finite "
                            "numbers above 1");
  if (!std::isfinite(c.embedScale) || c.embedScale <= 0 || c.embedScale > 1e6)
    return makeError(where, ".embed_scale: must be in (0, 1e6]");
  if (!std::isfinite(c.attentionScale) || c.attentionScale < 0 ||
      c.attentionScale > 1e3)
    return makeError(where, ".attention_scale: must be in [0, 1e3]");
  if (c.slidingWindow < 0 || c.slidingWindow > kMaxDim ||
      c.slidingPattern < 0 || c.slidingPattern > 1024 || c.slidingFrom < 0 ||
      c.slidingFrom > c.layers)
    return makeError(where, ".sliding_window, sliding_pattern, sliding_from: "
                            "out of range");
  for (auto [key, cap] : {std::pair{".attn_logit_softcapping", c.attnSoftcap},
                          {".final_logit_softcapping", c.finalSoftcap}})
    if (!std::isfinite(cap) || cap < 0 || cap > 1e6)
      return makeError(where, key, ": must be in [0, 1e6] (0: none)");
  for (auto [key, scale] : {std::pair{".residual_scale", c.residualScale},
                            {".logit_scale", c.logitScale}})
    if (!std::isfinite(scale) || !(scale > 0) || scale > 1e6)
      return makeError(where, key, ": must be in (0, 1e6]");
  if (!std::isfinite(c.ropeMscale) || !(c.ropeMscale > 0) || c.ropeMscale > 100)
    return makeError(where, ".rope_mscale: must be in (0, 100]");
  if (c.normWeightOffset != 0 && c.normWeightOffset != 1)
    return makeError(where, ".norm_weight_offset: must be 0 or 1 (gemma's "
                            "1 + w)");
  for (auto [key, factors] :
       {std::pair{".rope_freq_factors", &c.ropeFreqFactors},
        {".rope_freq_factors_long", &c.ropeFreqFactorsLong}}) {
    if (factors->empty())
      continue;
    if (int64_t(factors->size()) != c.ropeDim / 2)
      return makeError(where, key, ": ", factors->size(),
                       " factors, rope_dim / 2 is ", c.ropeDim / 2);
    for (size_t i = 0; i < factors->size(); ++i)
      if (!std::isfinite((*factors)[i]) ||
          !((*factors)[i] >= 1e-3 && (*factors)[i] <= 1e6))
        return makeError(where, key, "[", i, "]: must be in [1e-3, 1e6]");
  }
  if (c.ropeFreqFactorsLong.empty() != (c.ropeLongFrom == 0) ||
      (!c.ropeFreqFactorsLong.empty() &&
       (c.ropeFreqFactors.empty() || !c.ropeScalesLocal)))
    return makeError(where, ".rope_freq_factors_long: comes with "
                            "rope_long_from (the original context) and the "
                            "short rope_freq_factors, on every layer");
  return Status::ok();
}

namespace {

json linearJson(const ProgramLinear &l) {
  json j = {{"tensor", l.tensor}};
  if (l.kernel)
    j["kernel"] = *l.kernel;
  if (l.bias)
    j["bias"] = *l.bias;
  return j;
}

Status readLinear(const json &j, const std::string &where, ProgramLinear &l) {
  JsonObjectReader r(j, where);
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(r.readString("tensor", l.tensor));
  QTENSOR_TRY(r.readOptionalString("kernel", l.kernel));
  QTENSOR_TRY(r.readOptionalString("bias", l.bias));
  return r.noUnknownKeys();
}

Status readDouble(JsonObjectReader &r, const char *key, double &out) {
  const json *v = nullptr;
  QTENSOR_TRY(r.require(key, v));
  if (!v->is_number())
    return makeError(r.at(key), ": expected a number");
  out = v->get<double>();
  return Status::ok();
}

} // namespace

json artifact::decoderConfigToJson(const DecoderConfig &c) {
  json j = {{"architecture", c.architecture},
            {"hidden", c.hidden},
            {"intermediate", c.intermediate},
            {"layers", c.layers},
            {"heads", c.heads},
            {"kv_heads", c.kvHeads},
            {"head_dim", c.headDim},
            {"vocab", c.vocab},
            {"context", c.context},
            {"rope_dim", c.ropeDim},
            {"rms_eps", c.rmsEps},
            {"rope_base", c.ropeBase},
            {"rope_style", toString(c.rope)},
            {"embed_scale", c.embedScale},
            {"attention_scale", c.attentionScale},
            {"gate", toString(c.gate)},
            {"sliding_window", c.slidingWindow},
            {"sliding_pattern", c.slidingPattern},
            {"rope_base_local", c.ropeBaseLocal}};
  if (!c.ropeFreqFactors.empty())
    j["rope_freq_factors"] = c.ropeFreqFactors;
  // Absent: the default, as in programs written before these keys.
  if (!c.ropeScalesLocal)
    j["rope_scales_local"] = false;
  if (c.attnSoftcap)
    j["attn_logit_softcapping"] = c.attnSoftcap;
  if (c.finalSoftcap)
    j["final_logit_softcapping"] = c.finalSoftcap;
  if (c.normWeightOffset)
    j["norm_weight_offset"] = c.normWeightOffset;
  if (c.slidingFrom)
    j["sliding_from"] = c.slidingFrom;
  if (c.ropeMscale != 1.0)
    j["rope_mscale"] = c.ropeMscale;
  if (c.residualScale != 1.0)
    j["residual_scale"] = c.residualScale;
  if (c.logitScale != 1.0)
    j["logit_scale"] = c.logitScale;
  if (!c.ropeFreqFactorsLong.empty()) {
    j["rope_freq_factors_long"] = c.ropeFreqFactorsLong;
    j["rope_long_from"] = c.ropeLongFrom;
  }
  return j;
}

Expected<DecoderConfig>
artifact::decoderConfigFromJson(const json &j, const std::string &where) {
  JsonObjectReader cr(j, where);
  QTENSOR_TRY(cr.expectObject());
  DecoderConfig c;
  QTENSOR_TRY(cr.readString("architecture", c.architecture));
  struct Field {
    const char *key;
    int64_t *out;
  };
  for (const Field &f :
       {Field{"hidden", &c.hidden}, Field{"intermediate", &c.intermediate},
        Field{"layers", &c.layers}, Field{"heads", &c.heads},
        Field{"kv_heads", &c.kvHeads}, Field{"head_dim", &c.headDim},
        Field{"vocab", &c.vocab}, Field{"context", &c.context},
        Field{"rope_dim", &c.ropeDim}})
    QTENSOR_TRY(cr.readInt(f.key, 1, kMaxDim, *f.out));
  QTENSOR_TRY(readDouble(cr, "rms_eps", c.rmsEps));
  QTENSOR_TRY(readDouble(cr, "rope_base", c.ropeBase));
  QTENSOR_TRY(cr.readEnum("rope_style", parseRopeStyle, c.rope));
  QTENSOR_TRY(readDouble(cr, "embed_scale", c.embedScale));
  QTENSOR_TRY(readDouble(cr, "attention_scale", c.attentionScale));
  QTENSOR_TRY(cr.readEnum("gate", parseGateActivation, c.gate));
  QTENSOR_TRY(cr.readInt("sliding_window", 0, kMaxDim, c.slidingWindow));
  QTENSOR_TRY(cr.readInt("sliding_pattern", 0, 1024, c.slidingPattern));
  QTENSOR_TRY(readDouble(cr, "rope_base_local", c.ropeBaseLocal));
  for (auto [key, out] : {std::pair{"rope_freq_factors", &c.ropeFreqFactors},
                          {"rope_freq_factors_long", &c.ropeFreqFactorsLong}}) {
    const json *f = cr.find(key);
    if (!f) // absent: no scaling
      continue;
    if (!f->is_array() || f->size() > size_t(kMaxDim))
      return makeError(cr.at(key), ": expected an array of numbers");
    for (const json &v : *f) {
      if (!v.is_number())
        return makeError(cr.at(key), ": expected an array of numbers");
      out->push_back(v.get<double>());
    }
  }
  if (cr.find("sliding_from"))
    QTENSOR_TRY(cr.readInt("sliding_from", 1, kMaxDim, c.slidingFrom));
  if (cr.find("rope_mscale"))
    QTENSOR_TRY(readDouble(cr, "rope_mscale", c.ropeMscale));
  for (auto [key, out] :
       {std::pair<const char *, double *>{"residual_scale", &c.residualScale},
        {"logit_scale", &c.logitScale}})
    if (cr.find(key)) {
      QTENSOR_TRY(readDouble(cr, key, *out));
      if (*out == 1)
        return makeError(cr.at(key), ": 1 is spelled by leaving it out");
    }
  if (cr.find("rope_long_from"))
    QTENSOR_TRY(cr.readInt("rope_long_from", 1, kMaxDim, c.ropeLongFrom));
  if (const json *v = cr.find("rope_scales_local")) {
    if (!v->is_boolean() || v->get<bool>())
      return makeError(cr.at("rope_scales_local"),
                       ": false, or absent (the default, true)");
    c.ropeScalesLocal = false;
  }
  for (auto [key, out] : {std::pair<const char *, double *>{
                              "attn_logit_softcapping", &c.attnSoftcap},
                          {"final_logit_softcapping", &c.finalSoftcap},
                          {"norm_weight_offset", &c.normWeightOffset}})
    if (cr.find(key)) {
      QTENSOR_TRY(readDouble(cr, key, *out));
      if (*out == 0)
        return makeError(cr.at(key), ": 0 is spelled by leaving it out");
    }
  QTENSOR_TRY(cr.noUnknownKeys());
  QTENSOR_TRY(validateDecoderConfig(c, where));
  return c;
}

json artifact::toJson(const DecoderProgram &p) {
  json layers = json::array();
  for (const ProgramLayer &l : p.layers)
    layers.push_back({{"attn_norm", l.attnNorm},
                      {"ffn_norm", l.ffnNorm},
                      {"q", linearJson(l.q)},
                      {"k", linearJson(l.k)},
                      {"v", linearJson(l.v)},
                      {"o", linearJson(l.o)},
                      {"gate", linearJson(l.gate)},
                      {"up", linearJson(l.up)},
                      {"down", linearJson(l.down)},
                      {"rope_q", l.ropeQ},
                      {"rope_k", l.ropeK},
                      {"attention", l.attention}});
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const ProgramLayer &l = p.layers[i];
    for (auto [key, value] : {std::pair{"q_norm", &l.qNorm},
                              {"k_norm", &l.kNorm},
                              {"post_attention_norm", &l.postAttnNorm},
                              {"post_ffn_norm", &l.postFfnNorm},
                              {"rope_q_long", &l.ropeQLong},
                              {"rope_k_long", &l.ropeKLong}})
      if (*value)
        layers[i][key] = **value;
  }
  const ModelKernelSymbols &k = p.kernels;
  json j = {{"schema", kProgramSchema},
            {"config", decoderConfigToJson(p.config)},
            {"activation", qtensor::toString(p.activation)},
            {"kv_cache", qtensor::toString(p.kvCache)},
            {"kernel_file", p.kernelFile},
            {"host_cpu", qtensor::toString(p.hostCpu)},
            {"kernels",
             {{"embed", k.embed},
              {"norm", k.norm},
              {"final_norm", k.finalNorm},
              {"store_v", k.storeV},
              {"gate_mul", k.gateMul},
              {"residual_add", k.residualAdd},
              {"argmax", k.argmax}}},
            {"embed", p.embed},
            {"final_norm", p.finalNorm},
            {"head", linearJson(p.head)},
            {"layers", std::move(layers)}};
  if (k.headNorm)
    j["kernels"]["head_norm"] = *k.headNorm;
  if (k.outputNorm)
    j["kernels"]["output_norm"] = *k.outputNorm;
  if (k.finalSoftcap)
    j["kernels"]["final_softcap"] = *k.finalSoftcap;
  if (k.logitScale)
    j["kernels"]["logit_scale"] = *k.logitScale;
  if (p.tokenizerFile)
    j["tokenizer_file"] = *p.tokenizerFile;
  return j;
}

Expected<DecoderProgram> artifact::programFromJson(const json &j,
                                                   const std::string &name) {
  DecoderProgram p;
  JsonObjectReader r(j, name);
  QTENSOR_TRY(r.expectObject());
  std::string schema;
  QTENSOR_TRY(r.readString("schema", schema));
  if (schema != kProgramSchema)
    return makeError(r.at("schema"), ": \"", schema, "\", expected \"",
                     kProgramSchema, "\"");

  const json *cj = nullptr;
  QTENSOR_TRY(r.readObject("config", cj));
  QTENSOR_ASSIGN_OR_RETURN(p.config,
                           decoderConfigFromJson(*cj, r.at("config")));

  QTENSOR_TRY(r.readEnum("activation", parseFloatType, p.activation));
  QTENSOR_TRY(r.readEnum("kv_cache", parseFloatType, p.kvCache));
  QTENSOR_TRY(r.readString("kernel_file", p.kernelFile));
  QTENSOR_TRY(r.readEnum("host_cpu", parseHostCpuLevel, p.hostCpu));
  const json *kj = nullptr;
  QTENSOR_TRY(r.readObject("kernels", kj));
  JsonObjectReader kr(*kj, r.at("kernels"));
  ModelKernelSymbols &k = p.kernels;
  struct Symbol {
    const char *key;
    std::string *out;
  };
  for (const Symbol &s :
       {Symbol{"embed", &k.embed}, Symbol{"norm", &k.norm},
        Symbol{"final_norm", &k.finalNorm}, Symbol{"store_v", &k.storeV},
        Symbol{"gate_mul", &k.gateMul}, Symbol{"residual_add", &k.residualAdd},
        Symbol{"argmax", &k.argmax}})
    QTENSOR_TRY(kr.readString(s.key, *s.out));
  QTENSOR_TRY(kr.readOptionalString("head_norm", k.headNorm));
  QTENSOR_TRY(kr.readOptionalString("output_norm", k.outputNorm));
  QTENSOR_TRY(kr.readOptionalString("final_softcap", k.finalSoftcap));
  QTENSOR_TRY(kr.readOptionalString("logit_scale", k.logitScale));
  QTENSOR_TRY(kr.noUnknownKeys());

  QTENSOR_TRY(r.readString("embed", p.embed));
  QTENSOR_TRY(r.readString("final_norm", p.finalNorm));
  const json *hj = nullptr;
  QTENSOR_TRY(r.require("head", hj));
  QTENSOR_TRY(readLinear(*hj, r.at("head"), p.head));
  const json *lj = nullptr;
  QTENSOR_TRY(r.readArray("layers", lj));
  if (int64_t(lj->size()) != p.config.layers)
    return makeError(r.at("layers"), ": ", lj->size(),
                     " layers, the config says ", p.config.layers);
  for (size_t i = 0; i < lj->size(); ++i) {
    std::string where = JsonObjectReader::indexed(r.at("layers"), i);
    JsonObjectReader lr((*lj)[i], where);
    QTENSOR_TRY(lr.expectObject());
    ProgramLayer l;
    QTENSOR_TRY(lr.readString("attn_norm", l.attnNorm));
    QTENSOR_TRY(lr.readString("ffn_norm", l.ffnNorm));
    struct Lin {
      const char *key;
      ProgramLinear *out;
    };
    for (const Lin &x :
         {Lin{"q", &l.q}, Lin{"k", &l.k}, Lin{"v", &l.v}, Lin{"o", &l.o},
          Lin{"gate", &l.gate}, Lin{"up", &l.up}, Lin{"down", &l.down}}) {
      const json *v = nullptr;
      QTENSOR_TRY(lr.require(x.key, v));
      QTENSOR_TRY(readLinear(*v, lr.at(x.key), *x.out));
    }
    QTENSOR_TRY(lr.readString("rope_q", l.ropeQ));
    QTENSOR_TRY(lr.readString("rope_k", l.ropeK));
    QTENSOR_TRY(lr.readString("attention", l.attention));
    QTENSOR_TRY(lr.readOptionalString("q_norm", l.qNorm));
    QTENSOR_TRY(lr.readOptionalString("k_norm", l.kNorm));
    QTENSOR_TRY(lr.readOptionalString("post_attention_norm", l.postAttnNorm));
    QTENSOR_TRY(lr.readOptionalString("post_ffn_norm", l.postFfnNorm));
    QTENSOR_TRY(lr.readOptionalString("rope_q_long", l.ropeQLong));
    QTENSOR_TRY(lr.readOptionalString("rope_k_long", l.ropeKLong));
    QTENSOR_TRY(lr.noUnknownKeys());
    p.layers.push_back(std::move(l));
  }
  QTENSOR_TRY(r.readOptionalString("tokenizer_file", p.tokenizerFile));
  QTENSOR_TRY(r.noUnknownKeys());
  return p;
}

Expected<DecoderProgram> artifact::parseProgram(std::string_view text,
                                                const std::string &name) {
  QTENSOR_ASSIGN_OR_RETURN(
      json j, parseStrictJson(text, name, kMaxProgramBytes, /*maxDepth=*/8));
  return programFromJson(j, name);
}

namespace {

/// A C-interface symbol: what HostKernelLibrary::resolve will look up.
bool isKernelSymbol(const std::string &s) {
  if (s.rfind("_mlir_ciface_", 0) != 0 || s.size() > 256)
    return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'))
      return false;
  return true;
}

Status checkFile(const Manifest &m, const std::string &path, FileRole role,
                 const std::string &where) {
  const FileEntry *f = m.findFile(path);
  if (!f)
    return makeError(where, ": \"", path, "\" is not a file of the manifest");
  if (f->role != role)
    return makeError(where, ": \"", path, "\" has role \"", toString(f->role),
                     "\", expected \"", toString(role), "\"");
  return Status::ok();
}

Status checkPlain(const Manifest &m, const std::string &tensor,
                  const std::vector<int64_t> &shape, const std::string &where) {
  const TensorEntry *t = m.findTensor(tensor);
  if (!t)
    return makeError(where, ": tensor \"", tensor, "\" is not in the manifest");
  const PlainTensor *p = t->plain();
  if (!p)
    return makeError(where, ": tensor \"", tensor, "\" is ", t->kind(),
                     "; a plain float tensor is expected here");
  if (!floatTypeOfDType(p->dtype))
    return makeError(where, ": tensor \"", tensor, "\" is ",
                     safetensors::dtypeName(p->dtype),
                     ", expected F32, F16 or BF16");
  if (p->shape != shape)
    return makeError(where, ": tensor \"", tensor,
                     "\" does not have the shape the config implies");
  return Status::ok();
}

Status checkLinear(const Manifest &m, const ProgramLinear &l, int64_t n,
                   int64_t k, const std::string &where) {
  const TensorEntry *t = m.findTensor(l.tensor);
  if (!t)
    return makeError(where, ": tensor \"", l.tensor,
                     "\" is not in the manifest");
  if (const QuantizedTensor *q = t->quantized()) {
    if (q->use != TensorUse::Linear)
      return makeError(where, ": tensor \"", l.tensor, "\" is the ",
                       toString(q->use), " table, not a linear weight");
    if (l.kernel || l.bias)
      return makeError(where, ": a quantized linear (\"", l.tensor,
                       "\") runs its admitted kernels with its own bias; no ",
                       l.kernel ? "kernel" : "bias", " may be named");
    if (q->logical.shape != std::vector<int64_t>{n, k})
      return makeError(where, ": tensor \"", l.tensor, "\" is not [", n, ", ",
                       k, "] as the config implies");
    return Status::ok();
  }
  if (const Mixed2416Tensor *mixed = t->mixed2416()) {
    if (l.kernel || l.bias)
      return makeError(where, ": a mixed_2416 linear (\"", l.tensor,
                       "\") runs its admitted kernels with its own bias; no ",
                       l.kernel ? "kernel" : "bias", " may be named");
    if (mixed->logical.shape != std::vector<int64_t>{n, k})
      return makeError(where, ": tensor \"", l.tensor, "\" is not [", n, ", ",
                       k, "] as the config implies");
    return Status::ok();
  }
  if (!l.kernel || !isKernelSymbol(*l.kernel))
    return makeError(where, ": the plain linear \"", l.tensor,
                     "\" needs a float linear kernel (_mlir_ciface_ symbol)");
  if (l.bias)
    QTENSOR_TRY(checkPlain(m, *l.bias, {n}, where + ".bias"));
  return checkPlain(m, l.tensor, {n, k}, where);
}

} // namespace

Status artifact::validateProgram(const DecoderProgram &p, const Manifest &m,
                                 const std::string &name) {
  const DecoderConfig &c = p.config;
  QTENSOR_TRY(validateDecoderConfig(c, name + ".config"));
  if (int64_t(p.layers.size()) != c.layers)
    return makeError(name, ".layers: ", p.layers.size(),
                     " layers, the config says ", c.layers);
  QTENSOR_TRY(
      checkFile(m, p.kernelFile, FileRole::Kernel, name + ".kernel_file"));
  if (p.tokenizerFile)
    QTENSOR_TRY(checkFile(m, *p.tokenizerFile, FileRole::Tokenizer,
                          name + ".tokenizer_file"));
  if (p.kvCache != FloatType::F32 && p.kvCache != FloatType::F16)
    return makeError(name, ".kv_cache: \"", qtensor::toString(p.kvCache),
                     "\", expected \"f32\" or \"f16\"");
  const ModelKernelSymbols &k = p.kernels;
  if (bool(k.finalSoftcap) != (c.finalSoftcap > 0))
    return makeError(name, ".kernels.final_softcap: present exactly when "
                           "config.final_logit_softcapping is");
  if (bool(k.logitScale) != (c.logitScale != 1.0))
    return makeError(name, ".kernels.logit_scale: present exactly when "
                           "config.logit_scale is");
  for (const std::string &s : p.modelKernelSymbols())
    if (!isKernelSymbol(s))
      return makeError(name, ".kernels: \"", s,
                       "\" is not an _mlir_ciface_ symbol");
  // The embedding is a plain table, a quantized table of its own (use
  // "embedding"), or the quantized head's tensor itself (a tied head). Its
  // rows are gathered from the stored codes; which codes the embedding
  // kernel reads is checkProgramKernels' question.
  if (const TensorEntry *e = m.findTensor(p.embed); e && e->quantized()) {
    const bool table = e->quantized()->use == TensorUse::Embedding;
    if (!table && p.embed != p.head.tensor)
      return makeError(name, ".embed: the quantized tensor \"", p.embed,
                       "\" is neither an embedding table nor the head's; "
                       "only those are read as the embedding");
    if (e->quantized()->logical.shape !=
        std::vector<int64_t>{c.vocab, c.hidden})
      return makeError(name, ".embed: tensor \"", p.embed, "\" is not [",
                       c.vocab, ", ", c.hidden, "] as the config implies");
  } else {
    QTENSOR_TRY(checkPlain(m, p.embed, {c.vocab, c.hidden}, name + ".embed"));
  }
  QTENSOR_TRY(checkPlain(m, p.finalNorm, {c.hidden}, name + ".final_norm"));
  QTENSOR_TRY(checkLinear(m, p.head, c.vocab, c.hidden, name + ".head"));
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const ProgramLayer &l = p.layers[i];
    std::string where = name + ".layers[" + std::to_string(i) + "]";
    QTENSOR_TRY(checkPlain(m, l.attnNorm, {c.hidden}, where + ".attn_norm"));
    QTENSOR_TRY(checkPlain(m, l.ffnNorm, {c.hidden}, where + ".ffn_norm"));
    QTENSOR_TRY(checkLinear(m, l.q, c.qWidth(), c.hidden, where + ".q"));
    QTENSOR_TRY(checkLinear(m, l.k, c.kvWidth(), c.hidden, where + ".k"));
    QTENSOR_TRY(checkLinear(m, l.v, c.kvWidth(), c.hidden, where + ".v"));
    QTENSOR_TRY(checkLinear(m, l.o, c.hidden, c.qWidth(), where + ".o"));
    QTENSOR_TRY(
        checkLinear(m, l.gate, c.intermediate, c.hidden, where + ".gate"));
    QTENSOR_TRY(checkLinear(m, l.up, c.intermediate, c.hidden, where + ".up"));
    QTENSOR_TRY(
        checkLinear(m, l.down, c.hidden, c.intermediate, where + ".down"));
    // The optional norms come in pairs, each with its kernel.
    if (bool(l.qNorm) != bool(l.kNorm) || bool(l.qNorm) != bool(k.headNorm))
      return makeError(where, ": q_norm, k_norm and kernels.head_norm go "
                              "together");
    if (bool(l.postAttnNorm) != bool(l.postFfnNorm) ||
        bool(l.postAttnNorm) != bool(k.outputNorm))
      return makeError(where, ": post_attention_norm, post_ffn_norm and "
                              "kernels.output_norm go together");
    if (l.qNorm) {
      QTENSOR_TRY(checkPlain(m, *l.qNorm, {c.headDim}, where + ".q_norm"));
      QTENSOR_TRY(checkPlain(m, *l.kNorm, {c.headDim}, where + ".k_norm"));
    }
    if (l.postAttnNorm) {
      QTENSOR_TRY(checkPlain(m, *l.postAttnNorm, {c.hidden},
                             where + ".post_attention_norm"));
      QTENSOR_TRY(
          checkPlain(m, *l.postFfnNorm, {c.hidden}, where + ".post_ffn_norm"));
    }
  }
  return Status::ok();
}
