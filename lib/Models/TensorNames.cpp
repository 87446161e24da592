//===- TensorNames.cpp - Each naming's tensors of a decoder ---------------===//

#include "qtensor/Models/TensorNames.h"

#include <algorithm>
#include <iterator>

using namespace qtensor::models;

namespace {

constexpr std::array<std::string_view, kBlockLinearCount> kRoles = {
    "q_proj",    "k_proj",  "v_proj",   "o_proj",
    "gate_proj", "up_proj", "down_proj"};

const TensorNames kHuggingFace = {
    "model.layers.",
    {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
     "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"},
    {"input_layernorm", "post_attention_layernorm", "self_attn.q_norm",
     "self_attn.k_norm", "", ""},
    {"input_layernorm", "pre_feedforward_layernorm", "self_attn.q_norm",
     "self_attn.k_norm", "post_attention_layernorm",
     "post_feedforward_layernorm"},
    "model.embed_tokens.weight",
    "model.norm.weight",
    "lm_head.weight",
    "model.layers.<L>.<self_attn|mlp>.<proj>.weight, or lm_head.weight"};

const TensorNames kGGUF = {
    "blk.",
    {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
     "ffn_down"},
    {"attn_norm", "ffn_norm", "attn_q_norm", "attn_k_norm",
     "post_attention_norm", "post_ffw_norm"},
    {"attn_norm", "ffn_norm", "attn_q_norm", "attn_k_norm",
     "post_attention_norm", "post_ffw_norm"},
    "token_embd.weight",
    "output_norm.weight",
    "output.weight",
    "blk.<L>.<attn_q|attn_k|attn_v|attn_output|ffn_gate|ffn_up|ffn_down>"
    ".weight, or output.weight"};

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool startsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

bool endsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

template <typename List>
std::optional<size_t> indexIn(const List &names, std::string_view name) {
  auto it = std::find(std::begin(names), std::end(names), name);
  if (name.empty() || it == std::end(names))
    return std::nullopt;
  return size_t(it - std::begin(names));
}

} // namespace

std::string_view qtensor::models::roleName(BlockLinear l) {
  return kRoles[size_t(l)];
}

std::optional<BlockLinear>
qtensor::models::blockLinearOfRole(std::string_view role) {
  std::optional<size_t> i = indexIn(kRoles, role);
  return i ? std::optional(kBlockLinears[*i]) : std::nullopt;
}

const TensorNames &qtensor::models::tensorNames(Naming naming) {
  return naming == Naming::GGUF ? kGGUF : kHuggingFace;
}

std::string qtensor::models::blockTensorName(Naming naming, int64_t layer,
                                             std::string_view inLayer) {
  return std::string(tensorNames(naming).layerPrefix) + std::to_string(layer) +
         "." + std::string(inLayer) + ".weight";
}

std::string qtensor::models::linearWeightName(Naming naming, int64_t layer,
                                              BlockLinear l) {
  return blockTensorName(naming, layer, tensorNames(naming).linears[size_t(l)]);
}

std::optional<std::string>
qtensor::models::normWeightName(Naming naming, const Architecture &family,
                                int64_t layer, BlockNorm norm) {
  const bool has = norm == BlockNorm::Attention || norm == BlockNorm::Mlp ||
                   ((norm == BlockNorm::QHead || norm == BlockNorm::KHead)
                        ? family.qkNorm
                        : family.sandwichNorms);
  std::string_view inLayer = tensorNames(naming).normsOf(family)[size_t(norm)];
  if (!has || inLayer.empty())
    return std::nullopt;
  return blockTensorName(naming, layer, inLayer);
}

std::optional<BlockTensor>
qtensor::models::parseBlockTensor(Naming naming, std::string_view name) {
  constexpr std::string_view suffix = ".weight";
  std::string_view prefix = tensorNames(naming).layerPrefix;
  if (name.size() <= prefix.size() + suffix.size() ||
      !startsWith(name, prefix) || !endsWith(name, suffix))
    return std::nullopt;
  std::string_view s =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  int64_t layer = 0;
  size_t digits = 0;
  while (digits < s.size() && digits < 7 && isDigit(s[digits]))
    layer = layer * 10 + (s[digits++] - '0');
  if (!digits || (digits > 1 && s[0] == '0') || digits >= s.size() ||
      s[digits] != '.')
    return std::nullopt;
  return BlockTensor{layer, s.substr(digits + 1)};
}

std::optional<BlockLinearName>
qtensor::models::parseLinearWeight(Naming naming, std::string_view name) {
  std::optional<BlockTensor> b = parseBlockTensor(naming, name);
  if (!b)
    return std::nullopt;
  std::optional<size_t> i = indexIn(tensorNames(naming).linears, b->inLayer);
  if (!i)
    return std::nullopt;
  return BlockLinearName{b->layer, kBlockLinears[*i]};
}

bool qtensor::models::usesNaming(Naming naming, std::string_view name) {
  const TensorNames &n = tensorNames(naming);
  std::string_view prefix = n.layerPrefix;
  return (name.size() > prefix.size() && startsWith(name, prefix) &&
          isDigit(name[prefix.size()])) ||
         name == n.embed || name == n.finalNorm || name == n.head;
}

Split qtensor::models::splitOf(BlockLinear l) {
  return l == BlockLinear::O || l == BlockLinear::Down ? Split::Row
                                                       : Split::Column;
}

std::optional<Split> qtensor::models::defaultSplitOf(std::string_view c) {
  // The llama family in both namings first, from the table.
  if (std::optional<BlockLinear> l = blockLinearOfRole(c))
    return splitOf(*l);
  if (std::optional<size_t> i = indexIn(kGGUF.linears, c))
    return splitOf(kBlockLinears[*i]);
  // Fused llama-family projections, Mixtral experts, Meta's original Llama,
  // Falcon / GPT-NeoX, GPT-2, Phi, OPT, GGUF's fused qkv.
  static constexpr std::string_view kColumn[] = {
      "qkv_proj", "gate_up_proj", "w1", "w3", "wq", "wk", "wv",
      "query_key_value", "dense_h_to_4h", "c_attn", "c_fc", "fc1", "attn_qkv",
      // The output head is vocabulary-parallel: each rank owns a slice of
      // the logits (an all-gather, or a sharded softmax, follows).
      "lm_head"};
  static constexpr std::string_view kRow[] = {
      "w2", "wo", "dense", "dense_4h_to_h", "c_proj", "fc2", "out_proj"};
  if (indexIn(kColumn, c))
    return Split::Column;
  if (indexIn(kRow, c))
    return Split::Row;
  return std::nullopt;
}
