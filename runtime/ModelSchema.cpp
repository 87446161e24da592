//===- ModelSchema.cpp - The tensors an architecture requires -------------===//

#include "qtensor/Runtime/ModelSchema.h"

#include <array>
#include <map>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

constexpr std::array<const char *, 7> kLinears = {
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
    "self_attn.o_proj", "mlp.gate_proj",    "mlp.up_proj",
    "mlp.down_proj"};
enum { Q, K, V, O, Gate, Up, Down };

/// "model.layers.<L>.<role>.weight" -> (L, role index).
bool parseLinear(const std::string &name, int64_t &layer, size_t &role) {
  static const std::string prefix = "model.layers.", suffix = ".weight";
  if (name.compare(0, prefix.size(), prefix) != 0 ||
      name.size() <= prefix.size() + suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  size_t i = prefix.size();
  layer = 0;
  size_t digits = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 7) {
    layer = layer * 10 + (name[i++] - '0');
    ++digits;
  }
  if (!digits || i >= name.size() || name[i] != '.')
    return false;
  std::string r = name.substr(i + 1, name.size() - suffix.size() - i - 1);
  for (size_t j = 0; j < kLinears.size(); ++j)
    if (r == kLinears[j]) {
      role = j;
      return true;
    }
  return false;
}

Status requirePlain(const artifact::Manifest &m, const std::string &name,
                    const std::vector<int64_t> &shape) {
  const artifact::TensorEntry *t = m.findTensor(name);
  if (!t)
    return makeError("model schema: required tensor \"", name, "\" is missing");
  const std::vector<int64_t> &actual =
      t->plain() ? t->plain()->shape : t->quantized()->logical.shape;
  if (actual != shape)
    return makeError("model schema: tensor \"", name, "\" has shape ",
                     shapeToString(actual), ", expected ",
                     shapeToString(shape));
  return Status::ok();
}

} // namespace

Expected<SchemaCheck>
qtensor::runtime::checkModelSchema(const artifact::Manifest &m,
                                   const std::vector<TraceEntry> &trace) {
  SchemaCheck out;
  const std::string &arch = m.model.architecture;
  if (arch != "llama" && arch != "mistral" && arch != "qwen2") {
    out.summary = "no schema for architecture \"" + arch +
                  "\": every quantized tensor checked as a traced 2-D linear";
    return out;
  }
  out.known = true;
  // Whole [N, K] per (layer, role), from the trace.
  std::map<int64_t, std::array<const TraceEntry *, kLinears.size()>> layers;
  for (const TraceEntry &e : trace) {
    int64_t layer;
    size_t role;
    if (!parseLinear(e.op, layer, role))
      return makeError("model schema (", arch, "): op \"", e.op,
                       "\" is not a linear of the schema "
                       "(model.layers.<L>.<self_attn|mlp>.<proj>.weight)");
    layers[layer][role] = &e;
  }
  if (layers.empty())
    return makeError("model schema (", arch, "): no linear layers");
  int64_t count = layers.rbegin()->first + 1;
  if (int64_t(layers.size()) != count)
    for (int64_t l = 0; l < count; ++l)
      if (!layers.count(l))
        return makeError("model schema (", arch, "): layer ", l,
                         " is missing (layers go up to ", count - 1, ")");
  const auto &first = layers.begin()->second;
  for (size_t r = 0; r < kLinears.size(); ++r)
    if (!first[r])
      return makeError("model schema (", arch, "): model.layers.0.",
                       kLinears[r], ".weight is missing");
  int64_t h = first[Q]->k, qn = first[Q]->n, kv = first[K]->n,
          inter = first[Gate]->n;
  // [N, K] every role must have, from the widths of layer 0.
  std::array<std::pair<int64_t, int64_t>, kLinears.size()> want = {
      std::pair{qn, h}, {kv, h},    {kv, h},   {h, qn},
      {inter, h},       {inter, h}, {h, inter}};
  for (const auto &[l, roles] : layers)
    for (size_t r = 0; r < kLinears.size(); ++r) {
      std::string name =
          "model.layers." + std::to_string(l) + "." + kLinears[r] + ".weight";
      if (!roles[r])
        return makeError("model schema (", arch, "): ", name, " is missing");
      if (roles[r]->n != want[r].first || roles[r]->k != want[r].second)
        return makeError("model schema (", arch, "): ", name, " is [",
                         roles[r]->n, ", ", roles[r]->k, "], expected [",
                         want[r].first, ", ", want[r].second, "] (H = ", h,
                         ", KV = ", kv, ", I = ", inter, ")");
    }
  const artifact::TensorEntry *embed =
      m.findTensor("model.embed_tokens.weight");
  if (!embed || !embed->plain() || embed->plain()->shape.size() != 2)
    return makeError("model schema (", arch,
                     "): the embedding "
                     "model.embed_tokens.weight is "
                     "missing or not a plain 2-D "
                     "tensor");
  int64_t vocab = embed->plain()->shape[0];
  QTENSOR_TRY(requirePlain(m, "model.embed_tokens.weight", {vocab, h}));
  QTENSOR_TRY(requirePlain(m, "model.norm.weight", {h}));
  for (int64_t l = 0; l < count; ++l)
    for (const char *norm : {"input_layernorm", "post_attention_layernorm"})
      QTENSOR_TRY(requirePlain(
          m, "model.layers." + std::to_string(l) + "." + norm + ".weight",
          {h}));
  bool tied = !m.findTensor("lm_head.weight");
  if (!tied)
    QTENSOR_TRY(requirePlain(m, "lm_head.weight", {vocab, h}));
  out.summary = arch + ": " + std::to_string(count) + " layers, H " +
                std::to_string(h) + ", KV " + std::to_string(kv) + ", I " +
                std::to_string(inter) + ", vocab " + std::to_string(vocab) +
                (tied ? ", tied head" : "");
  return out;
}
