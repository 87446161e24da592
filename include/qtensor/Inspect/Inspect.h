//===- Inspect.h - Any input, read and described ----------------*- C++ -*-===//
//
// What `qtc inspect` shows, as a library: the format of a path is detected
// (artifact directory, safetensors index, GGUF, safetensors), the file is
// read with the production reader the compiler and the runtime use, and the
// report lists its facts, metadata and tensors with the verdict. A
// quantized artifact tensor decodes through the runtime's reference decoder
// (Runtime/Reference.h). Nothing here prints.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_INSPECT_INSPECT_H
#define QTENSOR_INSPECT_INSPECT_H

#include "qtensor/Inspect/InspectReport.h"
#include "qtensor/Support/Expected.h"

#include <string>
#include <vector>

namespace qtensor::inspect {

/// Detects the format of `path`, validates it with the production reader
/// and reports inventory, metadata and the verdict (an invalid input is a
/// report with `error` set, never a failure of this call).
InspectReport inspectPath(const std::string &path);

/// Decodes tensor `name` of `path` to float32 in the file's element order
/// (GGUF: ne[0] fastest).
Expected<std::vector<float>> decodeTensorToF32(const std::string &path,
                                               const std::string &name);

} // namespace qtensor::inspect

#endif // QTENSOR_INSPECT_INSPECT_H
