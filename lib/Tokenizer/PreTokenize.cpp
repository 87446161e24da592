//===- PreTokenize.cpp - Byte-level BPE pre-tokenizers --------------------===//

#include "PreTokenize.h"

#include "Unicode.h"

#include <functional>

namespace qtensor::pretokenize {

namespace {

using unicode::Category;

/// Piece lengths, in code points, covering the text in order.
using Pieces = std::vector<size_t>;

/// A code point's classes; a position past the piece has none.
struct Class {
  bool valid = false, letter = false, number = false, space = false;
  uint32_t cp = 0;
};

/// [^\s\p{L}\p{N}]: anything but whitespace, letters and numbers.
bool isOther(const Class &c) {
  return c.valid && !c.space && !c.letter && !c.number;
}

/// One piece [begin, end) of the text, cut into consecutive parts from
/// `pos` on, with the matchers the GPT-2 and Llama 3 patterns share.
struct PieceCutter {
  const std::vector<uint32_t> &cps;
  size_t pos, end;
  Pieces &out;

  Class at(size_t p) const {
    Class c;
    if (p >= end)
      return c;
    unicode::CodepointInfo i = unicode::info(cps[p]);
    c.valid = true;
    c.cp = cps[p];
    c.letter = i.category == Category::Letter;
    c.number = i.category == Category::Number;
    c.space = i.whitespace;
    return c;
  }

  void cutTo(size_t to) {
    if (to > pos)
      out.push_back(to - pos);
    pos = to;
  }

  /// 's|'t|'re|'ve|'m|'ll|'d at pos (case-insensitively with
  /// `ignoreCase`): the match's end, 0 for none.
  size_t contractionEnd(bool ignoreCase) const {
    auto fold = [&](uint32_t c) {
      return ignoreCase && c >= 'A' && c <= 'Z' ? c + 32 : c;
    };
    if (cps[pos] != '\'' || pos + 1 >= end)
      return 0;
    uint32_t n1 = fold(cps[pos + 1]);
    if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd')
      return pos + 2;
    if (pos + 2 >= end)
      return 0;
    uint32_t n2 = fold(cps[pos + 2]);
    if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') ||
        (n1 == 'l' && n2 == 'l'))
      return pos + 3;
    return 0;
  }

