//===- HuggingFace.h - A tokenizer.json as GGUF tokenizer metadata -*- C++ -*-===//
//
// A Hugging Face checkpoint carries its tokenizer as `tokenizer.json` (the
// `tokenizers` library's format). It is translated here into the
// `tokenizer.ggml.*` metadata llama.cpp's converter (convert_hf_to_gguf)
// writes for the same tokenizer, as a vocab-only GGUF file, so that one
// reader, one Tokenizer and one digest serve both formats, and an artifact
// carries its tokenizer the same way whatever it came from:
//
//   byte-level BPE  (pre_tokenizer ByteLevel, alone or after one Split
//                    whose pattern is GPT-2's, Llama 3's or Qwen2's)
//                    -> model gpt2, pre gpt-2 / llama-bpe / qwen2, the merges
//   SentencePiece BPE (model BPE with byte_fallback, the normalizer or a
//                    Metaspace pre-tokenizer turning " " into "▁")
//                    -> model llama; each token's score is minus the rank
//                    of the first merge that makes it (SentencePiece merges
//                    by score, Hugging Face's BPE by rank: the same order),
//                    and tokens no merge makes score below every merge
//   WordPiece       (BertNormalizer, BertPreTokenizer, [CLS] $A [SEP])
//                    -> model bert, tokens in llama.cpp's "phantom space"
//                    spelling ("x" -> "▁x", "##x" -> "x"), the
//                    normalizer's lowercase and strip_accents, [CLS],
//                    [SEP], [UNK], [PAD] and [MASK] ids
//
// Token types follow the converter: added special tokens are CONTROL,
// other added tokens USER_DEFINED, `<0xHH>` BYTE (with byte fallback), the
// model's unk token UNKNOWN; ids no token has are filled as "[PADn]" UNUSED.
// BOS is added when the post-processor's template starts with a special
// token (that token is BOS); the model config's bos_token_id and
// eos_token_id, where given, name BOS and EOS. Anything else (Unigram,
// another pre-tokenizer or normalizer) is refused by name: a tokenizer that
// would split text differently is worse than none. WordPiece's
// max_input_chars_per_word is not carried: llama.cpp has no such limit.
//
// The file is untrusted: bounded, strictly parsed, every id and merge
// checked; errors name the file and the JSON field.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TOKENIZER_HUGGINGFACE_H
#define QTENSOR_TOKENIZER_HUGGINGFACE_H

#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor {

struct HuggingFaceTokenizer {
  std::string_view json; ///< tokenizer.json's text
  std::string name;      ///< its path, for errors
  /// From the model's config.json (`bos_token_id`, `eos_token_id`).
  std::optional<int64_t> bosId, eosId;
  /// tokenizer_config.json's `chat_template` (or chat_template.jinja),
  /// written as tokenizer.chat_template.
  std::optional<std::string> chatTemplate;
};

/// The largest tokenizer.json read (Llama 3's is 9 MB).
inline constexpr uint64_t kMaxTokenizerJsonBytes = uint64_t(64) << 20;

/// The vocab-only GGUF file (tokenizer.ggml.* keys) of `in`.
Expected<std::vector<uint8_t>>
ggufFromHuggingFace(const HuggingFaceTokenizer &in);

/// The same for `path`: a tokenizer.json file, or a checkpoint directory
/// holding one (its config.json, when present, gives BOS and EOS; its
/// tokenizer_config.json's `chat_template`, a string or the entry named
/// "default" of a list, else a chat_template.jinja file, the chat
/// template).
Expected<std::vector<uint8_t>>
ggufFromHuggingFaceFiles(const std::string &path);

} // namespace qtensor

#endif // QTENSOR_TOKENIZER_HUGGINGFACE_H
