//===- SafetensorsIndex.cpp - Sharded checkpoint index --------------------===//

#include "qtensor/Formats/SafetensorsIndex.h"
#include "qtensor/Support/CheckedMath.h"

#include "SafetensorsDetail.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <set>
#include <unistd.h>

using namespace qtensor;
using namespace qtensor::safetensors;
using impl::quote;

namespace {

using json = nlohmann::json;

/// Builds a DOM like nlohmann's own SAX DOM parser, but stops at the first
/// duplicate key (nlohmann would silently keep the last) and at nesting deeper
/// than `maxDepth`.
class StrictDomSax final : public nlohmann::json_sax<json> {
public:
  explicit StrictDomSax(size_t maxDepth) : maxDepth(maxDepth) {}
  json root;
  std::string error;

  bool null() override { return value(json(nullptr)); }
  bool boolean(bool v) override { return value(json(v)); }
  bool number_integer(number_integer_t v) override { return value(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return value(json(v)); }
  bool number_float(number_float_t v, const string_t &) override {
    return value(json(v));
  }
  bool string(string_t &v) override { return value(json(std::move(v))); }
  bool binary(binary_t &) override { return fail("unexpected binary value"); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t &k) override {
    json &obj = *stack.back();
    if (obj.contains(k))
      return fail("duplicate key " + quote(k) + " in " + where());
    slot = &obj[k];
    keys.back() = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    return fail("not valid JSON (byte offset " +
                std::to_string(position ? position - 1 : 0) +
                "): " + impl::jsonErrorText(ex.what()));
  }

private:
  bool fail(std::string message) {
    if (error.empty())
      error = std::move(message);
    return false;
  }
  std::string where() const {
    if (stack.size() <= 1)
      return "the top-level object";
    std::string path;
    for (size_t i = 0; i + 1 < keys.size(); ++i)
      path += "[" + quote(keys[i]) + "]";
    return path;
  }
  json *place(json v) {
    if (stack.empty()) {
      root = std::move(v);
      return &root;
    }
    json &top = *stack.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *slot = std::move(v);
    return slot;
  }
  bool value(json v) {
    place(std::move(v));
    return true;
  }
  bool open(json v) {
    if (stack.size() >= maxDepth)
      return fail("nesting deeper than " + std::to_string(maxDepth) +
                  " levels");
    stack.push_back(place(std::move(v)));
    keys.emplace_back();
    return true;
  }
  bool close() {
    stack.pop_back();
    keys.pop_back();
    return true;
  }

  size_t maxDepth;
  std::vector<json *> stack;
  std::vector<std::string> keys;
  json *slot = nullptr;
};

/// Checks a weight_map value; returns an empty string when it is acceptable.
std::string checkShardName(const std::string &name) {
  if (name.empty())
    return "is empty";
  if (name.find('\0') != std::string::npos)
    return "contains a NUL byte";
  if (name.find('\\') != std::string::npos)
    return "contains a backslash";
  if (name.front() == '/')
    return "is an absolute path";
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    std::string part = name.substr(
        start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty())
      return "has an empty path component";
    if (part == "." || part == "..")
      return "has a \"" + part + "\" path component";
    if (slash == std::string::npos)
      break;
    start = slash + 1;
  }
  return "";
}

/// The canonical path of an open descriptor (what was actually opened).
std::optional<std::string> canonicalOf(int fd, const std::string &fallback) {
  char buf[PATH_MAX + 1];
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(link.c_str(), buf, PATH_MAX);
  if (n > 0 && buf[0] == '/') {
    buf[n] = '\0';
    return std::string(buf, static_cast<size_t>(n));
  }
  char *real = ::realpath(fallback.c_str(), nullptr);
  if (!real)
    return std::nullopt;
  std::string out(real);
  std::free(real);
  return out;
}

/// "an array", "a string", "null"... for messages.
std::string describe(const json &v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::object:
    return "an object";
  case json::value_t::array:
    return "an array";
  case json::value_t::string:
    return "a string";
  case json::value_t::boolean:
    return "a boolean";
  default:
    return "a number";
  }
}

