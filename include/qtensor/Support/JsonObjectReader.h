//===- JsonObjectReader.h - Strict reading of one JSON object ---*- C++ -*-===//
//
// The manifest and the descriptor JSON are parsed strictly: a missing field,
// a wrong JSON type, a value out of range or a field nobody asked for is an
// error naming the JSON path ("manifest.tensors[3].codes.dtype: ..."). This
// reader remembers which keys were consumed so noUnknownKeys() can reject the
// rest.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_SUPPORT_JSONOBJECTREADER_H
#define QTENSOR_SUPPORT_JSONOBJECTREADER_H

#include "qtensor/Support/Expected.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor {

/// Parses JSON text that came from a file strictly: at most `maxBytes`, no
/// NUL (nlohmann::json stops at one as if the input ended, letting what
/// follows through unread), no duplicate keys (the DOM would silently keep
/// one), nesting at most `maxDepth` (too-deep values are discarded during the
/// parse, not built). `name` prefixes every error; `nulHint` is appended to
/// the NUL error.
Expected<nlohmann::json> parseStrictJson(std::string_view text,
                                         const std::string &name,
                                         uint64_t maxBytes, unsigned maxDepth,
                                         std::string_view nulHint = "");

/// The file at `path`, mapped and parsed by parseStrictJson (errors name
/// the path).
Expected<nlohmann::json> readStrictJsonFile(const std::string &path,
                                            uint64_t maxBytes,
                                            unsigned maxDepth);

/// A file holding a JSON array of strings (parseStrictJson with
/// `maxBytes`, depth 4), its strings in order; errors name the file.
Expected<std::vector<std::string>> readJsonStringList(const std::string &path,
                                                      uint64_t maxBytes);

class JsonObjectReader {
public:
  using json = nlohmann::json;

  JsonObjectReader(const json &object, std::string path)
      : object(object), path(std::move(path)) {}

  /// The reader's own value must be an object.
  Status expectObject() const;
  /// "path.key", for messages about a field.
  std::string at(const char *key) const { return path + "." + key; }
  static std::string indexed(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  /// The field `key`, or nullptr; marks it as consumed either way.
  const json *find(const char *key);
  Status require(const char *key, const json *&out);
  Status readObject(const char *key, const json *&out);
  Status readArray(const char *key, const json *&out);
  Status readString(const char *key, std::string &out);
  Status readOptionalString(const char *key, std::optional<std::string> &out);
  Status readBool(const char *key, bool &out);
  Status readInt(const char *key, int64_t min, int64_t max, int64_t &out);
  Status readUInt(const char *key, uint64_t min, uint64_t max, uint64_t &out);
  /// An array of integers of any sign.
  Status readIntArray(const char *key, std::vector<int64_t> &out);
  /// A string spelled as one of an enum's values (`parse` maps it).
  template <typename Enum>
  Status readEnum(const char *key,
                  std::optional<Enum> (*parse)(const std::string &),
                  Enum &out) {
    std::string s;
    QTENSOR_TRY(readString(key, s));
    std::optional<Enum> e = parse(s);
    if (!e)
      return makeError(at(key), ": unknown value \"", s, "\"");
    out = *e;
    return Status::ok();
  }

  /// Rejects every key no read asked for.
  Status noUnknownKeys() const;

  // Conversions of one value, for array elements; `where` names it.
  static Status toString(const json &v, const std::string &where,
                         std::string &out);
  static Status toInt(const json &v, const std::string &where, int64_t min,
                      int64_t max, int64_t &out);
  static Status toUInt(const json &v, const std::string &where, uint64_t min,
                       uint64_t max, uint64_t &out);
  static Status toIntArray(const json &v, const std::string &where,
                           std::vector<int64_t> &out);

private:
  const json &object;
  std::string path;
  std::set<std::string> seen;
};

} // namespace qtensor

#endif // QTENSOR_SUPPORT_JSONOBJECTREADER_H
