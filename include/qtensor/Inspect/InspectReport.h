//===- InspectReport.h - What an inspection found in a file -----*- C++ -*-===//
//
// One report type for every input format, rendered by one function as text
// for a person or as JSON for a program.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_INSPECT_INSPECTREPORT_H
#define QTENSOR_INSPECT_INSPECTREPORT_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::inspect {

struct InspectedTensor {
  std::string name;
  std::string type;           ///< "F32", "Q4_0", "BF16", ...
  std::vector<int64_t> shape; ///< in the file's own order (GGUF: ne order)
  uint64_t absoluteOffset = 0;
  uint64_t bytes = 0;
  std::string file; ///< shard or file holding it (index and artifact only)
  /// The qtensor descriptor JSON (docs/descriptor-json.md) when the tensor
  /// has one: quantized artifact tensors, GGUF Q4_0/Q4_1/Q8_0.
  nlohmann::json descriptor;
};

struct InspectReport {
  std::string path;
  std::optional<std::string> format; ///< "safetensors", "gguf", ...
  std::optional<std::string> error;  ///< set when the input is invalid
  /// Format facts ("version": 3, "alignment": 32, ...).
  nlohmann::json summary = nlohmann::json::object();
  /// Metadata as key -> JSON value (long arrays summarized).
  nlohmann::json metadata = nlohmann::json::object();
  std::vector<InspectedTensor> tensors;

  bool ok() const { return !error.has_value(); }
  nlohmann::json toJson() const;
  std::string toText() const;
};

} // namespace qtensor::inspect

#endif // QTENSOR_INSPECT_INSPECTREPORT_H
