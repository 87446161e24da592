//===- InspectReport.cpp - An inspection report as JSON and text ----------===//

#include "qtensor/Inspect/InspectReport.h"

#include <sstream>

using namespace qtensor::inspect;
using json = nlohmann::json;

json InspectReport::toJson() const {
  json tensorList = json::array();
  for (const InspectedTensor &t : tensors) {
    json entry = {{"name", t.name},
                  {"type", t.type},
                  {"shape", t.shape},
                  {"offset", t.absoluteOffset},
                  {"bytes", t.bytes}};
    if (!t.file.empty())
      entry["file"] = t.file;
    if (!t.descriptor.is_null())
      entry["descriptor"] = t.descriptor;
    tensorList.push_back(std::move(entry));
  }
  return {{"ok", ok()},
          {"error", error ? json(*error) : json(nullptr)},
          {"path", path},
          {"format", format ? json(*format) : json(nullptr)},
          {"summary", summary},
          {"metadata", metadata},
          {"tensors", std::move(tensorList)}};
}

namespace {
std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string valueText(const json &v) {
  if (v.is_string())
    return v.get<std::string>();
  std::string s = v.dump();
  if (s.size() > 120)
    s = s.substr(0, 117) + "...";
  return s;
}
} // namespace

std::string InspectReport::toText() const {
  std::ostringstream os;
  os << path << "\n";
  os << "  format:   " << (format ? *format : "unknown") << "\n";
  for (const auto &[key, value] : summary.items())
    os << "  " << key << ": " << valueText(value) << "\n";
  if (!metadata.empty()) {
    os << "  metadata (" << metadata.size() << "):\n";
    for (const auto &[key, value] : metadata.items())
      os << "    " << key << " = " << valueText(value) << "\n";
  }
  if (!tensors.empty()) {
    size_t nameWidth = 4, typeWidth = 4;
    for (const InspectedTensor &t : tensors) {
      nameWidth = std::max(nameWidth, t.name.size());
      typeWidth = std::max(typeWidth, t.type.size());
    }
    os << "  tensors (" << tensors.size() << "):\n";
    for (const InspectedTensor &t : tensors) {
      os << "    " << t.name << std::string(nameWidth - t.name.size() + 2, ' ')
         << t.type << std::string(typeWidth - t.type.size() + 2, ' ')
         << shapeText(t.shape) << "  @" << t.absoluteOffset << "  " << t.bytes
         << " B";
      if (!t.file.empty())
        os << "  " << t.file;
      os << "\n";
    }
  }
  os << "  verdict:  " << (ok() ? "valid" : "INVALID: " + *error) << "\n";
  return os.str();
}
