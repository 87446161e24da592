//===- ModelKernelSpec.cpp - The decoder's model kernel specs -------------===//

#include "qtensor/Formats/ModelKernelSpec.h"

#include "qtensor/Formats/Manifest.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Support/JsonObjectReader.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <tuple>

using namespace qtensor;

namespace {

const char *opName(ModelOp op) {
  switch (op) {
  case ModelOp::Embed:
    return "embed";
  case ModelOp::RmsNorm:
    return "rmsnorm";
  case ModelOp::RopeQ:
    return "rope_q";
  case ModelOp::RopeK:
    return "rope_k";
  case ModelOp::StoreV:
    return "store_v";
  case ModelOp::Attention:
    return "attention";
  case ModelOp::SiluMul:
    return "silu_mul";
  case ModelOp::GeluMul:
    return "gelu_mul";
  case ModelOp::ResidualAdd:
    return "residual_add";
  case ModelOp::FloatLinear:
    // "rs": callable on any range of its rows (the ABI changed with it).
    return "linear_rs";
  case ModelOp::Argmax:
    return "argmax";
  case ModelOp::EmbedCodes:
    return "embed_codes";
  case ModelOp::Softcap:
    return "softcap";
  case ModelOp::Scale:
    return "scale";
  }
  return "?";
}

constexpr ModelOp kModelOps[] = {
    ModelOp::Embed,       ModelOp::RmsNorm, ModelOp::RopeQ,
    ModelOp::RopeK,       ModelOp::StoreV,  ModelOp::Attention,
    ModelOp::SiluMul,     ModelOp::GeluMul, ModelOp::ResidualAdd,
    ModelOp::FloatLinear, ModelOp::Argmax,  ModelOp::EmbedCodes,
    ModelOp::Softcap,     ModelOp::Scale};

std::optional<ModelOp> parseModelOp(const std::string &s) {
  for (ModelOp op : kModelOps)
    if (s == opName(op))
      return op;
  return std::nullopt;
}

std::optional<artifact::RopeStyle> parseRope(const std::string &s) {
  return artifact::parseRopeStyle(s);
}

} // namespace

nlohmann::json qtensor::toJson(const ModelKernelSpec &k) {
  return {{"op", opName(k.op)},
          {"width", k.width},
          {"rows", k.rows},
          {"heads", k.heads},
          {"kv_heads", k.kvHeads},
          {"head_dim", k.headDim},
          {"rope_dim", k.ropeDim},
          {"input", toString(k.input)},
          {"weight", toString(k.weight)},
          {"output", toString(k.output)},
          {"eps", k.eps},
          {"weight_offset", k.weightOffset},
          {"rope_base", k.ropeBase},
          {"rope", artifact::toString(k.rope)},
          {"rope_freq_factors", k.ropeFreqFactors},
          {"scale", k.scale},
          {"softcap", k.softcap},
          {"window", k.window},
          {"group", k.group},
          {"code_offset", k.codeOffset},
          {"row_stride", k.rowStride},
          {"field_bits", k.fieldBits},
          {"zero_point", toString(k.zeroPoint)},
          {"codebook", toString(k.codebook)},
          {"bias", k.bias ? toString(*k.bias) : "none"}};
}

