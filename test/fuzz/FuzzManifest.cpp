//===- FuzzManifest.cpp - libFuzzer target for manifest.json --------------===//
//
// Arbitrary bytes -> strict manifest parse; an accepted manifest must
// serialize and parse back to the same value.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/Manifest.h"

#include <cstdlib>
#include <string_view>

using namespace qtensor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto manifest = artifact::parseManifest(text, "fuzz/manifest.json");
  if (!manifest)
    return 0;
  auto bytes = artifact::serializeManifest(*manifest);
  if (!bytes)
    return 0; // e.g. a value too large to print back within the size bound
  auto again = artifact::parseManifest(*bytes, "fuzz/manifest.json");
  if (!again || !(*again == *manifest))
    std::abort();
  return 0;
}
