//===- HostCode.h - Where an artifact's host code comes from ---*- C++ -*-===//
//
// An artifact's host kernel library (kernels-host.so) is code from the same
// untrusted source as the rest of the artifact: dlopen runs its
// constructors before any check could object, and a hash in the manifest
// proves nothing, since the manifest comes from that source too. So the
// runtime never loads it unless the user says they trust the artifact
// (docs/security.md). Instead a HostCodePolicy's `rebuild` builds the
// kernels the artifact *records* (manifest.kernels' host entries, the
// decoder program's model kernels) with this installation's own generators
// and toolchain; the runtime is MLIR-free, so the builder comes from the
// compiler library (qtensor/Compiler/TrustedHostCode.h), set by the tool.
// Without a builder and without trust, loading host kernels fails and
// says why.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_HOSTCODE_H
#define QTENSOR_RUNTIME_HOSTCODE_H

#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Formats/Manifest.h"
#include "qtensor/Runtime/HostBackend.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace qtensor::runtime {

/// A shared object built by this installation for an artifact's records.
struct TrustedHostCode {
  std::vector<uint8_t> bytes;
  /// How it was obtained, for notes: "rebuilt from the artifact's kernel
  /// records (14 kernels, 0.8 s), cached as ..." or "... from the cache".
  std::string how;
};

/// Builds the host kernels recorded by `manifest` (its host_so entries)
/// and, when given, by `program` (its model kernels).
using HostCodeBuilder = std::function<Expected<TrustedHostCode>(
    const artifact::Manifest &manifest,
    const artifact::DecoderProgram *program)>;

struct HostCodePolicy {
  /// The trusted builder; unset: this process has none.
  HostCodeBuilder rebuild;
  /// Load the artifact's own host kernel files (the user's decision, e.g.
  /// `qtc run --trust-artifact-code`), not a rebuild.
  bool trustArtifactCode = false;
};

/// The policy LoadOptions and the parity ladder start from: no builder and
/// no trust until the tool (qtc) installs one at startup.
HostCodePolicy &defaultHostCodePolicy();

/// The library an artifact's host kernels run from, and what it is.
struct HostCode {
  std::shared_ptr<HostKernelLibrary> library;
  std::string how;
  uint64_t bytes = 0; ///< size of the object loaded
};

/// Loads the host code for `manifest` (and `program`) under `policy`:
/// with trustArtifactCode, the artifact file `file` whose verified bytes
/// are `bytes`; otherwise the trusted rebuild. Errors name the file and
/// what would let it load.
Expected<HostCode> loadHostCode(const HostCodePolicy &policy,
                                const artifact::Manifest &manifest,
                                const artifact::DecoderProgram *program,
                                const std::string &file, const uint8_t *bytes,
                                size_t size);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_HOSTCODE_H
