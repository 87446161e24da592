//===- Generate.h - `qtc run --prompt` --------------------------*- C++ -*-===//
#ifndef QTENSOR_TOOLS_QTC_GENERATE_H
#define QTENSOR_TOOLS_QTC_GENERATE_H

#include "qtensor/Runtime/Loader.h"
#include "qtensor/Runtime/Sampler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::qtc {

struct GenerateArgs {
  std::string dir;
  std::optional<std::string> prompt;       ///< text, tokenized with BOS rule
  std::optional<std::vector<int32_t>> ids; ///< or token ids as they are
  /// Or a user turn (with an optional system turn) in the chat format
  /// named (llama.cpp's names), else the one the tokenizer's
  /// chat_template is recognized as (Tokenizer/ChatTemplate.h).
  std::optional<std::string> chat, system, chatTemplate;
  /// Or a conversation file (Tokenizer/ChatTemplate.h readChatMessages),
  /// formatted the same way.
  std::optional<std::string> messages;
  int64_t maxTokens = 16;
  double temperature = 0;
  int64_t topK = 0;                  ///< with temperature > 0 (Sampler.h)
  double topP = 1.0, minP = 0.0;     ///< likewise; 1 and 0: off
  runtime::PenaltyOptions penalties; ///< repetition penalties (Sampler.h)
  uint64_t seed = 0;
  int64_t context = 0; ///< KV cache positions; 0: the trained context
  std::string logitsOut;
  bool json = false;
  runtime::LoadOptions load;
};

/// Loads DIR's decoder program, prefills the prompt, decodes up to
/// maxTokens tokens (streamed as text), and prints tokens/s for each phase
/// (or one JSON object). Returns the exit status (0 ran, 1 failed).
int runGenerate(const GenerateArgs &args);

} // namespace qtensor::qtc

#endif // QTENSOR_TOOLS_QTC_GENERATE_H
