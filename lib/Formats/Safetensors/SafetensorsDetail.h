//===- SafetensorsDetail.h - QTensorSafetensors internals -------*- C++ -*-===//
#ifndef QTENSOR_LIB_FORMATS_SAFETENSORS_DETAIL_H
#define QTENSOR_LIB_FORMATS_SAFETENSORS_DETAIL_H

#include "qtensor/Support/Expected.h"
#include "qtensor/Support/MappedFile.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qtensor::safetensors::impl {

/// Index of the first byte that breaks UTF-8 (overlong forms, surrogates,
/// code points above U+10FFFF, truncated sequences); nullopt if valid.
std::optional<size_t> findInvalidUtf8(const uint8_t *data, size_t size);
inline std::optional<size_t> findInvalidUtf8(std::string_view s) {
  return findInvalidUtf8(reinterpret_cast<const uint8_t *>(s.data()), s.size());
}

/// `"name"` for messages: quotes, backslashes and control bytes escaped; very
/// long names are shortened (at a UTF-8 boundary) and marked with "...".
std::string quote(std::string_view name);

/// Maps `path` read-only, opening it with O_NONBLOCK so that a FIFO cannot
/// block the open (MappedFile then rejects it as not a regular file).
Expected<MappedFile> mapFile(const std::string &path);

/// The part of a nlohmann parse_error message after "line L, column C: ".
std::string jsonErrorText(const char *what);

} // namespace qtensor::safetensors::impl

#endif // QTENSOR_LIB_FORMATS_SAFETENSORS_DETAIL_H
