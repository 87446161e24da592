//===- Tokenize.cpp - `qtc tokenize`: text to token ids -------------------===//
//
// Opens the tokenizer of a GGUF file or a Hugging Face tokenizer.json
// (Tokenizer::open, the same QTensorTokenizer library a runtime uses) and
// prints the ids of one text or of each text of a JSON list.
//
//===----------------------------------------------------------------------===//

#include "Tokenize.h"

#include "CommandLine.h"

#include "qtensor/Formats/InputKind.h"
#include "qtensor/Runtime/ArtifactTokenizer.h"
#include "qtensor/Support/JsonObjectReader.h"
#include "qtensor/Tokenizer/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <iostream>

using namespace qtensor;

namespace {
const char *kTokenizeUsage =
    "usage: qtc tokenize FILE.gguf|tokenizer.json|HF_DIR|ART --text TEXT\n"
    "                    [--add-special] [--parse-special] [--json]\n"
    "  print the token ids of TEXT under the tokenizer of FILE's\n"
    "  tokenizer.ggml.* metadata (llama, gpt2 or bert, as llama.cpp\n"
    "  tokenizes), or of a Hugging Face tokenizer.json (a file, or a\n"
    "  checkpoint directory whose config.json gives BOS and EOS), read as\n"
    "  llama.cpp's converter reads it (docs/tokenizer.md), or the one an\n"
    "  artifact ART carries (checked against its manifest)\n"
    "  --text TEXT     the text (UTF-8) to tokenize\n"
    "  --texts FILE    instead, every string of FILE's JSON array; with\n"
    "                  --json, \"tokens\" is then a list of id lists\n"
    "  --add-special   add what the model adds around a prompt (BOS/EOS per\n"
    "                  tokenizer.ggml.add_bos_token/add_eos_token, [CLS] and\n"
    "                  [SEP] for bert)\n"
    "  --parse-special the text's control tokens (<|eot_id|>,\n"
    "                  <start_of_turn>, ...) are tokens, as qtc run reads a\n"
    "                  prompt (llama.cpp's parse_special); else text\n"
    "  --json          print one JSON object: tokens, count, model, pre,\n"
    "                  vocab_size, bos_id, eos_id, end_of_generation (the\n"
    "                  ids generation stops at), tokenizer_sha256\n"
    "exit status: 0 tokenized, 1 unreadable file or unsupported tokenizer,\n"
    "2 usage error\n";

int fail(const std::string &message, bool asJson) {
  return qtc::reportFailure("qtc tokenize", asJson, "tokenize", message);
}
} // namespace

int qtensor::qtc::runTokenize(const std::vector<std::string> &args) {
  std::string path, textsFile;
  std::optional<std::string> text;
  bool addSpecial = false, parseSpecial = false, asJson = false;
  CommandLine cl("qtc tokenize", kTokenizeUsage);
  cl.option({"--text"}, "a text", text)
      .option({"--texts"}, "a file", textsFile)
      .flag({"--add-special"}, addSpecial)
      .flag({"--parse-special"}, parseSpecial)
      .flag({"--json"}, asJson)
      .positional(path, "missing FILE.gguf");
  if (std::optional<int> status = cl.parse(args))
    return *status;
  if (!text && textsFile.empty())
    return cl.usageError("missing --text TEXT");
  if (text && !textsFile.empty())
    return cl.usageError("--text and --texts are exclusive");
  std::vector<std::string> texts;
  if (text) {
    texts.push_back(*text);
  } else {
    auto list = readJsonStringList(textsFile, uint64_t(64) << 20);
    if (!list)
      return fail(list.message(), asJson);
    texts = list.take();
  }

  // An artifact directory (or its manifest.json) carries its tokenizer;
  // anything else is a GGUF file or a Hugging Face tokenizer.
  Expected<InputKind> kind = detectInputKind(path);
  Expected<Tokenizer> tokenizer =
      kind && *kind == InputKind::ArtifactDirectory
          ? runtime::openArtifactTokenizer(artifactDirectoryOf(path))
          : Tokenizer::open(path);
  if (!tokenizer)
    return fail(tokenizer.message(), asJson);
  std::vector<std::vector<int32_t>> all;
  for (const std::string &t : texts)
    all.push_back(tokenizer->encode(t, addSpecial, parseSpecial));

  if (asJson) {
    nlohmann::json out = {
        {"ok", true},
        // --text is one text (its ids); --texts may be an empty list.
        {"tokens", text ? nlohmann::json(all.front()) : nlohmann::json(all)},
        {"count", text ? all.front().size() : all.size()},
        {"add_special", addSpecial},
        {"parse_special", parseSpecial},
        {"model", std::string(tokenizerModelName(tokenizer->model()))},
        {"pre", tokenizer->preName()},
        {"vocab_size", tokenizer->vocabSize()},
        {"bos_id", tokenizer->bosId()},
        {"eos_id", tokenizer->eosId()},
        {"end_of_generation", tokenizer->endOfGeneration()},
        {"tokenizer_sha256", tokenizer->sha256()},
    };
    std::cout << out.dump(2, ' ', false,
                          nlohmann::json::error_handler_t::replace)
              << "\n";
    return 0;
  }
  for (const std::vector<int32_t> &list : all) {
    std::string line;
    for (int32_t id : list)
      line += (line.empty() ? "" : " ") + std::to_string(id);
    std::cout << line << "\n";
  }
  return 0;
}
