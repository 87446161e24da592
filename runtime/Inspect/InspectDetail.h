//===- InspectDetail.h - The artifact half of inspection --------*- C++ -*-===//
#ifndef QTENSOR_RUNTIME_INSPECT_INSPECTDETAIL_H
#define QTENSOR_RUNTIME_INSPECT_INSPECTDETAIL_H

#include "qtensor/Inspect/InspectReport.h"
#include "qtensor/Support/Expected.h"

#include <string>
#include <vector>

namespace qtensor::inspect::detail {

/// Fills `report` from the artifact directory `path` (opened with the
/// production reader: manifest, path safety, sizes, SHA-256).
void inspectArtifact(const std::string &path, InspectReport &report);

/// A tensor of the artifact at `path`, decoded to float32.
Expected<std::vector<float>> decodeArtifactTensor(const std::string &path,
                                                  const std::string &name);

} // namespace qtensor::inspect::detail

#endif // QTENSOR_RUNTIME_INSPECT_INSPECTDETAIL_H
