//===- GGUFJson.cpp - GGUF metadata values as JSON ------------------------===//

#include "qtensor/Formats/GGUFJson.h"

nlohmann::json qtensor::ggufValueToJson(const GGUFValue &v,
                                        uint64_t arrayPreview) {
  using json = nlohmann::json;
  switch (v.type()) {
  case GGUFValueType::String:
    return std::string(*v.get<std::string_view>());
  case GGUFValueType::Bool:
    return *v.get<bool>();
  case GGUFValueType::Float32:
  case GGUFValueType::Float64:
    return *v.asDouble();
  case GGUFValueType::Array: {
    if (v.arraySize() > arrayPreview)
      return {{"array_of", ggufValueTypeName(v.arrayElementType())},
              {"length", v.arraySize()}};
    json items = json::array();
    if (v.arrayElementType() == GGUFValueType::String) {
      for (std::string_view s : v.arrayStrings())
        items.push_back(std::string(s));
    } else if (v.arrayElementType() == GGUFValueType::Array) {
      for (const GGUFValue &child : v.arrayValues())
        items.push_back(ggufValueToJson(child, arrayPreview));
    } else {
      for (uint64_t i = 0; i < v.arraySize(); ++i) {
        if (auto d = v.arrayDouble(i))
          items.push_back(*d);
        else if (auto s = v.arraySigned(i))
          items.push_back(*s);
        else if (auto u = v.arrayUnsigned(i))
          items.push_back(*u);
      }
    }
    return items;
  }
  default:
    if (auto s = v.asSigned())
      return *s;
    if (auto u = v.asUnsigned())
      return *u;
    return nullptr;
  }
}
