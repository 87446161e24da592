//===- ChatTemplate.cpp - llama.cpp's built-in chat formats ---------------===//
//
// Detection follows llama.cpp's llm_chat_detect_template marker by marker
// and in its order, for every format it knows, so that a template of a
// format not written here is named, not mistaken for the next match. The
// writers follow its llm_chat_apply_template for the implemented formats.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Tokenizer/ChatTemplate.h"

#include "qtensor/Support/JsonObjectReader.h"

#include <algorithm>
#include <cctype>
#include <iterator>

using namespace qtensor;

namespace {

/// llama.cpp's format names (LLM_CHAT_TEMPLATES), implemented or not.
constexpr std::string_view kKnown[] = {"chatml",
                                       "llama2",
                                       "llama2-sys",
                                       "llama2-sys-bos",
                                       "llama2-sys-strip",
                                       "mistral-v1",
                                       "mistral-v3",
                                       "mistral-v3-tekken",
                                       "mistral-v7",
                                       "mistral-v7-tekken",
                                       "phi3",
                                       "phi4",
                                       "falcon3",
                                       "zephyr",
                                       "monarch",
                                       "gemma",
                                       "orion",
                                       "openchat",
                                       "vicuna",
                                       "vicuna-orca",
                                       "deepseek",
                                       "deepseek2",
                                       "deepseek3",
                                       "command-r",
                                       "llama3",
                                       "chatglm3",
                                       "chatglm4",
                                       "glmedge",
                                       "minicpm",
                                       "exaone3",
                                       "exaone4",
                                       "rwkv-world",
                                       "granite",
                                       "gigachat",
                                       "megrez",
                                       "yandex",
                                       "bailing",
                                       "llama4",
                                       "smolvlm",
                                       "hunyuan-moe",
                                       "gpt-oss",
                                       "hunyuan-dense",
                                       "kimi-k2",
                                       "seed_oss",
                                       "dots1"};

/// What applyChatFormat writes.
constexpr std::string_view kImplemented[] = {
    "chatml",         "llama3",
    "gemma",          "mistral-v1",
    "mistral-v3",     "mistral-v3-tekken",
    "mistral-v7",     "mistral-v7-tekken",
    "llama2",         "llama2-sys",
    "llama2-sys-bos", "llama2-sys-strip",
    "phi3",           "zephyr",
    "vicuna",         "vicuna-orca"};

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return std::string(s.substr(b, e - b));
}

} // namespace

std::string qtensor::chatFormatByName(std::string_view name) {
  return std::find(std::begin(kKnown), std::end(kKnown), name) !=
                 std::end(kKnown)
             ? std::string(name)
             : std::string();
}

