//===- HuggingFace.cpp - A tokenizer.json as GGUF tokenizer metadata ------===//
//
// The rules are in HuggingFace.h. Each field read is type-checked, each id
// bounded by the vocabulary, each merge checked against it; the output is
// read back by Tokenizer::fromGGUF like any GGUF file's tokenizer.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Tokenizer/HuggingFace.h"

#include "qtensor/Formats/GGUFWriter.h"
#include "qtensor/Support/JsonObjectReader.h"
#include "qtensor/Support/MappedFile.h"

#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <sys/stat.h>

namespace qtensor {
namespace {

using nlohmann::json;

constexpr int64_t kMaxVocab = int64_t(1) << 24;

// The patterns of the Split pre-tokenizers this reader knows, as
// tokenizer.json spells them (after JSON unescaping).
const std::string kLlama3Pattern =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
const std::string kQwen2Pattern =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
const std::string kGPT2Pattern =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";

/// GGUF token types (llama.cpp's llama_token_type).
enum : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

class Converter {
public:
  explicit Converter(const HuggingFaceTokenizer &in) : in(in) {}

  Expected<std::vector<uint8_t>> convert();

private:
  template <typename... Parts> Error fail(const Parts &...parts) const {
    return makeError(in.name, ": ", parts...);
  }
  std::string typeOf(const json &j) const {
    if (j.is_object() && j.contains("type") && j["type"].is_string())
      return j["type"].get<std::string>();
    return j.is_null() ? "none" : "an untyped value";
  }
  Status readVocab(const json &model);
  Status readAddedTokens(const json &root);
  Status readMerges(const json &model);
  /// Sets byteLevel/preName, or spm/addSpacePrefix, from the normalizer and
  /// pre-tokenizer.
  Status classify(const json &root, const json &model);
  Status readTemplate(const json &processor);
  /// WordPiece: BertNormalizer and BertPreTokenizer as llama.cpp's wpm
  /// tokenizer implements them; sets lowercase/stripAccents and the [CLS]
  /// / [SEP] ids from the post-processor.
  Status classifyWordPiece(const json &root, const json &model);
  /// WordPiece tokens in llama.cpp's spelling (convert_hf_to_gguf's
  /// "phantom space"): a word start "x" becomes "▁x", a continuation
  /// "##x" becomes "x", bracketed and special tokens stay as they are.
  Status phantomSpaces();
  Expected<std::vector<uint8_t>> writeWordPiece();
  int32_t idOf(const std::string &text) const {
    auto it = ids.find(text);
    return it == ids.end() ? -1 : it->second;
  }

