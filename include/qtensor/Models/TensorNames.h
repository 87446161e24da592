//===- TensorNames.h - Each naming's tensors of a decoder -------*- C++ -*-===//
//
// A decoder's tensors as Hugging Face (model.layers.L.self_attn.q_proj.weight,
// model.embed_tokens.weight, ...) and GGUF (blk.L.attn_q.weight,
// token_embd.weight, ...) name them: the seven block linears, the block
// norms, the embedding, the final norm and the head. An artifact keeps its
// checkpoint's names, so the reader of either format, the decoder planner,
// the GGUF exporter and the runtime's model schema build and parse names
// here, one table for all of them.
//
// Also the Megatron split of a linear by the layer component of its name
// (q_proj: column, o_proj: row, ...), the default qtensor-place-shards
// applies, over the llama family and the other common families' names.
// MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_MODELS_TENSORNAMES_H
#define QTENSOR_MODELS_TENSORNAMES_H

#include "qtensor/Models/Architecture.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qtensor::models {

/// The seven linears of a llama-family block, in this order everywhere.
enum class BlockLinear : uint8_t { Q, K, V, O, Gate, Up, Down };
constexpr size_t kBlockLinearCount = 7;
constexpr std::array<BlockLinear, kBlockLinearCount> kBlockLinears = {
    BlockLinear::Q,    BlockLinear::K,  BlockLinear::V,   BlockLinear::O,
    BlockLinear::Gate, BlockLinear::Up, BlockLinear::Down};

/// The role programs, reports and the compiler use for a block linear:
/// "q_proj", ..., "down_proj" (Hugging Face's last name component).
std::string_view roleName(BlockLinear l);
std::optional<BlockLinear> blockLinearOfRole(std::string_view role);

/// The norms of a block: every family has the first two; the per-head q/k
/// norms are qwen3's and gemma's (Architecture::qkNorm), the output norms
/// gemma's (Architecture::sandwichNorms).
enum class BlockNorm : uint8_t {
  Attention,     ///< before attention
  Mlp,           ///< before the MLP
  QHead,         ///< per-head q norm [head_dim]
  KHead,         ///< per-head k norm [head_dim]
  PostAttention, ///< on attention's output [hidden]
  PostMlp        ///< on the MLP's output [hidden]
};
constexpr size_t kBlockNormCount = 6;

/// One naming's tensor names.
struct TensorNames {
  std::string_view layerPrefix; ///< then "<L>.<in layer>.weight"
  /// Each block linear inside a layer, in BlockLinear's order.
  std::array<std::string_view, kBlockLinearCount> linears;
  /// Each block norm inside a layer, in BlockNorm's order; empty where the
  /// naming has no name here.
  using NormNames = std::array<std::string_view, kBlockNormCount>;
  NormNames norms;
  /// The same for the families with output norms (Architecture::
  /// sandwichNorms): Hugging Face's gemma calls the norm before the MLP
  /// pre_feedforward_layernorm, and its post_attention_layernorm is the
  /// output norm of attention, not llama's norm before the MLP.
  NormNames sandwichNorms;
  const NormNames &normsOf(const Architecture &a) const {
    return a.sandwichNorms ? sandwichNorms : norms;
  }
  std::string_view embed, finalNorm, head; ///< whole names
  std::string_view linearPattern;          ///< the names of linears, for errors
};

const TensorNames &tensorNames(Naming naming);

/// "<prefix><layer>.<inLayer>.weight".
std::string blockTensorName(Naming naming, int64_t layer,
                            std::string_view inLayer);
std::string linearWeightName(Naming naming, int64_t layer, BlockLinear l);
/// `family`'s name of a block norm; none when the family has no such norm
/// (the output norms of a llama).
std::optional<std::string> normWeightName(Naming naming,
                                          const Architecture &family,
                                          int64_t layer, BlockNorm norm);

/// A name "<prefix><L>.<in layer>.weight" split; none for any other name
/// (a layer number with a leading zero, or of more than 7 digits, names no
/// layer).
struct BlockTensor {
  int64_t layer;
  std::string_view inLayer;
};
std::optional<BlockTensor> parseBlockTensor(Naming naming,
                                            std::string_view name);

/// The layer and role of a block linear's weight name.
struct BlockLinearName {
  int64_t layer;
  BlockLinear linear;
};
std::optional<BlockLinearName> parseLinearWeight(Naming naming,
                                                 std::string_view name);

/// Whether `name` is one of `naming`'s own: a block tensor (prefix and a
/// layer digit), the embedding, the final norm or the head.
bool usesNaming(Naming naming, std::string_view name);

/// How tensor parallelism splits a linear (Megatron): a column split
/// slices the output features (the layers that widen the hidden state), a
/// row split the input features (the ones that bring it back), so a column
/// layer's output slices feed the next row layer without communication.
enum class Split : uint8_t { Column, Row };
Split splitOf(BlockLinear l);

/// The default split by a weight's layer component ("q_proj", "attn_q",
/// "c_attn", ...): the llama family in both namings, Mixtral experts, Meta's
/// original Llama, Falcon / GPT-NeoX, GPT-2, Phi and OPT; the output head
/// ("lm_head") is column (vocabulary) parallel. None for any other name.
std::optional<Split> defaultSplitOf(std::string_view component);

} // namespace qtensor::models

#endif // QTENSOR_MODELS_TENSORNAMES_H
