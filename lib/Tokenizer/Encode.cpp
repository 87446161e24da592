//===- Encode.cpp - SentencePiece, byte-level BPE and WordPiece ----------===//
//
// The algorithms of llama.cpp's llm_tokenizer_spm, llm_tokenizer_bpe and
// llm_tokenizer_wpm sessions (docs/tokenizer.md), including their orders of
// preference where merges tie, so the ids match llama.cpp's.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Tokenizer/Tokenizer.h"

#include "PreTokenize.h"
#include "TokenizerDetail.h"
#include "Unicode.h"

#include <algorithm>
#include <queue>

namespace qtensor {

using namespace tokenizer_detail;

namespace {

const std::string kSpaceMark = "\xE2\x96\x81"; // U+2581, SentencePiece's space

/// One symbol of a word being merged: bytes [start, start + size) of the
/// word, linked to its neighbours (-1 at the ends); size 0 once merged away.
struct Symbol {
  int prev, next;
  size_t start, size;
};

/// Splits `word` into symbols of one UTF-8 sequence each, sized from the
/// lead byte as llama.cpp does (clipped at the end).
std::vector<Symbol> splitSymbols(const std::string &word) {
  std::vector<Symbol> symbols;
  size_t offset = 0;
  int index = 0;
  while (offset < word.size()) {
    size_t n =
        std::min(unicode::sequenceLength(static_cast<uint8_t>(word[offset])),
                 word.size() - offset);
    Symbol s;
    s.start = offset;
    s.size = n;
    s.prev = index - 1;
    offset += n;
    s.next = offset == word.size() ? -1 : index + 1;
    symbols.push_back(s);
    ++index;
  }
  return symbols;
}

/// Merges `right` into `left`.
void mergeSymbols(std::vector<Symbol> &symbols, int left, int right) {
  Symbol &l = symbols[left];
  Symbol &r = symbols[right];
  l.size += r.size;
  r.size = 0;
  l.next = r.next;
  if (r.next >= 0)
    symbols[r.next].prev = left;
}

/// A fragment of the input: raw text, or a user-defined token found in it.
struct Fragment {
  int32_t token; ///< -1 for raw text
  size_t offset, length;
};

} // namespace

void Tokenizer::appendByte(uint8_t byte, std::vector<int32_t> &out) const {
  int32_t id = byteTokens.empty() ? -1 : byteTokens[byte];
  if (id < 0)
    id = unk; // llama.cpp would throw; the unknown token says the same
  if (id >= 0)
    out.push_back(id);
}

int32_t Tokenizer::mergeRank(const std::string &left,
                             const std::string &right) const {
  auto it = ranks.find(std::make_pair(left, right));
  return it == ranks.end() ? -1 : it->second;
}

//===----------------------------------------------------------------------===//
// SentencePiece (tokenizer.ggml.model = llama)
//===----------------------------------------------------------------------===//

void Tokenizer::encodeLlama(std::string_view input,
                            std::vector<int32_t> &out) const {
  std::string text(input);
  std::vector<Symbol> symbols = splitSymbols(text);

  // Highest score first; on a tie the leftmost pair.
  struct Bigram {
    int left, right;
    float score;
    size_t size;
  };
  auto lower = [](const Bigram &a, const Bigram &b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(lower)> queue(
      lower);
  auto tryAdd = [&](int left, int right) {
    if (left < 0 || right < 0)
      return;
    const Symbol &l = symbols[left];
    auto it = ids.find(text.substr(l.start, l.size + symbols[right].size));
    if (it == ids.end())
      return;
    queue.push({left, right, scores[it->second], l.size + symbols[right].size});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i)
    tryAdd(i - 1, i);
  while (!queue.empty()) {
    Bigram b = queue.top();
    queue.pop();
    const Symbol &l = symbols[b.left];
    const Symbol &r = symbols[b.right];
    // Stale: one side was merged into something else since.
    if (l.size == 0 || r.size == 0 || l.size + r.size != b.size)
      continue;
    mergeSymbols(symbols, b.left, b.right);
    tryAdd(symbols[b.left].prev, b.left);
    tryAdd(b.left, symbols[b.left].next);
  }
  if (symbols.empty())
    return;
  for (int i = 0; i != -1; i = symbols[i].next) {
    const Symbol &s = symbols[i];
    auto it = ids.find(text.substr(s.start, s.size));
    if (it != ids.end()) {
      out.push_back(it->second);
      continue;
    }
    // Not a piece: its bytes through the byte fallback.
    for (size_t j = 0; j < s.size; ++j)
      appendByte(static_cast<uint8_t>(text[s.start + j]), out);
  }
}

//===----------------------------------------------------------------------===//
// Byte-level BPE (tokenizer.ggml.model = gpt2)
//===----------------------------------------------------------------------===//

void Tokenizer::encodeGPT2(std::string_view text,
                           std::vector<int32_t> &out) const {
  struct Bigram {
    int left, right;
    int32_t rank;
    std::string text;
  };
  // Lowest rank first; on a tie the leftmost pair.
  auto later = [](const Bigram &a, const Bigram &b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  for (const std::string &word : pretokenize::splitWords(text, preKind)) {
    if (ignoreMerges) {
      if (int32_t id = tokenId(word); id >= 0) {
        out.push_back(id);
        continue;
      }
    }
    std::vector<Symbol> symbols = splitSymbols(word);
    std::priority_queue<Bigram, std::vector<Bigram>, decltype(later)> queue(
        later);
    auto part = [&](int i) {
      return word.substr(symbols[i].start, symbols[i].size);
    };
    auto tryAdd = [&](int left, int right) {
      if (left < 0 || right < 0)
        return;
      std::string l = part(left), r = part(right);
      int32_t rank = mergeRank(l, r);
      if (rank < 0)
        return;
      queue.push({left, right, rank, l + r});
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i)
      tryAdd(i - 1, i);
    while (!queue.empty()) {
      Bigram b = queue.top();
      queue.pop();
      if (symbols[b.left].size == 0 || symbols[b.right].size == 0 ||
          part(b.left) + part(b.right) != b.text)
        continue;
      mergeSymbols(symbols, b.left, b.right);
      tryAdd(symbols[b.left].prev, b.left);
      tryAdd(b.left, symbols[b.left].next);
    }
    for (const Symbol &s : symbols) {
      if (s.size == 0)
        continue;
      std::string piece = word.substr(s.start, s.size);
      auto it = ids.find(piece);
      if (it != ids.end()) {
        out.push_back(it->second);
        continue;
      }
      // llama.cpp looks each byte up as a one-byte token and drops those
      // that are not.
      for (char c : piece) {
        auto byte = ids.find(std::string(1, c));
        if (byte != ids.end())
          out.push_back(byte->second);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// WordPiece (tokenizer.ggml.model = bert)
//===----------------------------------------------------------------------===//

namespace {
bool isChineseCharacter(uint32_t c) {
  return (c >= 0x04E00 && c <= 0x09FFF) || (c >= 0x03400 && c <= 0x04DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0x0F900 && c <= 0x0FAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/// BERT's basic tokenizer as llama.cpp's llm_tokenizer_wpm::preprocess:
/// optional accent stripping (first code point of the NFD, marks dropped)
/// and lowercasing, whitespace splits words, control characters vanish,
/// punctuation, ASCII symbols and CJK ideographs are words of their own.
std::vector<std::string> bertWords(std::string_view text, bool lowercase,
                                   bool stripAccents) {
  using unicode::Category;
  std::vector<uint32_t> cps = unicode::decodeUtf8(text);
  if (stripAccents)
    for (uint32_t &c : cps)
      c = unicode::nfdFirst(c);
  std::vector<std::string> words(1);
  for (uint32_t c : cps) {
    unicode::CodepointInfo info = unicode::info(c);
    if (info.whitespace) {
      if (!words.back().empty())
        words.emplace_back();
      continue;
    }
    if (c == 0 || c == 0xFFFD || info.category == Category::Control)
      continue;
    if (stripAccents && info.category == Category::Mark)
      continue;
    std::string s;
    unicode::appendUtf8(s, lowercase ? unicode::toLower(c) : c);
    if (info.category == Category::Punctuation ||
        (c < 0x7F && info.category == Category::Symbol) ||
        isChineseCharacter(c)) {
      if (!words.back().empty())
        words.emplace_back();
      words.back() = s;
      words.emplace_back();
    } else {
      words.back() += s;
    }
  }
  if (words.back().empty())
    words.pop_back();
  return words;
}
} // namespace

void Tokenizer::encodeBert(std::string_view text,
                           std::vector<int32_t> &out) const {
  for (const std::string &word : bertWords(text, lowercase, stripAccents)) {
    if (word.empty())
      continue;
    // The vocabulary spells a word start "▁word" and a continuation
    // ("##ing" in BERT's files) "ing": longest match first, from the left.
    const std::string marked = kSpaceMark + word;
    const size_t n = marked.size();
    const size_t before = out.size();
    for (size_t i = 0; i < n; ++i) {
      bool matched = false;
      for (size_t j = std::min(n, i + maxTokenBytes + 1); j > i; --j) {
        auto it = ids.find(marked.substr(i, j - i));
        if (it != ids.end()) {
          out.push_back(it->second);
          matched = true;
          i = j - 1;
          break;
        }
      }
      if (!matched) { // one uncovered position makes the whole word [UNK]
        out.resize(before);
        break;
      }
    }
    if (out.size() == before)
      out.push_back(unk);
  }
}

//===----------------------------------------------------------------------===//
// encode
//===----------------------------------------------------------------------===//

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool addSpecial,
                                       bool parseSpecial) const {
  // User-defined tokens (and control and unknown ones with parseSpecial)
  // first, longest first, each splitting every raw fragment at its
  // occurrences.
  std::vector<Fragment> fragments;
  if (!text.empty())
    fragments.push_back({-1, 0, text.size()});
  for (int32_t id : parseSpecial ? specialTokens : userDefined) {
    const std::string &needle = tokens[id];
    std::vector<Fragment> next;
    next.reserve(fragments.size());
    for (const Fragment &f : fragments) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      std::string_view raw = text.substr(f.offset, f.length);
      size_t pos = 0;
      for (size_t m; (m = raw.find(needle, pos)) != std::string_view::npos;
           pos = m + needle.size()) {
        if (m > pos)
          next.push_back({-1, f.offset + pos, m - pos});
        next.push_back({id, 0, 0});
      }
      if (pos < raw.size())
        next.push_back({-1, f.offset + pos, raw.size() - pos});
    }
    fragments = std::move(next);
  }

  std::vector<int32_t> out;
  switch (kind) {
  case TokenizerModel::Llama: {
    if (addSpecial && addBos)
      out.push_back(bos);
    bool afterSpecial = true; // a leading space before the first text
    for (const Fragment &f : fragments) {
      if (f.token >= 0) {
        out.push_back(f.token);
        afterSpecial = true;
        continue;
      }
      std::string raw;
      if (addSpacePrefix && afterSpecial)
        raw = " ";
      raw.append(text.substr(f.offset, f.length));
      std::string escaped;
      escaped.reserve(raw.size() * 2);
      for (char c : raw) {
        if (c == ' ')
          escaped += kSpaceMark;
        else
          escaped += c;
      }
      encodeLlama(escaped, out);
      afterSpecial = false;
    }
    if (addSpecial && addEos)
      out.push_back(eos);
    break;
  }
  case TokenizerModel::GPT2:
    if (addSpecial && addBos)
      out.push_back(bos);
    for (const Fragment &f : fragments) {
      if (f.token >= 0)
        out.push_back(f.token);
      else
        encodeGPT2(text.substr(f.offset, f.length), out);
    }
    if (addSpecial && addEos)
      out.push_back(eos);
    break;
  case TokenizerModel::Bert:
    if (addSpecial)
      out.push_back(bos);
    for (const Fragment &f : fragments) {
      if (f.token >= 0)
        out.push_back(f.token);
      else
        encodeBert(text.substr(f.offset, f.length), out);
    }
    if (addSpecial)
      out.push_back(sep);
    break;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// decode
//===----------------------------------------------------------------------===//

std::string Tokenizer::piece(int32_t id, bool renderSpecial) const {
  const uint8_t attr = attrs[id];
  if (!renderSpecial && (attr & (AttrUnknown | AttrControl)))
    return std::string();
  const std::string &text = tokens[id];
  if (attr & (AttrUnknown | AttrControl | AttrUserDefined))
    return text;
  if (attr & AttrNormal) {
    if (kind != TokenizerModel::GPT2) {
      std::string out;
      for (size_t i = 0; i < text.size();) {
        if (text.compare(i, kSpaceMark.size(), kSpaceMark) == 0) {
          out += ' ';
          i += kSpaceMark.size();
        } else {
          out += text[i++];
        }
      }
      return out;
    }
    // GPT-2's byte code points back to bytes.
    std::string out;
    for (uint32_t cp : unicode::decodeUtf8(text)) {
      int b = unicode::byteFromUnicode(cp);
      if (b >= 0) {
        out += static_cast<char>(b);
        continue;
      }
      std::string utf8;
      unicode::appendUtf8(utf8, cp);
      out += "[UNK_BYTE_0x";
      static const char *hex = "0123456789abcdef";
      for (char c : utf8) {
        out += hex[static_cast<uint8_t>(c) >> 4];
        out += hex[static_cast<uint8_t>(c) & 15];
      }
      out += text + "]";
    }
    return out;
  }
  if (attr & AttrByte) {
    // Checked at load: "<0xHH>".
    auto hex = [](char c) {
      return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
    };
    return std::string(1, static_cast<char>(hex(text[3]) * 16 + hex(text[4])));
  }
  return std::string();
}

Expected<std::string> Tokenizer::tokenPiece(int32_t id,
                                            bool renderSpecial) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens.size())
    return makeError("token id ", id, " is outside the vocabulary (",
                     tokens.size(), " tokens)");
  return piece(id, renderSpecial);
}

Expected<std::string> Tokenizer::decode(const std::vector<int32_t> &list,
                                        bool renderSpecial) const {
  std::string text;
  // The leading space encode adds comes off the first piece again.
  bool removeSpace = addSpacePrefix;
  for (int32_t id : list) {
    QTENSOR_ASSIGN_OR_RETURN(std::string p, tokenPiece(id, renderSpecial));
    if (removeSpace && !p.empty() && p[0] == ' ')
      p.erase(0, 1);
    removeSpace = false;
    text += p;
  }
  if (!cleanSpaces || text.empty())
    return text;

  // llama.cpp's clean_up_tokenization_spaces, three passes in place.
  std::string &s = text;
  // " ?", " !", " .", " ," lose the space.
  size_t total = 1;
  for (size_t i = 1, n = s.size(); i < n; ++i) {
    const char x = s[i];
    if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ','))
      --total;
    s[total++] = x;
  }
  s.resize(total);
  // " ' " between spaces loses both spaces.
  total = 1;
  for (size_t i = 1, n = s.size(); i < n; ++i) {
    const char x = s[i];
    if (x == '\'' && i + 1 < n && s[i - 1] == ' ' && s[i + 1] == ' ') {
      --total;
      s[++i] = '\0';
    }
    s[total++] = x;
  }
  s.resize(total);
  // " 's", " 'm", " 're", " 've" lose the space.
  total = 1;
  for (size_t i = 1, n = s.size(); i < n; ++i) {
    const char x = s[i];
    if (s[i - 1] == ' ' && x == '\'' && i + 1 < n) {
      const char x1 = s[i + 1];
      if (x1 == 's' || x1 == 'm')
        --total;
      else if (i + 2 < n && ((x1 == 'r' && s[i + 2] == 'e') ||
                             (x1 == 'v' && s[i + 2] == 'e')))
        --total;
    }
    s[total++] = x;
  }
  s.resize(total);
  return text;
}

} // namespace qtensor
