//===- FuzzProgram.cpp - libFuzzer target for program.json ----------------===//
//
// Arbitrary bytes -> strict decoder-program parse (the runtime sizes its
// buffers from an accepted one); an accepted program must serialize and
// parse back to the same value.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/DecoderProgram.h"

#include <cstdlib>
#include <string_view>

using namespace qtensor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto program = artifact::parseProgram(text, "fuzz/program.json");
  if (!program)
    return 0;
  std::string again = artifact::toJson(*program).dump();
  auto back = artifact::parseProgram(again, "fuzz/program.json");
  if (!back || !(*back == *program))
    std::abort();
  return 0;
}
