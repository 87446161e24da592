//===- GGUFReader.cpp - Hardened GGUF v2/v3 reader -----------------------===//
//
// Validation order follows seed M8.9 0x05A: each count or length is compared
// with the bytes that remain (and with GGUFLimits) before it sizes anything;
// containers grow only as elements are actually parsed. 0x05B's container
// gates: versions, counts, UTF-8, duplicate keys and names, negative or
// overflowing shapes, misaligned, out-of-file and overlapping intervals.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/GGUF.h"

#include "qtensor/Support/CheckedMath.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

using namespace qtensor;

//===----------------------------------------------------------------------===//
// GGUFValue
//===----------------------------------------------------------------------===//

std::string_view qtensor::ggufValueTypeName(GGUFValueType type) {
  switch (type) {
  case GGUFValueType::UInt8:
    return "UINT8";
  case GGUFValueType::Int8:
    return "INT8";
  case GGUFValueType::UInt16:
    return "UINT16";
  case GGUFValueType::Int16:
    return "INT16";
  case GGUFValueType::UInt32:
    return "UINT32";
  case GGUFValueType::Int32:
    return "INT32";
  case GGUFValueType::Float32:
    return "FLOAT32";
  case GGUFValueType::Bool:
    return "BOOL";
  case GGUFValueType::String:
    return "STRING";
  case GGUFValueType::Array:
    return "ARRAY";
  case GGUFValueType::UInt64:
    return "UINT64";
  case GGUFValueType::Int64:
    return "INT64";
  case GGUFValueType::Float64:
    return "FLOAT64";
  }
  return "INVALID";
}

uint32_t gguf_detail::scalarSize(GGUFValueType type) {
  switch (type) {
  case GGUFValueType::UInt8:
  case GGUFValueType::Int8:
  case GGUFValueType::Bool:
    return 1;
  case GGUFValueType::UInt16:
  case GGUFValueType::Int16:
    return 2;
  case GGUFValueType::UInt32:
  case GGUFValueType::Int32:
  case GGUFValueType::Float32:
    return 4;
  case GGUFValueType::UInt64:
  case GGUFValueType::Int64:
  case GGUFValueType::Float64:
    return 8;
  case GGUFValueType::String:
  case GGUFValueType::Array:
    return 0;
  }
  return 0;
}

uint64_t gguf_detail::loadBits(const uint8_t *raw, uint32_t elemSize,
                               uint64_t i) {
  const uint8_t *p = raw + i * elemSize;
  uint64_t bits = 0;
  for (uint32_t b = 0; b < elemSize; ++b)
    bits |= static_cast<uint64_t>(p[b]) << (8 * b);
  return bits;
}

namespace {

std::optional<uint64_t> widenUnsigned(GGUFValueType type, uint64_t bits) {
  using gguf_detail::fromBits;
  switch (type) {
  case GGUFValueType::UInt8:
  case GGUFValueType::UInt16:
  case GGUFValueType::UInt32:
  case GGUFValueType::UInt64:
  case GGUFValueType::Bool:
    return bits;
  case GGUFValueType::Int8:
  case GGUFValueType::Int16:
  case GGUFValueType::Int32:
  case GGUFValueType::Int64: {
    int64_t v = type == GGUFValueType::Int8    ? fromBits<int8_t>(bits)
                : type == GGUFValueType::Int16 ? fromBits<int16_t>(bits)
                : type == GGUFValueType::Int32 ? fromBits<int32_t>(bits)
                                               : fromBits<int64_t>(bits);
    if (v < 0)
      return std::nullopt;
    return static_cast<uint64_t>(v);
  }
  default:
    return std::nullopt;
  }
}

std::optional<int64_t> widenSigned(GGUFValueType type, uint64_t bits) {
  using gguf_detail::fromBits;
  switch (type) {
  case GGUFValueType::Int8:
    return fromBits<int8_t>(bits);
  case GGUFValueType::Int16:
    return fromBits<int16_t>(bits);
  case GGUFValueType::Int32:
    return fromBits<int32_t>(bits);
  case GGUFValueType::Int64:
    return fromBits<int64_t>(bits);
  case GGUFValueType::UInt8:
  case GGUFValueType::UInt16:
  case GGUFValueType::UInt32:
  case GGUFValueType::UInt64:
  case GGUFValueType::Bool:
    if (bits > static_cast<uint64_t>(INT64_MAX))
      return std::nullopt;
    return static_cast<int64_t>(bits);
  default:
    return std::nullopt;
  }
}

std::optional<double> widenDouble(GGUFValueType type, uint64_t bits) {
  if (type == GGUFValueType::Float32)
    return static_cast<double>(gguf_detail::fromBits<float>(bits));
  if (type == GGUFValueType::Float64)
    return gguf_detail::fromBits<double>(bits);
  return std::nullopt;
}

} // namespace