  const HuggingFaceTokenizer &in;
  std::map<std::string, int32_t> ids;
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<std::pair<std::string, std::string>> merges;
  bool byteLevel = false, spm = false, addSpacePrefix = false;
  bool addBos = false, addEos = false;
  bool lowercase = true, stripAccents = true;
  std::string continuation = "##";
  std::string preName, unkToken;
  std::optional<int32_t> templateBos, templateEos;
};

Status Converter::readVocab(const json &model) {
  if (!model.contains("vocab") || !model["vocab"].is_object())
    return fail("model.vocab: expected an object of token -> id");
  int64_t n = 0;
  for (const auto &[text, id] : model["vocab"].items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() >= kMaxVocab)
      return fail("model.vocab[\"", text.substr(0, 80),
                  "\"]: expected an id in [0, 2^24), got ", id.dump());
    n = std::max<int64_t>(n, id.get<int64_t>() + 1);
  }
  tokens.assign(size_t(n), std::string());
  types.assign(size_t(n), kUnused);
  for (const auto &[text, id] : model["vocab"].items()) {
    const int32_t i = id.get<int32_t>();
    if (!tokens[size_t(i)].empty() || types[size_t(i)] != kUnused)
      return fail("model.vocab: id ", i, " is given to two tokens");
    if (text.empty())
      return fail("model.vocab: an empty token (id ", i, ")");
    tokens[size_t(i)] = text;
    types[size_t(i)] = kNormal;
    ids.emplace(text, i);
  }
  return Status::ok();
}

Status Converter::readAddedTokens(const json &root) {
  if (!root.contains("added_tokens") || root["added_tokens"].is_null())
    return Status::ok();
  const json &added = root["added_tokens"];
  if (!added.is_array())
    return fail("added_tokens: expected an array");
  for (size_t k = 0; k < added.size(); ++k) {
    const json &a = added[k];
    const std::string where = "added_tokens[" + std::to_string(k) + "]";
    if (!a.is_object() || !a.contains("id") || !a["id"].is_number_integer() ||
        !a.contains("content") || !a["content"].is_string())
      return fail(where, ": expected an object with an integer id and a "
                         "string content");
    int64_t id = a["id"].get<int64_t>();
    std::string text = a["content"].get<std::string>();
    if (id < 0 || id >= kMaxVocab || text.empty())
      return fail(where, ": id ", id, " or an empty content");
    bool special = a.value("special", false);
    if (size_t(id) >= tokens.size()) {
      tokens.resize(size_t(id) + 1);
      types.resize(size_t(id) + 1, kUnused);
    }
    auto known = ids.find(text);
    if (known != ids.end() && known->second != int32_t(id))
      return fail(where, ": \"", text.substr(0, 80), "\" has id ", id,
                  " but the vocabulary gives it ", known->second);
    if (known == ids.end() && types[size_t(id)] != kUnused)
      return fail(where, ": id ", id, " is already the token \"",
                  tokens[size_t(id)].substr(0, 80), "\"");
    tokens[size_t(id)] = text;
    types[size_t(id)] = special ? kControl : kUserDefined;
    ids[text] = int32_t(id);
  }
  return Status::ok();
}

Status Converter::readMerges(const json &model) {
  if (!model.contains("merges") || !model["merges"].is_array())
    return fail("model.merges: expected an array");
  const json &list = model["merges"];
  merges.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json &m = list[i];
    std::string left, right;
    if (m.is_string()) {
      // "LEFT RIGHT": the separator is the first space after the first byte.
      const std::string s = m.get<std::string>();
      size_t space = s.size() > 1 ? s.find(' ', 1) : std::string::npos;
      if (space == std::string::npos || s.find(' ', space + 1) != s.npos)
        return fail("model.merges[", i, "] = \"", s.substr(0, 80),
                    "\" is not two tokens separated by one space");
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() &&
               m[1].is_string()) {
      left = m[0].get<std::string>();
      right = m[1].get<std::string>();
    } else {
      return fail("model.merges[", i,
                  "]: expected \"LEFT RIGHT\" or [LEFT, RIGHT]");
    }
    if (idOf(left) < 0 || idOf(right) < 0 || idOf(left + right) < 0)
      return fail("model.merges[", i, "] = (\"", left.substr(0, 40), "\", \"",
                  right.substr(0, 40),
                  "\"): both parts and their concatenation must be tokens "
                  "of the vocabulary");
    if (left.find(' ') != std::string::npos ||
        right.find(' ') != std::string::npos)
      return fail("model.merges[", i,
                  "]: a part holds a space, which GGUF's \"LEFT RIGHT\" "
                  "merges cannot spell");
    merges.emplace_back(std::move(left), std::move(right));
  }
  return Status::ok();
}

