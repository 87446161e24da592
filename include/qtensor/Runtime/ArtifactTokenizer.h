//===- ArtifactTokenizer.h - The tokenizer an artifact carries --*- C++ -*-===//
//
// An artifact compiled from a checkpoint with a tokenizer carries it as a
// metadata-only GGUF file (role "tokenizer", docs/model.md) whose digest the
// manifest records as model.tokenizer_sha256. `qtc tokenize ART` and the
// decoder read it here: the file is read once into private memory with the
// artifact's path rules and checked against the manifest's size and
// SHA-256, the tokenizer is built from its metadata, and the tokenizer's
// own digest must be the manifest's.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_ARTIFACTTOKENIZER_H
#define QTENSOR_RUNTIME_ARTIFACTTOKENIZER_H

#include "qtensor/Support/Expected.h"
#include "qtensor/Support/MappedFile.h"
#include "qtensor/Tokenizer/Tokenizer.h"

#include <optional>
#include <string>

namespace qtensor::runtime {

/// The tokenizer of the artifact in `dir`. Only manifest.json and the
/// tokenizer file are read (the weights are neither read nor hashed).
Expected<Tokenizer> openArtifactTokenizer(const std::string &dir);

/// The tokenizer of an artifact's tokenizer file `file` (named `name` in
/// errors), its digest checked against the manifest's `declared` one.
Expected<Tokenizer>
tokenizerFromArtifactFile(const MappedFile &file, const std::string &name,
                          const std::optional<std::string> &declared);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_ARTIFACTTOKENIZER_H
