//===- VerifyCommand.cpp - `qtc verify` -----------------------------------===//

#include "VerifyCommand.h"

#include "CommandLine.h"
#include "Progress.h"

#include "qtensor/Formats/InputKind.h"
#include "qtensor/Verify/Ladder.h"

#include <iostream>

namespace qtensor::qtc {

int runVerify(const std::vector<std::string> &args) {
  const char *usage =
      "usage: qtc verify DIR [--json] [--quiet] [--exhaustive]\n"
      "                  [--sample-above N]\n"
      "  runs the parity ladder (L0 bytes and inventory, L1 pack/unpack, L2\n"
      "  reference reconstruction, L3 operator parity on the host, L4 model\n"
      "  parity, L5 dispatch and resources) on the artifact in DIR; exit 0\n"
      "  only when every level passes\n"
      "  progress (each level as it finishes) goes to stderr, as JSON lines\n"
      "  with --json; --quiet silences it\n"
      "  --sample-above N  L3 runs ops of at least N weights (default 2^22)\n"
      "                    once per kernel entry point, at its smallest T\n"
      "  --exhaustive      L3 runs every T on every op; L4 runs on any size\n"
      "  --trust-artifact-code  L3 and L4 load the artifact's own host code\n"
      "                    (its constructors run in this process) instead of\n"
      "                    this installation's rebuild of its kernel records\n"
      "                    (docs/security.md)\n";
  std::string dir;
  bool json = false, quiet = false;
  verify::LadderOptions options;
  CommandLine cl("qtc verify", usage);
  cl.flag({"--json"}, json)
      .flag({"--quiet"}, quiet)
      .flag({"--exhaustive"}, options.exhaustive)
      .flag({"--trust-artifact-code"}, options.code.trustArtifactCode)
      .option({"--sample-above"}, "a value",
              parsedInto(
                  options.sampleAboveWeights,
                  [](const std::string &v) {
                    return parseInteger(v, 0, INT64_MAX);
                  },
                  "expected a non-negative integer"))
      .positional(dir, "missing DIR");
  if (std::optional<int> status = cl.parse(args))
    return *status;
  // DIR/manifest.json stands for its directory, as in `qtc inspect`.
  dir = artifactDirectoryOf(dir);

  Progress progress(quiet  ? Progress::Mode::Quiet
                    : json ? Progress::Mode::Json
                           : Progress::Mode::Text);
  progress.stage("verify", "verify " + dir, 1, 1);
  options.progress = &progress;
  verify::LadderResult result = verify::runLadder(dir, options);
  progress.finish(result.ok ? "verified" : "NOT verified");
  if (json) {
    std::cout << result.toJson().dump(2) << "\n";
  } else {
    std::cout << dir << "\n";
    for (const verify::LevelResult &l : result.levels)
      std::cout << "  " << l.toText() << "\n";
    std::cout << "  verdict: " << (result.ok ? "verified" : "NOT verified")
              << "\n";
  }
  return result.ok ? 0 : 1;
}

} // namespace qtensor::qtc
