//===- Unicode.cpp - Code point classes from ICU --------------------------===//

#include "Unicode.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>

#include <array>

namespace qtensor::unicode {

namespace {
Category categoryOf(int8_t type) {
  switch (static_cast<UCharCategory>(type)) {
  case U_UPPERCASE_LETTER:
  case U_LOWERCASE_LETTER:
  case U_TITLECASE_LETTER:
  case U_MODIFIER_LETTER:
  case U_OTHER_LETTER:
    return Category::Letter;
  case U_DECIMAL_DIGIT_NUMBER:
  case U_LETTER_NUMBER:
  case U_OTHER_NUMBER:
    return Category::Number;
  case U_SPACE_SEPARATOR:
  case U_LINE_SEPARATOR:
  case U_PARAGRAPH_SEPARATOR:
    return Category::Separator;
  case U_NON_SPACING_MARK:
  case U_ENCLOSING_MARK:
  case U_COMBINING_SPACING_MARK:
    return Category::Mark;
  case U_DASH_PUNCTUATION:
  case U_START_PUNCTUATION:
  case U_END_PUNCTUATION:
  case U_CONNECTOR_PUNCTUATION:
  case U_OTHER_PUNCTUATION:
  case U_INITIAL_PUNCTUATION:
  case U_FINAL_PUNCTUATION:
    return Category::Punctuation;
  case U_MATH_SYMBOL:
  case U_CURRENCY_SYMBOL:
  case U_MODIFIER_SYMBOL:
  case U_OTHER_SYMBOL:
    return Category::Symbol;
  case U_CONTROL_CHAR:
  case U_FORMAT_CHAR:
  case U_PRIVATE_USE_CHAR:
  case U_SURROGATE:
    return Category::Control;
  default:
    return Category::Undefined;
  }
}

constexpr uint32_t kMaxCodepoint = 0x10FFFF;
} // namespace

CodepointInfo info(uint32_t cp) {
  CodepointInfo out;
  if (cp > kMaxCodepoint)
    return out;
  UChar32 c = static_cast<UChar32>(cp);
  out.category = categoryOf(u_charType(c));
  out.whitespace = u_isUWhiteSpace(c);
  return out;
}

uint32_t toLower(uint32_t cp) {
  if (cp > kMaxCodepoint)
    return cp;
  return static_cast<uint32_t>(u_tolower(static_cast<UChar32>(cp)));
}

uint32_t nfdFirst(uint32_t cp) {
  if (cp > kMaxCodepoint)
    return cp;
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2 *nfd = unorm2_getNFDInstance(&status);
  if (U_FAILURE(status) || !nfd)
    return cp;
  UChar buffer[32];
  int32_t length = unorm2_getDecomposition(nfd, static_cast<UChar32>(cp),
                                           buffer, 32, &status);
  if (U_FAILURE(status) || length <= 0)
    return cp;
  UChar32 first;
  int32_t i = 0;
  U16_NEXT(buffer, i, length, first);
  return static_cast<uint32_t>(first);
}

size_t sequenceLength(uint8_t lead) {
  static constexpr size_t lengths[16] = {1, 1, 1, 1, 1, 1, 1, 1,
                                         1, 1, 1, 1, 2, 2, 3, 4};
  return lengths[lead >> 4];
}

std::vector<uint32_t> decodeUtf8(std::string_view text) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  const auto *s = reinterpret_cast<const uint8_t *>(text.data());
  const size_t n = text.size();
  auto continuation = [&](size_t i) { return i < n && (s[i] & 0xC0) == 0x80; };
  size_t i = 0;
  while (i < n) {
    uint8_t b = s[i];
    uint32_t cp = 0;
    size_t len = 0;
    if (b < 0x80) {
      cp = b;
      len = 1;
    } else if ((b & 0xE0) == 0xC0 && continuation(i + 1)) {
      cp = (uint32_t(b & 0x1F) << 6) | (s[i + 1] & 0x3F);
      len = 2;
    } else if ((b & 0xF0) == 0xE0 && continuation(i + 1) &&
               continuation(i + 2)) {
      cp = (uint32_t(b & 0x0F) << 12) | (uint32_t(s[i + 1] & 0x3F) << 6) |
           (s[i + 2] & 0x3F);
      len = 3;
    } else if ((b & 0xF8) == 0xF0 && continuation(i + 1) &&
               continuation(i + 2) && continuation(i + 3)) {
      cp = (uint32_t(b & 0x07) << 18) | (uint32_t(s[i + 1] & 0x3F) << 12) |
           (uint32_t(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
      len = 4;
    }
    if (len == 0 || cp > kMaxCodepoint) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp <= 0x7F) {
    out += static_cast<char>(cp);
  } else if (cp <= 0x7FF) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp <= 0xFFFF) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

namespace {
/// bytes_to_unicode: printable Latin-1 bytes map to themselves, the other 68
/// to U+0100, U+0101, ... in byte order.
struct ByteMap {
  std::array<std::string, 256> forward;
  std::array<uint32_t, 256> codepoint{};
  ByteMap() {
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                       (b >= 0xAE && b <= 0xFF);
      codepoint[b] = printable ? uint32_t(b) : next++;
      appendUtf8(forward[b], codepoint[b]);
    }
  }
};
const ByteMap &byteMap() {
  static const ByteMap map;
  return map;
}
} // namespace

const std::string &byteToUnicode(uint8_t byte) {
  return byteMap().forward[byte];
}

int byteFromUnicode(uint32_t cp) {
  if (cp > 0x143)
    return -1;
  const ByteMap &map = byteMap();
  for (int b = 0; b < 256; ++b)
    if (map.codepoint[b] == cp)
      return b;
  return -1;
}

} // namespace qtensor::unicode