Status Converter::classify(const json &root, const json &model) {
  const json null;
  const json &pre =
      root.contains("pre_tokenizer") ? root["pre_tokenizer"] : null;
  const json &norm = root.contains("normalizer") ? root["normalizer"] : null;
  auto byteLevelStep = [&](const json &p, bool regex) {
    return typeOf(p) == "ByteLevel" && !p.value("add_prefix_space", false) &&
           p.value("use_regex", true) == regex;
  };
  if (byteLevelStep(pre, true)) {
    byteLevel = true;
    preName = "gpt-2";
  } else if (typeOf(pre) == "Sequence") {
    const json &steps = pre.value("pretokenizers", json::array());
    if (steps.size() == 2 && typeOf(steps[0]) == "Split" &&
        byteLevelStep(steps[1], false)) {
      const json &split = steps[0];
      const json &pattern = split.value("pattern", json::object());
      std::string regex = pattern.is_object() && pattern.contains("Regex") &&
                                  pattern["Regex"].is_string()
                              ? pattern["Regex"].get<std::string>()
                              : std::string();
      if (split.value("behavior", "") != "Isolated" ||
          split.value("invert", true))
        return fail("pre_tokenizer: a Split that is not \"Isolated\" and "
                    "not inverted is not supported");
      if (regex == kLlama3Pattern)
        preName = "llama-bpe";
      else if (regex == kQwen2Pattern)
        preName = "qwen2";
      else if (regex == kGPT2Pattern)
        preName = "gpt-2";
      else
        return fail("pre_tokenizer: the Split pattern \"", regex.substr(0, 120),
                    "\" is none this reader knows (GPT-2's, Llama 3's, "
                    "Qwen2's)");
      byteLevel = true;
    }
  }
  if (byteLevel) {
    // Qwen2 NFC-normalizes; llama.cpp does not, and neither does this (text
    // that is not NFC may tokenize differently from Hugging Face).
    if (!norm.is_null() && typeOf(norm) != "NFC")
      return fail("normalizer ", typeOf(norm),
                  " is not supported for a byte-level BPE tokenizer");
    return Status::ok();
  }

  // SentencePiece BPE: spaces become U+2581, by the normalizer or by a
  // Metaspace pre-tokenizer.
  const std::string meta = "\xE2\x96\x81";
  bool replaces = false, prepends = false;
  auto step = [&](const json &n) {
    if (typeOf(n) == "Replace" && n.value("content", "") == meta) {
      const json &p = n.value("pattern", json::object());
      replaces |= p.is_object() && p.value("String", "") == " ";
    } else if (typeOf(n) == "Prepend" && n.value("prepend", "") == meta) {
      prepends = true;
    }
  };
  if (typeOf(norm) == "Sequence")
    for (const json &n : norm.value("normalizers", json::array()))
      step(n);
  else
    step(norm);
  if (typeOf(pre) == "Metaspace" && pre.value("replacement", "") == meta) {
    replaces = true;
    prepends = pre.value("prepend_scheme", "always") != "never" &&
               pre.value("add_prefix_space", true);
  } else if (!pre.is_null()) {
    return fail("pre_tokenizer ", typeOf(pre),
                " is not supported (byte-level BPE with the GPT-2, Llama 3 or "
                "Qwen2 pattern, or a SentencePiece BPE)");
  }
  if (!replaces || !model.value("byte_fallback", false))
    return fail("neither a byte-level BPE nor a SentencePiece BPE with byte "
                "fallback (pre_tokenizer ",
                typeOf(pre), ", normalizer ", typeOf(norm),
                ", model.byte_fallback ",
                model.value("byte_fallback", false) ? "true" : "false", ")");
  spm = true;
  addSpacePrefix = prepends;
  return Status::ok();
}

Status Converter::readTemplate(const json &processor) {
  if (typeOf(processor) == "Sequence") {
    for (const json &p : processor.value("processors", json::array()))
      QTENSOR_TRY(readTemplate(p));
    return Status::ok();
  }
  if (typeOf(processor) != "TemplateProcessing")
    return Status::ok();
  const json &single = processor.value("single", json::array());
  if (!single.is_array() || single.empty())
    return Status::ok();
  auto special = [&](const json &piece) -> std::optional<int32_t> {
    if (!piece.is_object() || !piece.contains("SpecialToken"))
      return std::nullopt;
    const json &s = piece["SpecialToken"];
    int32_t id = s.is_object() && s.contains("id") && s["id"].is_string()
                     ? idOf(s["id"].get<std::string>())
                     : -1;
    return id >= 0 ? std::optional<int32_t>(id) : std::nullopt;
  };
  if (auto bos = special(single.front())) {
    addBos = true;
    templateBos = bos;
  }
  if (single.size() > 1)
    if (auto eos = special(single.back())) {
      addEos = true;
      templateEos = eos;
    }
  return Status::ok();
}