bool isInside(const std::string &path, const std::string &root) {
  if (root == "/")
    return path.size() > 1 && path.front() == '/';
  return path.size() > root.size() + 1 &&
         path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

} // namespace

const TensorView *SafetensorsIndex::find(std::string_view name) const {
  auto it = where.find(name);
  if (it == where.end())
    return nullptr;
  return &files[it->second.first].tensors()[it->second.second];
}

const SafetensorsFile *SafetensorsIndex::shardOf(std::string_view name) const {
  auto it = where.find(name);
  return it == where.end() ? nullptr : &files[it->second.first];
}

Expected<SafetensorsIndex> SafetensorsIndex::open(const std::string &indexPath,
                                                  const IndexOptions &options) {
  const std::string &P = indexPath;
  try {
    // 1. The index JSON.
    auto mapped = impl::mapFile(P);
    if (!mapped)
      return mapped.error();
    if (mapped->size() > options.maxIndexBytes)
      return makeError(P, ": index is ", mapped->size(),
                       " bytes, above the limit of ", options.maxIndexBytes);
    const uint8_t *bytes = mapped->data();
    size_t size = static_cast<size_t>(mapped->size());
    if (auto bad = impl::findInvalidUtf8(bytes, size))
      return makeError(P, ": not valid UTF-8 at byte offset ", *bad);
    if (size == 0)
      return makeError(P, ": index file is empty; expected a JSON object");
    // nlohmann's lexer stops at a NUL byte as if the input ended there.
    if (const void *nul = std::memchr(bytes, 0, size))
      return makeError(P, ": contains a NUL byte at byte offset ",
                       static_cast<const uint8_t *>(nul) - bytes);
    StrictDomSax sax(/*maxDepth=*/32);
    const char *text = reinterpret_cast<const char *>(bytes);
    bool ok = json::sax_parse(text, text + size, &sax,
                              json::input_format_t::json, /*strict=*/true,
                              /*ignore_comments=*/false);
    if (!ok || !sax.error.empty())
      return makeError(P, ": ",
                       sax.error.empty() ? "not valid JSON" : sax.error);
    const json &root = sax.root;
    if (!root.is_object())
      return makeError(P, ": index is ", describe(root),
                       "; expected an object with metadata and weight_map");

    auto meta = root.find("metadata");
    if (meta == root.end())
      return makeError(P, ": missing \"metadata\" (expected {\"total_size\": "
                          "<bytes>})");
    if (!meta->is_object())
      return makeError(P, ": \"metadata\" is ", describe(*meta),
                       "; expected an object");
    auto total = meta->find("total_size");
    if (total == meta->end())
      return makeError(P, ": metadata: missing \"total_size\"");
    if (!total->is_number_unsigned())
      return makeError(P, ": metadata.total_size is ",
                       total->is_number_integer() ? std::string("negative")
                                                  : describe(*total),
                       "; expected a non-negative integer byte count");

    auto wm = root.find("weight_map");
    if (wm == root.end())
      return makeError(P, ": missing \"weight_map\"");
    if (!wm->is_object())
      return makeError(P, ": \"weight_map\" is ", describe(*wm),
                       "; expected an object of tensor name -> shard file");

    SafetensorsIndex index;
    index.indexPath = P;
    index.declaredTotal = total->get<uint64_t>();
    std::set<std::string> shardSet;
    for (auto it = wm->begin(); it != wm->end(); ++it) {
      if (!it->is_string())
        return makeError(P, ": weight_map[", quote(it.key()), "] is ",
                         describe(*it), "; expected a shard file name");
      const std::string &shard = it->get_ref<const std::string &>();
      std::string why = checkShardName(shard);
      if (!why.empty())
        return makeError(P, ": weight_map[", quote(it.key()), "]: shard name ",
                         quote(shard), " ", why,
                         "; expected a relative file name inside the index's "
                         "directory");
      shardSet.insert(shard);
      if (shardSet.size() > options.maxShards)
        return makeError(P, ": more than ", options.maxShards,
                         " shards (the limit)");
      index.map.emplace(it.key(), shard);
    }

    // 2. Where shards may live.
    std::string dir = ".";
    if (size_t slash = P.rfind('/'); slash != std::string::npos)
      dir = slash == 0 ? "/" : P.substr(0, slash);
    std::string rootDir = options.root.empty() ? dir : options.root;
    char *realRoot = ::realpath(rootDir.c_str(), nullptr);
    if (!realRoot)
      return makeError(P, ": cannot resolve the shard root ", quote(rootDir),
                       ": ", std::strerror(errno));
    std::string canonicalRoot(realRoot);
    std::free(realRoot);

    // 3. Open and validate every shard.
    index.names.assign(shardSet.begin(), shardSet.end());
    index.files.reserve(index.names.size());
    for (const std::string &shard : index.names) {
      std::string shardPath = dir == "/" ? "/" + shard : dir + "/" + shard;
      int fd = ::open(shardPath.c_str(),
                      O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
      if (fd < 0)
        return makeError(P, ": shard ", quote(shard), " (", shardPath,
                         "): cannot open: ", std::strerror(errno));
      auto real = canonicalOf(fd, shardPath);
      if (!real || !isInside(*real, canonicalRoot)) {
        ::close(fd);
        return makeError(P, ": shard ", quote(shard), " resolves to ",
                         real ? quote(*real) : std::string("an unknown path"),
                         ", outside the allowed root ", quote(canonicalRoot),
                         " (escaping symlink?)");
      }
      auto mappedShard = MappedFile::fromDescriptor(fd, shardPath);
      if (!mappedShard)
        return makeError(P, ": shard ", quote(shard), ": ",
                         mappedShard.message());
      auto file = SafetensorsFile::fromMappedFile(mappedShard.take(),
                                                  options.shardLimits);
      if (!file)
        return makeError(P, ": shard ", quote(shard),
                         " is invalid: ", file.message());
      index.files.push_back(file.take());
    }

    // 4. Inventory: each tensor in exactly the shard weight_map names.
    uint64_t sum = 0;
    for (size_t s = 0; s < index.files.size(); ++s) {
      const SafetensorsFile &file = index.files[s];
      const std::string &shard = index.names[s];
      for (size_t t = 0; t < file.tensors().size(); ++t) {
        const TensorView &v = file.tensors()[t];
        auto mapIt = index.map.find(v.name);
        if (mapIt == index.map.end())
          return makeError(P, ": tensor ", quote(v.name), " is in shard ",
                           quote(shard), " but not in weight_map");
        if (mapIt->second != shard)
          return makeError(P, ": tensor ", quote(v.name), " is in shard ",
                           quote(shard), " but weight_map assigns it to ",
                           quote(mapIt->second));
        index.where.emplace(v.name, std::make_pair(s, t));
        auto next = checkedAdd(sum, v.byteSize());
        if (!next)
          return makeError(P, ": tensor bytes overflow 64 bits");
        sum = *next;
      }
    }
    for (const auto &[tensor, shard] : index.map)
      if (!index.where.count(tensor))
        return makeError(P, ": weight_map[", quote(tensor), "] names shard ",
                         quote(shard), " but that shard has no such tensor");
    index.actualTotal = sum;
    if (options.checkTotalSize && sum != index.declaredTotal)
      return makeError(P, ": metadata.total_size is ", index.declaredTotal,
                       " but the shards' tensors hold ", sum,
                       " bytes (total_size counts tensor payload bytes, "
                       "excluding headers)");
    return index;
  } catch (const std::exception &e) {
    return makeError(P, ": cannot read the index: ", e.what());
  } catch (...) {
    return makeError(P, ": cannot read the index");
  }
}
