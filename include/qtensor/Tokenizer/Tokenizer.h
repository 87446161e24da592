//===- Tokenizer.h - Tokenizers built from GGUF metadata --------*- C++ -*-===//
//
// The three tokenizer families llama.cpp reads from a GGUF file's
// `tokenizer.ggml.*` metadata, with llama.cpp's token ids (docs/tokenizer.md):
//
//   tokenizer.ggml.model = llama   SentencePiece BPE over scores, "▁" for
//                                  spaces and a leading space, <0xXX> byte
//                                  fallback (llama.cpp's llm_tokenizer_spm)
//   tokenizer.ggml.model = gpt2    byte-level BPE over tokenizer.ggml.merges,
//                                  split first by the pre-tokenizer named by
//                                  tokenizer.ggml.pre (default, gpt-2,
//                                  deepseek-coder, llama-bpe, qwen2)
//   tokenizer.ggml.model = bert    WordPiece after BERT's normalization
//                                  (lowercase, accent stripping, punctuation
//                                  and CJK split), [CLS] ... [SEP]
//
// Every metadata array is untrusted: types, lengths, ids and merges are
// checked and a bad value is an Error naming the file and the key. Unicode
// categories, normalization and case mapping come from ICU. MLIR-free; no
// exception escapes.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TOKENIZER_TOKENIZER_H
#define QTENSOR_TOKENIZER_TOKENIZER_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qtensor {

class GGUFFile;

/// tokenizer.ggml.model.
enum class TokenizerModel { Llama, GPT2, Bert };

/// tokenizer.ggml.token_type (llama.cpp's llama_token_type).
enum class TokenType : int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

/// The byte-level BPE pre-tokenizer (tokenizer.ggml.pre of a gpt2 model).
enum class PreTokenizer { None, Default, GPT2, DeepSeekCoder, Llama3, Qwen2 };

/// "llama", "gpt2", "bert".
std::string_view tokenizerModelName(TokenizerModel model);

class Tokenizer {
public:
  /// Builds the tokenizer of `file`'s metadata; `fileName` names the file in
  /// errors (an unknown model or pre-tokenizer, a malformed array).
  static Expected<Tokenizer> fromGGUF(const GGUFFile &file,
                                      std::string_view fileName);

  /// The tokenizer of `path`: a GGUF file (a name ending in .gguf), else a
  /// Hugging Face tokenizer.json or the checkpoint directory holding one,
  /// read as llama.cpp's converter reads it (Tokenizer/HuggingFace.h).
  static Expected<Tokenizer> open(const std::string &path);

  /// Token ids of `text` (UTF-8; invalid bytes are read as U+FFFD as
  /// llama.cpp does). `addSpecial` adds what the model adds: BOS/EOS per
  /// tokenizer.ggml.add_bos_token / add_eos_token, [CLS]/[SEP] for bert.
  /// User-defined tokens found in the text are kept whole; with
  /// `parseSpecial` (llama.cpp's parse_special, which its tools use for a
  /// prompt) so are control and unknown tokens (`<start_of_turn>`,
  /// `<|eot_id|>`), else their text is encoded as text.
  std::vector<int32_t> encode(std::string_view text, bool addSpecial,
                              bool parseSpecial = false) const;

  /// The text of `ids` as llama.cpp's llama_detokenize(remove_special =
  /// false, unparse_special = renderSpecial) writes it. An id outside the
  /// vocabulary is an Error.
  Expected<std::string> decode(const std::vector<int32_t> &ids,
                               bool renderSpecial = true) const;

  /// The piece of one token (its bytes, before the decode clean-up).
  Expected<std::string> tokenPiece(int32_t id, bool renderSpecial = true) const;

  TokenizerModel model() const { return kind; }
  /// tokenizer.ggml.pre as read ("" when absent).
  const std::string &preName() const { return pre; }
  PreTokenizer preTokenizer() const { return preKind; }

  size_t vocabSize() const { return tokens.size(); }
  const std::string &tokenText(int32_t id) const { return tokens[id]; }
  TokenType tokenType(int32_t id) const { return types[id]; }
  float tokenScore(int32_t id) const { return scores[id]; }
  /// Id of an exact token text, -1 when absent.
  int32_t tokenId(std::string_view text) const;
  size_t mergeCount() const { return merges.size(); }