std::string qtensor::detectChatFormat(std::string_view t) {
  if (std::string known = chatFormatByName(t); !known.empty())
    return known;
  auto has = [&](std::string_view marker) {
    return t.find(marker) != std::string_view::npos;
  };
  if (has("<|im_start|>"))
    return has("<|im_sep|>")           ? "phi4"
           : has("<end_of_utterance>") ? "smolvlm"
                                       : "chatml";
  if (t.substr(0, 7) == "mistral" || has("[INST]")) {
    if (has("[SYSTEM_PROMPT]"))
      return "mistral-v7";
    if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
      if (has(" [INST]"))
        return "mistral-v1";
      if (has("\"[INST]\""))
        return "mistral-v3-tekken";
      return "mistral-v3";
    }
    if (has("content.strip()"))
      return "llama2-sys-strip";
    if (has("bos_token + '[INST]"))
      return "llama2-sys-bos";
    if (has("<<SYS>>"))
      return "llama2-sys";
    return "llama2";
  }
  if (has("<|assistant|>") && has("<|end|>"))
    return "phi3";
  if (has("[gMASK]<sop>"))
    return "chatglm4";
  if (has("<|assistant|>") && has("<|user|>"))
    return has("</s>") ? "falcon3" : "glmedge";
  if (has("<|{{ item['role'] }}|>") && has("<|begin_of_image|>"))
    return "glmedge";
  if (has("<|user|>") && has("<|endoftext|>"))
    return "zephyr";
  if (has("bos_token + message['role']"))
    return "monarch";
  if (has("<start_of_turn>"))
    return "gemma";
  if (has("'\\n\\nAssistant: ' + eos_token"))
    return "orion";
  if (has("GPT4 Correct "))
    return "openchat";
  if (has("USER: ") && has("ASSISTANT: "))
    return has("SYSTEM: ") ? "vicuna-orca" : "vicuna";
  if (has("### Instruction:") && has("<|EOT|>"))
    return "deepseek";
  if (has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>"))
    return "command-r";
  if (has("<|start_header_id|>") && has("<|end_header_id|>"))
    return "llama3";
  if (has("[gMASK]sop"))
    return "chatglm3";
  if (has("<\xe7\x94\xa8\xe6\x88\xb7>")) // <用户>
    return "minicpm";
  if (has("'Assistant: ' + message['content'] + eos_token"))
    return "deepseek2";
  if (has("<\xef\xbd\x9c"
          "Assistant\xef\xbd\x9c>") &&
      has("<\xef\xbd\x9c"
          "User\xef\xbd\x9c>"))
    return "deepseek3";
  if (has("[|system|]") && has("[|assistant|]") && has("[|endofturn|]"))
    return has("[|tool|]") ? "exaone4" : "exaone3";
  if (has("rwkv-world"))
    return "rwkv-world";
  if (has("<|start_of_role|>"))
    return "granite";
  if (has("<|role_start|>"))
    return "megrez";
  if (has("<|header_start|>") && has("<|header_end|>"))
    return "llama4";
  if (has("<|endofuserprompt|>"))
    return "dots1";
  if (has("<|extra_0|>") && has("<|extra_4|>"))
    return "hunyuan-moe";
  if (has("<|start|>") && has("<|channel|>"))
    return "gpt-oss";
  if (has("<|im_assistant|>assistant<|im_middle|>"))
    return "kimi-k2";
  if (has("<seed:bos>"))
    return "seed_oss";
  return std::string();
}

bool qtensor::isImplementedChatFormat(std::string_view format) {
  return std::find(std::begin(kImplemented), std::end(kImplemented), format) !=
         std::end(kImplemented);
}

std::string qtensor::implementedChatFormats() {
  std::string out;
  for (std::string_view f : kImplemented)
    out += (out.empty() ? "" : ", ") + std::string(f);
  return out;
}

namespace {

/// llama.cpp's [INST] formats: mistral v1/v3/v3-tekken and llama2's four.
std::string writeInst(std::string_view f,
                      const std::vector<ChatMessage> &messages) {
  std::string out;
  if (f.substr(0, 7) == "mistral") {
    const std::string lead = f == "mistral-v1" ? " " : "";
    const std::string trail = f == "mistral-v3-tekken" ? "" : " ";
    bool inTurn = false;
    for (const ChatMessage &m : messages) {
      if (!inTurn) {
        out += lead + "[INST]" + trail;
        inTurn = true;
      }
      if (m.role == "system") {
        out += m.content + "\n\n";
      } else if (m.role == "user") {
        out += m.content + lead + "[/INST]";
      } else {
        out +=
            trail + (f == "mistral-v3" ? trim(m.content) : m.content) + "</s>";
        inTurn = false;
      }
    }
    return out;
  }
  const bool system = f != "llama2", bosInside = f == "llama2-sys-bos",
             strip = f == "llama2-sys-strip";
  bool inTurn = true; // the first [INST] is written here, BOS by the caller
  out += "[INST] ";
  for (const ChatMessage &m : messages) {
    const std::string content = strip ? trim(m.content) : m.content;
    if (!inTurn) {
      inTurn = true;
      out += bosInside ? "<s>[INST] " : "[INST] ";
    }
    if (m.role == "system")
      out += system ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
    else if (m.role == "user")
      out += content + " [/INST]";
    else {
      out += content + "</s>";
      inTurn = false;
    }
  }
  return out;
}

} // namespace