Expected<ModelKernelSpec>
qtensor::modelKernelSpecFromJson(const nlohmann::json &j,
                                 const std::string &where) {
  constexpr int64_t kMax = int64_t(1) << 40;
  JsonObjectReader r(j, where);
  QTENSOR_TRY(r.expectObject());
  ModelKernelSpec k;
  QTENSOR_TRY(r.readEnum("op", parseModelOp, k.op));
  struct Field {
    const char *key;
    int64_t *out;
  };
  for (const Field &f :
       {Field{"width", &k.width}, Field{"rows", &k.rows},
        Field{"heads", &k.heads}, Field{"kv_heads", &k.kvHeads},
        Field{"head_dim", &k.headDim}, Field{"rope_dim", &k.ropeDim},
        Field{"window", &k.window}, Field{"group", &k.group},
        Field{"code_offset", &k.codeOffset}, Field{"row_stride", &k.rowStride},
        Field{"field_bits", &k.fieldBits}})
    QTENSOR_TRY(r.readInt(f.key, 0, kMax, *f.out));
  if (k.fieldBits != 4 && k.fieldBits != 8)
    return makeError(r.at("field_bits"), ": expected 4 or 8, got ",
                     k.fieldBits);
  QTENSOR_TRY(r.readEnum("zero_point", parseZeroPointKind, k.zeroPoint));
  QTENSOR_TRY(r.readEnum("codebook", parseCodebook, k.codebook));
  QTENSOR_TRY(r.readEnum("input", parseFloatType, k.input));
  QTENSOR_TRY(r.readEnum("weight", parseFloatType, k.weight));
  QTENSOR_TRY(r.readEnum("output", parseFloatType, k.output));
  QTENSOR_TRY(r.readEnum("rope", parseRope, k.rope));
  std::string bias;
  QTENSOR_TRY(r.readString("bias", bias));
  if (bias != "none") {
    k.bias = parseFloatType(bias);
    if (!k.bias)
      return makeError(r.at("bias"),
                       ": expected none, f32, f16 or bf16, got \"", bias, "\"");
    if (k.op != ModelOp::FloatLinear)
      return makeError(r.at("bias"), ": only a float linear takes a bias");
  }
  for (auto [key, out] : {std::pair<const char *, double *>{"eps", &k.eps},
                          {"weight_offset", &k.weightOffset},
                          {"rope_base", &k.ropeBase},
                          {"scale", &k.scale},
                          {"softcap", &k.softcap}}) {
    const nlohmann::json *v = nullptr;
    QTENSOR_TRY(r.require(key, v));
    if (!v->is_number() || !std::isfinite(v->get<double>()))
      return makeError(r.at(key), ": expected a finite number");
    *out = v->get<double>();
  }
  const nlohmann::json *factors = nullptr;
  QTENSOR_TRY(r.readArray("rope_freq_factors", factors));
  for (const nlohmann::json &v : *factors) {
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      return makeError(r.at("rope_freq_factors"),
                       ": expected an array of finite numbers");
    k.ropeFreqFactors.push_back(v.get<double>());
  }
  QTENSOR_TRY(r.noUnknownKeys());
  return k;
}

std::string ModelKernelSpec::name() const {
  std::ostringstream os;
  os << "qt_model_" << opName(op);
  // "hr": takes the range of heads it computes (the ABI changed with it).
  if (op == ModelOp::Attention)
    os << "_hr";
  os << "_w" << width;
  if (rows)
    os << "_r" << rows;
  if (op == ModelOp::RopeQ || op == ModelOp::RopeK || op == ModelOp::Attention)
    os << "_h" << heads << "_kv" << kvHeads << "_d" << headDim;
  if (op == ModelOp::RopeQ || op == ModelOp::RopeK)
    os << "_rd" << ropeDim
       << (rope == artifact::RopeStyle::Interleaved ? "_il" : "_half");
  // Values baked into the code are part of the name, as their bits.
  auto bits = [](double x) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    std::ostringstream h;
    h << std::hex << b;
    return h.str();
  };
  if (op == ModelOp::RopeQ || op == ModelOp::RopeK)
    os << "_b" << bits(ropeBase);
  if ((op == ModelOp::RopeQ || op == ModelOp::RopeK) &&
      !ropeFreqFactors.empty()) {
    uint64_t h = 0xcbf29ce484222325ull; // FNV-1a over the factors' bits
    for (double f : ropeFreqFactors) {
      uint64_t b;
      std::memcpy(&b, &f, sizeof b);
      for (int i = 0; i < 8; ++i)
        h = (h ^ ((b >> (8 * i)) & 0xFF)) * 0x100000001b3ull;
    }
    os << "_ff" << std::hex << h << std::dec;
  }
  if (op == ModelOp::RmsNorm)
    os << "_e" << bits(eps);
  if (op == ModelOp::RmsNorm && weightOffset)
    os << "_wo" << bits(weightOffset);
  if (op == ModelOp::EmbedCodes) {
    os << "_g" << group << "_o" << codeOffset << "_st" << rowStride;
    if (fieldBits != 8)
      os << "_fb" << fieldBits;
    if (zeroPoint != ZeroPointKind::None)
      os << "_z" << toString(zeroPoint);
    if (codebook != Codebook::None)
      os << "_cb" << toString(codebook);
  }
  if ((op == ModelOp::Embed || op == ModelOp::EmbedCodes ||
       op == ModelOp::Attention || op == ModelOp::RopeQ ||
       op == ModelOp::RopeK || op == ModelOp::ResidualAdd ||
       op == ModelOp::Scale) &&
      scale != 1.0)
    os << "_s" << bits(scale);
  if (op == ModelOp::Attention && window)
    os << "_win" << window;
  if ((op == ModelOp::Attention || op == ModelOp::Softcap) && softcap)
    os << "_sc" << bits(softcap);
  if (op == ModelOp::FloatLinear && bias)
    os << "_bias" << qtensor::toString(*bias);
  os << "_" << qtensor::toString(input) << "_" << qtensor::toString(weight)
     << "_" << qtensor::toString(output);
  return os.str();
}