std::optional<uint64_t> GGUFValue::asUnsigned() const {
  return widenUnsigned(kind, bits);
}
std::optional<int64_t> GGUFValue::asSigned() const {
  return widenSigned(kind, bits);
}
std::optional<double> GGUFValue::asDouble() const {
  return widenDouble(kind, bits);
}

std::optional<uint64_t> GGUFValue::arrayUnsigned(uint64_t i) const {
  uint32_t sz = gguf_detail::scalarSize(elemKind);
  if (!isArray() || !raw || sz == 0 || i >= count)
    return std::nullopt;
  return widenUnsigned(elemKind, gguf_detail::loadBits(raw, sz, i));
}
std::optional<int64_t> GGUFValue::arraySigned(uint64_t i) const {
  uint32_t sz = gguf_detail::scalarSize(elemKind);
  if (!isArray() || !raw || sz == 0 || i >= count)
    return std::nullopt;
  return widenSigned(elemKind, gguf_detail::loadBits(raw, sz, i));
}
std::optional<double> GGUFValue::arrayDouble(uint64_t i) const {
  uint32_t sz = gguf_detail::scalarSize(elemKind);
  if (!isArray() || !raw || sz == 0 || i >= count)
    return std::nullopt;
  return widenDouble(elemKind, gguf_detail::loadBits(raw, sz, i));
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {

constexpr uint64_t kHeaderBytes = 24;
/// Smallest possible KV: u64 key length (empty key) + u32 type + 1-byte value.
constexpr uint64_t kMinKVBytes = 8 + 4 + 1;
/// Smallest possible tensor info: u64 name length + u32 n_dims (0) + u32 type
/// + u64 offset.
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;
/// Smallest possible array element that is itself an array: u32 type + u64 n.
constexpr uint64_t kMinNestedArrayBytes = 4 + 8;
/// Cap on reserve() from a (checked) count; containers grow as parsed.
constexpr uint64_t kMaxReserve = 4096;

/// Index of the first byte that breaks UTF-8 (overlongs, surrogates and code
/// points above U+10FFFF included), or npos when `s` is valid.
size_t invalidUtf8At(std::string_view s) {
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (n - i < len)
      return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80)
        return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
      return i;
    i += len;
  }
  return std::string_view::npos;
}

/// A name for messages: printable ASCII kept, other bytes as \xNN, long
/// names shortened.
std::string printable(std::string_view s) {
  std::string out;
  size_t shown = std::min<size_t>(s.size(), 80);
  for (size_t i = 0; i < shown; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  if (shown < s.size())
    out += "...";
  return out;
}

std::string hexBytes(const uint8_t *p, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    char buf[4];
    std::snprintf(buf, sizeof buf, i ? " %02X" : "%02X", p[i]);
    out += buf;
  }
  return out;
}

} // namespace

namespace qtensor {

class GGUFParser {
public:
  GGUFParser(GGUFFile &file, const GGUFLimits &limits)
      : f(file), limits(limits), base(file.bytes), size(file.size) {}

