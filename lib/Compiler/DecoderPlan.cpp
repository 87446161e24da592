//===- DecoderPlan.cpp - The decoder program of a checkpoint --------------===//

#include "DecoderPlan.h"

#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Models/TensorNames.h"

#include <algorithm>
#include <map>
#include <vector>

namespace qtensor::compiler {

namespace {

using artifact::ProgramLinear;

class Planner {
public:
  Planner(const Checkpoint &cp, FloatType activation, FloatType kvCache,
          std::string &gap)
      : cp(cp), activation(activation), kvCache(kvCache), gap(gap) {
    for (const SourceTensor &t : cp.others())
      plain[t.name] = &t;
  }

  std::optional<DecoderPlan> plan() {
    const artifact::DecoderConfig &c = *cp.decoder();
    using models::BlockNorm;
    const models::Naming naming = cp.naming();
    const models::TensorNames &names = models::tensorNames(naming);
    const models::Architecture *family =
        models::findArchitecture(c.architecture);
    if (!family)
      return refuse("architecture \"" + c.architecture +
                    "\" has no decoder program");
    DecoderPlan plan;
    artifact::DecoderProgram &p = plan.program;
    p.config = c;
    p.activation = activation;
    p.kvCache = kvCache;
    p.embed = names.embed;
    p.finalNorm = names.finalNorm;
    std::optional<FloatType> embedType = plainType(p.embed);
    std::optional<FloatType> normType = plainType(p.finalNorm);
    if (!embedType || !normType)
      return std::nullopt;
    // The embedding's rows are the vocabulary (GGUF may omit vocab_size).
    p.config.vocab = plain.at(p.embed)->shape[0];
    // Every norm is a plain tensor of the final norm's dtype (the norm
    // kernels read one dtype).
    auto normIsPlain = [&](const std::string &norm) {
      std::optional<FloatType> t = plainType(norm);
      if (t && *t != *normType)
        refuse(norm + " is stored as " + toString(*t) +
               ", the other norms as " + toString(*normType));
      return t && *t == *normType;
    };
    for (int64_t l = 0; l < c.layers; ++l) {
      artifact::ProgramLayer layer;
      layer.attnNorm =
          *models::normWeightName(naming, *family, l, BlockNorm::Attention);
      layer.ffnNorm =
          *models::normWeightName(naming, *family, l, BlockNorm::Mlp);
      for (const std::string *norm : {&layer.attnNorm, &layer.ffnNorm})
        if (!normIsPlain(*norm))
          return std::nullopt;
      ProgramLinear *const linears[] = {&layer.q,   &layer.k,    &layer.v,
                                        &layer.o,   &layer.gate, &layer.up,
                                        &layer.down};
      for (models::BlockLinear role : models::kBlockLinears) {
        std::optional<ProgramLinear> lin =
            linear(l, std::string(models::roleName(role)), activation);
        if (!lin)
          return std::nullopt;
        *linears[size_t(role)] = *lin;
      }
      // qwen3, gemma3: per-head q/k norms; gemma2, gemma3: the output
      // norms (none where the family has no such norm).
      const std::pair<std::optional<std::string> *, BlockNorm> extraNorms[] = {
          {&layer.qNorm, BlockNorm::QHead},
          {&layer.kNorm, BlockNorm::KHead},
          {&layer.postAttnNorm, BlockNorm::PostAttention},
          {&layer.postFfnNorm, BlockNorm::PostMlp}};
      for (auto [norm, role] : extraNorms) {
        *norm = models::normWeightName(naming, *family, l, role);
        if (*norm && !normIsPlain(**norm))
          return std::nullopt;
      }
      LayerKernelSet lk = layerKernels(p.config, l, activation, kvCache);
      for (const ModelKernelSpec *spec : {&lk.ropeQ, &lk.ropeK, &lk.attention})
        addOnce(plan, *spec);
      layer.ropeQ = lk.ropeQ.symbol();
      layer.ropeK = lk.ropeK.symbol();
      layer.attention = lk.attention.symbol();
      if (lk.ropeQLong) {
        addOnce(plan, *lk.ropeQLong);
        addOnce(plan, *lk.ropeKLong);
        layer.ropeQLong = lk.ropeQLong->symbol();
        layer.ropeKLong = lk.ropeKLong->symbol();
      }
      p.layers.push_back(std::move(layer));
    }
    // Logits in f32: the head writes them for the argmax and the sampler.
    std::optional<ProgramLinear> head = linear(-1, "lm_head", FloatType::F32);
    if (!head)
      return std::nullopt;
    p.head = *head;

    DecoderKernelSet k =
        decoderKernels(p.config, activation, *embedType, *normType, kvCache);
    std::vector<const ModelKernelSpec *> global = {
        &k.embed, &k.norm, &k.storeV, &k.gateMul, &k.residualAdd, &k.argmax};
    if (family->qkNorm) {
      global.push_back(&k.headNorm);
      p.kernels.headNorm = k.headNorm.symbol();
    }
    if (family->sandwichNorms) {
      global.push_back(&k.outputNorm);
      p.kernels.outputNorm = k.outputNorm.symbol();
    }
    if (c.finalSoftcap > 0) {
      global.push_back(&k.finalSoftcap);
      p.kernels.finalSoftcap = k.finalSoftcap.symbol();
    }
    if (c.logitScale != 1.0) {
      global.push_back(&k.logitScale);
      p.kernels.logitScale = k.logitScale.symbol();
    }
    for (const ModelKernelSpec *spec : global)
      plan.kernels.push_back(*spec);
    p.kernels.embed = k.embed.symbol();
    p.kernels.norm = k.norm.symbol();
    p.kernels.finalNorm = k.norm.symbol();
    p.kernels.storeV = k.storeV.symbol();
    p.kernels.gateMul = k.gateMul.symbol();
    p.kernels.residualAdd = k.residualAdd.symbol();
    p.kernels.argmax = k.argmax.symbol();
    for (const ModelKernelSpec &f : floatLinears) // one per shape and dtype
      addOnce(plan, f);
    return plan;
  }

private:
  /// Layers and linears of one shape share a kernel.
  static void addOnce(DecoderPlan &plan, const ModelKernelSpec &spec) {
    if (std::none_of(
            plan.kernels.begin(), plan.kernels.end(),
            [&](const ModelKernelSpec &k) { return k.name() == spec.name(); }))
      plan.kernels.push_back(spec);
  }