Status Converter::classifyWordPiece(const json &root, const json &model) {
  const json null;
  const json &pre =
      root.contains("pre_tokenizer") ? root["pre_tokenizer"] : null;
  const json &norm = root.contains("normalizer") ? root["normalizer"] : null;
  if (typeOf(pre) != "BertPreTokenizer")
    return fail("pre_tokenizer ", typeOf(pre),
                " is not supported for a WordPiece tokenizer "
                "(BertPreTokenizer)");
  if (typeOf(norm) != "BertNormalizer")
    return fail("normalizer ", typeOf(norm),
                " is not supported for a WordPiece tokenizer "
                "(BertNormalizer)");
  // The BERT basic tokenizer llama.cpp implements always cleans control
  // characters and splits CJK ideographs into words of their own.
  if (!norm.value("clean_text", true) ||
      !norm.value("handle_chinese_chars", true))
    return fail("normalizer: BertNormalizer without clean_text or "
                "handle_chinese_chars is not supported");
  lowercase = norm.value("lowercase", true);
  const json &strip = norm.value("strip_accents", json());
  if (!strip.is_null() && !strip.is_boolean())
    return fail("normalizer.strip_accents: expected a boolean or null");
  stripAccents = strip.is_null() ? lowercase : strip.get<bool>();
  const json &prefix = model.value("continuing_subword_prefix", json("##"));
  if (!prefix.is_string() || prefix.get<std::string>().empty())
    return fail("model.continuing_subword_prefix: expected a non-empty "
                "string");
  continuation = prefix.get<std::string>();
  if (!model.contains("unk_token") || !model["unk_token"].is_string() ||
      idOf(model["unk_token"].get<std::string>()) < 0)
    return fail("model.unk_token: a WordPiece tokenizer needs its unknown "
                "token in the vocabulary");
  // [CLS] $A [SEP]: TemplateProcessing (readTemplate) or BertProcessing.
  const json &processor =
      root.contains("post_processor") ? root["post_processor"] : null;
  if (typeOf(processor) == "BertProcessing") {
    auto pair = [&](const char *key) -> std::optional<int32_t> {
      const json &p = processor.value(key, json());
      if (!p.is_array() || p.size() != 2 || !p[0].is_string())
        return std::nullopt;
      int32_t id = idOf(p[0].get<std::string>());
      return id >= 0 ? std::optional<int32_t>(id) : std::nullopt;
    };
    templateBos = pair("cls");
    templateEos = pair("sep");
  } else {
    QTENSOR_TRY(readTemplate(processor));
  }
  if (!templateBos || !templateEos)
    return fail("post_processor ", typeOf(processor),
                ": a WordPiece tokenizer needs [CLS] $A [SEP] (the ids of "
                "its first and last special tokens)");
  return Status::ok();
}

Status Converter::phantomSpaces() {
  const std::string mark = "\xE2\x96\x81";
  std::map<std::string, int32_t> spelled;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string &t = tokens[i];
    const bool bracketed = t.size() >= 2 && t.front() == '[' && t.back() == ']';
    if (types[i] == kNormal && !bracketed) {
      if (t.rfind(continuation, 0) == 0 && t.size() > continuation.size())
        t = t.substr(continuation.size());
      else
        t = mark + t;
    }
    auto [it, inserted] = spelled.emplace(t, int32_t(i));
    if (!inserted)
      return fail("model.vocab: ids ", it->second, " and ", uint64_t(i),
                  " both spell \"", t.substr(0, 80),
                  "\" in llama.cpp's WordPiece vocabulary");
  }
  return Status::ok();
}

Expected<std::vector<uint8_t>> Converter::writeWordPiece() {
  // Special tokens ([UNK] included) stay CONTROL, as the converter writes
  // them.
  const int32_t unk = idOf(unkToken);
  QTENSOR_TRY(phantomSpaces());
  GGUFFileWriter w;
  w.setString("tokenizer.ggml.model", "bert");
  w.setStringArray("tokenizer.ggml.tokens", tokens);
  w.setInt32Array("tokenizer.ggml.token_type", types);
  w.setUInt32("tokenizer.ggml.cls_token_id", uint32_t(*templateBos));
  w.setUInt32("tokenizer.ggml.seperator_token_id", uint32_t(*templateEos));
  w.setUInt32("tokenizer.ggml.unknown_token_id", uint32_t(unk));
  // ids (before phantomSpaces) still name the original spellings.
  if (int32_t pad = idOf("[PAD]"); pad >= 0)
    w.setUInt32("tokenizer.ggml.padding_token_id", uint32_t(pad));
  if (int32_t mask = idOf("[MASK]"); mask >= 0)
    w.setUInt32("tokenizer.ggml.mask_token_id", uint32_t(mask));
  w.setBool("tokenizer.ggml.normalizer.lowercase", lowercase);
  w.setBool("tokenizer.ggml.normalizer.strip_accents", stripAccents);
  w.setBool("tokenizer.ggml.add_bos_token", true);
  w.setBool("tokenizer.ggml.add_eos_token", false);
  if (in.chatTemplate)
    w.setString("tokenizer.chat_template", *in.chatTemplate);
  return w.metadataOnlyBytes();
}