  Status run();

private:
  GGUFFile &f;
  const GGUFLimits &limits;
  const uint8_t *base;
  uint64_t size;
  uint64_t pos = 0;
  /// Values held in nested arrays so far (each costs a GGUFValue).
  uint64_t nestedValues = 0;
  /// What is being parsed, for messages: "key 'x'" or "tensor 'w'".
  std::string where;

  template <typename... Parts> Error fail(const Parts &...parts) const {
    if (where.empty())
      return makeError(f.fileName, ": ", parts...);
    return makeError(f.fileName, ": ", where, ": ", parts...);
  }

  uint64_t remaining() const { return size - pos; }

  /// Fails unless `n` more bytes are readable; `what` names the field.
  Status need(uint64_t n, std::string_view what) const {
    if (n <= remaining())
      return Status::ok();
    return fail(what, " at byte ", pos, " needs ", n,
                " bytes but the file ends after ", remaining(), " (file size ",
                size, ")");
  }
  uint32_t u32() {
    uint32_t v = static_cast<uint32_t>(gguf_detail::loadBits(base + pos, 4, 0));
    pos += 4;
    return v;
  }
  uint64_t u64() {
    uint64_t v = gguf_detail::loadBits(base + pos, 8, 0);
    pos += 8;
    return v;
  }

  /// Outcome of reading one GGUF string; messages are built only on failure.
  struct StringScan {
    enum Kind { Ok, NoLength, TooLong, PastEnd, BadUtf8 } kind = Ok;
    uint64_t lengthAt = 0;
    uint64_t length = 0;
    uint64_t badAt = 0;
  };
  StringScan scanString(uint64_t maxBytes, std::string_view &out);
  Error stringError(const StringScan &scan, std::string_view what,
                    uint64_t maxBytes, std::string_view limitNote) const;
  Status readString(std::string_view what, uint64_t maxBytes,
                    std::string_view limitNote, std::string_view &out);
  Status parseValue(GGUFValueType type, uint32_t depth, GGUFValue &out);
  Status parseArray(uint32_t depth, GGUFValue &out);
  Status readValueType(std::string_view what, GGUFValueType &out,
                       uint64_t &typeOffset);

  Status parseHeader(uint64_t &tensorCount, uint64_t &kvCount);
  Status parseKVs(uint64_t kvCount);
  Status applyAlignment();
  Status parseTensorInfos(uint64_t tensorCount);
  Status placeTensors();
};

} // namespace qtensor

GGUFParser::StringScan GGUFParser::scanString(uint64_t maxBytes,
                                              std::string_view &out) {
  StringScan scan;
  scan.lengthAt = pos;
  if (remaining() < 8) {
    scan.kind = StringScan::NoLength;
    return scan;
  }
  scan.length = u64();
  if (scan.length > maxBytes) {
    scan.kind = StringScan::TooLong;
    return scan;
  }
  if (scan.length > remaining()) {
    scan.kind = StringScan::PastEnd;
    return scan;
  }
  out = std::string_view(reinterpret_cast<const char *>(base + pos),
                         static_cast<size_t>(scan.length));
  size_t bad = invalidUtf8At(out);
  if (bad != std::string_view::npos) {
    scan.kind = StringScan::BadUtf8;
    scan.badAt = pos + bad;
    return scan;
  }
  pos += scan.length;
  return scan;
}

Error GGUFParser::stringError(const StringScan &scan, std::string_view what,
                              uint64_t maxBytes,
                              std::string_view limitNote) const {
  switch (scan.kind) {
  case StringScan::NoLength:
    return fail(what, " length at byte ", scan.lengthAt,
                " needs 8 bytes but the file ends after ", size - scan.lengthAt,
                " (file size ", size, ")");
  case StringScan::TooLong:
    return fail(what, " length ", scan.length, " at byte ", scan.lengthAt,
                " exceeds the limit of ", maxBytes, " bytes", limitNote);
  case StringScan::PastEnd:
    return fail(what, " length ", scan.length, " at byte ", scan.lengthAt,
                " runs past the end of the file: only ",
                size - scan.lengthAt - 8, " bytes follow (file size ", size,
                ")");
  case StringScan::BadUtf8:
  case StringScan::Ok:
    break;
  }
  return fail(what, " at byte ", scan.lengthAt + 8,
              " is not valid UTF-8 (byte ", scan.badAt, " = 0x",
              hexBytes(base + scan.badAt, 1), "); GGUF strings are UTF-8");
}

