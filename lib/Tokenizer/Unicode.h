//===- Unicode.h - Code point classes the tokenizers split on ---*- C++ -*-===//
//
// The code point facts llama.cpp's unicode.cpp tabulates, taken from ICU
// instead of generated tables: one general-category class per code point
// (\p{N}, \p{L}, \p{Z}, \p{M}, \p{P}, \p{S}, \p{C}, unassigned), the
// White_Space property, simple lowercase mapping and the first code point of
// the canonical decomposition. UTF-8 is read the way llama.cpp reads it.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_TOKENIZER_UNICODE_H
#define QTENSOR_LIB_TOKENIZER_UNICODE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor::unicode {

/// General-category class (llama.cpp's unicode_cpt_flags categories).
enum class Category : uint8_t {
  Undefined, ///< Cn, and anything past U+10FFFF
  Number,    ///< Nd Nl No
  Letter,    ///< Lu Ll Lt Lm Lo
  Separator, ///< Zs Zl Zp
  Mark,      ///< Mn Mc Me
  Punctuation,
  Symbol,
  Control, ///< Cc Cf Co Cs
};

struct CodepointInfo {
  Category category = Category::Undefined;
  bool whitespace = false; ///< Unicode White_Space
};

CodepointInfo info(uint32_t cp);
inline bool isLetter(uint32_t cp) {
  return info(cp).category == Category::Letter;
}
inline bool isNumber(uint32_t cp) {
  return info(cp).category == Category::Number;
}
inline bool isWhitespace(uint32_t cp) { return info(cp).whitespace; }

/// Simple (one code point) lowercase mapping.
uint32_t toLower(uint32_t cp);
/// First code point of the canonical decomposition (NFD) of `cp`.
uint32_t nfdFirst(uint32_t cp);

/// Byte length of a UTF-8 sequence from its lead byte alone (1 for a
/// continuation byte), as llama.cpp's unicode_len_utf8.
size_t sequenceLength(uint8_t lead);

/// Code points of `text`; a malformed sequence (bad lead or continuation
/// bytes, truncated, or past U+10FFFF) is one U+FFFD and consumes one byte.
std::vector<uint32_t> decodeUtf8(std::string_view text);
void appendUtf8(std::string &out, uint32_t cp);

/// GPT-2's reversible byte-to-code-point map (bytes_to_unicode) as UTF-8.
const std::string &byteToUnicode(uint8_t byte);
/// The inverse: the byte of one mapped code point, -1 when `cp` is not one.
int byteFromUnicode(uint32_t cp);

} // namespace qtensor::unicode

#endif // QTENSOR_LIB_TOKENIZER_UNICODE_H
