//===- CheckpointDetail.h - Helpers of the checkpoint readers ---*- C++ -*-===//
#ifndef QTENSOR_LIB_COMPILER_CHECKPOINTDETAIL_H
#define QTENSOR_LIB_COMPILER_CHECKPOINTDETAIL_H

#include "qtensor/Support/Expected.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace qtensor::compiler::detail {

/// "[256, 512]".
std::string shapeText(const std::vector<int64_t> &shape);

/// Digest of several files: SHA-256 of "<basename> <sha256>\n" lines, in
/// the given order (the checkpoint's provenance). Stops with an error
/// between chunks once `*cancel` is set.
Expected<std::string> digestFiles(const std::vector<std::string> &paths,
                                  const std::atomic<bool> *cancel = nullptr);

/// A Gemma 3 text_config with transformers' Gemma3TextConfig defaults for
/// the keys it leaves out (VisionLanguage.cpp).
nlohmann::json gemma3TextDefaults(const nlohmann::json &text);

/// transformers 5's `rope_parameters` (one object, or gemma3's one per
/// layer type) spelled back as rope_theta, rope_scaling,
/// partial_rotary_factor and rope_local_base_freq, in place; a value given
/// both ways must agree (RopeParameters.cpp).
Status spellRopeParameters(nlohmann::json &cfg, const std::string &file);

} // namespace qtensor::compiler::detail

#endif // QTENSOR_LIB_COMPILER_CHECKPOINTDETAIL_H
