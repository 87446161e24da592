//===- GGUFTestSupport.h - Corpus access and a tiny GGUF writer -*- C++ -*-===//
#ifndef QTENSOR_TEST_FORMATS_GGUF_TESTSUPPORT_H
#define QTENSOR_TEST_FORMATS_GGUF_TESTSUPPORT_H

#include "qtensor/Support/Sha256.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace qtensor::gguf_test {

inline std::filesystem::path corpusDir() { return QTENSOR_CORPUS_DIR; }

inline bool corpusPresent() {
  return std::filesystem::exists(corpusDir() / "manifest.json");
}

/// The manifest, parsed once (call only when corpusPresent()).
inline const nlohmann::json &manifest() {
  static const nlohmann::json m = [] {
    std::ifstream in(corpusDir() / "manifest.json");
    return nlohmann::json::parse(in);
  }();
  return m;
}

inline std::vector<uint8_t> readBytes(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

inline std::string hexDigest(const void *data, size_t n) {
  return *qtensor::sha256Hex(static_cast<const uint8_t *>(data), n);
}

/// Little-endian GGUF byte builder for hand-made cases.
struct Writer {
  std::vector<uint8_t> b;
  Writer &raw(const void *p, size_t n) {
    const auto *c = static_cast<const uint8_t *>(p);
    b.insert(b.end(), c, c + n);
    return *this;
  }
  Writer &u8(uint8_t v) { return raw(&v, 1); }
  Writer &u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Writer &u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    return *this;
  }
  Writer &f32(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return u32(bits);
  }
  Writer &str(const std::string &s) {
    u64(s.size());
    return raw(s.data(), s.size());
  }
  Writer &header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
    raw("GGUF", 4);
    u32(version);
    u64(tensors);
    return u64(kvs);
  }
  /// A KV whose value is a UINT32.
  Writer &kvU32(const std::string &key, uint32_t v) {
    str(key);
    u32(4);
    return u32(v);
  }
  Writer &kvStr(const std::string &key, const std::string &v) {
    str(key);
    u32(8);
    return str(v);
  }
  Writer &tensor(const std::string &name, std::vector<uint64_t> ne,
                 uint32_t type, uint64_t offset) {
    str(name);
    u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne)
      u64(d);
    u32(type);
    return u64(offset);
  }
  Writer &padTo(size_t alignment) {
    while (b.size() % alignment)
      b.push_back(0);
    return *this;
  }
  Writer &zeros(size_t n) {
    b.insert(b.end(), n, 0);
    return *this;
  }
};

} // namespace qtensor::gguf_test

#endif // QTENSOR_TEST_FORMATS_GGUF_TESTSUPPORT_H
