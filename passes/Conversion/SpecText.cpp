//===- SpecText.cpp - The text form shared by kernel specs ----------------===//

#include "SpecText.h"

#include <cctype>
#include <charconv>

namespace qtensor::conversion {

std::string_view trimSpecText(std::string_view text) {
  while (!text.empty() &&
         std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> specFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    fields.push_back(text.substr(start, colon - start));
    if (colon == std::string_view::npos)
      return fields;
    start = colon + 1;
  }
}

bool parsePrefixed(std::string_view field, std::string_view prefix,
                   int64_t &out) {
  if (field.substr(0, prefix.size()) != prefix || field.size() == prefix.size())
    return false;
  const char *first = field.data() + prefix.size();
  const char *last = field.data() + field.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}

std::optional<FloatType> parseSpecFloat(std::string_view s) {
  if (s == "f16")
    return FloatType::F16;
  if (s == "bf16")
    return FloatType::BF16;
  if (s == "f32")
    return FloatType::F32;
  return std::nullopt;
}

std::optional<FloatType> parseFloatOption(std::string_view option,
                                          std::string_view prefix) {
  if (option.substr(0, prefix.size()) != prefix)
    return std::nullopt;
  return parseSpecFloat(option.substr(prefix.size()));
}

std::string outputNameSuffix(FloatType output, bool bias) {
  std::string out;
  if (output != FloatType::F32)
    out += std::string("_o") + toString(output);
  if (bias)
    out += "_bias";
  return out;
}

} // namespace qtensor::conversion
