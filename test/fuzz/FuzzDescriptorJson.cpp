//===- FuzzDescriptorJson.cpp - libFuzzer target for descriptor JSON ------===//
//
// Arbitrary bytes -> JSON (without exceptions) -> strict descriptor parse;
// an accepted descriptor must survive toJson -> parse unchanged.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Descriptor/DescriptorJson.h"

#include <cstdlib>

using namespace qtensor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded())
    return 0;
  auto tensor = tensorDescriptorFromJson(j);
  if (!tensor)
    return 0;
  auto again = tensorDescriptorFromJson(toJson(*tensor));
  if (!again || !(*again == *tensor))
    std::abort();
  return 0;
}