DecoderKernelSet qtensor::decoderKernels(const artifact::DecoderConfig &c,
                                         FloatType activation, FloatType embed,
                                         FloatType norm, FloatType kvCache) {
  DecoderKernelSet k;
  k.embed.op = ModelOp::Embed;
  k.embed.width = c.vocab;
  k.embed.rows = c.hidden;
  k.embed.weight = embed;
  k.embed.output = FloatType::F32;
  k.embed.scale = c.embedScale;

  k.norm.op = ModelOp::RmsNorm;
  k.norm.width = c.hidden;
  k.norm.input = FloatType::F32;
  k.norm.weight = norm;
  k.norm.output = activation;
  k.norm.eps = c.rmsEps;
  k.norm.weightOffset = c.normWeightOffset;
  k.headNorm = k.norm;
  k.headNorm.width = c.headDim;
  k.headNorm.input = activation;
  k.outputNorm = k.norm;
  k.outputNorm.input = activation;

  k.storeV.op = ModelOp::StoreV;
  k.storeV.width = c.kvWidth();
  k.storeV.input = activation;
  k.storeV.output = kvCache;

  k.gateMul.op = c.gate == artifact::GateActivation::Silu ? ModelOp::SiluMul
                                                          : ModelOp::GeluMul;
  k.gateMul.width = c.intermediate;
  k.gateMul.input = activation;
  k.gateMul.output = activation;

  k.residualAdd.op = ModelOp::ResidualAdd;
  k.residualAdd.width = c.hidden;
  k.residualAdd.input = activation;
  k.residualAdd.output = FloatType::F32;
  k.residualAdd.scale = c.residualScale;

  k.argmax.op = ModelOp::Argmax;
  k.argmax.width = c.vocab;
  k.argmax.input = FloatType::F32;
  k.argmax.output = FloatType::F32;

  k.finalSoftcap.op = ModelOp::Softcap;
  k.finalSoftcap.width = c.vocab;
  k.finalSoftcap.input = FloatType::F32;
  k.finalSoftcap.output = FloatType::F32;
  k.finalSoftcap.softcap = c.finalSoftcap;

  // llama.cpp scales by the f32 reciprocal (ggml_scale by 1 / s).
  k.logitScale.op = ModelOp::Scale;
  k.logitScale.width = c.vocab;
  k.logitScale.input = FloatType::F32;
  k.logitScale.output = FloatType::F32;
  k.logitScale.scale = double(1.0f / float(c.logitScale));
  return k;
}

LayerKernelSet qtensor::layerKernels(const artifact::DecoderConfig &c,
                                     int64_t layer, FloatType activation,
                                     FloatType kvCache) {
  LayerKernelSet k;
  ModelKernelSpec rope;
  rope.heads = c.heads;
  rope.kvHeads = c.kvHeads;
  rope.headDim = c.headDim;
  rope.ropeDim = c.ropeDim;
  rope.ropeBase = c.ropeBaseOf(layer);
  rope.rope = c.rope;
  rope.ropeFreqFactors = c.ropeFreqFactorsOf(layer);
  rope.scale = c.ropeMscale;
  rope.input = activation;
  rope.output = FloatType::F32;
  k.ropeQ = rope;
  k.ropeQ.op = ModelOp::RopeQ;
  k.ropeQ.width = c.qWidth();
  k.ropeK = rope;
  k.ropeK.op = ModelOp::RopeK;
  k.ropeK.heads = c.kvHeads; // RoPE for k walks the kv heads
  k.ropeK.width = c.kvWidth();
  k.ropeK.output = kvCache;
  if (!c.ropeFreqFactorsLong.empty()) {
    k.ropeQLong = k.ropeQ;
    k.ropeQLong->ropeFreqFactors = c.ropeFreqFactorsLong;
    k.ropeKLong = k.ropeK;
    k.ropeKLong->ropeFreqFactors = c.ropeFreqFactorsLong;
  }

  k.attention.op = ModelOp::Attention;
  k.attention.heads = c.heads;
  k.attention.kvHeads = c.kvHeads;
  k.attention.headDim = c.headDim;
  k.attention.width = c.qWidth();
  k.attention.input = FloatType::F32;
  k.attention.weight = kvCache;
  k.attention.output = activation;
  k.attention.scale = c.qkScale();
  k.attention.window = c.windowOf(layer);
  k.attention.softcap = c.attnSoftcap;
  return k;
}

