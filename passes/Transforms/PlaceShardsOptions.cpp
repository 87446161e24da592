//===- PlaceShardsOptions.cpp - Options and strategies of place-shards ----===//
//
// Turns `strategy` entries into checked rules, and picks a
// weight's strategy from its name: the user's rules first, then the
// Megatron-style defaults of common transformer checkpoints (lib/Models).
//
//===----------------------------------------------------------------------===//

#include "PlaceShards.h"

#include "qtensor/Models/TensorNames.h"

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

namespace {
/// The Megatron default of models::defaultSplitOf (the one architecture
/// table, lib/Models; docs/passes.md lists it).
std::optional<ShardStrategy> defaultStrategy(StringRef component) {
  std::optional<qtensor::models::Split> split =
      qtensor::models::defaultSplitOf(std::string_view(component));
  if (!split)
    return std::nullopt;
  return *split == qtensor::models::Split::Row ? ShardStrategy::Row
                                               : ShardStrategy::Column;
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
