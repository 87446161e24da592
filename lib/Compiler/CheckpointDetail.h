//===- CheckpointDetail.h - Helpers of the checkpoint readers ---*- C++ -*-===//
#ifndef QTENSOR_LIB_COMPILER_CHECKPOINTDETAIL_H
#define QTENSOR_LIB_COMPILER_CHECKPOINTDETAIL_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qtensor::compiler::detail {

/// "[256, 512]".
std::string shapeText(const std::vector<int64_t> &shape);

/// Digest of several files: SHA-256 of "<basename> <sha256>\n" lines, in
/// the given order (the checkpoint's provenance).
Expected<std::string> digestFiles(const std::vector<std::string> &paths);

} // namespace qtensor::compiler::detail

#endif // QTENSOR_LIB_COMPILER_CHECKPOINTDETAIL_H
