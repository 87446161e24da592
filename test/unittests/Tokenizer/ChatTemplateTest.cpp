//===- ChatTemplateTest.cpp - llama.cpp's built-in chat formats -----------===//

#include "qtensor/Tokenizer/ChatTemplate.h"

#include <gtest/gtest.h>

using namespace qtensor;

namespace {

std::string formatted(std::string_view format, std::vector<ChatMessage> turns,
                      bool addAssistant = true) {
  Expected<std::string> out = applyChatFormat(format, turns, addAssistant);
  EXPECT_TRUE(bool(out)) << out.message();
  return out ? *out : std::string();
}

const std::vector<ChatMessage> kTurns = {{"system", "Be brief."},
                                         {"user", " Hi "},
                                         {"assistant", "Hello."},
                                         {"user", "Capital of France?"}};

// Markers of the templates real checkpoints ship (abridged Jinja).
TEST(ChatTemplate, DetectsByLlamaCppMarkers) {
  EXPECT_EQ(detectChatFormat("{% for message in messages %}{{'<|im_start|>' "
                             "+ message['role'] + '\\n'}}"),
            "chatml"); // Qwen2.5, SmolLM
  EXPECT_EQ(detectChatFormat("{{'<|im_start|>' + message['role'] + "
                             "'<|im_sep|>'}}"),
            "phi4"); // not chatml, though it has <|im_start|>
  EXPECT_EQ(detectChatFormat("{{ bos_token }}{% for message in messages %}"
                             "{{ '<|start_header_id|>' + message['role'] + "
                             "'<|end_header_id|>\\n\\n' }}"),
            "llama3");
  EXPECT_EQ(detectChatFormat("{{ '<start_of_turn>' + role + '\\n' }}"),
            "gemma");
  EXPECT_EQ(detectChatFormat("{{ '[SYSTEM_PROMPT]' }}{{ '[INST]' }}"),
            "mistral-v7");
  EXPECT_EQ(detectChatFormat("[INST] <<SYS>>\\n{{ system }}"), "llama2-sys");
  EXPECT_EQ(detectChatFormat("{{ bos_token + '[INST] ' + "
                             "message.content.strip() }}"),
            "llama2-sys-strip");
  EXPECT_EQ(detectChatFormat("{{'<|user|>' + '\\n'}}{{'<|end|>'}}"
                             "{{'<|assistant|>'}}"),
            "phi3");
  EXPECT_EQ(detectChatFormat("{{ messages }}"), "");
  // A name is taken as the format it names.
  EXPECT_EQ(detectChatFormat("gemma"), "gemma");
  EXPECT_EQ(chatFormatByName("vicuna-orca"), "vicuna-orca");
  EXPECT_EQ(chatFormatByName("jinja"), "");
}

TEST(ChatTemplate, WritesChatmlAndLlama3) {
  EXPECT_EQ(formatted("chatml", kTurns),
            "<|im_start|>system\nBe brief.<|im_end|>\n"
            "<|im_start|>user\n Hi <|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n"
            "<|im_start|>user\nCapital of France?<|im_end|>\n"
            "<|im_start|>assistant\n");
  // llama3 trims each message; the BOS is the tokenizer's.
  EXPECT_EQ(formatted("llama3", {ChatMessage{"user", " Hi "}}),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(
      formatted("chatml", {ChatMessage{"user", "Hi"}}, /*addAssistant=*/false),
      "<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatTemplate, GemmaFoldsTheSystemTurnIntoTheNextUserTurn) {
  EXPECT_EQ(formatted("gemma", kTurns),
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n"
            "<start_of_turn>model\nHello.<end_of_turn>\n"
            "<start_of_turn>user\nCapital of France?<end_of_turn>\n"
            "<start_of_turn>model\n");
}

TEST(ChatTemplate, WritesTheInstFamilies) {
  const std::vector<ChatMessage> turns = {
      {"system", "Be brief."}, {"user", "Hi"}, {"assistant", " Hello. "}};
  EXPECT_EQ(formatted("mistral-v7", turns),
            "[SYSTEM_PROMPT] Be brief.[/SYSTEM_PROMPT][INST] Hi[/INST] "
            " Hello. </s>");
  EXPECT_EQ(formatted("mistral-v3", turns),
            "[INST] Be brief.\n\nHi[/INST] Hello.</s>");
  EXPECT_EQ(formatted("mistral-v1", turns),
            " [INST] Be brief.\n\nHi [/INST]  Hello. </s>");
  EXPECT_EQ(formatted("llama2-sys", turns),
            "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello. </s>");
  EXPECT_EQ(formatted("llama2", turns),
            "[INST] Be brief.\nHi [/INST] Hello. </s>");
  EXPECT_EQ(formatted("llama2-sys-bos",
                      {{"user", "a"}, {"assistant", "b"}, {"user", "c"}}),
            "[INST] a [/INST]b</s><s>[INST] c [/INST]");
}

TEST(ChatTemplate, RefusesWhatItDoesNotWrite) {
  Expected<std::string> phi4 = applyChatFormat("phi4", kTurns, true);
  ASSERT_FALSE(bool(phi4));
  EXPECT_NE(phi4.message().find("chat format \"phi4\" is not implemented "
                                "here (implemented: chatml, llama3"),
            std::string::npos)
      << phi4.message();
  Expected<std::string> unknown = applyChatFormat("jinja", kTurns, true);
  ASSERT_FALSE(bool(unknown));
  EXPECT_NE(unknown.message().find("is not one llama.cpp names"),
            std::string::npos);
  Expected<std::string> role =
      applyChatFormat("chatml", {ChatMessage{"tool", "{}"}}, true);
  ASSERT_FALSE(bool(role));
  EXPECT_NE(role.message().find("chat message role \"tool\": expected "
                                "system, user or assistant"),
            std::string::npos);
  for (const char *f : {"chatml", "llama3", "gemma", "mistral-v7", "phi3",
                        "zephyr", "vicuna", "llama2-sys-strip"})
    EXPECT_TRUE(isImplementedChatFormat(f)) << f;
}

} // namespace
