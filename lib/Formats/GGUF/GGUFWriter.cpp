//===- GGUFWriter.cpp - Metadata-only GGUF files ----------------------------===//

#include "qtensor/Formats/GGUFWriter.h"

#include <cstring>

using namespace qtensor;

namespace {

struct Out {
  std::vector<uint8_t> bytes;
  template <typename T> void put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T)); // the reader is little-endian only too
    bytes.insert(bytes.end(), b, b + sizeof(T));
  }
  void str(std::string_view s) {
    put<uint64_t>(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
};

template <typename T> bool putScalar(Out &o, const GGUFValue &v) {
  std::optional<T> x = v.get<T>();
  if (!x)
    return false;
  if constexpr (std::is_same_v<T, bool>)
    o.put<uint8_t>(*x ? 1 : 0);
  else
    o.put<T>(*x);
  return true;
}

bool putValue(Out &o, const GGUFValue &v) {
  switch (v.type()) {
  case GGUFValueType::UInt8:
    return putScalar<uint8_t>(o, v);
  case GGUFValueType::Int8:
    return putScalar<int8_t>(o, v);
  case GGUFValueType::UInt16:
    return putScalar<uint16_t>(o, v);
  case GGUFValueType::Int16:
    return putScalar<int16_t>(o, v);
  case GGUFValueType::UInt32:
    return putScalar<uint32_t>(o, v);
  case GGUFValueType::Int32:
    return putScalar<int32_t>(o, v);
  case GGUFValueType::Float32:
    return putScalar<float>(o, v);
  case GGUFValueType::Bool:
    return putScalar<bool>(o, v);
  case GGUFValueType::UInt64:
    return putScalar<uint64_t>(o, v);
  case GGUFValueType::Int64:
    return putScalar<int64_t>(o, v);
  case GGUFValueType::Float64:
    return putScalar<double>(o, v);
  case GGUFValueType::String:
    o.str(*v.get<std::string_view>());
    return true;
  case GGUFValueType::Array:
    break;
  }
  GGUFValueType elem = v.arrayElementType();
  if (elem == GGUFValueType::Array)
    return false;
  o.put<uint32_t>(static_cast<uint32_t>(elem));
  o.put<uint64_t>(v.arraySize());
  if (elem == GGUFValueType::String) {
    for (std::string_view s : v.arrayStrings())
      o.str(s);
    return true;
  }
  uint64_t size = uint64_t(gguf_detail::scalarSize(elem)) * v.arraySize();
  if (size && v.arrayData())
    o.bytes.insert(o.bytes.end(), v.arrayData(), v.arrayData() + size);
  return true;
}

} // namespace

Expected<std::vector<uint8_t>>
qtensor::writeMetadataOnlyGGUF(const GGUFFile &source,
                               std::string_view prefix) {
  std::vector<const GGUFKeyValue *> keys;
  for (const GGUFKeyValue &kv : source.metadata())
    if (kv.key.substr(0, prefix.size()) == prefix)
      keys.push_back(&kv);
  Out o;
  o.bytes.insert(o.bytes.end(), {'G', 'G', 'U', 'F'});
  o.put<uint32_t>(3);
  o.put<uint64_t>(0); // tensors
  o.put<uint64_t>(keys.size());
  for (const GGUFKeyValue *kv : keys) {
    o.str(kv->key);
    o.put<uint32_t>(static_cast<uint32_t>(kv->value.type()));
    if (!putValue(o, kv->value))
      return makeError(source.name(), ": metadata ", kv->key,
                       " is a nested array, which is not copied");
  }
  return std::move(o.bytes);
}
