//===- Inspect.h - `qtc inspect` --------------------------------*- C++ -*-===//
#ifndef QTENSOR_TOOLS_QTC_INSPECT_H
#define QTENSOR_TOOLS_QTC_INSPECT_H

#include "InspectReport.h"

#include "qtensor/Support/Expected.h"

#include <string>
#include <vector>

namespace qtensor::qtc {

/// Detects the format of `path` (artifact directory, safetensors index,
/// GGUF, safetensors), validates it with the production reader and reports
/// inventory, metadata and the verdict.
InspectReport inspectPath(const std::string &path);

/// Decodes tensor `name` of `path` to float32 in the file's element order
/// (GGUF: ne[0] fastest).
Expected<std::vector<float>> decodeTensorToF32(const std::string &path,
                                               const std::string &name);

/// Entry point for `qtc inspect ARGS...`; returns the process exit status.
int runInspect(const std::vector<std::string> &args);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_INSPECT_H