ModelKernelSpec qtensor::floatLinearKernel(int64_t n, int64_t k,
                                           FloatType activation,
                                           FloatType weight, FloatType output,
                                           std::optional<FloatType> bias) {
  ModelKernelSpec s;
  s.op = ModelOp::FloatLinear;
  s.bias = bias;
  s.width = k;
  s.rows = n;
  s.input = activation;
  s.weight = weight;
  s.output = output;
  return s;
}

Expected<ModelKernelSpec>
qtensor::embedCodesKernel(const artifact::DecoderConfig &c,
                          const QuantizedTensorDescriptor &t) {
  const AffineDescriptor &d = t.descriptor;
  KernelLayoutKind kind;
  if (!parseKernelLayoutFamily(t.layout.family, kind) ||
      kind != KernelLayoutKind::DecodeGemv)
    return makeError("the table's layout is ", t.layout.family,
                     "; the embedding kernel reads decode_gemv rows");
  if (d.code.bits < 2 || d.code.bits > 8 || d.code.bits == 7)
    return makeError("the table holds ", d.code.bits,
                     "-bit codes; the embedding kernel reads 2- to 8-bit "
                     "codes (not 7), as decode_gemv stores them");
  if (d.code.isSigned && d.zeroPoint == ZeroPointKind::Integer)
    return makeError("the table has signed codes under integer "
                     "zero-points; the embedding kernel reads those only "
                     "with unsigned codes");
  // Every stored field then indexes the table: a field is 4 or 8 bits.
  if (d.codebook != Codebook::None &&
      (d.code.isSigned || d.zeroPoint != ZeroPointKind::None ||
       (d.code.bits != 4 && d.code.bits != 8) ||
       codebookValues(d.codebook).size() != size_t(1) << d.code.bits))
    return makeError("the table's codes index codebook ", toString(d.codebook),
                     " but are not unsigned indices of its ",
                     codebookValues(d.codebook).size(),
                     " entries without a zero-point");
  if (d.permutation)
    return makeError("the table's columns are permuted (act-order)");
  if (d.granularity != Granularity::Group || d.groupSize <= 0 ||
      c.hidden % d.groupSize != 0)
    return makeError("the table's scales are not whole groups of its rows");
  if (t.shape != std::vector<int64_t>{c.vocab, c.hidden})
    return makeError("the table's shape is not [vocab, hidden]");
  KernelLayoutSpec layout{kind, d.code.bits, d.code.isSigned};
  QTENSOR_ASSIGN_OR_RETURN(KernelLayoutGeometry g,
                           kernelLayoutGeometry(layout, c.vocab, c.hidden));
  ModelKernelSpec s;
  s.op = ModelOp::EmbedCodes;
  s.width = c.vocab;
  s.rows = c.hidden;
  // A nested or scale-format first level is read as the loader decodes
  // it: f32 scales (and mins).
  s.weight = d.nested || d.scaleFormat != ScaleFormat::Plain ? FloatType::F32
                                                             : d.scaleType;
  s.output = FloatType::F32;
  s.scale = c.embedScale;
  s.group = d.groupSize;
  s.codeOffset = d.code.isSigned ? int64_t(1) << (d.code.bits - 1) : 0;
  s.fieldBits = layout.fieldBits();
  s.zeroPoint = d.zeroPoint;
  s.codebook = d.codebook;
  s.rowStride = g.paddedCols * s.fieldBits / 8;
  return s;
}

