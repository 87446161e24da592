//===- VerifyCommand.cpp - `qtc verify` -----------------------------------===//

#include "VerifyCommand.h"

#include "CommandLine.h"

#include "qtensor/Formats/InputKind.h"
#include "qtensor/Verify/Ladder.h"

#include <iostream>

namespace qtensor::qtc {

int runVerify(const std::vector<std::string> &args) {
  const char *usage = "usage: qtc verify DIR [--json]\n"
                      "  runs the parity ladder (L0 bytes and inventory, L1 "
                      "pack/unpack, L2 reference\n"
                      "  reconstruction, L3 operator parity on the host, L5 "
                      "dispatch and resources)\n"
                      "  on the artifact in DIR; exit 0 only when every "
                      "level passes\n";
  std::string dir;
  bool json = false;
  CommandLine cl("qtc verify", usage);
  cl.flag({"--json"}, json).positional(dir, "missing DIR");
  if (std::optional<int> status = cl.parse(args))
    return *status;
  // DIR/manifest.json stands for its directory, as in `qtc inspect`.
  dir = artifactDirectoryOf(dir);

  verify::LadderResult result = verify::runLadder(dir);
  if (json) {
    std::cout << result.toJson().dump(2) << "\n";
  } else {
    std::cout << dir << "\n";
    for (const verify::LevelResult &l : result.levels)
      std::cout << "  " << l.level << " " << l.name << ": "
                << (l.ok ? "ok" : "FAILED") << " - " << l.detail << "\n";
    std::cout << "  verdict: " << (result.ok ? "verified" : "NOT verified")
              << "\n";
  }
  return result.ok ? 0 : 1;
}

} // namespace qtensor::qtc
