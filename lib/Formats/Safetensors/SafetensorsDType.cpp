//===- SafetensorsDType.cpp - Element types and float conversion ----------===//

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Support/CheckedMath.h"

#include "SafetensorsDetail.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>

using namespace qtensor;
using namespace qtensor::safetensors;

namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  unsigned size;
  bool isFloat;
};

constexpr DTypeInfo kDTypes[kNumDTypes] = {
    {DType::BOOL, "BOOL", 1, false},      {DType::U8, "U8", 1, false},
    {DType::I8, "I8", 1, false},          {DType::F8_E5M2, "F8_E5M2", 1, true},
    {DType::F8_E4M3, "F8_E4M3", 1, true}, {DType::I16, "I16", 2, false},
    {DType::U16, "U16", 2, false},        {DType::F16, "F16", 2, true},
    {DType::BF16, "BF16", 2, true},       {DType::I32, "I32", 4, false},
    {DType::U32, "U32", 4, false},        {DType::F32, "F32", 4, true},
    {DType::F64, "F64", 8, true},         {DType::I64, "I64", 8, false},
    {DType::U64, "U64", 8, false},
};

const DTypeInfo &info(DType type) {
  unsigned i = static_cast<unsigned>(type);
  return kDTypes[i < kNumDTypes ? i : 1];
}

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

template <typename T> T loadLE(const uint8_t *p) {
  static_assert(std::is_integral_v<T>);
  using U = std::make_unsigned_t<T>;
  U v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<U>(static_cast<U>(p[i]) << (8 * i));
  return static_cast<T>(v);
}

double loadF64(const uint8_t *p) {
  uint64_t u = loadLE<uint64_t>(p);
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}
} // namespace

std::string_view safetensors::dtypeName(DType type) { return info(type).name; }

std::optional<DType> safetensors::parseDType(std::string_view name) {
  for (const DTypeInfo &d : kDTypes)
    if (d.name == name)
      return d.type;
  return std::nullopt;
}

unsigned safetensors::dtypeSize(DType type) { return info(type).size; }

bool safetensors::isFloatDType(DType type) { return info(type).isFloat; }

float safetensors::halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in binary32.
    float mag = std::ldexp(static_cast<float>(mant), -24);
    return bitsFloat(floatBits(mag) | sign);
  }
  if (exp == 31) // infinity or NaN (payload kept in the top mantissa bits)
    return bitsFloat(sign | 0x7f800000u | (mant << 13));
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

float safetensors::bfloat16ToFloat(uint16_t bits) {
  return bitsFloat(static_cast<uint32_t>(bits) << 16);
}

float safetensors::f8e5m2ToFloat(uint8_t bits) {
  // E5M2 is the upper byte of an IEEE binary16.
  return halfToFloat(static_cast<uint16_t>(bits << 8));
}

float safetensors::f8e4m3fnToFloat(uint8_t bits) {
  bool negative = bits & 0x80u;
  unsigned exp = (bits >> 3) & 0xfu;
  unsigned mant = bits & 0x7u;
  float mag;
  if (exp == 15 && mant == 7)
    mag = std::numeric_limits<float>::quiet_NaN(); // the only NaN; no inf
  else if (exp == 0)
    mag = std::ldexp(static_cast<float>(mant), -9); // subnormal: m/8 * 2^-6
  else
    mag = std::ldexp(static_cast<float>(8 + mant), static_cast<int>(exp) - 10);
  return negative ? -mag : mag;
}

uint64_t TensorView::elementCount() const {
  auto n = checkedElementCount(shape);
  return n ? *n : 0;
}

