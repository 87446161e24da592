//===- JsonObjectReader.cpp - Strict reading of one JSON object -----------===//

#include "qtensor/Support/JsonObjectReader.h"
#include "qtensor/Support/MappedFile.h"

#include <set>
#include <string>
#include <vector>

using namespace qtensor;
using json = nlohmann::json;

Status JsonObjectReader::expectObject() const {
  if (!object.is_object())
    return makeError(path, ": expected a JSON object, got ",
                     object.type_name());
  return Status::ok();
}

const json *JsonObjectReader::find(const char *key) {
  seen.insert(key);
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

Status JsonObjectReader::require(const char *key, const json *&out) {
  out = find(key);
  if (!out)
    return makeError(at(key), ": required field is missing");
  return Status::ok();
}

Status JsonObjectReader::readObject(const char *key, const json *&out) {
  QTENSOR_TRY(require(key, out));
  if (!out->is_object())
    return makeError(at(key), ": expected a JSON object, got ",
                     out->type_name());
  return Status::ok();
}

Status JsonObjectReader::readArray(const char *key, const json *&out) {
  QTENSOR_TRY(require(key, out));
  if (!out->is_array())
    return makeError(at(key), ": expected an array, got ", out->type_name());
  return Status::ok();
}

Status JsonObjectReader::readString(const char *key, std::string &out) {
  const json *v;
  QTENSOR_TRY(require(key, v));
  return toString(*v, at(key), out);
}

Status JsonObjectReader::readOptionalString(const char *key,
                                            std::optional<std::string> &out) {
  out.reset();
  if (const json *v = find(key)) {
    std::string s;
    QTENSOR_TRY(toString(*v, at(key), s));
    out = std::move(s);
  }
  return Status::ok();
}

Status JsonObjectReader::readBool(const char *key, bool &out) {
  const json *v;
  QTENSOR_TRY(require(key, v));
  if (!v->is_boolean())
    return makeError(at(key), ": expected true or false, got ", v->type_name());
  out = v->get<bool>();
  return Status::ok();
}

Status JsonObjectReader::readInt(const char *key, int64_t min, int64_t max,
                                 int64_t &out) {
  const json *v;
  QTENSOR_TRY(require(key, v));
  return toInt(*v, at(key), min, max, out);
}

Status JsonObjectReader::readUInt(const char *key, uint64_t min, uint64_t max,
                                  uint64_t &out) {
  const json *v;
  QTENSOR_TRY(require(key, v));
  return toUInt(*v, at(key), min, max, out);
}

Status JsonObjectReader::readIntArray(const char *key,
                                      std::vector<int64_t> &out) {
  const json *v;
  QTENSOR_TRY(require(key, v));
  return toIntArray(*v, at(key), out);
}

Status JsonObjectReader::noUnknownKeys() const {
  if (!object.is_object())
    return Status::ok();
  for (const auto &item : object.items())
    if (!seen.count(item.key()))
      return makeError(path, ": unknown field \"", item.key(), "\"");
  return Status::ok();
}

Status JsonObjectReader::toString(const json &v, const std::string &where,
                                  std::string &out) {
  if (!v.is_string())
    return makeError(where, ": expected a string, got ", v.type_name());
  out = v.get<std::string>();
  return Status::ok();
}

Status JsonObjectReader::toInt(const json &v, const std::string &where,
                               int64_t min, int64_t max, int64_t &out) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(max))
      return makeError(where, ": ", u, " is outside [", min, ", ", max, "]");
    out = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    out = v.get<int64_t>();
  } else {
    return makeError(where, ": expected an integer, got ", v.type_name());
  }
  if (out < min || out > max)
    return makeError(where, ": ", out, " is outside [", min, ", ", max, "]");
  return Status::ok();
}

Status JsonObjectReader::toUInt(const json &v, const std::string &where,
                                uint64_t min, uint64_t max, uint64_t &out) {
  if (v.is_number_unsigned()) {
    out = v.get<uint64_t>();
  } else if (v.is_number_integer()) {
    // Built in memory, a non-negative value may be stored signed.
    int64_t x = v.get<int64_t>();
    if (x < 0)
      return makeError(where, ": ", x, " is outside [", min, ", ", max, "]");
    out = static_cast<uint64_t>(x);
  } else {
    return makeError(where, ": expected an integer, got ", v.type_name());
  }
  if (out < min || out > max)
    return makeError(where, ": ", out, " is outside [", min, ", ", max, "]");
  return Status::ok();
}

Status JsonObjectReader::toIntArray(const json &v, const std::string &where,
                                    std::vector<int64_t> &out) {
  if (!v.is_array())
    return makeError(where, ": expected an array of integers, got ",
                     v.type_name());
  out.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t x;
    QTENSOR_TRY(toInt(v[i], indexed(where, i), INT64_MIN, INT64_MAX, x));
    out.push_back(x);
  }
  return Status::ok();
}

Expected<nlohmann::json> qtensor::parseStrictJson(std::string_view text,
                                                  const std::string &name,
                                                  uint64_t maxBytes,
                                                  unsigned maxDepth,
                                                  std::string_view nulHint) {
  using json = nlohmann::json;
  if (text.size() > maxBytes)
    return makeError(name, ": ", text.size(), " bytes exceed the limit of ",
                     maxBytes);
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    return makeError(name, ": NUL byte at offset ", nul, nulHint);
  // The callback sees every object and key, so duplicates and excessive
  // nesting are found during the parse.
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  bool tooDeep = false;
  auto callback = [&](int depth, json::parse_event_t event,
                      json &parsed) -> bool {
    switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start:
      if (depth >= static_cast<int>(maxDepth)) {
        tooDeep = true;
        return false;
      }
      if (event == json::parse_event_t::object_start)
        keys.emplace_back();
      return true;
    case json::parse_event_t::key:
      if (!keys.empty() &&
          !keys.back().insert(parsed.get<std::string>()).second &&
          duplicate.empty())
        duplicate = parsed.get<std::string>();
      return true;
    case json::parse_event_t::object_end:
      if (!keys.empty())
        keys.pop_back();
      return true;
    default:
      return true;
    }
  };
  json j;
  try {
    j = json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception &e) {
    return makeError(name, ": not valid JSON: ", e.what());
  } catch (const std::exception &e) {
    return makeError(name, ": cannot parse: ", e.what());
  }
  if (tooDeep)
    return makeError(name, ": JSON nesting deeper than ", maxDepth, " levels");
  if (!duplicate.empty())
    return makeError(name, ": duplicate key \"", duplicate,
                     "\" in one JSON object");
  return j;
}

Expected<nlohmann::json> qtensor::readStrictJsonFile(const std::string &path,
                                                     uint64_t maxBytes,
                                                     unsigned maxDepth) {
  QTENSOR_ASSIGN_OR_RETURN(MappedFile bytes, MappedFile::open(path));
  return parseStrictJson(
      {reinterpret_cast<const char *>(bytes.data()), size_t(bytes.size())},
      path, maxBytes, maxDepth);
}

Expected<std::vector<std::string>>
qtensor::readJsonStringList(const std::string &path, uint64_t maxBytes) {
  QTENSOR_ASSIGN_OR_RETURN(nlohmann::json list,
                           readStrictJsonFile(path, maxBytes, 4));
  if (!list.is_array())
    return makeError(path, ": expected a JSON array of strings");
  std::vector<std::string> out;
  for (const nlohmann::json &t : list) {
    if (!t.is_string())
      return makeError(path, ": expected a JSON array of strings");
    out.push_back(t.get<std::string>());
  }
  return out;
}