Expected<std::string>
qtensor::applyChatFormat(std::string_view f,
                         const std::vector<ChatMessage> &messages,
                         bool addAssistant) {
  if (!isImplementedChatFormat(f))
    return makeError("chat format \"", f, "\" ",
                     chatFormatByName(f).empty() ? "is not one llama.cpp names"
                                                 : "is not implemented here",
                     " (implemented: ", implementedChatFormats(), ")");
  for (const ChatMessage &m : messages)
    if (m.role != "system" && m.role != "user" && m.role != "assistant")
      return makeError("chat message role \"", m.role,
                       "\": expected system, user or assistant");
  std::string out;
  auto each = [&](auto write) {
    for (const ChatMessage &m : messages)
      write(m);
  };
  if (f == "chatml") {
    each([&](const ChatMessage &m) {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    });
    if (addAssistant)
      out += "<|im_start|>assistant\n";
  } else if (f == "llama3") {
    each([&](const ChatMessage &m) {
      out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" +
             trim(m.content) + "<|eot_id|>";
    });
    if (addAssistant)
      out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  } else if (f == "gemma") {
    // No system turn: the system text opens the next user turn.
    std::string system;
    each([&](const ChatMessage &m) {
      if (m.role == "system") {
        system += trim(m.content);
        return;
      }
      const std::string role = m.role == "assistant" ? "model" : m.role;
      out += "<start_of_turn>" + role + "\n";
      if (!system.empty() && role != "model") {
        out += system + "\n\n";
        system.clear();
      }
      out += trim(m.content) + "<end_of_turn>\n";
    });
    if (addAssistant)
      out += "<start_of_turn>model\n";
  } else if (f == "mistral-v7" || f == "mistral-v7-tekken") {
    const std::string space = f == "mistral-v7" ? " " : "";
    each([&](const ChatMessage &m) {
      if (m.role == "system")
        out += "[SYSTEM_PROMPT]" + space + m.content + "[/SYSTEM_PROMPT]";
      else if (m.role == "user")
        out += "[INST]" + space + m.content + "[/INST]";
      else
        out += space + m.content + "</s>";
    });
  } else if (f.substr(0, 7) == "mistral" || f.substr(0, 6) == "llama2") {
    out = writeInst(f, messages);
  } else if (f == "phi3") {
    each([&](const ChatMessage &m) {
      out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
    });
    if (addAssistant)
      out += "<|assistant|>\n";
  } else if (f == "zephyr") {
    each([&](const ChatMessage &m) {
      out += "<|" + m.role + "|>\n" + m.content + "<|endoftext|>\n";
    });
    if (addAssistant)
      out += "<|assistant|>\n";
  } else { // vicuna, vicuna-orca
    each([&](const ChatMessage &m) {
      if (m.role == "system")
        out += f == "vicuna-orca" ? "SYSTEM: " + m.content + "\n"
                                  : m.content + "\n\n";
      else if (m.role == "user")
        out += "USER: " + m.content + "\n";
      else
        out += "ASSISTANT: " + m.content + "</s>\n";
    });
    if (addAssistant)
      out += "ASSISTANT:";
  }
  return out;
}

Expected<std::vector<ChatMessage>>
qtensor::readChatMessages(const std::string &path) {
  constexpr uint64_t kMaxBytes = uint64_t(16) << 20;
  constexpr size_t kMaxMessages = size_t(1) << 16;
  QTENSOR_ASSIGN_OR_RETURN(nlohmann::json list,
                           readStrictJsonFile(path, kMaxBytes, 4));
  if (!list.is_array() || list.empty() || list.size() > kMaxMessages)
    return makeError(path, ": expected a JSON array of 1 to ", kMaxMessages,
                     " messages ({\"role\": ..., \"content\": ...})");
  std::vector<ChatMessage> out;
  for (size_t i = 0; i < list.size(); ++i) {
    JsonObjectReader r(list[i], path + "[" + std::to_string(i) + "]");
    ChatMessage m;
    QTENSOR_TRY(r.expectObject());
    QTENSOR_TRY(r.readString("role", m.role));
    QTENSOR_TRY(r.readString("content", m.content));
    QTENSOR_TRY(r.noUnknownKeys());
    if (m.role != "system" && m.role != "user" && m.role != "assistant")
      return makeError(r.at("role"), ": \"", m.role,
                       "\" is not system, user or assistant");
    out.push_back(std::move(m));
  }
  if (out.back().role != "user")
    return makeError(path, ": the last message's role is ", out.back().role,
                     "; the reply follows a user turn");
  return out;
}