namespace {
/// Decodes every element of `view` into `Out` (float or double).
template <typename Out>
Expected<std::vector<Out>> convert(const TensorView &view) {
  const char *what = sizeof(Out) == 4 ? "float32" : "float64";
  for (size_t i = 0; i < view.shape.size(); ++i)
    if (view.shape[i] < 0)
      return makeError("tensor ", impl::quote(view.name), ": shape[", i,
                       "] is negative; cannot convert to ", what);
  auto count = checkedElementCount(view.shape);
  unsigned esize = dtypeSize(view.dtype);
  auto bytes = count ? checkedMul(*count, esize) : std::nullopt;
  if (!bytes || view.end < view.begin || *bytes != view.end - view.begin)
    return makeError("tensor ", impl::quote(view.name), ": ",
                     dtypeName(view.dtype), " view of ", view.end - view.begin,
                     " bytes does not match its shape; cannot convert to ",
                     what);
  if (*count > 0 && !view.data)
    return makeError("tensor ", impl::quote(view.name),
                     ": view has no data pointer");
  if (*count > std::vector<Out>().max_size())
    return makeError("tensor ", impl::quote(view.name), ": ", *count,
                     " elements do not fit in memory");
  std::vector<Out> out;
  try {
    out.resize(static_cast<size_t>(*count));
  } catch (const std::bad_alloc &) {
    return makeError("tensor ", impl::quote(view.name), ": cannot allocate ",
                     *count, " ", what, " values");
  }
  const uint8_t *p = view.data;
  size_t n = out.size();
  switch (view.dtype) {
  case DType::BOOL:
    for (size_t i = 0; i < n; ++i) {
      if (p[i] > 1)
        return makeError("tensor ", impl::quote(view.name), ": BOOL element ",
                         i, " at absolute byte offset ",
                         view.absoluteOffset() + i, " is ",
                         static_cast<unsigned>(p[i]), ", expected 0 or 1");
      out[i] = static_cast<Out>(p[i]);
    }
    break;
  case DType::U8:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(p[i]);
    break;
  case DType::I8:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(static_cast<int8_t>(p[i]));
    break;
  case DType::F8_E5M2:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(f8e5m2ToFloat(p[i]));
    break;
  case DType::F8_E4M3:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(f8e4m3fnToFloat(p[i]));
    break;
  case DType::I16:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(loadLE<int16_t>(p + 2 * i));
    break;
  case DType::U16:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(loadLE<uint16_t>(p + 2 * i));
    break;
  case DType::F16:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(halfToFloat(loadLE<uint16_t>(p + 2 * i)));
    break;
  case DType::BF16:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(bfloat16ToFloat(loadLE<uint16_t>(p + 2 * i)));
    break;
  case DType::I32:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(loadLE<int32_t>(p + 4 * i));
    break;
  case DType::U32:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(loadLE<uint32_t>(p + 4 * i));
    break;
  case DType::F32:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(bitsFloat(loadLE<uint32_t>(p + 4 * i)));
    break;
  case DType::F64:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(loadF64(p + 8 * i));
    break;
  case DType::I64:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(loadLE<int64_t>(p + 8 * i));
    break;
  case DType::U64:
    for (size_t i = 0; i < n; ++i)
      out[i] = static_cast<Out>(loadLE<uint64_t>(p + 8 * i));
    break;
  }
  return out;
}
} // namespace

Expected<std::vector<float>> safetensors::toFloat32(const TensorView &view) {
  return convert<float>(view);
}

Expected<std::vector<double>> safetensors::toFloat64(const TensorView &view) {
  return convert<double>(view);
}

float safetensors::floatAt(const TensorView &view, uint64_t i) {
  const uint8_t *p = view.data;
  switch (view.dtype) {
  case DType::F8_E5M2:
    return f8e5m2ToFloat(p[i]);
  case DType::F8_E4M3:
    return f8e4m3fnToFloat(p[i]);
  case DType::F16:
    return halfToFloat(loadLE<uint16_t>(p + 2 * i));
  case DType::BF16:
    return bfloat16ToFloat(loadLE<uint16_t>(p + 2 * i));
  case DType::F32:
    return bitsFloat(loadLE<uint32_t>(p + 4 * i));
  case DType::F64:
    return static_cast<float>(loadF64(p + 8 * i));
  default:
    return std::numeric_limits<float>::quiet_NaN();
  }
}

//===----------------------------------------------------------------------===//
// detail helpers
//===----------------------------------------------------------------------===//

std::optional<size_t> impl::findInvalidUtf8(const uint8_t *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint8_t lo = 0x80, hi = 0xbf; // allowed range of the second byte
    if (c >= 0xc2 && c <= 0xdf)
      len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      if (c == 0xe0)
        lo = 0xa0; // overlong
      else if (c == 0xed)
        hi = 0x9f; // UTF-16 surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      if (c == 0xf0)
        lo = 0x90; // overlong
      else if (c == 0xf4)
        hi = 0x8f; // above U+10FFFF
    } else
      return i; // continuation byte, C0/C1 overlong lead, or F5..FF
    if (n - i < len)
      return i;
    if (s[i + 1] < lo || s[i + 1] > hi)
      return i + 1;
    for (size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xbf)
        return i + k;
    i += len;
  }
  return std::nullopt;
}

std::string impl::quote(std::string_view name) {
  constexpr size_t kMax = 200;
  bool cut = false;
  if (name.size() > kMax) {
    size_t end = kMax;
    while (end > 0 && (static_cast<uint8_t>(name[end]) & 0xc0) == 0x80)
      --end; // do not split a UTF-8 sequence
    name = name.substr(0, end);
    cut = true;
  }
  std::string out = "\"";
  static const char *hex = "0123456789abcdef";
  for (char ch : name) {
    uint8_t c = static_cast<uint8_t>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  out += cut ? "...\"" : "\"";
  return out;
}

std::string impl::jsonErrorText(const char *what) {
  std::string_view msg(what ? what : "");
  size_t col = msg.find("column ");
  if (col != std::string_view::npos) {
    size_t colon = msg.find(": ", col);
    if (colon != std::string_view::npos)
      return std::string(msg.substr(colon + 2));
  }
  size_t bracket = msg.find("] ");
  if (bracket != std::string_view::npos)
    return std::string(msg.substr(bracket + 2));
  return std::string(msg);
}