Status GGUFParser::readString(std::string_view what, uint64_t maxBytes,
                              std::string_view limitNote,
                              std::string_view &out) {
  StringScan scan = scanString(maxBytes, out);
  if (scan.kind != StringScan::Ok)
    return stringError(scan, what, maxBytes, limitNote);
  return Status::ok();
}

Status GGUFParser::readValueType(std::string_view what, GGUFValueType &out,
                                 uint64_t &typeOffset) {
  if (Status st = need(4, what); !st)
    return st;
  typeOffset = pos;
  uint32_t raw = u32();
  if (raw > static_cast<uint32_t>(GGUFValueType::Float64))
    return fail(what, " ", raw, " at byte ", typeOffset,
                " is not a GGUF value type (expected 0..12)");
  out = static_cast<GGUFValueType>(raw);
  return Status::ok();
}

Status GGUFParser::parseValue(GGUFValueType type, uint32_t depth,
                              GGUFValue &out) {
  out.kind = type;
  out.offset = pos;
  if (type == GGUFValueType::String) {
    return readString("STRING value", limits.maxStringBytes, "", out.str);
  }
  if (type == GGUFValueType::Array)
    return parseArray(depth + 1, out);
  const uint32_t sz = gguf_detail::scalarSize(type);
  if (Status st = need(sz, std::string(ggufValueTypeName(type)) + " value");
      !st)
    return st;
  out.bits = gguf_detail::loadBits(base + pos, sz, 0);
  if (type == GGUFValueType::Bool && out.bits > 1)
    return fail("BOOL value ", out.bits, " at byte ", pos,
                " is invalid (expected 0 or 1)");
  pos += sz;
  return Status::ok();
}

