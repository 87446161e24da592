//===- SafetensorsTestSupport.h - Shared helpers for the tests --*- C++ -*-===//
#ifndef QTENSOR_TEST_SAFETENSORS_SUPPORT_H
#define QTENSOR_TEST_SAFETENSORS_SUPPORT_H

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Support/Sha256.h"

#include "TestTempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace sttest {

namespace fs = std::filesystem;
using nlohmann::json;

inline fs::path corpusDir() { return fs::path(QTENSOR_CORPUS_DIR); }
inline bool corpusPresent() {
  std::error_code ec;
  return fs::is_regular_file(corpusDir() / "manifest.json", ec);
}
#define ST_REQUIRE_CORPUS()                                                    \
  do {                                                                         \
    if (!::sttest::corpusPresent())                                            \
      GTEST_SKIP() << "test corpus not found at "                              \
                   << ::sttest::corpusDir().string()                           \
                   << " (shared/corpus is absent)";                            \
  } while (0)

/// Why manifest.json could not be parsed ("" when it could, or is absent).
inline std::string &manifestError() {
  static std::string error;
  return error;
}

/// The manifest, or null when the corpus is absent or unreadable (see
/// manifestError(); a test reports it instead of crashing test discovery).
inline const json &manifest() {
  static const json m = []() -> json {
    if (!corpusPresent())
      return json();
    try {
      std::ifstream in(corpusDir() / "manifest.json");
      return json::parse(in);
    } catch (const std::exception &e) {
      manifestError() = e.what();
      return json();
    }
  }();
  return m;
}

/// Manifest entries of one format ("safetensors", "safetensors-index-json").
inline std::vector<json> manifestEntries(const std::string &format) {
  std::vector<json> out;
  const json &m = manifest();
  if (m.is_object() && m.contains("files"))
    for (const json &f : m["files"])
      if (f.value("format", "") == format)
        out.push_back(f);
  return out;
}

/// A gtest-safe name for a corpus path.
inline std::string caseName(const std::string &path) {
  std::string s;
  for (char c : path)
    s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

inline std::string readAll(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string hexDigest(const uint8_t *data, size_t size) {
  return *qtensor::sha256Hex(data, size);
}

/// A fresh temporary directory, removed with its contents on destruction.
class TempDir : public qtensor::test::TempDir {
public:
  TempDir() : qtensor::test::TempDir("qtensor-st") {}

  /// Writes `bytes` to `name` inside the directory; returns the full path.
  std::string write(const std::string &name, const std::string &bytes) const {
    fs::path p = *this / name;
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }
};

/// 8-byte little-endian length + header + payload.
inline std::string stBytes(const std::string &header,
                           const std::string &payload = "") {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>(n >> (8 * i));
  return out + header + payload;
}

/// Length prefix that lies: declares `declared` bytes of header.
inline std::string lengthPrefix(uint64_t declared) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>(declared >> (8 * i));
  return out;
}

} // namespace sttest

#endif // QTENSOR_TEST_SAFETENSORS_SUPPORT_H