namespace {

FloatType storedFloat(const artifact::Manifest &m, const std::string &tensor) {
  // validateProgram checked: a plain F32, F16 or BF16 tensor.
  return artifact::floatTypeOfDType(m.findTensor(tensor)->plain()->dtype)
      .value_or(FloatType::F32);
}

/// The float linear kernel of a plain program linear (validateProgram
/// checked its weight and bias are plain floats).
ModelKernelSpec programLinearKernel(const artifact::Manifest &m,
                                    const artifact::ProgramLinear &l, int64_t n,
                                    int64_t k, FloatType activation,
                                    FloatType output) {
  std::optional<FloatType> bias;
  if (l.bias)
    bias = storedFloat(m, *l.bias);
  return floatLinearKernel(n, k, activation, storedFloat(m, l.tensor), output,
                           bias);
}

} // namespace

Expected<ModelKernelSpec>
qtensor::programEmbedKernel(const artifact::DecoderProgram &p,
                            const artifact::Manifest &m) {
  const artifact::TensorEntry *t = m.findTensor(p.embed);
  if (t && t->quantized()) {
    auto s = embedCodesKernel(p.config, t->quantized()->logical);
    if (!s)
      return makeError("the embedding ", p.embed, ": ", s.message());
    return s;
  }
  return decoderKernels(p.config, p.activation, storedFloat(m, p.embed),
                        FloatType::F32)
      .embed;
}

Status qtensor::checkProgramKernels(const artifact::DecoderProgram &p,
                                    const artifact::Manifest &m,
                                    const std::string &name) {
  const artifact::DecoderConfig &c = p.config;
  const FloatType act = p.activation;
  const FloatType norm = storedFloat(m, p.finalNorm);
  DecoderKernelSet k = decoderKernels(c, act, FloatType::F32, norm, p.kvCache);
  const artifact::ModelKernelSymbols &s = p.kernels;
  auto check = [&](const std::string &where, const std::string &named,
                   const ModelKernelSpec &spec) -> Status {
    if (named != spec.symbol())
      return makeError(name, ": ", where, " is \"", named,
                       "\"; the config and tensors imply \"", spec.symbol(),
                       "\"");
    return Status::ok();
  };
  QTENSOR_ASSIGN_OR_RETURN(ModelKernelSpec embed, programEmbedKernel(p, m));
  QTENSOR_TRY(check("kernels.embed", s.embed, embed));
  QTENSOR_TRY(check("kernels.norm", s.norm, k.norm));
  QTENSOR_TRY(check("kernels.final_norm", s.finalNorm, k.norm));
  QTENSOR_TRY(check("kernels.store_v", s.storeV, k.storeV));
  QTENSOR_TRY(check("kernels.gate_mul", s.gateMul, k.gateMul));
  QTENSOR_TRY(check("kernels.residual_add", s.residualAdd, k.residualAdd));
  QTENSOR_TRY(check("kernels.argmax", s.argmax, k.argmax));
  if (s.headNorm)
    QTENSOR_TRY(check("kernels.head_norm", *s.headNorm, k.headNorm));
  if (s.outputNorm)
    QTENSOR_TRY(check("kernels.output_norm", *s.outputNorm, k.outputNorm));
  if (s.finalSoftcap)
    QTENSOR_TRY(
        check("kernels.final_softcap", *s.finalSoftcap, k.finalSoftcap));
  if (s.logitScale)
    QTENSOR_TRY(check("kernels.logit_scale", *s.logitScale, k.logitScale));
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const artifact::ProgramLayer &l = p.layers[i];
    LayerKernelSet lk = layerKernels(c, int64_t(i), act, p.kvCache);
    std::string at = "layers[" + std::to_string(i) + "].";
    QTENSOR_TRY(check(at + "rope_q", l.ropeQ, lk.ropeQ));
    QTENSOR_TRY(check(at + "rope_k", l.ropeK, lk.ropeK));
    QTENSOR_TRY(check(at + "attention", l.attention, lk.attention));
    for (auto [key, named, spec] :
         {std::tuple{"rope_q_long", &l.ropeQLong, &lk.ropeQLong},
          {"rope_k_long", &l.ropeKLong, &lk.ropeKLong}}) {
      if (named->has_value() != spec->has_value())
        return makeError(name, ": ", at, key,
                         named->has_value()
                             ? " is given, but the config has no long RoPE "
                               "divisors"
                             : " is missing; the config has long RoPE "
                               "divisors");
      if (*named)
        QTENSOR_TRY(check(at + key, **named, **spec));
    }
    std::vector<const std::string *> norms = {&l.attnNorm, &l.ffnNorm};
    for (const std::optional<std::string> *o :
         {&l.qNorm, &l.kNorm, &l.postAttnNorm, &l.postFfnNorm})
      if (*o)
        norms.push_back(&**o);
    for (const std::string *t : norms)
      if (storedFloat(m, *t) != norm)
        return makeError(name, ": the norm ", *t, " is stored as ",
                         toString(storedFloat(m, *t)), ", the final norm as ",
                         toString(norm), " (the norm kernels read one dtype)");
  }
  auto linear = [&](const artifact::ProgramLinear &l, int64_t n, int64_t kk,
                    FloatType output, const std::string &where) -> Status {
    if (!l.kernel)
      return Status::ok(); // quantized: admitted like every op
    std::string want = programLinearKernel(m, l, n, kk, act, output).symbol();
    if (*l.kernel != want)
      return makeError(name, ": ", where, ".kernel is \"", *l.kernel,
                       "\"; the shape and dtypes of ", l.tensor, " imply \"",
                       want, "\"");
    return Status::ok();
  };
  QTENSOR_TRY(linear(p.head, c.vocab, c.hidden, FloatType::F32, "head"));
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const artifact::ProgramLayer &l = p.layers[i];
    std::string at = "layers[" + std::to_string(i) + "]";
    QTENSOR_TRY(linear(l.q, c.qWidth(), c.hidden, act, at + ".q"));
    QTENSOR_TRY(linear(l.k, c.kvWidth(), c.hidden, act, at + ".k"));
    QTENSOR_TRY(linear(l.v, c.kvWidth(), c.hidden, act, at + ".v"));
    QTENSOR_TRY(linear(l.o, c.hidden, c.qWidth(), act, at + ".o"));
    QTENSOR_TRY(linear(l.gate, c.intermediate, c.hidden, act, at + ".gate"));
    QTENSOR_TRY(linear(l.up, c.intermediate, c.hidden, act, at + ".up"));
    QTENSOR_TRY(linear(l.down, c.hidden, c.intermediate, act, at + ".down"));
  }
  return Status::ok();
}