  /// The patterns' last alternatives, given the run of `spaces` whitespace
  /// code points at pos: \s+(?!\S) (the run but its last space, which goes
  /// to what follows), \s+, or else one code point.
  size_t whitespaceEnd(size_t spaces) const {
    if (spaces > 1 && pos + spaces < end)
      return pos + spaces - 1;
    if (spaces > 0)
      return pos + spaces;
    return pos + 1;
  }
};

/// Runs `cut` on each piece; the parts it cuts, in order.
template <typename Cut>
Pieces cutEachPiece(const std::vector<uint32_t> &cps, const Pieces &pieces,
                    Cut cut) {
  Pieces out;
  out.reserve(pieces.size());
  size_t begin = 0;
  for (size_t length : pieces) {
    PieceCutter piece{cps, begin, begin + length, out};
    while (piece.pos < piece.end)
      cut(piece);
    begin += length;
  }
  return out;
}

/// The GPT-2 pattern
///   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
/// applied to each piece (llama.cpp's unicode_regex_split_custom_gpt2).
Pieces splitGPT2(const std::vector<uint32_t> &cps, const Pieces &pieces) {
  return cutEachPiece(cps, pieces, [](PieceCutter &c) {
    if (size_t to = c.contractionEnd(/*ignoreCase=*/false)) {
      c.cutTo(to);
      return;
    }
    // An optional leading space, then a run of one class.
    const size_t first = c.cps[c.pos] == ' ' ? c.pos + 1 : c.pos;
    const Class lead = c.at(first);
    if (lead.letter || lead.number || isOther(lead)) {
      size_t p = first + 1;
      if (lead.letter)
        while (c.at(p).letter)
          ++p;
      else if (lead.number)
        while (c.at(p).number)
          ++p;
      else
        while (isOther(c.at(p)))
          ++p;
      c.cutTo(p);
      return;
    }
    size_t spaces = 0;
    while (c.at(c.pos + spaces).space)
      ++spaces;
    c.cutTo(c.whitespaceEnd(spaces));
  });
}

/// The Llama 3 pattern
///   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
///   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
/// applied to each piece, alternative by alternative as the regex tries
/// them (llama.cpp's unicode_regex_split_custom_llama3). Qwen2's pattern is
/// the same with \p{N} for \p{N}{1,3}: `maxDigits` is 3 or 1.
Pieces splitLlama3(const std::vector<uint32_t> &cps, const Pieces &pieces,
                   size_t maxDigits) {
  auto newline = [](uint32_t c) { return c == '\r' || c == '\n'; };
  return cutEachPiece(cps, pieces, [&](PieceCutter &c) {
    const size_t pos = c.pos;
    const Class here = c.at(pos);
    // (?i:'s|'t|'re|'ve|'m|'ll|'d)
    if (size_t to = c.contractionEnd(/*ignoreCase=*/true)) {
      c.cutTo(to);
      return;
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (!newline(here.cp) && !here.number &&
        (here.letter || c.at(pos + 1).letter)) {
      size_t p = pos + 1;
      while (c.at(p).letter)
        ++p;
      c.cutTo(p);
      return;
    }
    // \p{N}{1,maxDigits}
    if (here.number) {
      size_t p = pos;
      while (p - pos < maxDigits && c.at(p).number)
        ++p;
      c.cutTo(p);
      return;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    const size_t first = here.cp == ' ' ? pos + 1 : pos;
    if (isOther(c.at(first))) {
      size_t p = first + 1;
      while (isOther(c.at(p)))
        ++p;
      while (p < c.end && newline(cps[p]))
        ++p;
      c.cutTo(p);
      return;
    }
    // \s*[\r\n]+ (up to the last newline of the run of whitespace)
    size_t spaces = 0, lastNewline = 0;
    while (c.at(pos + spaces).space) {
      if (newline(cps[pos + spaces]))
        lastNewline = pos + spaces + 1;
      ++spaces;
    }
    c.cutTo(lastNewline > 0 ? lastNewline : c.whitespaceEnd(spaces));
  });
}

/// Splits each piece at the leftmost matches of a pattern, as
/// std::regex_iterator walks it: `matchAt(p, end)` is the length of the
/// match starting at p (0 for none). Matches are never empty.
Pieces splitMatches(const Pieces &pieces,
                    const std::function<size_t(size_t, size_t)> &matchAt) {
  Pieces out;
  out.reserve(pieces.size());
  size_t begin = 0;
  for (size_t length : pieces) {
    const size_t end = begin + length;
    size_t start = begin;
    for (size_t p = begin; p < end;) {
      size_t n = matchAt(p, end);
      if (n == 0) {
        ++p;
        continue;
      }
      if (p > start)
        out.push_back(p - start);
      out.push_back(n);
      p += n;
      start = p;
    }
    if (start < end)
      out.push_back(end - start);
    begin = end;
  }
  return out;
}

/// The classes of llama.cpp's collapsed text: a code point below U+0080
/// stands for itself, one above for its category (White_Space first).
struct Collapsed {
  const std::vector<uint32_t> &cps;

  bool space(size_t p) const {
    uint32_t c = cps[p];
    if (c < 0x80)
      return c == ' ' || (c >= 0x09 && c <= 0x0D);
    return unicode::info(c).whitespace;
  }
  bool category(size_t p, Category want) const {
    unicode::CodepointInfo i = unicode::info(cps[p]);
    return !i.whitespace && i.category == want;
  }
  /// \p{L}: A-Z a-z, or a letter above U+007F.
  bool letter(size_t p) const {
    uint32_t c = cps[p];
    if (c < 0x80)
      return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    return category(p, Category::Letter);
  }
  /// \p{N}: 0-9, or a number above U+007F.
  bool number(size_t p) const {
    uint32_t c = cps[p];
    if (c < 0x80)
      return c >= '0' && c <= '9';
    return category(p, Category::Number);
  }
  /// \p{P}: the ASCII punctuation !"#%&'()*,-./:;?@[\]_{} (not the ASCII
  /// symbols $+<=>^`|~), or punctuation above U+007F.
  bool punctuation(size_t p) const {
    uint32_t c = cps[p];
    if (c < 0x80)
      return (c >= 0x21 && c <= 0x23) || (c >= 0x25 && c <= 0x2A) ||
             (c >= 0x2C && c <= 0x2F) || c == 0x3A || c == 0x3B || c == 0x3F ||
             c == 0x40 || (c >= 0x5B && c <= 0x5D) || c == 0x5F || c == 0x7B ||
             c == 0x7D;
    return category(p, Category::Punctuation);
  }
};

/// `\s?X+` for a class X: an optional space only where X follows it.
template <typename Pred>
size_t optionalSpaceThenRun(const Collapsed &t, size_t p, size_t end, Pred in) {
  size_t q = p;
  if (!in(q)) {
    if (!(t.space(q) && q + 1 < end && in(q + 1)))
      return 0;
    ++q;
  }
  while (q < end && in(q))
    ++q;
  return q - p;
}

Pieces splitDeepSeekCoder(const std::vector<uint32_t> &cps, Pieces pieces) {
  Collapsed t{cps};
  // [\r\n]
  pieces = splitMatches(pieces, [&](size_t p, size_t) -> size_t {
    return cps[p] == '\r' || cps[p] == '\n';
  });
  // \s?\p{L}+
  pieces = splitMatches(pieces, [&](size_t p, size_t end) {
    return optionalSpaceThenRun(t, p, end,
                                [&](size_t q) { return t.letter(q); });
  });
  // \s?\p{P}+
  pieces = splitMatches(pieces, [&](size_t p, size_t end) {
    return optionalSpaceThenRun(t, p, end,
                                [&](size_t q) { return t.punctuation(q); });
  });
  // [一-龥ࠀ-一가-퟿]+ over the code points, where every White_Space code
  // point above U+007F reads as U+000B.
  auto cjk = [&](size_t q) {
    uint32_t c = cps[q];
    if (c > 0x7F && unicode::info(c).whitespace)
      return false;
    return (c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x0800 && c <= 0x4E00) ||
           (c >= 0xAC00 && c <= 0xD7FF);
  };
  pieces = splitMatches(pieces, [&](size_t p, size_t end) {
    size_t q = p;
    while (q < end && cjk(q))
      ++q;
    return q - p;
  });
  // \p{N}
  pieces = splitMatches(
      pieces, [&](size_t p, size_t) -> size_t { return t.number(p); });
  return pieces;
}

/// llama.cpp's LLAMA_VOCAB_PRE_TYPE_DEFAULT patterns.
Pieces splitDefault(const std::vector<uint32_t> &cps, Pieces pieces) {
  Collapsed t{cps};
  // [\p{P}\$\+<=>\^~\|]+
  auto punctuationOrSymbol = [&](size_t q) {
    uint32_t c = cps[q];
    return t.punctuation(q) || c == '$' || c == '+' || c == '<' || c == '=' ||
           c == '>' || c == '^' || c == '~' || c == '|';
  };
  pieces = splitMatches(pieces, [&](size_t p, size_t end) {
    size_t q = p;
    while (q < end && punctuationOrSymbol(q))
      ++q;
    return q - p;
  });
  pieces = splitGPT2(cps, pieces);
  // \p{N}+
  pieces = splitMatches(pieces, [&](size_t p, size_t end) {
    size_t q = p;
    while (q < end && t.number(q))
      ++q;
    return q - p;
  });
  // [0-9][0-9][0-9]
  auto digit = [&](size_t q) { return cps[q] >= '0' && cps[q] <= '9'; };
  pieces = splitMatches(pieces, [&](size_t p, size_t end) -> size_t {
    return p + 3 <= end && digit(p) && digit(p + 1) && digit(p + 2) ? 3 : 0;
  });
  return pieces;
}

} // namespace

std::vector<std::string> splitWords(std::string_view text, PreTokenizer kind) {
  const std::vector<uint32_t> cps = unicode::decodeUtf8(text);
  Pieces pieces;
  if (!cps.empty())
    pieces.push_back(cps.size());
  switch (kind) {
  case PreTokenizer::GPT2:
    pieces = splitGPT2(cps, pieces);
    break;
  case PreTokenizer::DeepSeekCoder:
    pieces = splitDeepSeekCoder(cps, std::move(pieces));
    break;
  case PreTokenizer::Llama3:
    pieces = splitLlama3(cps, pieces, 3);
    break;
  case PreTokenizer::Qwen2:
    pieces = splitLlama3(cps, pieces, 1);
    break;
  case PreTokenizer::Default:
  case PreTokenizer::None:
    pieces = splitDefault(cps, std::move(pieces));
    break;
  }

  std::vector<std::string> words;
  words.reserve(pieces.size());
  size_t begin = 0;
  std::string utf8;
  for (size_t length : pieces) {
    utf8.clear();
    for (size_t i = begin; i < begin + length; ++i)
      unicode::appendUtf8(utf8, cps[i]);
    std::string word;
    word.reserve(utf8.size() * 2);
    for (char c : utf8)
      word += unicode::byteToUnicode(static_cast<uint8_t>(c));
    words.push_back(std::move(word));
    begin += length;
  }
  return words;
}

} // namespace qtensor::pretokenize
