//===- Tokenize.cpp - `qtc tokenize`: text to token ids -------------------===//
//
// Builds the tokenizer of a GGUF file's tokenizer.ggml.* metadata (the same
// QTensorTokenizer library a runtime uses) and prints the ids of one text.
//
//===----------------------------------------------------------------------===//

#include "Tokenize.h"

#include "CommandLine.h"

#include "qtensor/Formats/GGUF.h"
#include "qtensor/Tokenizer/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <iostream>

using namespace qtensor;

namespace {
const char *kTokenizeUsage =
    "usage: qtc tokenize FILE.gguf --text TEXT [--add-special] [--json]\n"
    "  print the token ids of TEXT under the tokenizer of FILE's\n"
    "  tokenizer.ggml.* metadata (llama, gpt2 or bert, as llama.cpp\n"
    "  tokenizes; docs/tokenizer.md)\n"
    "  --text TEXT     the text (UTF-8) to tokenize\n"
    "  --add-special   add what the model adds around a prompt (BOS/EOS per\n"
    "                  tokenizer.ggml.add_bos_token/add_eos_token, [CLS] and\n"
    "                  [SEP] for bert)\n"
    "  --json          print one JSON object: tokens, count, model, pre,\n"
    "                  vocab_size, bos_id, eos_id, tokenizer_sha256\n"
    "exit status: 0 tokenized, 1 unreadable file or unsupported tokenizer,\n"
    "2 usage error\n";

int fail(const std::string &message, bool asJson) {
  if (asJson)
    std::cout << nlohmann::json{{"ok", false}, {"error", message}}.dump(
                     2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  else
    std::cerr << "qtc tokenize: error: " << message << "\n";
  return 1;
}
} // namespace

int qtensor::qtc::runTokenize(const std::vector<std::string> &args) {
  std::string path, text;
  bool haveText = false, addSpecial = false, asJson = false;
  CommandLine cl("qtc tokenize", kTokenizeUsage);
  cl.option({"--text"}, "a text",
            [&](const std::string &value) -> std::optional<std::string> {
              text = value;
              haveText = true;
              return std::nullopt;
            })
      .flag({"--add-special"}, addSpecial)
      .flag({"--json"}, asJson)
      .positional(path, "missing FILE.gguf");
  if (std::optional<int> status = cl.parse(args))
    return *status;
  if (!haveText)
    return cl.usageError("missing --text TEXT");

  Expected<GGUFFile> file = GGUFFile::open(path);
  if (!file)
    return fail(file.message(), asJson);
  Expected<Tokenizer> tokenizer = Tokenizer::fromGGUF(*file, path);
  if (!tokenizer)
    return fail(tokenizer.message(), asJson);
  const std::vector<int32_t> ids = tokenizer->encode(text, addSpecial);

  if (asJson) {
    nlohmann::json out = {
        {"ok", true},
        {"tokens", ids},
        {"count", ids.size()},
        {"add_special", addSpecial},
        {"model", std::string(tokenizerModelName(tokenizer->model()))},
        {"pre", tokenizer->preName()},
        {"vocab_size", tokenizer->vocabSize()},
        {"bos_id", tokenizer->bosId()},
        {"eos_id", tokenizer->eosId()},
        {"tokenizer_sha256", tokenizer->sha256()},
    };
    std::cout << out.dump(2, ' ', false,
                          nlohmann::json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  std::string line;
  for (int32_t id : ids)
    line += (line.empty() ? "" : " ") + std::to_string(id);
  std::cout << line << "\n";
  return 0;
}
