//===- FuzzSafetensors.cpp - libFuzzer target for the safetensors reader --===//
//
// The input is a whole file. It reaches the reader through a memfd, the same
// MappedFile path a real file takes; every accepted file is also decoded.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/Safetensors.h"

#include <sys/mman.h>
#include <unistd.h>

using namespace qtensor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz.safetensors", MFD_CLOEXEC);
  if (fd < 0)
    return 0;
  if (size && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  auto mapped = MappedFile::fromDescriptor(fd, "fuzz.safetensors");
  if (!mapped)
    return 0;
  auto file = safetensors::SafetensorsFile::fromMappedFile(mapped.take());
  if (!file)
    return 0;
  for (const safetensors::TensorView &view : file->tensors()) {
    auto values = safetensors::toFloat32(view);
    (void)values;
  }
  return 0;
}
