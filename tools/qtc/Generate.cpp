//===- Generate.cpp - `qtc run --prompt`: the artifact as a model ---------===//
//
// Thin: load with the decoder program, tokenize, Decoder::generate, print.
// The text goes to stdout as each token is chosen; the rates follow it.
//
//===----------------------------------------------------------------------===//

#include "Generate.h"

#include "CommandLine.h"

#include "qtensor/Runtime/Decoder.h"
#include "qtensor/Support/FileIO.h"
#include "qtensor/Tokenizer/ChatTemplate.h"
#include "qtensor/Tokenizer/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace qtensor::qtc {

namespace {

using json = nlohmann::ordered_json;
using namespace qtensor::runtime;

int fail(const GenerateArgs &a, const char *stage, const std::string &message) {
  return reportFailure("qtc run", a.json, stage, message);
}

/// Raw little-endian float32, written beside `path` and renamed over it: a
/// failed write leaves no partial file.
Status writeLogits(const std::string &path, const std::vector<float> &logits) {
  static_assert(sizeof(float) == 4, "float32 expected");
  return writeFileAtomically(
      path, std::string_view(reinterpret_cast<const char *>(logits.data()),
                             logits.size() * sizeof(float)));
}

/// The --chat conversation as the prompt text, in the format named or
/// recognized from the tokenizer's chat_template; `format` gets its name.
Expected<std::string> chatPrompt(const GenerateArgs &a, const Tokenizer &tok,
                                 std::string &format) {
  if (a.chatTemplate) {
    format = *a.chatTemplate;
  } else if (tok.chatTemplate().empty()) {
    return makeError("the artifact's tokenizer has no tokenizer.chat_template;"
                     " name its format with --chat-template (implemented: ",
                     implementedChatFormats(), ")");
  } else {
    format = detectChatFormat(tok.chatTemplate());
    if (format.empty())
      return makeError("the tokenizer's chat_template is none of llama.cpp's "
                       "built-in formats; name one with --chat-template "
                       "(implemented: ",
                       implementedChatFormats(), ")");
  }
  std::vector<ChatMessage> turns;
  if (a.messages) {
    QTENSOR_ASSIGN_OR_RETURN(turns, readChatMessages(*a.messages));
  } else {
    if (a.system)
      turns.push_back({"system", *a.system});
    turns.push_back({"user", *a.chat});
  }
  return applyChatFormat(format, turns, /*addAssistant=*/true);
}

double rate(int64_t tokens, double seconds) {
  return seconds > 0 ? double(tokens) / seconds : 0.0;
}

} // namespace

int runGenerate(const GenerateArgs &a) {
  LoadOptions lo = a.load;
  lo.decoder = true;
  auto loaded = loadModel(a.dir, lo);
  if (!loaded)
    return fail(a, "load", loaded.message());
  LoadedModel &model = **loaded;
  auto decoder = Decoder::create(model);
  if (!decoder)
    return fail(a, "load", decoder.message());
  Decoder &d = **decoder;

  const Tokenizer *tok = nullptr;
  std::vector<int32_t> prompt;
  std::optional<std::string> promptText = a.prompt;
  std::string chatFormat;
  const bool chat = a.chat || a.messages;
  if (a.prompt || chat) {
    auto t = d.tokenizer();
    if (!t)
      return fail(a, "tokenize", t.message());
    tok = *t;
    if (chat) {
      auto text = chatPrompt(a, *tok, chatFormat);
      if (!text)
        return fail(a, "chat", text.message());
      promptText = *text;
    }
    // As llama.cpp's tools tokenize a prompt: control tokens written in it
    // (a chat template's <start_of_turn>) are tokens.
    prompt =
        tok->encode(*promptText, /*addSpecial=*/true, /*parseSpecial=*/true);
  } else {
    prompt = *a.ids;
    if (auto t = d.tokenizer())
      tok = *t;
  }
  if (prompt.empty())
    return fail(a, "tokenize", "the prompt has no tokens");
  auto cache = d.newCache(a.context);
  if (!cache)
    return fail(a, "cache", cache.message());

  GenerateOptions go;
  go.maxTokens = a.maxTokens;
  go.temperature = a.temperature;
  go.topK = a.topK;
  go.topP = a.topP;
  go.minP = a.minP;
  go.penalties = a.penalties;
  go.seed = a.seed;
  std::string text;
  go.onToken = [&](int32_t id) {
    if (!tok)
      return;
    auto piece = tok->tokenPiece(id, /*renderSpecial=*/false);
    if (!piece)
      return;
    text += *piece;
    if (!a.json)
      std::cout << *piece << std::flush;
  };
  if (!a.json && a.prompt) // a chat prints the reply only
    std::cout << *a.prompt << std::flush;
  auto r = d.generate(prompt, *cache, go);
  if (!r)
    return fail(a, "run", r.message());
  if (tok) { // the tokenizer's own clean-up of the whole sequence
    if (auto decoded = tok->decode(r->tokens, /*renderSpecial=*/false))
      text = *decoded;
  }
  if (!a.logitsOut.empty())
    if (Status s = writeLogits(a.logitsOut, r->promptLogits); !s)
      return fail(a, "output", s.message());

  const double prefillRate = rate(r->prefillTokens, r->prefillSeconds);
  const double decodeRate = rate(r->decodeTokens, r->decodeSeconds);
  const DecoderCounters &c = d.counters();
  if (a.json) {
    json top5 = json::array();
    for (const auto &[id, logit] : topLogits(r->promptLogits, 5))
      top5.push_back({id, logit});
    json out = {{"ok", true},
                {"backend", model.backend()},
                {"activation", toString(model.program()->activation)},
                {"prompt_tokens", prompt},
                {"chat_format", chat ? json(chatFormat) : json(nullptr)},
                {"tokens", r->tokens},
                {"text", text},
                {"stopped_at_eos", r->stoppedAtEos},
                {"stopped_at_context", r->stoppedAtContext},
                {"prompt_top5", top5},
                {"timings",
                 {{"prefill_tokens", r->prefillTokens},
                  {"prefill_seconds", r->prefillSeconds},
                  {"prefill_tokens_per_s", prefillRate},
                  {"decode_tokens", r->decodeTokens},
                  {"decode_seconds", r->decodeSeconds},
                  {"decode_tokens_per_s", decodeRate}}},
                {"timeline", model.timeline().toJson()},
                {"kernel_calls",
                 {{"model", c.modelKernelCalls},
                  {"quantized_linear", c.quantizedLinearCalls},
                  {"float_linear", c.floatLinearCalls},
                  {"forwards", c.forwards}}}};
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  if (r->stoppedAtContext)
    std::cerr << "qtc run: note: stopped after " << r->tokens.size()
              << " tokens: the KV cache (--context) is full\n";
  if (!tok) {
    std::cout << "tokens:";
    for (int32_t id : r->tokens)
      std::cout << " " << id;
  }
  char line[200];
  std::snprintf(line, sizeof(line),
                "\n\nprefill: %lld tokens, %.1f tokens/s; decode: %lld "
                "tokens, %.1f tokens/s (%s)\n",
                static_cast<long long>(r->prefillTokens), prefillRate,
                static_cast<long long>(r->decodeTokens), decodeRate,
                model.backend().c_str());
  std::cout << line;
  return 0;
}

} // namespace qtensor::qtc