Expected<std::vector<uint8_t>> Converter::convert() {
  QTENSOR_ASSIGN_OR_RETURN(
      json root, parseStrictJson(in.json, in.name, kMaxTokenizerJsonBytes, 64));
  if (!root.is_object() || !root.contains("model") ||
      !root["model"].is_object())
    return fail("not a tokenizer.json (no \"model\" object)");
  const json &model = root["model"];
  const bool wordPiece = typeOf(model) == "WordPiece";
  if (typeOf(model) != "BPE" && !wordPiece)
    return fail("model.type ", typeOf(model),
                " is not supported (a BPE tokenizer: byte-level, or "
                "SentencePiece with byte fallback; or WordPiece)");
  QTENSOR_TRY(readVocab(model));
  QTENSOR_TRY(readAddedTokens(root));
  if (wordPiece) {
    if (tokens.empty())
      return fail("the vocabulary is empty");
    for (size_t i = 0; i < tokens.size(); ++i)
      if (types[i] == kUnused && tokens[i].empty())
        return fail("model.vocab: id ", uint64_t(i),
                    " has no token (a WordPiece vocabulary has no gaps)");
    QTENSOR_TRY(classifyWordPiece(root, model));
    unkToken = model["unk_token"].get<std::string>();
    return writeWordPiece();
  }
  if (tokens.empty())
    return fail("the vocabulary is empty");
  for (size_t i = 0; i < tokens.size(); ++i)
    if (types[i] == kUnused && tokens[i].empty()) {
      tokens[i] = "[PAD" + std::to_string(i) + "]";
      if (ids.count(tokens[i]))
        return fail("id ", uint64_t(i), " has no token and its filler \"",
                    tokens[i], "\" is taken");
      ids.emplace(tokens[i], int32_t(i));
    }
  QTENSOR_TRY(readMerges(model));
  QTENSOR_TRY(classify(root, model));
  if (root.contains("post_processor"))
    QTENSOR_TRY(readTemplate(root["post_processor"]));
  if (model.contains("unk_token") && model["unk_token"].is_string())
    unkToken = model["unk_token"].get<std::string>();

  auto checkedId =
      [&](const char *what,
          std::optional<int64_t> id) -> Expected<std::optional<int32_t>> {
    if (!id)
      return std::optional<int32_t>();
    if (*id < 0 || uint64_t(*id) >= tokens.size())
      return fail("the model config's ", what, " = ", *id,
                  " is not a token id (", uint64_t(tokens.size()), " tokens)");
    return std::optional<int32_t>(int32_t(*id));
  };
  QTENSOR_ASSIGN_OR_RETURN(std::optional<int32_t> bos,
                           checkedId("bos_token_id", in.bosId));
  QTENSOR_ASSIGN_OR_RETURN(std::optional<int32_t> eos,
                           checkedId("eos_token_id", in.eosId));
  if (!bos)
    bos = templateBos;
  if (!eos)
    eos = templateEos;

  GGUFFileWriter w;
  w.setString("tokenizer.ggml.model", spm ? "llama" : "gpt2");
  if (byteLevel)
    w.setString("tokenizer.ggml.pre", preName);
  if (spm) {
    // Byte fallback tokens, and the unknown token.
    for (size_t i = 0; i < tokens.size(); ++i) {
      const std::string &t = tokens[i];
      if (types[i] == kNormal && t.size() == 6 && t.rfind("<0x", 0) == 0 &&
          t[5] == '>' && std::isxdigit(uint8_t(t[3])) &&
          std::isxdigit(uint8_t(t[4])))
        types[i] = kByte;
      if (!unkToken.empty() && t == unkToken &&
          (types[i] == kNormal || types[i] == kControl))
        types[i] = kUnknown;
    }
    // Scores: minus the rank of the first merge that makes a token; below
    // every merge for the others.
    std::vector<float> scores(tokens.size(), -float(merges.size()) - 1.0f);
    std::vector<bool> made(tokens.size(), false);
    for (size_t r = 0; r < merges.size(); ++r) {
      int32_t id = idOf(merges[r].first + merges[r].second);
      if (!made[size_t(id)]) {
        made[size_t(id)] = true;
        scores[size_t(id)] = -float(r);
      }
    }
    w.setFloat32Array("tokenizer.ggml.scores", scores);
    w.setBool("tokenizer.ggml.add_space_prefix", addSpacePrefix);
  }
  w.setStringArray("tokenizer.ggml.tokens", tokens);
  w.setInt32Array("tokenizer.ggml.token_type", types);
  if (byteLevel) {
    std::vector<std::string> text;
    text.reserve(merges.size());
    for (const auto &[l, r] : merges)
      text.push_back(l + " " + r);
    w.setStringArray("tokenizer.ggml.merges", text);
  }
  if (bos)
    w.setUInt32("tokenizer.ggml.bos_token_id", uint32_t(*bos));
  if (eos)
    w.setUInt32("tokenizer.ggml.eos_token_id", uint32_t(*eos));
  if (int32_t unk = unkToken.empty() ? -1 : idOf(unkToken); unk >= 0)
    w.setUInt32("tokenizer.ggml.unknown_token_id", uint32_t(unk));
  w.setBool("tokenizer.ggml.add_bos_token", addBos);
  w.setBool("tokenizer.ggml.add_eos_token", addEos);
  if (in.chatTemplate)
    w.setString("tokenizer.chat_template", *in.chatTemplate);
  return w.metadataOnlyBytes();
}

} // namespace

