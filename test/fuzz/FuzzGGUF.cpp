//===- FuzzGGUF.cpp - libFuzzer target for the GGUF reader ----------------===//
//
// The input is a whole file; every tensor of an accepted file is decoded
// (an unsupported type must be an error, not a crash).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/GGUF.h"

using namespace qtensor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto file = GGUFFile::fromBuffer(data, size, "fuzz.gguf");
  if (!file)
    return 0;
  for (const GGUFTensorInfo &tensor : file->tensors()) {
    // Bound the work per input: decoding is linear in the payload.
    if (tensor.elementCount > (1u << 20))
      continue;
    auto values = file->decode(tensor);
    (void)values;
  }
  return 0;
}
