//===- FuzzArtifact.cpp - libFuzzer target for a whole artifact directory -===//
//
// Arbitrary bytes -> a directory of files -> openArtifact and loadModel
// (issue 14, seed 0x05: every file of an artifact is untrusted). The input
// is a sequence of files, each `[u8 name length][name][u32 LE size][bytes]`
// (test/fuzz/pack_artifact.py packs a real artifact into one). Whoever made
// an artifact controls its hashes too, so before loading, the harness sets
// manifest.json's `bytes` and `sha256` of every listed file it was given to
// the file's real ones: the fuzzer reaches the shard headers, the records
// and the plan instead of stopping at the first hash. Loading uses no
// kernel builder and no trust, so no code from the input is ever loaded;
// ops that load (the full-dequant fallback) are run once on T = 1.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/Activations.h"
#include "qtensor/Runtime/Loader.h"
#include "qtensor/Support/Sha256.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>

using namespace qtensor;

namespace {

constexpr size_t kMaxFiles = 16;

bool safeName(const std::string &name) {
  if (name.empty() || name.size() > 100 || name[0] == '.')
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-')
      return false;
  return true;
}

/// The files of the input, by name; parsing stops at the first malformed
/// entry.
std::map<std::string, std::string> unpack(const uint8_t *data, size_t size) {
  std::map<std::string, std::string> files;
  size_t at = 0;
  while (files.size() < kMaxFiles && at < size) {
    size_t nameLen = data[at++];
    if (at + nameLen + 4 > size)
      break;
    std::string name(reinterpret_cast<const char *>(data + at), nameLen);
    at += nameLen;
    uint32_t len = uint32_t(data[at]) | uint32_t(data[at + 1]) << 8 |
                   uint32_t(data[at + 2]) << 16 | uint32_t(data[at + 3]) << 24;
    at += 4;
    if (len > size - at)
      break;
    if (safeName(name))
      files[name].assign(reinterpret_cast<const char *>(data + at), len);
    at += len;
  }
  return files;
}

/// manifest.json with every listed file's size and SHA-256 made true.
void fixHashes(std::map<std::string, std::string> &files) {
  auto it = files.find("manifest.json");
  if (it == files.end())
    return;
  nlohmann::json m = nlohmann::json::parse(it->second, nullptr, false);
  if (m.is_discarded() || !m.is_object() || !m.contains("files") ||
      !m["files"].is_array())
    return;
  for (nlohmann::json &f : m["files"]) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string())
      continue;
    auto file = files.find(f["path"].get<std::string>());
    if (file == files.end())
      continue;
    auto hex = sha256Hex(reinterpret_cast<const uint8_t *>(file->second.data()),
                         file->second.size());
    if (!hex)
      continue;
    f["bytes"] = file->second.size();
    f["sha256"] = *hex;
  }
  it->second = m.dump();
}

const std::string &scratchDir() {
  static std::string dir = [] {
    std::string pattern = std::filesystem::temp_directory_path().string() +
                          "/fuzz-artifact-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    return std::string(::mkdtemp(buf.data()) ? buf.data() : "");
  }();
  return dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &dir = scratchDir();
  if (dir.empty())
    std::abort();
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ec))
    std::filesystem::remove_all(entry.path(), ec);
  std::map<std::string, std::string> files = unpack(data, size);
  fixHashes(files);
  for (const auto &[name, bytes] : files) {
    std::ofstream out(dir + "/" + name, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
  }
  runtime::LoadOptions options;
  options.backend = runtime::BackendChoice::Host;
  options.warmup = false;
  options.decoder = false;
  for (const auto &[name, bytes] : files)
    options.decoder |= name.rfind("program.", 0) == 0;
  options.code = runtime::ArtifactCodePolicy{}; // no builder, no trust
  auto model = runtime::loadModel(dir, options);
  if (!model)
    return 0;
  for (const runtime::OpPlan &op : (*model)->plan().ops) {
    auto x = runtime::deterministicActivations(
        op.activation, 1, op.k(), runtime::kDefaultActivationSeed, op.tensor);
    if (x)
      (void)(*model)->run(op.tensor, *x);
  }
  return 0;
}