  /// Special ids, -1 when the model has none.
  int32_t bosId() const { return bos; }
  int32_t eosId() const { return eos; }
  int32_t unknownId() const { return unk; }
  int32_t separatorId() const { return sep; }
  int32_t paddingId() const { return pad; }
  /// The ids that end generation, ascending: llama.cpp's end-of-generation
  /// set (its special_eog_ids): EOS, the EOT and EOM ids the metadata
  /// names, the tokens whose text marks an end of turn (`<|eot_id|>`,
  /// `<|im_end|>`, `<end_of_turn>`, ...) and the FIM pad, repo and file
  /// separator tokens, with llama.cpp's two exceptions (docs/tokenizer.md).
  const std::vector<int32_t> &endOfGeneration() const { return eog; }
  bool endsGeneration(int32_t id) const;
  /// tokenizer.chat_template, the Jinja text ("" when absent); not part
  /// of sha256() (Tokenizer/ChatTemplate.h formats by it).
  const std::string &chatTemplate() const { return chat; }
  bool addsBos() const { return addBos; }
  bool addsEos() const { return addEos; }
  bool addsSpacePrefix() const { return addSpacePrefix; }

  /// SHA-256 (64 hex digits) of the canonical serialization: model, pre,
  /// every token with its score bits and type, the merges in rank order, the
  /// special ids and the flags (docs/tokenizer.md). Two files with the same
  /// tokenizer have the same digest whatever else their metadata holds.
  const std::string &sha256() const { return digest; }

  /// Hash of a (left, right) merge pair.
  struct MergeKeyHash {
    size_t operator()(const std::pair<std::string, std::string> &p) const;
  };

private:
  Tokenizer() = default;

  void encodeLlama(std::string_view text, std::vector<int32_t> &out) const;
  void encodeGPT2(std::string_view text, std::vector<int32_t> &out) const;
  void encodeBert(std::string_view text, std::vector<int32_t> &out) const;
  void appendByte(uint8_t byte, std::vector<int32_t> &out) const;
  int32_t mergeRank(const std::string &left, const std::string &right) const;
  std::string piece(int32_t id, bool renderSpecial) const;
  friend class TokenizerLoader;

  TokenizerModel kind = TokenizerModel::Llama;
  std::string pre;
  PreTokenizer preKind = PreTokenizer::None;

  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<TokenType> types;
  /// llama.cpp's token attributes (TokenAttr bits): the type, plus CONTROL
  /// on the end-of-generation and fill-in-the-middle tokens it recognizes by
  /// text.
  std::vector<uint8_t> attrs;
  std::unordered_map<std::string, int32_t> ids;
  std::vector<std::pair<std::string, std::string>> merges;
  std::unordered_map<std::pair<std::string, std::string>, int32_t, MergeKeyHash>
      ranks;
  /// User-defined tokens, longest first: split out of the text before the
  /// model runs.
  std::vector<int32_t> userDefined;
  /// Control, user-defined and unknown tokens, longest first: what
  /// parse_special splits out (llama.cpp's cache_special_tokens).
  std::vector<int32_t> specialTokens;
  std::vector<int32_t> eog; ///< endOfGeneration(), ascending
  /// Byte fallback: token of each byte value, -1 when none.
  std::vector<int32_t> byteTokens;
  size_t maxTokenBytes = 0;

  int32_t bos = -1, eos = -1, unk = -1, sep = -1, pad = -1;
  bool addBos = false, addEos = false, addSpacePrefix = false;
  bool lowercase = true, stripAccents = true; ///< bert normalizer
  bool cleanSpaces = false;                   ///< decode clean-up
  /// A whole pre-tokenized word that is a token is that token, before any
  /// merge (llama.cpp's ignore_merges: the Llama 3 pre-tokenizer).
  bool ignoreMerges = false;
  std::string digest;
  std::string chat; ///< chatTemplate()
};

} // namespace qtensor

#endif // QTENSOR_TOKENIZER_TOKENIZER_H
