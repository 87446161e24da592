//===- FuzzONNX.cpp - libFuzzer target for the ONNX reader ----------------===//
//
// The input is a whole .onnx file; the quantized linears of an accepted
// model are unpacked. External data is looked for in a directory that does
// not exist, so every reference to it must be an error, not a file read.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/ONNX.h"

using namespace qtensor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto model = onnxmodel::Model::fromBuffer(data, size, "fuzz.onnx",
                                            "/nonexistent/qtensor-fuzz");
  if (!model)
    return 0;
  for (const onnxmodel::QuantizedLinear &l : model->linears()) {
    // Bound the work per input: unpacking is linear in the weight.
    if (l.n * l.k > (int64_t(1) << 22))
      continue;
    auto parts = onnxmodel::unpack(l);
    (void)parts;
  }
  return 0;
}