std::vector<ModelKernelSpec>
qtensor::programKernelSpecs(const artifact::DecoderProgram &p,
                            const artifact::Manifest &m) {
  const artifact::DecoderConfig &c = p.config;
  const FloatType act = p.activation;
  std::vector<ModelKernelSpec> specs;
  auto add = [&](const ModelKernelSpec &spec) {
    for (const ModelKernelSpec &s : specs)
      if (s.name() == spec.name())
        return;
    specs.push_back(spec);
  };
  DecoderKernelSet k = decoderKernels(c, act, FloatType::F32,
                                      storedFloat(m, p.finalNorm), p.kvCache);
  // checkProgramKernels accepted the program: its embedding kernel exists.
  if (Expected<ModelKernelSpec> embed = programEmbedKernel(p, m))
    add(*embed);
  for (const ModelKernelSpec *s :
       {&k.norm, &k.storeV, &k.gateMul, &k.residualAdd, &k.argmax})
    add(*s);
  if (p.kernels.headNorm)
    add(k.headNorm);
  if (p.kernels.outputNorm)
    add(k.outputNorm);
  if (p.kernels.finalSoftcap)
    add(k.finalSoftcap);
  if (p.kernels.logitScale)
    add(k.logitScale);
  for (size_t i = 0; i < p.layers.size(); ++i) {
    LayerKernelSet lk = layerKernels(c, int64_t(i), act, p.kvCache);
    add(lk.ropeQ);
    add(lk.ropeK);
    add(lk.attention);
    if (lk.ropeQLong) {
      add(*lk.ropeQLong);
      add(*lk.ropeKLong);
    }
  }
  auto linear = [&](const artifact::ProgramLinear &l, int64_t n, int64_t kk,
                    FloatType output) {
    if (l.kernel)
      add(programLinearKernel(m, l, n, kk, act, output));
  };
  linear(p.head, c.vocab, c.hidden, FloatType::F32);
  for (const artifact::ProgramLayer &l : p.layers) {
    linear(l.q, c.qWidth(), c.hidden, act);
    linear(l.k, c.kvWidth(), c.hidden, act);
    linear(l.v, c.kvWidth(), c.hidden, act);
    linear(l.o, c.hidden, c.qWidth(), act);
    linear(l.gate, c.intermediate, c.hidden, act);
    linear(l.up, c.intermediate, c.hidden, act);
    linear(l.down, c.hidden, c.intermediate, act);
  }
  return specs;
}
