//===- Inspect.cpp - `qtc inspect`: flags, then print the report ----------===//
//
// The reading and the report are the library's (Inspect/Inspect.h); this is
// flag parsing, the --dump-f32 file and printing.
//
//===----------------------------------------------------------------------===//

#include "Inspect.h"

#include "CommandLine.h"

#include "qtensor/Inspect/Inspect.h"
#include "qtensor/Support/FileIO.h"

#include <iostream>

using namespace qtensor;
using namespace qtensor::inspect;

namespace {
const char *kInspectUsage =
    "usage: qtc inspect PATH [--json] [--tensor NAME --dump-f32 OUT]\n"
    "  PATH   a safetensors file, a model.safetensors.index.json, a GGUF file\n"
    "         or an artifact directory (or its manifest.json)\n"
    "  --json          print one JSON object instead of text\n"
    "  --tensor NAME   select a tensor; with --dump-f32 OUT, write its values\n"
    "                  as raw little-endian float32 in the file's element\n"
    "                  order (GGUF: ne[0] fastest)\n"
    "exit status: 0 valid, 1 invalid input or a failed decode/dump,\n"
    "             2 usage error\n";

} // namespace

int qtensor::qtc::runInspect(const std::vector<std::string> &args) {
  std::string path, tensor, dump;
  bool asJson = false;
  CommandLine cl("qtc inspect", kInspectUsage);
  cl.flag({"--json"}, asJson)
      .option({"--tensor"}, "a name", tensor)
      .option({"--dump-f32"}, "an output path", dump)
      .positional(path, "missing PATH");
  if (std::optional<int> status = cl.parse(args))
    return *status;
  if (!dump.empty() && tensor.empty())
    return cl.usageError("--dump-f32 needs --tensor NAME");

  InspectReport report = inspectPath(path);
  if (report.ok() && !tensor.empty()) {
    auto values = decodeTensorToF32(path, tensor);
    if (!values) {
      report.error = values.message();
    } else if (!dump.empty()) {
      // Beside `dump` and renamed over it: a failed dump leaves no partial
      // file (mkstemp: never an existing file or a planted symlink).
      static_assert(sizeof(float) == 4, "float32 expected");
      if (Status s = writeFileAtomically(
              dump,
              std::string_view(reinterpret_cast<const char *>(values->data()),
                               values->size() * sizeof(float)));
          !s)
        report.error = s.message();
      else
        report.summary["dumped"] = {
            {"tensor", tensor}, {"values", values->size()}, {"file", dump}};
    }
  }
  if (asJson)
    // Messages can quote bytes of a malformed file: replace invalid UTF-8
    // rather than fail to print the report.
    std::cout << report.toJson().dump(2, ' ', false,
                                      nlohmann::json::error_handler_t::replace)
              << "\n";
  else
    std::cout << report.toText();
  if (!report.ok()) {
    if (!asJson)
      std::cerr << "qtc inspect: error: " << *report.error << "\n";
    return 1;
  }
  return 0;
}
