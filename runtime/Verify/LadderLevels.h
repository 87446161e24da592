//===- LadderLevels.h - Shared pieces of the parity ladder ------*- C++ -*-===//
#ifndef QTENSOR_VERIFY_LADDERLEVELS_H
#define QTENSOR_VERIFY_LADDERLEVELS_H

#include "qtensor/Verify/Ladder.h"

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Formats/Artifact.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace qtensor::verify::detail {

/// A stored quantized tensor: its codes as stored (read a block of rows at
/// a time, artifact::forEachStoredRowBlock), its qparams read.
struct LogicalTensor {
  QuantizedTensorDescriptor descriptor; ///< as stored (with its layout)
  const uint8_t *codeBytes = nullptr;
  size_t codeSize = 0;
  std::vector<double> scales;
  std::vector<double> zeros;
};

Expected<LogicalTensor> loadQuantized(const artifact::Artifact &a,
                                      const artifact::TensorEntry &entry);
/// The JSON file of `role` (trace, report), parsed as strictly as the
/// runtime's loader parses it; `what` names it when none is listed.
Expected<nlohmann::json> readRoleJson(const artifact::Artifact &a,
                                      artifact::FileRole role,
                                      const char *what);
/// The report, which must be a JSON object.
Expected<nlohmann::json> readReport(const artifact::Artifact &a);

LevelResult levelOperator(const artifact::Artifact &a,
                          const LadderOptions &options);
LevelResult levelDispatch(const artifact::Artifact &a,
                          const LadderOptions &options);

/// What the dispatch trace selected for one (op, phase).
struct SelectedKernel {
  std::string kernel; ///< registry id
  bool fallback = false;
};
/// L5's run-time half (LadderRuntime.cpp): every rank loaded, each (op,
/// phase) called once, the launched kernel checked against `selected`
/// (keyed by op and phase name); a summary, or what differed.
Expected<std::string> observeRuntime(
    const artifact::Artifact &a, const LadderOptions &options,
    const std::map<std::pair<std::string, std::string>, SelectedKernel>
        &selected);
/// L4: the decoder program against its float64 forward (LadderModel.cpp).
LevelResult levelModel(const artifact::Artifact &a, const std::string &dir,
                       const LadderOptions &options);

} // namespace qtensor::verify::detail

#endif // QTENSOR_VERIFY_LADDERLEVELS_H