Status GGUFParser::parseArray(uint32_t depth, GGUFValue &out) {
  const uint64_t arrayAt = pos;
  if (depth > limits.maxArrayDepth)
    return fail("array at byte ", arrayAt, " is nested ", depth,
                " deep; the limit is ", limits.maxArrayDepth);
  GGUFValueType elem;
  uint64_t elemTypeAt;
  if (Status st = readValueType("array element type", elem, elemTypeAt); !st)
    return st;
  if (Status st = need(8, "array length"); !st)
    return st;
  const uint64_t lengthAt = pos;
  const uint64_t n = u64();
  out.elemKind = elem;
  if (n > limits.maxArrayLength)
    return fail("array length ", n, " at byte ", lengthAt,
                " exceeds the limit of ", limits.maxArrayLength, " elements");

  const uint32_t sz = gguf_detail::scalarSize(elem);
  if (sz != 0) {
    auto bytes = checkedMul(n, sz);
    if (!bytes)
      return fail("array of ", n, " ", ggufValueTypeName(elem), " at byte ",
                  lengthAt, ": ", n, " * ", sz, " bytes overflows 64 bits");
    if (*bytes > remaining())
      return fail("array of ", n, " ", ggufValueTypeName(elem), " at byte ",
                  lengthAt, " needs ", *bytes, " bytes but only ", remaining(),
                  " follow (file size ", size, ")");
    if (elem == GGUFValueType::Bool) {
      for (uint64_t i = 0; i < n; ++i)
        if (base[pos + i] > 1)
          return fail("BOOL array element ", i, " at byte ", pos + i,
                      " has value ", static_cast<unsigned>(base[pos + i]),
                      " (expected 0 or 1)");
    }
    out.count = n;
    out.raw = base + pos;
    pos += *bytes;
    return Status::ok();
  }

  if (elem == GGUFValueType::String) {
    // Each string needs at least its 8-byte length.
    if (n > remaining() / 8)
      return fail("array of ", n, " STRING at byte ", lengthAt,
                  " cannot fit: each needs at least 8 bytes and only ",
                  remaining(), " follow");
    out.strings.reserve(static_cast<size_t>(std::min(n, kMaxReserve)));
    for (uint64_t i = 0; i < n; ++i) {
      std::string_view s;
      StringScan scan = scanString(limits.maxStringBytes, s);
      if (scan.kind != StringScan::Ok)
        return stringError(scan,
                           "element " + std::to_string(i) +
                               " of the STRING array at byte " +
                               std::to_string(arrayAt),
                           limits.maxStringBytes, "");
      out.strings.push_back(s);
    }
    out.count = n;
    return Status::ok();
  }

  // Nested arrays: each element needs at least its type and length fields.
  if (n > remaining() / kMinNestedArrayBytes)
    return fail("array of ", n, " ARRAY at byte ", lengthAt,
                " cannot fit: each needs at least ", kMinNestedArrayBytes,
                " bytes and only ", remaining(), " follow");
  // A 12-byte empty array becomes a whole GGUFValue in memory: bound the
  // total so a file cannot amplify into many times its size.
  if (n > limits.maxNestedArrayValues - nestedValues)
    return fail("array of ", n, " ARRAY at byte ", lengthAt,
                " brings the "
                "file's nested array values past the limit of ",
                limits.maxNestedArrayValues);
  nestedValues += n;
  out.children.reserve(static_cast<size_t>(std::min(n, kMaxReserve)));
  for (uint64_t i = 0; i < n; ++i) {
    GGUFValue child;
    child.kind = GGUFValueType::Array;
    child.offset = pos;
    if (Status st = parseArray(depth + 1, child); !st)
      return st;
    out.children.push_back(std::move(child));
  }
  out.count = n;
  return Status::ok();
}

Status GGUFParser::parseHeader(uint64_t &tensorCount, uint64_t &kvCount) {
  if (size == 0)
    return fail("file is empty (0 bytes); expected a GGUF header of ",
                kHeaderBytes, " bytes starting with the magic \"GGUF\"");
  if (size < 4)
    return fail("file is ", size,
                " bytes, too short for the 4-byte magic "
                "\"GGUF\" at byte 0");
  if (std::memcmp(base, "GGUF", 4) != 0)
    return fail("bad magic at byte 0: found ", hexBytes(base, 4),
                ", expected 47 47 55 46 (\"GGUF\")");
  pos = 4;
  if (Status st = need(4, "GGUF version"); !st)
    return st;
  const uint32_t version = u32();
  if (version != 2 && version != 3) {
    const uint32_t swapped = __builtin_bswap32(version);
    if (swapped >= 1 && swapped <= 3)
      return fail("GGUF version field at byte 4 reads ", version,
                  " little-endian (bytes ", hexBytes(base + 4, 4),
                  "): this looks like a big-endian GGUF v", swapped,
                  " file; only little-endian files are supported");
    if (version == 1)
      return fail("GGUF version 1 at byte 4 is not supported (obsolete "
                  "GGUFv1 with 32-bit counts); expected version 2 or 3");
    return fail("unsupported GGUF version ", version,
                " at byte 4; expected version 2 or 3");
  }
  f.ggufVersion = version;
  if (Status st = need(kHeaderBytes - 8, "GGUF header (tensor and KV counts)");
      !st)
    return st;
  tensorCount = u64();
  kvCount = u64();

  if (tensorCount > limits.maxTensorCount)
    return fail("tensor count ", tensorCount,
                " at byte 8 exceeds the limit of ", limits.maxTensorCount);
  if (kvCount > limits.maxKVCount)
    return fail("metadata KV count ", kvCount,
                " at byte 16 exceeds the limit of ", limits.maxKVCount);
  // What the rest of the file could possibly hold, before any reservation.
  const uint64_t rest = remaining();
  if (tensorCount > rest / kMinTensorInfoBytes)
    return fail("tensor count ", tensorCount, " at byte 8 cannot fit: the ",
                rest, " bytes after the header hold at most ",
                rest / kMinTensorInfoBytes, " tensor infos of at least ",
                kMinTensorInfoBytes, " bytes");
  if (kvCount > rest / kMinKVBytes)
    return fail("metadata KV count ", kvCount, " at byte 16 cannot fit: the ",
                rest, " bytes after the header hold at most ",
                rest / kMinKVBytes, " key/value pairs of at least ",
                kMinKVBytes, " bytes");
  // Both products are <= rest after the checks above; the sum may not be.
  auto together =
      checkedAdd(tensorCount * kMinTensorInfoBytes, kvCount * kMinKVBytes);
  if (!together || *together > rest)
    return fail("tensor count ", tensorCount, " and KV count ", kvCount,
                " cannot both fit in the ", rest, " bytes after the header");
  return Status::ok();
}

