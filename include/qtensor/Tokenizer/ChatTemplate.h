//===- ChatTemplate.h - A conversation as a model's prompt -----*- C++ -*-===//
//
// llama.cpp's built-in chat formats (its llama-chat.cpp; not a Jinja
// interpreter): a checkpoint's `tokenizer.chat_template` (Jinja text) is
// recognized by the markers in it, in llama.cpp's order, and the messages
// are written in that format, so the prompt is the one llama.cpp's tools
// would build for the same file. The formats implemented are the common
// ones (chatml, llama3, gemma, the mistral and llama2 families, phi3,
// zephyr); a template llama.cpp recognizes as another format is reported by
// that name, never formatted as a near neighbour. MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TOKENIZER_CHATTEMPLATE_H
#define QTENSOR_TOKENIZER_CHATTEMPLATE_H

#include "qtensor/Support/Expected.h"

#include <string>
#include <string_view>
#include <vector>

namespace qtensor {

struct ChatMessage {
  std::string role; ///< "system", "user" or "assistant"
  std::string content;
};

/// The format llama.cpp names for `name` (its --chat-template names), or
/// for the Jinja `text` of a tokenizer.chat_template by its markers; "" when
/// llama.cpp would not recognize it either. The name may be one this file
/// does not implement (isImplementedChatFormat says).
std::string chatFormatByName(std::string_view name);
std::string detectChatFormat(std::string_view templateText);

/// Whether applyChatFormat writes `format`.
bool isImplementedChatFormat(std::string_view format);
/// "chatml, llama3, ...": the formats implemented, for messages.
std::string implementedChatFormats();

/// A conversation file: a JSON array of {"role", "content"} objects (the
/// OpenAI messages spelling), at most 16 MiB and 65536 messages, each with
/// exactly those two string keys and a role of system, user or assistant,
/// ending with a user turn (the reply follows it). Errors name the file
/// and the message's index.
Expected<std::vector<ChatMessage>> readChatMessages(const std::string &path);

/// The messages in `format`, then the assistant's opening when
/// `addAssistant` (llama.cpp's add_ass). Control tokens stay text: the
/// caller tokenizes the result with parse_special. An unknown or
/// unimplemented format, or a role other than system, user and assistant,
/// is an Error naming it.
Expected<std::string> applyChatFormat(std::string_view format,
                                      const std::vector<ChatMessage> &messages,
                                      bool addAssistant);

} // namespace qtensor

#endif // QTENSOR_TOKENIZER_CHATTEMPLATE_H
