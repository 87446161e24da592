//===- ArtifactMetadata.cpp - Bounded JSON and shard inventories ----------===//

#include "qtensor/Runtime/ArtifactMetadata.h"

#include "qtensor/Support/JsonObjectReader.h"

#include <set>

using namespace qtensor;
using namespace qtensor::runtime;
using json = nlohmann::json;

Expected<json> qtensor::runtime::parseBoundedJson(std::string_view text,
                                                  const std::string &name,
                                                  uint64_t maxBytes) {
  return parseStrictJson(text, name, maxBytes, kMaxMetadataDepth);
}

Status qtensor::runtime::checkShardInventory(
    const artifact::Manifest &m, const std::string &path,
    const safetensors::SafetensorsFile &shard) {
  std::set<std::string, std::less<>> declared;
  for (const artifact::TensorEntry &t : m.tensors) {
    if (t.file != path)
      continue;
    for (const auto &[role, stored] : t.storedTensors()) {
      declared.insert(stored.tensor);
      const safetensors::TensorView *v = shard.find(stored.tensor);
      if (!v)
        return makeError(shard.path(), ": tensor \"", stored.tensor, "\" (",
                         role, " of \"", t.name,
                         "\") is missing from the shard");
      if (v->dtype != stored.dtype || v->shape != stored.shape)
        return makeError(shard.path(), ": tensor \"", stored.tensor, "\" is ",
                         safetensors::dtypeName(v->dtype), " ",
                         shapeToString(v->shape), ", the manifest declares ",
                         safetensors::dtypeName(stored.dtype), " ",
                         shapeToString(stored.shape));
    }
  }
  for (const safetensors::TensorView &v : shard.tensors())
    if (!declared.count(v.name))
      return makeError(shard.path(), ": tensor \"", v.name,
                       "\" is not declared by any manifest tensor (strict "
                       "inventory)");
  return Status::ok();
}
