//===- GGUFWriter.cpp - Metadata-only GGUF files ----------------------------===//

#include "qtensor/Formats/GGUFWriter.h"
#include "qtensor/Support/CheckedMath.h"
#include "qtensor/Support/FileIO.h"

#include <cstring>
#include <set>

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

namespace {
constexpr uint64_t kAlignment = 32; // general.alignment's default
uint64_t aligned(uint64_t n) {
  return (n + kAlignment - 1) / kAlignment * kAlignment;
}
} // namespace

void GGUFFileWriter::setString(const std::string &key, std::string_view value) {
  Out o;
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::String));
  o.str(value);
  metadata.emplace_back(key, std::move(o.bytes));
}

void GGUFFileWriter::setUInt32(const std::string &key, uint32_t value) {
  Out o;
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::UInt32));
  o.put<uint32_t>(value);
  metadata.emplace_back(key, std::move(o.bytes));
}

void GGUFFileWriter::setFloat32(const std::string &key, float value) {
  Out o;
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::Float32));
  o.put<float>(value);
  metadata.emplace_back(key, std::move(o.bytes));
}

void GGUFFileWriter::setBool(const std::string &key, bool value) {
  Out o;
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::Bool));
  o.put<uint8_t>(value ? 1 : 0);
  metadata.emplace_back(key, std::move(o.bytes));
}

void GGUFFileWriter::setStringArray(const std::string &key,
                                    const std::vector<std::string> &values) {
  Out o;
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::Array));
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::String));
  o.put<uint64_t>(values.size());
  for (const std::string &v : values)
    o.str(v);
  metadata.emplace_back(key, std::move(o.bytes));
}

void GGUFFileWriter::setFloat32Array(const std::string &key,
                                     const std::vector<float> &values) {
  Out o;
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::Array));
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::Float32));
  o.put<uint64_t>(values.size());
  for (float v : values)
    o.put<float>(v);
  metadata.emplace_back(key, std::move(o.bytes));
}

void GGUFFileWriter::setInt32Array(const std::string &key,
                                   const std::vector<int32_t> &values) {
  Out o;
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::Array));
  o.put<uint32_t>(static_cast<uint32_t>(GGUFValueType::Int32));
  o.put<uint64_t>(values.size());
  for (int32_t v : values)
    o.put<int32_t>(v);
  metadata.emplace_back(key, std::move(o.bytes));
}

Expected<std::vector<uint8_t>> GGUFFileWriter::metadataOnlyBytes() const {
  if (!tensors.empty())
    return makeError("a metadata-only GGUF file has no tensors");
  std::set<std::string_view> keys;
  Out o;
  o.bytes.insert(o.bytes.end(), {'G', 'G', 'U', 'F'});
  o.put<uint32_t>(3);
  o.put<uint64_t>(0);
  o.put<uint64_t>(metadata.size());
  for (const auto &[key, value] : metadata) {
    if (!keys.insert(key).second)
      return makeError("metadata ", key, " is set twice");
    o.str(key);
    o.bytes.insert(o.bytes.end(), value.begin(), value.end());
  }
  return std::move(o.bytes);
}

Status GGUFFileWriter::copyMetadata(const GGUFFile &source,
                                    std::string_view prefix) {
  for (const GGUFKeyValue &kv : source.metadata()) {
    if (kv.key.substr(0, prefix.size()) != prefix)
      continue;
    Out o;
    o.put<uint32_t>(static_cast<uint32_t>(kv.value.type()));
    if (!putValue(o, kv.value))
      return makeError(source.name(), ": metadata ", kv.key,
                       " is a nested array, which is not copied");
    metadata.emplace_back(std::string(kv.key), std::move(o.bytes));
  }
  return Status::ok();
}

Status GGUFFileWriter::addTensor(GGUFTensorToWrite t) {
  if (t.name.empty() || t.name.size() > 64)
    return makeError("GGUF tensor name \"", t.name, "\" must be 1 to 64 bytes");
  for (const GGUFTensorToWrite &o : tensors)
    if (o.name == t.name)
      return makeError("GGUF tensor ", t.name, " is added twice");
  if (t.ne.empty() || t.ne.size() > 4)
    return makeError("GGUF tensor ", t.name, ": rank ", t.ne.size(),
                     " is not 1 to 4");
  const GGMLTypeTraits &traits = ggmlTypeTraits(t.type);
  if (t.ne[0] % traits.blockSize)
    return makeError("GGUF tensor ", t.name, ": ne[0] = ", t.ne[0],
                     " is not a multiple of the ", traits.blockSize,
                     "-element blocks of ", ggmlTypeName(t.type));
  std::vector<int64_t> dims(t.ne.begin(), t.ne.end());
  dims[0] /= traits.blockSize;
  auto blocks = checkedElementCount(dims, uint64_t(1) << 50);
  if (!blocks)
    return makeError("GGUF tensor ", t.name, ": too many elements");
  sizes.push_back(*blocks * traits.typeSize);
  tensors.push_back(std::move(t));
  return Status::ok();
}

uint64_t GGUFFileWriter::dataBytes() const {
  uint64_t total = 0;
  for (uint64_t size : sizes)
    total = aligned(total) + size;
  return total;
}

Status GGUFFileWriter::write(const std::string &path) const {
  std::set<std::string_view> keys;
  for (const auto &[key, value] : metadata)
    if (!keys.insert(key).second)
      return makeError(path, ": metadata ", key, " is set twice");
  Out header;
  header.bytes.insert(header.bytes.end(), {'G', 'G', 'U', 'F'});
  header.put<uint32_t>(3);
  header.put<uint64_t>(tensors.size());
  header.put<uint64_t>(metadata.size());
  for (const auto &[key, value] : metadata) {
    header.str(key);
    header.bytes.insert(header.bytes.end(), value.begin(), value.end());
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const GGUFTensorToWrite &t = tensors[i];
    offset = aligned(offset);
    header.str(t.name);
    header.put<uint32_t>(uint32_t(t.ne.size()));
    for (uint64_t d : t.ne)
      header.put<uint64_t>(d);
    header.put<uint32_t>(static_cast<uint32_t>(t.type));
    header.put<uint64_t>(offset);
    offset += sizes[i];
  }
  header.bytes.resize(aligned(header.bytes.size()), 0);
  return writeFileAtomicallyWith(path, [&](int fd, uint64_t &at) -> Status {
    QTENSOR_TRY(
        writeAll(fd, header.bytes.data(), header.bytes.size(), path, at));
    const uint64_t dataStart = at;
    static const uint8_t zeros[kAlignment] = {};
    for (size_t i = 0; i < tensors.size(); ++i) {
      uint64_t pad = aligned(at - dataStart) - (at - dataStart);
      QTENSOR_TRY(writeAll(fd, zeros, pad, path, at));
      QTENSOR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, tensors[i].bytes());
      if (bytes.size() != sizes[i])
        return makeError(path, ": tensor ", tensors[i].name, " has ",
                         bytes.size(), " bytes, ",
                         ggmlTypeName(tensors[i].type), " needs ", sizes[i]);
      QTENSOR_TRY(writeAll(fd, bytes.data(), bytes.size(), path, at));
    }
    return Status::ok();
  });
}
