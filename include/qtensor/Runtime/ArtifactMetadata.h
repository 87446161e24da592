//===- ArtifactMetadata.h - Trace and report the loader reads ---*- C++ -*-===//
//
// Besides manifest.json the loader reads two small JSON files of the
// artifact: the dispatch trace (role "trace", the qtensor-select-layouts
// trace, docs/kernels.md "The dispatch trace") for each op's placement,
// dtypes, epilogue and selected kernel per phase; and the compile report
// (role "report") for the options the artifact was compiled with, the
// fallback policy first. Both are untrusted: bounded in size and nesting,
// duplicate keys rejected, every field the runtime uses type- and
// range-checked; errors name the file and the JSON path
// ("dispatch-trace.json[4].topology.ranks[1].k: ...").
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_ARTIFACTMETADATA_H
#define QTENSOR_RUNTIME_ARTIFACTMETADATA_H

#include "qtensor/Formats/Manifest.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Kernels/Admission.h"
#include "qtensor/Support/Expected.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor::runtime {

/// Largest trace or report accepted, and the deepest nesting.
constexpr uint64_t kMaxMetadataBytes = 64ull << 20;
constexpr unsigned kMaxMetadataDepth = 32;

/// Parses UTF-8 JSON text of at most `maxBytes`: no NUL, no duplicate keys,
/// nesting at most kMaxMetadataDepth. `name` prefixes every error.
Expected<nlohmann::json>
parseBoundedJson(std::string_view text, const std::string &name,
                 uint64_t maxBytes = kMaxMetadataBytes);

/// One (op, phase) entry of the dispatch trace.
struct TraceEntry {
  std::string op; ///< the weight's name (without the @rank suffix)
  kernels::Phase phase = kernels::Phase::Decode;
  std::optional<std::string> selected; ///< registry kernel id; none: skipped
  bool fallback = false;
  int64_t n = 0, k = 0; ///< the whole weight
  kernels::Topology topology = kernels::Topology::Single;
  std::vector<kernels::RankSlice> ranks;
  FloatType activation = FloatType::F16;
  FloatType accumulator = FloatType::F32;
  FloatType output = FloatType::F16;
  kernels::Epilogue epilogue = kernels::Epilogue::None;
  /// Row-parallel: a bias is added after the all-reduce (topology
  /// "bias_after_reduce"); the runtime requires it then and only then.
  bool biasAfterReduce = false;
};

/// Parses the trace file's JSON (a list of entries); `name` is its path.
/// Checks each entry's own consistency: ranks tile N (column) or K (row)
/// from 0 without gaps, a single/replicated op's ranks hold the whole
/// weight, a fallback entry selected a kernel.
Expected<std::vector<TraceEntry>> parseTrace(const nlohmann::json &j,
                                             const std::string &name);

/// What the loader uses from report.json's "options".
struct ReportOptions {
  std::optional<kernels::FallbackPolicy> fallback;
  std::optional<std::string> target;
  std::optional<int64_t> tp;
  /// report.program.none: why the compiler made no decoder program.
  std::string programGap;
};
Expected<ReportOptions> parseReportOptions(const nlohmann::json &j,
                                           const std::string &name);

/// Every physical tensor `m` declares in the shard `path` exists there as
/// declared, and the shard holds nothing else (strict inventory). The
/// loader checks each shard it maps; the tensor-parallel group the biases
/// shard it maps itself.
Status checkShardInventory(const artifact::Manifest &m, const std::string &path,
                           const safetensors::SafetensorsFile &shard);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_ARTIFACTMETADATA_H
