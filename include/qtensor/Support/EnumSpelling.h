//===- EnumSpelling.h - Enum <-> name through one table ---------*- C++ -*-===//
//
// Each enum that appears in JSON, options or diagnostics has one table of
// {name, value} pairs; these two lookups read it in both directions.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_ENUMSPELLING_H
#define QTENSOR_SUPPORT_ENUMSPELLING_H

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace qtensor {

/// The name of `e` in `table`, or "?" for a value the table lacks.
template <typename Enum, size_t N>
const char *spellEnum(Enum e, const std::pair<const char *, Enum> (&table)[N]) {
  for (const auto &[name, value] : table)
    if (value == e)
      return name;
  return "?";
}

/// The value named `s` in `table`, if any.
template <typename Enum, size_t N>
std::optional<Enum>
lookupEnum(const std::string &s,
           const std::pair<const char *, Enum> (&table)[N]) {
  for (const auto &[name, value] : table)
    if (s == name)
      return value;
  return std::nullopt;
}

} // namespace qtensor

#endif // QTENSOR_SUPPORT_ENUMSPELLING_H
