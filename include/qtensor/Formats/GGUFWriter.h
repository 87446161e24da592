//===- GGUFWriter.h - Writing GGUF metadata -------------------*- C++ -*-===//
//
// A GGUF v3 file holding only metadata (no tensors), copied key by key from
// another file: the artifact carries its tokenizer this way, so the
// runtime builds it with the same hardened reader and the same
// Tokenizer::fromGGUF as the compiler did (llama.cpp's vocab-only files
// have the same shape).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_GGUFWRITER_H
#define QTENSOR_FORMATS_GGUFWRITER_H

#include "qtensor/Formats/GGUF.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <string_view>
#include <vector>

namespace qtensor {

/// The bytes of a GGUF v3 file with no tensors whose metadata are the keys
/// of `source` that start with `prefix`, in file order, values copied
/// exactly. Nested arrays are refused (no key the runtime reads has one).
Expected<std::vector<uint8_t>> writeMetadataOnlyGGUF(const GGUFFile &source,
                                                     std::string_view prefix);

} // namespace qtensor

#endif // QTENSOR_FORMATS_GGUFWRITER_H
