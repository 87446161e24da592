//===- ExportGGUF.h - `qtc export-gguf` -------------------------*- C++ -*-===//
#ifndef QTENSOR_TOOLS_QTC_EXPORTGGUF_H
#define QTENSOR_TOOLS_QTC_EXPORTGGUF_H

#include <string>
#include <vector>

namespace qtensor::qtc {

/// Entry point for `qtc export-gguf DIR -o FILE.gguf [--dequantize]
/// [--json]` (Formats/GGUFExport.h); returns the process exit status.
int runExportGGUF(const std::vector<std::string> &args);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_EXPORTGGUF_H