Expected<std::vector<uint8_t>>
ggufFromHuggingFace(const HuggingFaceTokenizer &in) {
  return Converter(in).convert();
}

namespace {

/// The largest chat template read (real ones are a few KiB to ~20 KiB).
constexpr uint64_t kMaxChatTemplateBytes = uint64_t(1) << 20;

/// A checkpoint directory's chat template: tokenizer_config.json's
/// `chat_template` (a string, or a list of {name, template} whose
/// "default" entry is taken), else chat_template.jinja; none when neither
/// says.
Expected<std::optional<std::string>> readChatTemplate(const std::string &dir) {
  struct stat st;
  const std::string configPath = dir + "/tokenizer_config.json";
  if (::stat(configPath.c_str(), &st) == 0) {
    QTENSOR_ASSIGN_OR_RETURN(
        json c, readStrictJsonFile(configPath, uint64_t(16) << 20, 32));
    if (c.is_object() && c.contains("chat_template") &&
        !c["chat_template"].is_null()) {
      const json &t = c["chat_template"];
      if (t.is_string())
        return std::optional<std::string>(t.get<std::string>());
      if (t.is_array())
        for (const json &entry : t)
          if (entry.is_object() && entry.value("name", json()) == "default" &&
              entry.contains("template") && entry["template"].is_string())
            return std::optional<std::string>(
                entry["template"].get<std::string>());
      return makeError(configPath,
                       ": chat_template: expected a string, or a list "
                       "holding an entry named \"default\" with a string "
                       "template");
    }
  }
  const std::string jinjaPath = dir + "/chat_template.jinja";
  if (::stat(jinjaPath.c_str(), &st) != 0)
    return std::optional<std::string>();
  QTENSOR_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(jinjaPath));
  if (file.size() > kMaxChatTemplateBytes)
    return makeError(jinjaPath, ": ", file.size(), " bytes, above the ",
                     kMaxChatTemplateBytes, " a chat template may have");
  return std::optional<std::string>(std::string(
      reinterpret_cast<const char *>(file.data()), size_t(file.size())));
}

} // namespace

Expected<std::vector<uint8_t>>
ggufFromHuggingFaceFiles(const std::string &path) {
  struct stat st;
  bool directory = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  HuggingFaceTokenizer in;
  in.name = directory ? path + "/tokenizer.json" : path;
  QTENSOR_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(in.name));
  if (file.size() > kMaxTokenizerJsonBytes)
    return makeError(in.name, ": ", file.size(), " bytes, above the ",
                     kMaxTokenizerJsonBytes, " a tokenizer.json may have");
  in.json = {reinterpret_cast<const char *>(file.data()), size_t(file.size())};
  const std::string configPath = directory ? path + "/config.json" : "";
  if (directory && ::stat(configPath.c_str(), &st) == 0) {
    QTENSOR_ASSIGN_OR_RETURN(
        json c, readStrictJsonFile(configPath, uint64_t(1) << 20, 32));
    // An id, or a list whose first entry is the one a prompt starts or
    // generation stops with.
    auto id = [&](const char *key) -> Expected<std::optional<int64_t>> {
      if (!c.is_object() || !c.contains(key) || c[key].is_null())
        return std::optional<int64_t>();
      const json &v = c[key].is_array() && !c[key].empty() ? c[key][0] : c[key];
      if (!v.is_number_integer())
        return makeError(configPath, ": ", key,
                         ": expected a token id or a list of them");
      return std::optional<int64_t>(v.get<int64_t>());
    };
    QTENSOR_ASSIGN_OR_RETURN(in.bosId, id("bos_token_id"));
    QTENSOR_ASSIGN_OR_RETURN(in.eosId, id("eos_token_id"));
  }
  if (directory) {
    QTENSOR_ASSIGN_OR_RETURN(in.chatTemplate, readChatTemplate(path));
  }
  return ggufFromHuggingFace(in);
}

} // namespace qtensor