Status GGUFParser::parseKVs(uint64_t kvCount) {
  for (uint64_t i = 0; i < kvCount; ++i) {
    GGUFKeyValue kv;
    kv.fileOffset = pos;
    where = "KV #" + std::to_string(i);
    if (Status st =
            readString("key", limits.maxKeyBytes,
                       " (gguf.md: keys are at most 65535 bytes)", kv.key);
        !st)
      return st;
    where = "key '" + printable(kv.key) + "' (KV #" + std::to_string(i) +
            " at byte " + std::to_string(kv.fileOffset) + ")";
    GGUFValueType type;
    uint64_t typeAt;
    if (Status st = readValueType("value type", type, typeAt); !st)
      return st;
    if (Status st = parseValue(type, 0, kv.value); !st)
      return st;
    auto [it, inserted] = f.kvIndex.emplace(kv.key, f.kvs.size());
    if (!inserted)
      return fail("duplicate key: already defined by KV #", it->second,
                  " at byte ", f.kvs[it->second].fileOffset);
    f.kvs.push_back(std::move(kv));
  }
  where.clear();
  return Status::ok();
}

Status GGUFParser::applyAlignment() {
  auto it = f.kvIndex.find("general.alignment");
  if (it == f.kvIndex.end()) {
    f.align = 32;
    return Status::ok();
  }
  const GGUFKeyValue &kv = f.kvs[it->second];
  where = "key 'general.alignment'";
  if (kv.value.type() != GGUFValueType::UInt32)
    return fail("value at byte ", kv.value.fileOffset(), " has type ",
                ggufValueTypeName(kv.value.type()), ", expected UINT32");
  const uint32_t a = *kv.value.get<uint32_t>();
  if (a == 0 || (a & (a - 1)) != 0)
    return fail("alignment ", a, " at byte ", kv.value.fileOffset(),
                " is not a nonzero power of two");
  f.align = a;
  where.clear();
  return Status::ok();
}

