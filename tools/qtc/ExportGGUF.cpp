//===- ExportGGUF.cpp - `qtc export-gguf`: an artifact as a GGUF file -----===//

#include "ExportGGUF.h"

#include "CommandLine.h"

#include "qtensor/Formats/GGUFExport.h"

#include <nlohmann/json.hpp>

#include <iostream>

using namespace qtensor;

namespace {
const char *kExportUsage =
    "usage: qtc export-gguf DIR -o FILE.gguf [--dequantize] [--json]\n"
    "  write the artifact's model as a llama.cpp GGUF file: tensors named\n"
    "  by their role, the architecture's hyperparameters, the tokenizer's\n"
    "  metadata; quantized tensors keep their codes in the ggml type that\n"
    "  decodes them exactly (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1)\n"
    "  --dequantize  write a tensor no ggml type decodes exactly (e.g.\n"
    "                groups of 128, integer zero-points) as F32 values of\n"
    "                its reconstruction instead of refusing it\n"
    "  --json        print one JSON object: tensors (name, gguf_name,\n"
    "                type, how), architecture, tokenizer, bytes\n"
    "exit status: 0 written, 1 invalid artifact or a tensor without a\n"
    "ggml type (nothing written), 2 usage error\n";
} // namespace

int qtensor::qtc::runExportGGUF(const std::vector<std::string> &args) {
  std::string dir, out;
  bool dequantize = false, asJson = false;
  CommandLine cl("qtc export-gguf", kExportUsage);
  cl.option({"-o", "--output"}, "an output file", out)
      .flag({"--dequantize"}, dequantize)
      .flag({"--json"}, asJson)
      .positional(dir, "missing the artifact DIR");
  if (std::optional<int> status = cl.parse(args))
    return *status;
  if (out.empty())
    return cl.usageError("missing -o FILE.gguf");
  GGUFExportOptions options;
  options.dequantize = dequantize;
  Expected<GGUFExportResult> r = exportGGUF(dir, out, options);
  if (!r)
    return reportFailure("qtc export-gguf", asJson, "export", r.message());
  if (asJson) {
    nlohmann::json tensors = nlohmann::json::array();
    for (const GGUFExportedTensor &t : r->tensors)
      tensors.push_back({{"name", t.artifactName},
                         {"gguf_name", t.ggufName},
                         {"type", t.type},
                         {"how", t.how}});
    std::cout << nlohmann::json{{"ok", true},
                                {"architecture", r->architecture},
                                {"tokenizer", r->tokenizer},
                                {"bytes", r->bytes},
                                {"tensors", tensors}}
                     .dump(2)
              << "\n";
    return 0;
  }
  size_t kept = 0, dequantized = 0;
  for (const GGUFExportedTensor &t : r->tensors) {
    kept += t.how.rfind("codes kept", 0) == 0;
    dequantized += t.how.rfind("dequantized", 0) == 0;
  }
  std::cout << "exported " << dir << " -> " << out << "\n"
            << "  " << r->architecture << ", " << r->tensors.size()
            << " tensors (" << kept << " with their codes kept, " << dequantized
            << " dequantized), " << r->bytes
            << " bytes of tensor data, tokenizer "
            << (r->tokenizer ? "copied" : "none (the artifact has none)")
            << "\n";
  for (const GGUFExportedTensor &t : r->tensors)
    if (t.how.find("dequantized") != std::string::npos ||
        t.how.find("permuted") != std::string::npos)
      std::cout << "  " << t.ggufName << ": " << t.type << ", " << t.how
                << "\n";
  return 0;
}
