//===- SafetensorsReader.cpp - Validating safetensors reader --------------===//
//
// The header is parsed straight from the mapping by a SAX state machine that
// knows the schema: it stops at the first event that does not fit (a
// duplicate key, a wrong type, a fourth nesting level, one tensor too many), so
// nothing is ever built that the schema does not allow, and memory stays
// proportional to the accepted part of a header whose length was bounded
// first. Offsets are checked after the parse, in data order.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Support/CheckedMath.h"

#include "SafetensorsDetail.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <numeric>
#include <set>
#include <unistd.h>

using namespace qtensor;
using namespace qtensor::safetensors;
using impl::quote;

Expected<MappedFile> impl::mapFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return makeError(path, ": cannot open: ", std::strerror(errno));
  return MappedFile::fromDescriptor(fd, path);
}

namespace {

using json = nlohmann::json;

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string formatOffsets(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

/// A half-open byte range "[begin, end)".
std::string formatRange(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

std::string allDTypeNames() {
  std::string s;
  for (unsigned i = 0; i < kNumDTypes; ++i) {
    if (i)
      s += ", ";
    s += dtypeName(static_cast<DType>(i));
  }
  return s;
}

/// One tensor entry as parsed, before the offset checks.
struct RawTensor {
  std::string name;
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  std::vector<uint64_t> offsets;
  bool hasDtype = false, hasShape = false, hasOffsets = false;
};

/// Schema-aware SAX handler for the header object. Every method returns false
/// (stopping the parse) as soon as the input leaves the schema; `error` then
/// holds the reason (without the file-name prefix).
class HeaderSax final : public nlohmann::json_sax<json> {
public:
  HeaderSax(const Limits &limits, uint64_t headerStart)
      : limits(limits), headerStart(headerStart) {}

  std::string error;
  std::vector<RawTensor> tensors;
  std::map<std::string, std::string> metadata;
  bool metadataPresent = false;

  bool null() override { return scalar("null"); }
  bool boolean(bool) override { return scalar("a boolean"); }
  bool number_integer(number_integer_t v) override {
    if (state == State::Array)
      return arrayNegative(v);
    return scalar("a number");
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (state == State::Array)
      return arrayUnsigned(v);
    return scalar("a number");
  }
  bool number_float(number_float_t, const string_t &text) override {
    if (state == State::Array)
      return fail(arrayElement() + " = " + text +
                  " is not an integer; expected " + arrayExpectation());
    return scalar("a number");
  }
  bool string(string_t &v) override {
    if (state == State::Metadata) {
      metadata.emplace(std::move(metaKey), std::move(v));
      return true;
    }
    if (state == State::Tensor && field == Field::Dtype) {
      auto parsed = parseDType(v);
      if (!parsed)
        return fail(tensorPrefix() + "unknown dtype " + quote(v) +
                    "; expected one of " + allDTypeNames());
      tensors.back().dtype = *parsed;
      return true;
    }
    return scalar("a string");
  }
  bool binary(binary_t &) override { return scalar("a binary value"); }

  bool start_object(std::size_t) override {
    switch (state) {
    case State::Start:
      state = State::Root;
      return true;
    case State::Root:
      if (rootKeyIsMetadata) {
        metadataPresent = true;
        state = State::Metadata;
      } else {
        state = State::Tensor;
      }
      return true;
    default:
      return scalar("an object");
    }
  }
  bool end_object() override {
    switch (state) {
    case State::Root:
      state = State::Done;
      return true;
    case State::Metadata:
      state = State::Root;
      return true;
    case State::Tensor: {
      const RawTensor &t = tensors.back();
      const char *missing = !t.hasDtype     ? "dtype"
                            : !t.hasShape   ? "shape"
                            : !t.hasOffsets ? "data_offsets"
                                            : nullptr;
      if (missing)
        return fail(tensorPrefix() + "missing field \"" + missing +
                    "\"; expected exactly dtype, shape and data_offsets");
      state = State::Root;
      return true;
    }
    default:
      return fail("unexpected end of object");
    }
  }
  bool start_array(std::size_t) override {
    if (state == State::Tensor &&
        (field == Field::Shape || field == Field::Offsets)) {
      state = State::Array;
      return true;
    }
    return scalar("an array");
  }
  bool end_array() override {
    if (state != State::Array)
      return fail("unexpected end of array");
    RawTensor &t = tensors.back();
    if (field == Field::Offsets && t.offsets.size() != 2)
      return fail(tensorPrefix() + "data_offsets has " +
                  std::to_string(t.offsets.size()) +
                  " elements; expected [begin, end]");
    state = State::Tensor;
    return true;
  }

  bool key(string_t &k) override {
    switch (state) {
    case State::Root:
      if (k == "__metadata__") {
        if (metadataPresent || sawMetadataKey)
          return fail("duplicate key \"__metadata__\" in the header object");
        sawMetadataKey = true;
        rootKeyIsMetadata = true;
        return true;
      }
      rootKeyIsMetadata = false;
      if (!names.insert(k).second)
        return fail("duplicate tensor name " + quote(k) +
                    " in the header object");
      if (tensors.size() >= limits.maxTensors)
        return fail("more than " + std::to_string(limits.maxTensors) +
                    " tensors (the limit)");
      tensors.emplace_back();
      tensors.back().name = std::move(k);
      return true;
    case State::Metadata:
      if (metadata.count(k))
        return fail("__metadata__: duplicate key " + quote(k));
      if (metadata.size() >= limits.maxMetadataEntries)
        return fail("__metadata__ has more than " +
                    std::to_string(limits.maxMetadataEntries) +
                    " entries (the limit)");
      metaKey = std::move(k);
      return true;
    case State::Tensor: {
      RawTensor &t = tensors.back();
      bool *has = nullptr;
      if (k == "dtype") {
        field = Field::Dtype;
        has = &t.hasDtype;
      } else if (k == "shape") {
        field = Field::Shape;
        has = &t.hasShape;
      } else if (k == "data_offsets") {
        field = Field::Offsets;
        has = &t.hasOffsets;
      } else {
        return fail(tensorPrefix() + "unexpected field " + quote(k) +
                    "; expected exactly dtype, shape and data_offsets");
      }
      if (*has)
        return fail(tensorPrefix() + "duplicate field " + quote(k));
      *has = true;
      return true;
    }
    default:
      return fail("unexpected key " + quote(k));
    }
  }

  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    if (error.empty()) {
      uint64_t at = headerStart + (position ? position - 1 : 0);
      error = "header is not valid JSON (absolute byte offset " +
              std::to_string(at) + "): " + impl::jsonErrorText(ex.what());
    }
    return false;
  }

private:
  enum class State { Start, Root, Metadata, Tensor, Array, Done };
  enum class Field { Dtype, Shape, Offsets };

  bool fail(std::string message) {
    if (error.empty())
      error = std::move(message);
    return false;
  }

  std::string tensorPrefix() const {
    return "tensor " + quote(tensors.back().name) + ": ";
  }
  const char *fieldName() const {
    return field == Field::Dtype   ? "dtype"
           : field == Field::Shape ? "shape"
                                   : "data_offsets";
  }
  std::string arrayElement() const {
    const RawTensor &t = tensors.back();
    size_t index = field == Field::Shape ? t.shape.size() : t.offsets.size();
    return tensorPrefix() + fieldName() + "[" + std::to_string(index) + "]";
  }
  const char *arrayExpectation() const {
    return field == Field::Shape ? "an integer in [0, 2^63 - 1]"
                                 : "a non-negative integer";
  }

  /// A value of kind `kind` arrived where the schema does not allow it.
  bool scalar(const char *kind) {
    switch (state) {
    case State::Start:
      return fail(std::string("header is ") + kind + "; expected an object");
    case State::Root:
      if (rootKeyIsMetadata)
        return fail(std::string("\"__metadata__\" is ") + kind +
                    "; expected an object of string -> string");
      return fail(tensorPrefix() + "entry is " + kind +
                  "; expected an object with dtype, shape and data_offsets");
    case State::Metadata:
      return fail("__metadata__ " + quote(metaKey) + ": value is " + kind +
                  "; expected a string");
    case State::Tensor:
      return fail(tensorPrefix() + "field \"" + fieldName() + "\" is " + kind +
                  "; expected " +
                  (field == Field::Dtype   ? "a dtype string"
                   : field == Field::Shape ? "an array of non-negative integers"
                                           : "[begin, end]"));
    case State::Array:
      return fail(arrayElement() + " is " + kind + "; expected " +
                  arrayExpectation());
    case State::Done:
      break;
    }
    return fail(std::string("unexpected ") + kind + " after the header object");
  }

  bool arrayNegative(int64_t v) {
    // nlohmann reports "-0" as a signed zero integer.
    return fail(arrayElement() + " = " + (v == 0 ? "-0" : std::to_string(v)) +
                " is negative; expected " + arrayExpectation());
  }
  bool arrayUnsigned(uint64_t v) {
    RawTensor &t = tensors.back();
    if (field == Field::Shape) {
      if (v > static_cast<uint64_t>(INT64_MAX))
        return fail(arrayElement() + " = " + std::to_string(v) +
                    " exceeds 2^63 - 1");
      if (t.shape.size() >= limits.maxRank)
        return fail(tensorPrefix() + "shape has more than " +
                    std::to_string(limits.maxRank) +
                    " dimensions (the rank limit)");
      t.shape.push_back(static_cast<int64_t>(v));
      return true;
    }
    if (t.offsets.size() >= 2)
      return fail(
          tensorPrefix() +
          "data_offsets has more than 2 elements; expected [begin, end]");
    t.offsets.push_back(v);
    return true;
  }

  const Limits &limits;
  uint64_t headerStart;
  State state = State::Start;
  Field field = Field::Dtype;
  bool rootKeyIsMetadata = false;
  bool sawMetadataKey = false;
  std::string metaKey;
  std::set<std::string> names;
};

} // namespace

Expected<SafetensorsFile> SafetensorsFile::open(const std::string &path,
                                                const Limits &limits) {
  auto mapped = impl::mapFile(path);
  if (!mapped)
    return mapped.error();
  return fromMappedFile(mapped.take(), limits);
}

const TensorView *SafetensorsFile::find(std::string_view name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &views[it->second];
}

Expected<const TensorView *> SafetensorsFile::get(std::string_view name) const {
  if (const TensorView *v = find(name))
    return v;
  return makeError(path(), ": no tensor named ", quote(name));
}

Expected<SafetensorsFile>
SafetensorsFile::fromMappedFile(MappedFile mapped, const Limits &limits) {
  const std::string name = mapped.path();
  try {
    const uint8_t *bytes = mapped.data();
    const uint64_t fileSize = mapped.size();

    // 1. The length prefix.
    if (fileSize < 8)
      return makeError(name, ": file is ", fileSize,
                       " bytes, shorter than the 8-byte header-length prefix");
    uint64_t n = 0;
    for (int i = 0; i < 8; ++i)
      n |= static_cast<uint64_t>(bytes[i]) << (8 * i);
    if (n == 0)
      return makeError(name, ": header length (bytes 0-7) is 0; expected a "
                             "JSON object of at least 2 bytes");
    if (n > limits.maxHeaderBytes)
      return makeError(name, ": header length (bytes 0-7) is ", n,
                       ", above the limit of ", limits.maxHeaderBytes,
                       " bytes");
    if (n > fileSize - 8)
      return makeError(name, ": header length (bytes 0-7) is ", n, " but only ",
                       fileSize - 8, " bytes follow the prefix (file size ",
                       fileSize, ")");

    // 2. The header text.
    const char *header = reinterpret_cast<const char *>(bytes + 8);
    if (header[0] != '{') {
      uint8_t c = bytes[8];
      static const char *hex = "0123456789abcdef";
      std::string shown = "0x";
      shown += hex[c >> 4];
      shown += hex[c & 15];
      if (c > 0x20 && c < 0x7f)
        shown += std::string(" '") + static_cast<char>(c) + "'";
      return makeError(name,
                       ": header must begin with '{' at absolute byte "
                       "offset 8, found byte ",
                       shown,
                       "; expected a JSON object with no leading "
                       "whitespace");
    }
    if (auto bad = impl::findInvalidUtf8(bytes + 8, static_cast<size_t>(n)))
      return makeError(
          name, ": header is not valid UTF-8: bad byte 0x",
          [&] {
            static const char *hex = "0123456789abcdef";
            uint8_t c = bytes[8 + *bad];
            return std::string{hex[c >> 4], hex[c & 15]};
          }(),
          " at absolute byte offset ", 8 + *bad);

    // nlohmann's lexer takes a NUL byte for the end of input, which would
    // hide whatever follows it; raw NUL is never valid JSON anyway.
    if (const void *nul = std::memchr(header, 0, static_cast<size_t>(n)))
      return makeError(name,
                       ": header contains a NUL byte at absolute byte "
                       "offset ",
                       8 + (static_cast<const char *>(nul) - header),
                       " (padding must be spaces)");
    HeaderSax sax(limits, 8);
    bool ok =
        json::sax_parse(header, header + n, &sax, json::input_format_t::json,
                        /*strict=*/true, /*ignore_comments=*/false);
    if (!ok || !sax.error.empty())
      return makeError(name, ": ",
                       sax.error.empty() ? "header is not valid JSON"
                                         : sax.error);

    // 3. Extents, then the tiling of the byte buffer, in data order.
    const uint64_t bufferStart = 8 + n;
    const uint64_t bufferSize = fileSize - bufferStart;
    auto absRange = [&](uint64_t b, uint64_t e) {
      return "absolute bytes " + formatRange(bufferStart + b, bufferStart + e);
    };
    std::vector<RawTensor> &raw = sax.tensors;
    for (const RawTensor &t : raw) {
      uint64_t b = t.offsets[0], e = t.offsets[1];
      std::string prefix = name + ": tensor " + quote(t.name) + ": ";
      if (b > e)
        return makeError(prefix, "data_offsets ", formatOffsets(b, e),
                         ": begin is greater than end");
      if (e > bufferSize)
        return makeError(prefix, "data_offsets ", formatOffsets(b, e),
                         " end beyond the ", bufferSize, "-byte buffer (",
                         absRange(0, bufferSize), ")");
      auto count = checkedElementCount(t.shape);
      if (!count)
        return makeError(prefix, "shape ", formatShape(t.shape),
                         " has more than 2^64 - 1 elements (overflow)");
      auto need = checkedMul(*count, dtypeSize(t.dtype));
      if (!need)
        return makeError(prefix, dtypeName(t.dtype), " shape ",
                         formatShape(t.shape), ": ", *count, " elements x ",
                         dtypeSize(t.dtype), " bytes overflows 64 bits");
      if (*need != e - b)
        return makeError(prefix, dtypeName(t.dtype), " shape ",
                         formatShape(t.shape), " needs ", *need,
                         " bytes but data_offsets ", formatOffsets(b, e),
                         " span ", e - b);
    }

    std::vector<size_t> order(raw.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      const RawTensor &a = raw[x], &b = raw[y];
      if (a.offsets[0] != b.offsets[0])
        return a.offsets[0] < b.offsets[0];
      if (a.offsets[1] != b.offsets[1])
        return a.offsets[1] < b.offsets[1];
      return a.name < b.name;
    });
    uint64_t cursor = 0;
    const RawTensor *prev = nullptr;
    for (size_t idx : order) {
      const RawTensor &t = raw[idx];
      uint64_t b = t.offsets[0], e = t.offsets[1];
      if (b < cursor)
        return makeError(name, ": tensor ", quote(t.name), ": data_offsets ",
                         formatOffsets(b, e), " overlap tensor ",
                         quote(prev->name), " ",
                         formatOffsets(prev->offsets[0], prev->offsets[1]),
                         " (", absRange(b, std::min(e, cursor)),
                         "); expected it to begin at ", cursor);
      if (b > cursor)
        return makeError(name, ": hole in the byte buffer: bytes ",
                         formatRange(cursor, b), " (", absRange(cursor, b),
                         ") belong to no tensor; the next tensor ",
                         quote(t.name), " has data_offsets ",
                         formatOffsets(b, e));
      cursor = e;
      prev = &t;
    }
    if (cursor != bufferSize) {
      if (prev)
        return makeError(name, ": trailing bytes: buffer bytes ",
                         formatRange(cursor, bufferSize), " (",
                         absRange(cursor, bufferSize),
                         ") after the last tensor ", quote(prev->name),
                         " belong to no tensor; expected the file to end at "
                         "absolute byte ",
                         bufferStart + cursor);
      return makeError(name, ": trailing bytes: ", bufferSize,
                       " bytes after the header (", absRange(0, bufferSize),
                       ") belong to no tensor; the header declares none");
    }

    // 4. Everything holds: expose views in data order.
    SafetensorsFile file(std::move(mapped));
    file.headerLen = n;
    file.meta = std::move(sax.metadata);
    file.metaPresent = sax.metadataPresent;
    const uint8_t *base = file.file.data();
    file.views.reserve(raw.size());
    for (size_t idx : order) {
      RawTensor &t = raw[idx];
      TensorView v;
      v.name = std::move(t.name);
      v.dtype = t.dtype;
      v.shape = std::move(t.shape);
      v.begin = t.offsets[0];
      v.end = t.offsets[1];
      v.bufferOffset = bufferStart;
      v.data = base + bufferStart + v.begin;
      file.byName.emplace(v.name, file.views.size());
      file.views.push_back(std::move(v));
    }
    return file;
  } catch (const std::exception &e) {
    return makeError(name, ": cannot read safetensors header: ", e.what());
  } catch (...) {
    return makeError(name, ": cannot read safetensors header");
  }
}
