//===- Load.cpp - A Tokenizer from a GGUF file's tokenizer.ggml.* keys ----===//
//
// Reads and checks the metadata the way llama.cpp's llama_vocab::load does,
// but refuses what llama.cpp would only warn about: a special id outside the
// vocabulary, score or type arrays that do not match the tokens, a type
// outside 0..6, a merge that is not "LEFT RIGHT".
//
//===----------------------------------------------------------------------===//

#include "qtensor/Tokenizer/Tokenizer.h"

#include "TokenizerDetail.h"

#include "qtensor/Formats/GGUF.h"
#include "qtensor/Support/Sha256.h"
#include "qtensor/Tokenizer/HuggingFace.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

namespace qtensor {

using namespace tokenizer_detail;

std::string_view tokenizerModelName(TokenizerModel model) {
  switch (model) {
  case TokenizerModel::Llama:
    return "llama";
  case TokenizerModel::GPT2:
    return "gpt2";
  case TokenizerModel::Bert:
    return "bert";
  }
  return "unknown";
}

size_t Tokenizer::MergeKeyHash::operator()(
    const std::pair<std::string, std::string> &p) const {
  size_t h = std::hash<std::string>{}(p.first);
  return h ^ (std::hash<std::string>{}(p.second) + 0x9e3779b97f4a7c15ULL +
              (h << 6) + (h >> 2));
}

int32_t Tokenizer::tokenId(std::string_view text) const {
  auto it = ids.find(std::string(text));
  return it == ids.end() ? -1 : it->second;
}

bool Tokenizer::endsGeneration(int32_t id) const {
  return std::binary_search(eog.begin(), eog.end(), id);
}

namespace {
constexpr std::string_view kSupportedModels = "llama, gpt2, bert";
constexpr std::string_view kSupportedPre =
    "default, gpt-2, deepseek-coder, llama-bpe, qwen2";

/// Printable form of an untrusted metadata string for messages.
std::string quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s.substr(0, 80)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F || c == '\'' || c == '\\') {
      static const char *hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  if (s.size() > 80)
    out += "...";
  return out + "'";
}

uint8_t attrOfType(TokenType type) {
  switch (type) {
  case TokenType::Unknown:
    return AttrUnknown;
  case TokenType::Unused:
    return AttrUnused;
  case TokenType::Normal:
    return AttrNormal;
  case TokenType::Control:
    return AttrControl;
  case TokenType::UserDefined:
    return AttrUserDefined;
  case TokenType::Byte:
    return AttrByte;
  case TokenType::Undefined:
    return AttrUndefined;
  }
  return AttrUndefined;
}

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

/// "<0xHH>" -> HH, -1 otherwise.
int byteTokenValue(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>')
    return -1;
  int hi = hexValue(text[3]), lo = hexValue(text[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

// Token texts llama.cpp recognizes as end-of-generation and fill-in-the-
// middle tokens and marks CONTROL (so they are not parsed from plain text).
const std::string_view kEndOfGeneration[] = {"<|eot_id|>",
                                             "<|im_end|>",
                                             "<|end|>",
                                             "<|return|>",
                                             "<|call|>",
                                             "<|flush|>",
                                             "<|calls|>",
                                             "<end_of_turn>",
                                             "<|endoftext|>",
                                             "</s>",
                                             "<|eom_id|>",
                                             "<EOT>",
                                             "_<EOT>",
                                             "[EOT]",
                                             "[EOS]",
                                             "<|end_of_text|>",
                                             "<end_of_utterance>",
                                             "<eos>",
                                             "<turn|>",
                                             "<|tool_response>",
                                             "<｜end▁of▁sentence｜>",
                                             "[e~["};

struct FimKind {
  std::vector<std::string_view> keys;
  std::vector<std::string_view> texts;
  bool endsGeneration = false; ///< pad, repo and file separator do
};
const std::vector<FimKind> kFillInTheMiddle = {
    {{"tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id"},
     {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>",
      "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}},
    {{"tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id"},
     {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>",
      "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}},
    {{"tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id"},
     {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>",
      "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"}},
    {{"tokenizer.ggml.fim_pad_token_id"},
     {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"},
     true},
    {{"tokenizer.ggml.fim_rep_token_id"},
     {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"},
     true},
    {{"tokenizer.ggml.fim_sep_token_id"}, {"<|file_sep|>"}, true},
};

void putU32(std::string &out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out += static_cast<char>(v >> (8 * i));
}
void putBytes(std::string &out, std::string_view s) {
  putU32(out, static_cast<uint32_t>(s.size()));
  out.append(s.data(), s.size());
}
} // namespace

/// Builds a Tokenizer; every failure names the file and the key.
class TokenizerLoader {
public:
  TokenizerLoader(const GGUFFile &file, std::string_view fileName)
      : file(file), name(fileName) {}

  Expected<Tokenizer> load();

private:
  template <typename... Parts> Error fail(const Parts &...parts) const {
    return makeError(name, ": ", parts...);
  }
  Expected<std::optional<std::string_view>> string(std::string_view key) const;
  Expected<std::optional<bool>> boolean(std::string_view key) const;
  /// An integer id key; must name a token of the vocabulary.
  Expected<std::optional<int32_t>> tokenId(std::string_view key) const;
  Status readModel();
  Status readTokens();
  Status readMerges();
  Status readSpecial();
  void markControlTokens();
  /// A fill-in-the-middle kind's token found by its texts (llama.cpp's
  /// detection), or -1: none, or the metadata names the kind's id.
  int32_t fimTokenByText(const FimKind &kind) const;
  Status findEndOfGeneration();
  void indexSpecialTokens();
  void computeDigest();

  const GGUFFile &file;
  std::string name;
  Tokenizer t;
  bool preAddsBos = false; ///< the pre-tokenizer's default add_bos
};

Expected<std::optional<std::string_view>>
TokenizerLoader::string(std::string_view key) const {
  const GGUFValue *v = file.findMetadata(key);
  if (!v)
    return std::optional<std::string_view>();
  std::optional<std::string_view> s = v->get<std::string_view>();
  if (!s)
    return fail(key, ": expected a STRING, found ",
                ggufValueTypeName(v->type()));
  return s;
}

Expected<std::optional<bool>>
TokenizerLoader::boolean(std::string_view key) const {
  const GGUFValue *v = file.findMetadata(key);
  if (!v)
    return std::optional<bool>();
  std::optional<bool> b = v->get<bool>();
  if (!b)
    return fail(key, ": expected a BOOL, found ", ggufValueTypeName(v->type()));
  return b;
}

Expected<std::optional<int32_t>>
TokenizerLoader::tokenId(std::string_view key) const {
  const GGUFValue *v = file.findMetadata(key);
  if (!v)
    return std::optional<int32_t>();
  std::optional<int64_t> id = v->asSigned();
  if (!id) {
    if (v->asUnsigned())
      return fail(key, " = ", *v->asUnsigned(), " is not a token id (",
                  t.tokens.size(), " tokens)");
    return fail(key, ": expected an integer token id, found ",
                ggufValueTypeName(v->type()));
  }
  if (*id < 0 || static_cast<uint64_t>(*id) >= t.tokens.size())
    return fail(key, " = ", *id, " is not a token id (", t.tokens.size(),
                " tokens)");
  return std::optional<int32_t>(static_cast<int32_t>(*id));
}

Status TokenizerLoader::readModel() {
  QTENSOR_ASSIGN_OR_RETURN(std::optional<std::string_view> model,
                           string("tokenizer.ggml.model"));
  if (!model)
    return fail(
        "tokenizer.ggml.model is missing (supported: ", kSupportedModels, ")");
  if (*model == "llama")
    t.kind = TokenizerModel::Llama;
  else if (*model == "gpt2")
    t.kind = TokenizerModel::GPT2;
  else if (*model == "bert")
    t.kind = TokenizerModel::Bert;
  else
    return fail("tokenizer.ggml.model = ", quoted(*model),
                " is not supported (supported: ", kSupportedModels, ")");

  QTENSOR_ASSIGN_OR_RETURN(std::optional<std::string_view> pre,
                           string("tokenizer.ggml.pre"));
  t.pre = pre ? std::string(*pre) : std::string();
  // As in llama.cpp, only byte-level BPE has a pre-tokenizer; the others
  // keep the name but do not read it.
  if (t.kind == TokenizerModel::GPT2) {
    if (!pre || *pre == "default") {
      t.preKind = PreTokenizer::Default;
      t.cleanSpaces = true;
    } else if (*pre == "gpt-2") {
      t.preKind = PreTokenizer::GPT2;
      t.cleanSpaces = true;
    } else if (*pre == "deepseek-coder") {
      t.preKind = PreTokenizer::DeepSeekCoder;
      t.cleanSpaces = false;
    } else if (*pre == "llama-bpe" || *pre == "llama3" || *pre == "llama-v3") {
      // llama.cpp: whole words first, and a BOS unless the file says not.
      t.preKind = PreTokenizer::Llama3;
      t.cleanSpaces = true;
      t.ignoreMerges = true;
      preAddsBos = true;
    } else if (*pre == "qwen2") {
      t.preKind = PreTokenizer::Qwen2;
      t.cleanSpaces = false;
    } else {
      return fail("tokenizer.ggml.pre = ", quoted(*pre),
                  " is not supported for tokenizer.ggml.model = gpt2 "
                  "(supported: ",
                  kSupportedPre, ")");
    }
  }
  return Status::ok();
}

Status TokenizerLoader::readTokens() {
  constexpr std::string_view kTokens = "tokenizer.ggml.tokens";
  const GGUFValue *list = file.findMetadata(kTokens);
  if (!list)
    return fail(kTokens, " is missing");
  if (!list->isArray() || list->arrayElementType() != GGUFValueType::String)
    return fail(kTokens, ": expected an ARRAY of STRING, found ",
                list->isArray() ? "an ARRAY of " : "",
                ggufValueTypeName(list->isArray() ? list->arrayElementType()
                                                  : list->type()));
  const std::vector<std::string_view> &texts = list->arrayStrings();
  const uint64_t n = texts.size();
  if (n == 0)
    return fail(kTokens, " is empty");
  if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    return fail(kTokens, " has ", n, " tokens, more than ids can number");

  // Scores: FLOAT32 (or INT32, as llama.cpp also reads), one per token.
  constexpr std::string_view kScores = "tokenizer.ggml.scores";
  const GGUFValue *scores = file.findMetadata(kScores);
  if (scores) {
    if (!scores->isArray() ||
        (scores->arrayElementType() != GGUFValueType::Float32 &&
         scores->arrayElementType() != GGUFValueType::Int32))
      return fail(kScores, ": expected an ARRAY of FLOAT32, found ",
                  scores->isArray() ? "an ARRAY of " : "",
                  ggufValueTypeName(scores->isArray()
                                        ? scores->arrayElementType()
                                        : scores->type()));
    if (scores->arraySize() != n)
      return fail(kScores, " has ", scores->arraySize(), " entries but ",
                  kTokens, " has ", n);
  }
  constexpr std::string_view kTypes = "tokenizer.ggml.token_type";
  const GGUFValue *types = file.findMetadata(kTypes);
  if (types) {
    if (!types->isArray() || types->arrayElementType() != GGUFValueType::Int32)
      return fail(kTypes, ": expected an ARRAY of INT32, found ",
                  types->isArray() ? "an ARRAY of " : "",
                  ggufValueTypeName(types->isArray() ? types->arrayElementType()
                                                     : types->type()));
    if (types->arraySize() != n)
      return fail(kTypes, " has ", types->arraySize(), " entries but ", kTokens,
                  " has ", n);
  }

  t.tokens.reserve(n);
  t.scores.reserve(n);
  t.types.reserve(n);
  t.ids.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    std::string text(texts[i]);
    // llama.cpp names an empty token instead of refusing it.
    if (text.empty())
      text = "[EMPTY_" + std::to_string(i) + "]";
    float score = 0.0f;
    if (scores) {
      if (scores->arrayElementType() == GGUFValueType::Float32)
        score = *scores->arrayElement<float>(i);
      else
        score = static_cast<float>(*scores->arrayElement<int32_t>(i));
      if (std::isnan(score))
        return fail(kScores, "[", i, "] is NaN");
    }
    TokenType type = TokenType::Normal;
    if (types) {
      int32_t raw = *types->arrayElement<int32_t>(i);
      if (raw < 0 || raw > 6)
        return fail(kTypes, "[", i, "] = ", raw,
                    " is not a token type (0 undefined .. 6 byte)");
      type = static_cast<TokenType>(raw);
    }
    if (type == TokenType::Byte && byteTokenValue(text) < 0)
      return fail(kTypes, "[", i, "] is BYTE but token ", i, " is ",
                  quoted(text), ", not <0xHH>");
    auto [it, inserted] = t.ids.emplace(text, static_cast<int32_t>(i));
    if (!inserted)
      return fail(kTokens, ": token ", quoted(text), " appears twice (ids ",
                  it->second, " and ", i, ")");
    t.maxTokenBytes = std::max(t.maxTokenBytes, text.size());
    t.tokens.push_back(std::move(text));
    t.scores.push_back(score);
    t.types.push_back(type);
    t.attrs.push_back(attrOfType(type));
  }
  return Status::ok();
}

Status TokenizerLoader::readMerges() {
  constexpr std::string_view kMerges = "tokenizer.ggml.merges";
  const GGUFValue *merges = file.findMetadata(kMerges);
  if (t.kind != TokenizerModel::GPT2)
    return Status::ok();
  if (!merges)
    return fail(kMerges, " is missing (a gpt2 tokenizer needs its BPE "
                         "merges)");
  if (!merges->isArray() || merges->arrayElementType() != GGUFValueType::String)
    return fail(kMerges, ": expected an ARRAY of STRING, found ",
                merges->isArray() ? "an ARRAY of " : "",
                ggufValueTypeName(merges->isArray() ? merges->arrayElementType()
                                                    : merges->type()));
  const std::vector<std::string_view> &list = merges->arrayStrings();
  if (list.size() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
    return fail(kMerges, " has ", list.size(),
                " merges, more than ranks "
                "can number");
  t.merges.reserve(list.size());
  t.ranks.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    std::string_view m = list[i];
    // "LEFT RIGHT": the separator is the first space after the first byte.
    size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
    if (space == std::string_view::npos || space + 1 >= m.size() ||
        m.find(' ', space + 1) != std::string_view::npos)
      return fail(kMerges, "[", i, "] = ", quoted(m),
                  " is not two parts separated by one space");
    std::pair<std::string, std::string> pair(std::string(m.substr(0, space)),
                                             std::string(m.substr(space + 1)));
    // The first rank of a repeated merge wins, as in llama.cpp.
    t.ranks.emplace(pair, static_cast<int32_t>(i));
    t.merges.push_back(std::move(pair));
  }
  return Status::ok();
}

Status TokenizerLoader::readSpecial() {
  // llama.cpp's defaults per model; a default outside the vocabulary is
  // dropped, an id given in the metadata must be a token.
  const int32_t n = static_cast<int32_t>(t.tokens.size());
  auto dflt = [&](int32_t id) { return id < n ? id : -1; };
  switch (t.kind) {
  case TokenizerModel::Llama:
    t.bos = dflt(1);
    t.eos = dflt(2);
    t.unk = dflt(0);
    t.addBos = true;
    t.addSpacePrefix = true;
    break;
  case TokenizerModel::GPT2:
    t.bos = dflt(11);
    t.eos = dflt(11);
    t.addBos = preAddsBos;
    break;
  case TokenizerModel::Bert:
    t.bos = dflt(101);
    t.unk = dflt(100);
    t.sep = dflt(102);
    t.pad = dflt(0);
    t.addBos = true;
    t.cleanSpaces = true;
    break;
  }
  struct IdKey {
    std::string_view key;
    int32_t *id;
  };
  const IdKey keys[] = {
      {"tokenizer.ggml.cls_token_id", &t.bos}, // bert's [CLS]; bos wins
      {"tokenizer.ggml.bos_token_id", &t.bos},
      {"tokenizer.ggml.eos_token_id", &t.eos},
      {"tokenizer.ggml.unknown_token_id", &t.unk},
      {"tokenizer.ggml.seperator_token_id", &t.sep},
      {"tokenizer.ggml.padding_token_id", &t.pad},
  };
  for (const IdKey &k : keys) {
    QTENSOR_ASSIGN_OR_RETURN(std::optional<int32_t> id, tokenId(k.key));
    if (id)
      *k.id = *id;
  }
  // The other special ids are checked the same way (and stop llama.cpp's
  // detection by text for their kind, see markControlTokens).
  for (std::string_view key :
       {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id",
        "tokenizer.ggml.mask_token_id"}) {
    QTENSOR_ASSIGN_OR_RETURN(std::optional<int32_t> id, tokenId(key));
    (void)id;
  }
  for (const FimKind &kind : kFillInTheMiddle)
    for (std::string_view key : kind.keys) {
      QTENSOR_ASSIGN_OR_RETURN(std::optional<int32_t> id, tokenId(key));
      (void)id;
    }

  QTENSOR_ASSIGN_OR_RETURN(std::optional<bool> addBos,
                           boolean("tokenizer.ggml.add_bos_token"));
  QTENSOR_ASSIGN_OR_RETURN(std::optional<bool> addEos,
                           boolean("tokenizer.ggml.add_eos_token"));
  QTENSOR_ASSIGN_OR_RETURN(std::optional<bool> addPrefix,
                           boolean("tokenizer.ggml.add_space_prefix"));
  QTENSOR_ASSIGN_OR_RETURN(std::optional<bool> lower,
                           boolean("tokenizer.ggml.normalizer.lowercase"));
  QTENSOR_ASSIGN_OR_RETURN(std::optional<bool> strip,
                           boolean("tokenizer.ggml.normalizer.strip_accents"));
  if (addBos)
    t.addBos = *addBos;
  if (addEos)
    t.addEos = *addEos;
  if (addPrefix && t.kind == TokenizerModel::Llama)
    t.addSpacePrefix = *addPrefix;
  if (lower)
    t.lowercase = *lower;
  t.stripAccents = strip ? *strip : t.lowercase;

  if (t.kind == TokenizerModel::Bert) {
    // [CLS] text [SEP], and [UNK] for a word no piece covers.
    if (t.bos < 0 || t.sep < 0 || t.unk < 0)
      return fail("a bert tokenizer needs [CLS], [SEP] and [UNK] ids "
                  "(tokenizer.ggml.cls_token_id or bos_token_id, "
                  "seperator_token_id, unknown_token_id)");
    t.addBos = true;
    t.addEos = false;
  }
  if (t.addBos && t.bos < 0)
    return fail("tokenizer.ggml.add_bos_token is true but there is no "
                "tokenizer.ggml.bos_token_id");
  if (t.addEos && t.eos < 0)
    return fail("tokenizer.ggml.add_eos_token is true but there is no "
                "tokenizer.ggml.eos_token_id");
  return Status::ok();
}

void TokenizerLoader::markControlTokens() {
  for (std::string_view text : kEndOfGeneration) {
    auto it = t.ids.find(std::string(text));
    if (it != t.ids.end())
      t.attrs[it->second] |= AttrControl;
  }
  for (const FimKind &kind : kFillInTheMiddle)
    if (int32_t found = fimTokenByText(kind); found >= 0)
      t.attrs[found] |= AttrControl;
}

int32_t TokenizerLoader::fimTokenByText(const FimKind &kind) const {
  for (std::string_view key : kind.keys)
    if (file.findMetadata(key))
      return -1; // named by the metadata: no detection by text
  // The first token (lowest id) with one of the kind's texts.
  int32_t found = -1;
  for (std::string_view text : kind.texts)
    if (int32_t id = t.tokenId(text); id >= 0 && (found < 0 || id < found))
      found = id;
  return found;
}

Status TokenizerLoader::findEndOfGeneration() {
  std::set<int32_t> eog;
  // The FIM pad, repo and file separator tokens: the metadata's id, else
  // the one found by text (as markControlTokens finds it).
  for (const FimKind &kind : kFillInTheMiddle) {
    if (!kind.endsGeneration)
      continue;
    int32_t id = fimTokenByText(kind);
    for (std::string_view key : kind.keys) {
      QTENSOR_ASSIGN_OR_RETURN(std::optional<int32_t> named, tokenId(key));
      if (named && id < 0)
        id = *named;
    }
    if (id >= 0)
      eog.insert(id);
  }
  for (std::string_view text : kEndOfGeneration)
    if (int32_t id = t.tokenId(text); id >= 0)
      eog.insert(id);
  if (t.eos >= 0)
    eog.insert(t.eos);
  for (std::string_view key :
       {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    QTENSOR_ASSIGN_OR_RETURN(std::optional<int32_t> id, tokenId(key));
    if (id)
      eog.insert(*id);
  }
  // llama.cpp's exceptions: gpt-oss and solar-open end a message, not the
  // generation, with <|end|>; gemma4 and paddleocr's </s> is text. Their
  // attributes change with them, as do gpt-oss's rendered markers.
  auto in = [&](std::string_view text) {
    int32_t id = t.tokenId(text);
    return id >= 0 && eog.count(id) ? id : -1;
  };
  const bool calls = in("<|call|>") >= 0 || in("<|calls|>") >= 0;
  if (int32_t end = in("<|end|>");
      end >= 0 && calls && (in("<|return|>") >= 0 || in("<|flush|>") >= 0)) {
    eog.erase(end);
    t.attrs[end] = AttrUserDefined;
  }
  if (int32_t s = in("</s>"); s >= 0 && in("<|tool_response>") >= 0) {
    eog.erase(s);
    t.attrs[s] = AttrNormal;
  }
  for (std::string_view text :
       {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})
    if (int32_t id = t.tokenId(text); id >= 0)
      t.attrs[id] = AttrUserDefined;
  t.eog.assign(eog.begin(), eog.end());
  return Status::ok();
}

void TokenizerLoader::indexSpecialTokens() {
  // User-defined tokens are split out of the text before the model runs,
  // longest first (llama.cpp's tokenizer_st_partition, parse_special off).
  for (size_t i = 0; i < t.tokens.size(); ++i)
    if ((t.attrs[i] & AttrUserDefined) &&
        !(t.attrs[i] & (AttrControl | AttrUnknown)))
      t.userDefined.push_back(static_cast<int32_t>(i));
  // With parse_special, control and unknown tokens too.
  for (size_t i = 0; i < t.tokens.size(); ++i)
    if (t.attrs[i] & (AttrControl | AttrUserDefined | AttrUnknown))
      t.specialTokens.push_back(static_cast<int32_t>(i));
  for (std::vector<int32_t> *list : {&t.userDefined, &t.specialTokens})
    std::sort(list->begin(), list->end(), [&](int32_t a, int32_t b) {
      size_t la = t.tokens[a].size(), lb = t.tokens[b].size();
      return la != lb ? la > lb : a < b;
    });

  // Byte fallback: <0xHH>, else the byte itself as a token (SentencePiece
  // vocabularies); the byte's GPT-2 code point (byte-level BPE).
  t.byteTokens.assign(256, -1);
  if (t.kind == TokenizerModel::Llama) {
    for (size_t i = 0; i < t.tokens.size(); ++i) {
      int b = byteTokenValue(t.tokens[i]);
      if (b >= 0 && t.byteTokens[b] < 0)
        t.byteTokens[b] = static_cast<int32_t>(i);
    }
    for (int b = 0; b < 256; ++b)
      if (t.byteTokens[b] < 0)
        t.byteTokens[b] = t.tokenId(std::string(1, static_cast<char>(b)));
  }
}

void TokenizerLoader::computeDigest() {
  std::string s = "qtensor.tokenizer.v1";
  s += '\0';
  putBytes(s, tokenizerModelName(t.kind));
  putBytes(s, t.pre);
  putU32(s, static_cast<uint32_t>(t.tokens.size()));
  for (size_t i = 0; i < t.tokens.size(); ++i) {
    putBytes(s, t.tokens[i]);
    uint32_t bits;
    std::memcpy(&bits, &t.scores[i], 4);
    putU32(s, bits);
    putU32(s, static_cast<uint32_t>(t.types[i]));
  }
  putU32(s, static_cast<uint32_t>(t.merges.size()));
  for (const auto &m : t.merges) {
    putBytes(s, m.first);
    putBytes(s, m.second);
  }
  for (int32_t id : {t.bos, t.eos, t.unk, t.sep, t.pad})
    putU32(s, static_cast<uint32_t>(id));
  for (bool flag :
       {t.addBos, t.addEos, t.addSpacePrefix, t.lowercase, t.stripAccents})
    s += flag ? '\1' : '\0';
  Expected<std::string> digest =
      sha256Hex(reinterpret_cast<const uint8_t *>(s.data()), s.size());
  t.digest = digest ? *digest : std::string();
}

Expected<Tokenizer> TokenizerLoader::load() {
  QTENSOR_TRY(readModel());
  QTENSOR_TRY(readTokens());
  QTENSOR_TRY(readMerges());
  QTENSOR_TRY(readSpecial());
  markControlTokens();
  QTENSOR_TRY(findEndOfGeneration());
  QTENSOR_ASSIGN_OR_RETURN(std::optional<std::string_view> chat,
                           string("tokenizer.chat_template"));
  t.chat = chat ? std::string(*chat) : std::string();
  indexSpecialTokens();
  computeDigest();
  if (t.digest.empty())
    return fail("could not hash the tokenizer (SHA-256 unavailable)");
  return std::move(t);
}

Expected<Tokenizer> Tokenizer::fromGGUF(const GGUFFile &file,
                                        std::string_view fileName) {
  return TokenizerLoader(file, fileName).load();
}

Expected<Tokenizer> Tokenizer::open(const std::string &path) {
  const bool gguf =
      path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0;
  if (gguf) {
    QTENSOR_ASSIGN_OR_RETURN(GGUFFile file, GGUFFile::open(path));
    return fromGGUF(file, path);
  }
  // The converter's metadata, read back as a file: the tokenizer copies
  // what it keeps, so the bytes may go when it is built.
  QTENSOR_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                           ggufFromHuggingFaceFiles(path));
  QTENSOR_ASSIGN_OR_RETURN(
      GGUFFile file, GGUFFile::fromBuffer(bytes.data(), bytes.size(), path));
  return fromGGUF(file, path);
}

} // namespace qtensor
