//===- InputKind.h - What kind of input a path names ------------*- C++ -*-===//
//
// The tools accept a safetensors file, a sharded index (.json), a GGUF file
// (by its magic) or an artifact directory, where DIR/manifest.json stands
// for DIR. Anything else (a FIFO, a device, a missing path) is refused
// before it is opened: reading a FIFO would block.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_INPUTKIND_H
#define QTENSOR_FORMATS_INPUTKIND_H

#include "qtensor/Support/Expected.h"

#include <string>

namespace qtensor {

enum class InputKind { ArtifactDirectory, Index, GGUF, Safetensors };

/// What `path` is; an error names the path and why it is not an input.
Expected<InputKind> detectInputKind(const std::string &path);

/// The artifact directory `path` names: itself, or the folder of a
/// "manifest.json" path.
std::string artifactDirectoryOf(const std::string &path);

} // namespace qtensor

#endif // QTENSOR_FORMATS_INPUTKIND_H
