//===- FuzzSafetensorsIndex.cpp - libFuzzer target for index.json ---------===//
//
// The input is the index JSON. Two valid shards are written once into a
// private directory, so inputs that name them exercise shard validation,
// weight_map cross-checks and total_size; others exercise path rules.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/SafetensorsIndex.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace qtensor;

namespace {
std::string makeDirectory() {
  char pattern[] = "/tmp/qtensor-fuzz-index-XXXXXX";
  const char *dir = mkdtemp(pattern);
  if (!dir)
    std::abort();
  std::string root = dir;
  for (int shard = 1; shard <= 2; ++shard) {
    safetensors::SafetensorsWriter writer;
    std::vector<uint8_t> bytes(8, static_cast<uint8_t>(shard));
    if (!writer.addTensor("t" + std::to_string(shard), safetensors::DType::F32,
                          {2}, bytes))
      std::abort();
    if (!writer.writeFile(root + "/model-0000" + std::to_string(shard) +
                          "-of-00002.safetensors"))
      std::abort();
  }
  return root;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string root = makeDirectory();
  std::string index = root + "/model.safetensors.index.json";
  FILE *f = std::fopen(index.c_str(), "wb");
  if (!f)
    return 0;
  if (size)
    std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto result = safetensors::SafetensorsIndex::open(index);
  (void)result;
  return 0;
}
