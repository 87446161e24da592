//===- PreTokenize.h - Byte-level BPE pre-tokenizers ------------*- C++ -*-===//
//
// Splits text into the words byte-level BPE merges within, as llama.cpp's
// unicode_regex_split does for the pre-tokenizer a gpt2 model names: a list
// of patterns, each applied in turn to every piece the previous ones left
// (the matches and the text between them both stay pieces). The patterns are
// matched by hand, code point by code point, with llama.cpp's semantics:
// the hand-written GPT-2 splitter for the GPT-2 pattern, and for the others
// what std::regex matches over llama.cpp's "collapsed" text (every code point
// at or above U+0080 stands for its category, so \s there is ASCII
// whitespace or any White_Space code point).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_TOKENIZER_PRETOKENIZE_H
#define QTENSOR_LIB_TOKENIZER_PRETOKENIZE_H

#include "qtensor/Tokenizer/Tokenizer.h"

#include <string>
#include <string_view>
#include <vector>

namespace qtensor::pretokenize {

/// The words of `text` under `kind`, each already byte-encoded with GPT-2's
/// bytes_to_unicode (invalid UTF-8 reads as U+FFFD first).
std::vector<std::string> splitWords(std::string_view text, PreTokenizer kind);

} // namespace qtensor::pretokenize

#endif // QTENSOR_LIB_TOKENIZER_PRETOKENIZE_H
