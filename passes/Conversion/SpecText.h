//===- SpecText.h - The text form shared by kernel specs --------*- C++ -*-===//
//
// Kernel specs (KernelSpec.h, Mixed2416Kernel.h, W8A8Kernel.h) are written
// `family:field:field...`, as pass options and on command lines: the pieces
// of that syntax every spec parser reads the same way. Internal to
// passes/Conversion.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_PASSES_CONVERSION_SPECTEXT_H
#define QTENSOR_PASSES_CONVERSION_SPECTEXT_H

#include "qtensor/Descriptor/Descriptor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor::conversion {

/// `text` without the whitespace of a wrapped command line around it (list
/// options split on commas only).
std::string_view trimSpecText(std::string_view text);

/// The colon-separated fields of a spec, empty ones included.
std::vector<std::string_view> specFields(std::string_view text);

/// Parses `<prefix><decimal>` into `out`; false when malformed.
bool parsePrefixed(std::string_view field, std::string_view prefix,
                   int64_t &out);

/// `f16`, `bf16` or `f32`; none for anything else.
std::optional<FloatType> parseSpecFloat(std::string_view s);
/// The dtype of an option `<prefix>f16|bf16|f32` (`scbf16`, `of16`); none
/// when `option` is not one.
std::optional<FloatType> parseFloatOption(std::string_view option,
                                          std::string_view prefix);

/// The name suffixes every linear kernel's name ends with, for what differs
/// from the defaults: `_o<dtype>` (an output other than f32), `_bias`.
std::string outputNameSuffix(FloatType output, bool bias);

} // namespace qtensor::conversion

#endif // QTENSOR_PASSES_CONVERSION_SPECTEXT_H