Status GGUFParser::parseTensorInfos(uint64_t tensorCount) {
  for (uint64_t i = 0; i < tensorCount; ++i) {
    GGUFTensorInfo t{};
    t.infoOffset = pos;
    where = "tensor #" + std::to_string(i) + " (info at byte " +
            std::to_string(t.infoOffset) + ")";
    if (Status st =
            readString("name", limits.maxTensorNameBytes,
                       " (gguf.md: tensor names are at most 64 bytes)", t.name);
        !st)
      return st;
    where = "tensor '" + printable(t.name) + "' (#" + std::to_string(i) +
            ", info at byte " + std::to_string(t.infoOffset) + ")";
    if (Status st = need(4, "n_dims"); !st)
      return st;
    const uint64_t nDimsAt = pos;
    const uint32_t nDims = u32();
    if (nDims > 4)
      return fail("n_dims ", nDims, " at byte ", nDimsAt,
                  " exceeds the maximum of 4");
    if (Status st = need(uint64_t(8) * nDims, "dimensions"); !st)
      return st;
    t.ne.reserve(nDims);
    uint64_t count = 1;
    for (uint32_t d = 0; d < nDims; ++d) {
      const uint64_t dimAt = pos;
      const uint64_t ne = u64();
      if (ne > static_cast<uint64_t>(INT64_MAX))
        return fail("ne[", d, "] = ", ne, " at byte ", dimAt,
                    " is negative as int64 (expected 0..2^63-1)");
      t.ne.push_back(static_cast<int64_t>(ne));
      auto next = checkedMul(count, ne);
      if (!next || *next > static_cast<uint64_t>(INT64_MAX))
        return fail("element count overflows int64 at ne[", d, "] = ", ne,
                    " (byte ", dimAt, ")");
      count = *next;
    }
    t.elementCount = count;
    if (Status st = need(4, "ggml type"); !st)
      return st;
    const uint64_t typeAt = pos;
    const uint32_t typeId = u32();
    const GGMLTypeTraits *traits = lookupGGMLType(typeId);
    if (!traits)
      return fail("unknown ggml type ", typeId, " at byte ", typeAt,
                  " (defined ids are 0..3, 6..30, 34, 35)");
    t.type = traits->type;
    const uint64_t rowLength = nDims == 0 ? 1 : static_cast<uint64_t>(t.ne[0]);
    if (rowLength % traits->blockSize != 0)
      return fail("ne[0] = ", rowLength, " is not a multiple of the ",
                  traits->name, " block size ", traits->blockSize);
    auto bytes = checkedMul(count / traits->blockSize, traits->typeSize);
    if (!bytes)
      return fail("byte size of ", count, " ", traits->name,
                  " elements overflows 64 bits (", count / traits->blockSize,
                  " blocks * ", traits->typeSize, " bytes)");
    t.byteSize = *bytes;
    if (Status st = need(8, "offset"); !st)
      return st;
    t.offset = u64();
    auto [it, inserted] = f.tensorIndex.emplace(t.name, f.infos.size());
    if (!inserted)
      return fail("duplicate tensor name: already used by tensor #", it->second,
                  " (info at byte ", f.infos[it->second].infoOffset, ")");
    f.infos.push_back(std::move(t));
  }
  where.clear();
  return Status::ok();
}

Status GGUFParser::placeTensors() {
  auto dataStart = alignUp(pos, f.align);
  if (!dataStart)
    return fail("data section offset overflows");
  f.dataOffset = *dataStart;
  if (f.infos.empty())
    return Status::ok(); // vocab-only files may end before the padding
  if (f.dataOffset > size)
    return fail("tensor data section starts at byte ", f.dataOffset,
                " (end of tensor infos ", pos, " aligned to ", f.align,
                ") past the end of the file (", size, " bytes)");

  uint64_t expected = 0; // ggml's dense recurrence, in info order
  for (size_t i = 0; i < f.infos.size(); ++i) {
    GGUFTensorInfo &t = f.infos[i];
    where = "tensor '" + printable(t.name) + "' (#" + std::to_string(i) +
            ", info at byte " + std::to_string(t.infoOffset) + ")";
    if (t.offset % f.align != 0)
      return fail("offset ", t.offset, " is not a multiple of the alignment ",
                  f.align);
    auto start = checkedAdd(f.dataOffset, t.offset);
    auto end = start ? checkedAdd(*start, t.byteSize) : std::nullopt;
    if (!start || !end || *end > size)
      return fail("data [", f.dataOffset, " + ", t.offset, ", +", t.byteSize,
                  " bytes) extends past the end of the file (", size,
                  " bytes)");
    t.absoluteOffset = *start;
    t.data = base + *start;
    if (t.offset != expected) {
      if (limits.requireCanonicalLayout)
        return fail("offset ", t.offset, " breaks the dense layout: expected ",
                    expected, " (previous offset + size padded to ", f.align,
                    ")");
      f.canonical = false;
    }
    // expected stays <= size after the bounds check above.
    expected = t.offset + *alignUp(t.byteSize, f.align);
  }
  where.clear();

  // Non-empty intervals must not overlap.
  std::vector<size_t> order;
  order.reserve(f.infos.size());
  for (size_t i = 0; i < f.infos.size(); ++i)
    if (f.infos[i].byteSize > 0)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return f.infos[a].absoluteOffset < f.infos[b].absoluteOffset;
  });
  for (size_t k = 1; k < order.size(); ++k) {
    const GGUFTensorInfo &prev = f.infos[order[k - 1]];
    const GGUFTensorInfo &cur = f.infos[order[k]];
    if (prev.absoluteOffset + prev.byteSize > cur.absoluteOffset)
      return fail("tensor '", printable(cur.name), "' data [",
                  cur.absoluteOffset, ", ", cur.absoluteOffset + cur.byteSize,
                  ") overlaps tensor '", printable(prev.name), "' data [",
                  prev.absoluteOffset, ", ",
                  prev.absoluteOffset + prev.byteSize, ")");
  }
  return Status::ok();
}