  std::nullopt_t refuse(const std::string &why) {
    if (gap.empty())
      gap = why;
    return std::nullopt;
  }

  std::optional<FloatType> plainType(const std::string &name) {
    auto it = plain.find(name);
    if (it == plain.end())
      return refuse("the checkpoint has no tensor " + name);
    if (std::optional<FloatType> t = artifact::floatTypeOfDType(
            Checkpoint::storedPlainDType(*it->second)))
      return t;
    return refuse(name + " is not stored as a float");
  }

  /// The program's linear for (layer, role): the quantized tensor, or the
  /// plain weight with a float linear kernel writing `output`.
  std::optional<ProgramLinear> linear(int64_t layer, const std::string &role,
                                      FloatType output) {
    for (const SourceLinear &l : cp.linears())
      if (l.layer == layer && l.role == role) // a bias is the op's epilogue
        return ProgramLinear{l.name, std::nullopt, std::nullopt};
    for (const SourceLinear &l : cp.floatLinears())
      if (l.layer == layer && l.role == role) {
        std::optional<FloatType> w = plainType(l.weight.name);
        if (!w)
          return std::nullopt;
        std::optional<FloatType> bias;
        if (l.bias && !(bias = plainType(l.bias->name)))
          return std::nullopt;
        ModelKernelSpec s =
            floatLinearKernel(l.n(), l.k(), activation, *w, output, bias);
        floatLinears.push_back(s);
        return ProgramLinear{l.weight.name, s.symbol(),
                             l.bias ? std::optional(l.bias->name)
                                    : std::nullopt};
      }
    return refuse("no linear " + role + " in layer " + std::to_string(layer));
  }

  const Checkpoint &cp;
  FloatType activation, kvCache;
  std::string &gap;
  std::map<std::string, const SourceTensor *> plain;
  std::vector<ModelKernelSpec> floatLinears;
};

} // namespace

/// The program's embedding becomes `gather`; the plain table's kernel goes
/// (only the embedding calls it).
static void gatherWith(DecoderPlan &plan, const ModelKernelSpec &gather) {
  const std::string oldSymbol = plan.program.kernels.embed;
  plan.program.kernels.embed = gather.symbol();
  plan.kernels.erase(std::remove_if(plan.kernels.begin(), plan.kernels.end(),
                                    [&](const ModelKernelSpec &k) {
                                      return k.symbol() == oldSymbol;
                                    }),
                     plan.kernels.end());
  plan.kernels.insert(plan.kernels.begin(), gather);
}

std::optional<std::string>
embedFromHeadCodes(DecoderPlan &plan, const SourceLinear &headSource,
                   const QuantizedTensorDescriptor &head, std::string &why) {
  artifact::DecoderProgram &p = plan.program;
  if (p.head.kernel || headSource.name != p.head.tensor) {
    why = "the head is not quantized";
    return std::nullopt;
  }
  if (headSource.weight.name != p.embed) {
    why = "the head is not tied to the embedding";
    return std::nullopt;
  }
  Expected<ModelKernelSpec> spec = embedCodesKernel(p.config, head);
  if (!spec) {
    why = spec.message();
    return std::nullopt;
  }
  std::string table = p.embed;
  p.embed = p.head.tensor;
  gatherWith(plan, *spec);
  return table;
}

bool embedFromTableCodes(DecoderPlan &plan,
                         const QuantizedTensorDescriptor &table,
                         std::string &why) {
  Expected<ModelKernelSpec> spec = embedCodesKernel(plan.program.config, table);
  if (!spec) {
    why = spec.message();
    return false;
  }
  gatherWith(plan, *spec);
  return true;
}

Expected<std::optional<DecoderPlan>> planDecoder(const Checkpoint &checkpoint,
                                                 FloatType activation,
                                                 FloatType kvCache,
                                                 std::string &gap) {
  if (!checkpoint.decoder()) {
    gap = checkpoint.decoderGap();
    return std::optional<DecoderPlan>();
  }
  return Planner(checkpoint, activation, kvCache, gap).plan();
}

} // namespace qtensor::compiler
