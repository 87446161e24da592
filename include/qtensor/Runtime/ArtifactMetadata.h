//===- ArtifactMetadata.h - Bounded JSON and shard inventories --*- C++ -*-===//
//
// What the loader checks of an artifact's files besides the manifest's own
// records: JSON files it reads are bounded in size and nesting with
// duplicate keys rejected, and each shard it maps holds exactly the tensors
// the manifest declares there. (The op bindings, kernel entries and decoder
// program are typed records read by lib/Formats; the dispatch trace and the
// compile report are diagnostics the loader does not read.)
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_ARTIFACTMETADATA_H
#define QTENSOR_RUNTIME_ARTIFACTMETADATA_H

#include "qtensor/Formats/Manifest.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Support/Expected.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor::runtime {

/// Largest metadata JSON accepted, and the deepest nesting.
constexpr uint64_t kMaxMetadataBytes = 64ull << 20;
constexpr unsigned kMaxMetadataDepth = 32;

/// Parses UTF-8 JSON text of at most `maxBytes`: no NUL, no duplicate keys,
/// nesting at most kMaxMetadataDepth. `name` prefixes every error.
Expected<nlohmann::json>
parseBoundedJson(std::string_view text, const std::string &name,
                 uint64_t maxBytes = kMaxMetadataBytes);

/// Every physical tensor `m` declares in the shard `path` exists there as
/// declared, and the shard holds nothing else (strict inventory). The
/// loader checks each shard it maps; the tensor-parallel group the biases
/// shard it maps itself.
Status checkShardInventory(const artifact::Manifest &m, const std::string &path,
                           const safetensors::SafetensorsFile &shard);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_ARTIFACTMETADATA_H