Status GGUFParser::run() {
  uint64_t tensorCount = 0, kvCount = 0;
  if (Status st = parseHeader(tensorCount, kvCount); !st)
    return st;
  if (Status st = parseKVs(kvCount); !st)
    return st;
  if (Status st = applyAlignment(); !st)
    return st;
  if (Status st = parseTensorInfos(tensorCount); !st)
    return st;
  return placeTensors();
}

//===----------------------------------------------------------------------===//
// GGUFFile
//===----------------------------------------------------------------------===//

GGUFFile::GGUFFile(GGUFFile &&) noexcept = default;
GGUFFile &GGUFFile::operator=(GGUFFile &&) noexcept = default;
GGUFFile::~GGUFFile() = default;

Expected<GGUFFile> GGUFFile::open(const std::string &path,
                                  const GGUFLimits &limits) {
  auto mapped = MappedFile::open(path);
  if (!mapped)
    return mapped.error();
  return fromMappedFile(mapped.take(), limits);
}

Expected<GGUFFile> GGUFFile::fromMappedFile(MappedFile file,
                                            const GGUFLimits &limits) {
  GGUFFile out;
  out.fileName = file.path();
  out.mapping = std::make_unique<MappedFile>(std::move(file));
  out.bytes = out.mapping->data();
  out.size = out.mapping->size();
  GGUFParser parser(out, limits);
  if (Status st = parser.run(); !st)
    return st.error();
  return out;
}

Expected<GGUFFile> GGUFFile::fromBuffer(const uint8_t *data, uint64_t size,
                                        std::string name,
                                        const GGUFLimits &limits) {
  GGUFFile out;
  out.fileName = std::move(name);
  out.bytes = data;
  out.size = data ? size : 0;
  GGUFParser parser(out, limits);
  if (Status st = parser.run(); !st)
    return st.error();
  return out;
}

const GGUFValue *GGUFFile::findMetadata(std::string_view key) const {
  auto it = kvIndex.find(key);
  return it == kvIndex.end() ? nullptr : &kvs[it->second].value;
}

const GGUFTensorInfo *GGUFFile::findTensor(std::string_view name) const {
  auto it = tensorIndex.find(name);
  return it == tensorIndex.end() ? nullptr : &infos[it->second];
}

Expected<std::vector<float>>
GGUFFile::decode(const GGUFTensorInfo &tensor) const {
  auto values = decodeTensor(tensor.type, tensor.data,
                             static_cast<size_t>(tensor.byteSize), tensor.ne);
  if (!values)
    return makeError(fileName, ": tensor '", printable(tensor.name),
                     "': ", values.message());
  return values;
}
