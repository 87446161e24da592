//===- PlaceShardsOptions.cpp - Options and strategies of place-shards ----===//
//
// Turns `group-policy` and `strategy` into checked values, and picks a
// weight's strategy from its name: the user's rules first, then the
// Megatron-style defaults of common transformer checkpoints.
//
//===----------------------------------------------------------------------===//

#include "PlaceShards.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Error.h"

using namespace mlir;
using namespace mlir::qt;
using namespace mlir::qt::place_shards;

bool StrategyRule::matches(StringRef weightName) const {
  if (weightName.empty())
    return false;
  return glob ? glob->match(weightName) : weightName.contains(pattern);
}

FailureOr<SmallVector<StrategyRule>>
place_shards::parseStrategyRules(ArrayRef<std::string> entries,
                                 function_ref<InFlightDiagnostic()> emitError) {
  SmallVector<StrategyRule> rules;
  bool ok = true;
  for (StringRef entry : entries) {
    // The pattern may itself hold ':' (a glob class); the strategy follows
    // the last one.
    auto [pattern, kind] = entry.rsplit(':');
    if (!entry.contains(':')) {
      emitError() << "strategy entry '" << entry
                  << "' must be PATTERN:column|row|replicate";
      ok = false;
      continue;
    }
    std::optional<ShardStrategy> strategy =
        llvm::StringSwitch<std::optional<ShardStrategy>>(kind)
            .Case("column", ShardStrategy::Column)
            .Case("row", ShardStrategy::Row)
            .Cases({"replicate", "replicated"}, ShardStrategy::Replicated)
            .Default(std::nullopt);
    if (!strategy) {
      emitError() << "strategy entry '" << entry
                  << "' has the unknown strategy '" << kind
                  << "'; expected column, row or replicate";
      ok = false;
      continue;
    }
    if (pattern.empty()) {
      emitError() << "strategy entry '" << entry
                  << "' has an empty weight-name pattern";
      ok = false;
      continue;
    }
    StrategyRule rule{pattern.str(), std::nullopt, *strategy};
    if (pattern.find_first_of("*?[") != StringRef::npos) {
      llvm::Expected<llvm::GlobPattern> glob =
          llvm::GlobPattern::create(pattern);
      if (!glob) {
        emitError() << "strategy entry '" << entry << "' has a bad glob '"
                    << pattern << "': " << llvm::toString(glob.takeError());
        ok = false;
        continue;
      }
      rule.glob = std::move(*glob);
    }
    rules.push_back(std::move(rule));
  }
  if (!ok)
    return failure();
  return rules;
}

FailureOr<GroupPolicy>
place_shards::parseGroupPolicy(StringRef text,
                               function_ref<InFlightDiagnostic()> emitError) {
  std::optional<GroupPolicy> policy =
      llvm::StringSwitch<std::optional<GroupPolicy>>(text)
          .Case("error", GroupPolicy::Error)
          .Case("align", GroupPolicy::Align)
          .Cases({"replicate-boundary", "replicate_boundary"},
                 GroupPolicy::ReplicateBoundary)
          .Case("repack", GroupPolicy::Repack)
          .Default(std::nullopt);
  if (!policy)
    return emitError() << "unknown group-policy '" << text
                       << "'; expected error, align, replicate-boundary or "
                          "repack";
  return *policy;
}

namespace {
/// Megatron-style defaults by the last component of a weight's name: layers
/// that widen the hidden state are column-parallel, the ones that bring it
/// back are row-parallel, so a column layer's output slices feed the next
/// row layer without communication. Keep docs/passes.md in step.
std::optional<ShardStrategy> defaultStrategy(StringRef component) {
  return llvm::StringSwitch<std::optional<ShardStrategy>>(component)
      // Llama / Mistral / Qwen, Mixtral experts, Meta's original Llama,
      // Falcon / GPT-NeoX, GPT-2, Phi, OPT.
      .Cases({"q_proj", "k_proj", "v_proj", "qkv_proj", "gate_proj", "up_proj",
              "gate_up_proj"},
             ShardStrategy::Column)
      .Cases({"w1", "w3", "wq", "wk", "wv", "query_key_value", "dense_h_to_4h",
              "c_attn", "c_fc", "fc1"},
             ShardStrategy::Column)
      .Cases({"o_proj", "down_proj", "w2", "wo", "dense", "dense_4h_to_h",
              "c_proj", "fc2", "out_proj"},
             ShardStrategy::Row)
      // GGUF (llama.cpp) tensor names.
      .Cases({"attn_q", "attn_k", "attn_v", "attn_qkv", "ffn_gate", "ffn_up"},
             ShardStrategy::Column)
      .Cases({"attn_output", "ffn_down"}, ShardStrategy::Row)
      // The output head is vocabulary-parallel: each rank owns a slice of
      // the logits (an all-gather, or a sharded softmax, follows).
      .Case("lm_head", ShardStrategy::Column)
      .Default(std::nullopt);
}

StringRef lastComponent(StringRef name) {
  size_t dot = name.rfind('.');
  return dot == StringRef::npos ? name : name.substr(dot + 1);
}

/// The component that names the layer: "model.layers.0.mlp.down_proj" and
/// "model.layers.0.mlp.down_proj.weight" both give "down_proj".
StringRef layerComponent(StringRef name) {
  StringRef last = lastComponent(name);
  if ((last == "weight" || last == "qweight") && last.size() < name.size())
    return lastComponent(name.drop_back(last.size() + 1));
  return last;
}
} // namespace

StrategyChoice place_shards::chooseStrategy(StringRef weightName,
                                            ArrayRef<StrategyRule> rules) {
  for (const StrategyRule &rule : rules)
    if (rule.matches(weightName))
      return {rule.strategy, "strategy pattern '" + rule.pattern + "'"};
  if (weightName.empty())
    return {ShardStrategy::Replicated, "an unnamed weight"};
  StringRef layer = layerComponent(weightName);
  // GGUF's head is the top-level "output.weight"; "output" inside a name
  // (BERT's attention.output.*) is not a head.
  if (weightName == "output.weight" || weightName == "output")
    layer = "lm_head";
  if (std::optional<ShardStrategy> strategy = defaultStrategy(layer))
    return {*strategy, "the transformer default for '" + layer.str() + "'"};
  return {ShardStrategy::Replicated,
          "no strategy pattern or transformer default for '" + layer.str() +
              "'"};
}
