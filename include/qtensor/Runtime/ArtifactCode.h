//===- ArtifactCode.h - Where an artifact's kernel code comes from *- C++ -*-===//
//
// An artifact's kernel files are code from the same untrusted source as the
// rest of it. Its host library (kernels-host.so) would run its constructors
// in this process the moment dlopen loads it, before any check could
// object; a cubin is machine code the runtime cannot check; and a hash in
// the manifest proves nothing about either, since the manifest comes from
// that source too. So the runtime never loads them unless the user says
// they trust the artifact (docs/security.md). Instead an
// ArtifactCodePolicy's builders build the kernels the artifact *records*
// (manifest.kernels' entries, the decoder program's model kernels) with
// this installation's own generators and toolchain: one shared object for
// the host, PTX for each GPU kernel (which the driver JIT-compiles). The
// runtime is MLIR-free, so the builders come from the compiler library
// (qtensor/Compiler/TrustedCode.h), installed by the tool. Without a builder
// and without trust, loading kernel code fails and says why.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_ARTIFACTCODE_H
#define QTENSOR_RUNTIME_ARTIFACTCODE_H

#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Formats/Manifest.h"
#include "qtensor/Runtime/HostBackend.h"
#include "qtensor/Support/Expected.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::runtime {

/// A shared object built by this installation for an artifact's records.
struct TrustedHostCode {
  std::vector<uint8_t> bytes;
  /// How it was obtained, for notes: "rebuilt ... (14 kernels, 0.8 s),
  /// cached as ..." or "... from its cache".
  std::string how;
};

/// Builds the host kernels recorded by `manifest` (its host_so entries)
/// and, when given, by `program` (its model kernels).
using HostCodeBuilder = std::function<Expected<TrustedHostCode>(
    const artifact::Manifest &manifest,
    const artifact::DecoderProgram *program)>;

/// Builds the PTX of GPU kernel record `manifest.kernels[index]` (a ptx or
/// cubin entry), checking its entry symbols and launch against what its
/// capability builds.
using GpuCodeBuilder = std::function<Expected<std::string>(
    const artifact::Manifest &manifest, size_t index)>;

struct ArtifactCodePolicy {
  /// The trusted builders; unset: this process has none.
  HostCodeBuilder rebuild;
  GpuCodeBuilder rebuildGpu;
  /// Load the artifact's own kernel files (the user's decision, e.g.
  /// `qtc run --trust-artifact-code`), cubins included, not a rebuild.
  bool trustArtifactCode = false;
};

/// The policy LoadOptions and the parity ladder start from: no builder and
/// no trust until the tool (qtc) installs builders at startup.
ArtifactCodePolicy &defaultArtifactCodePolicy();

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
Expected<HostCode> loadHostCode(const ArtifactCodePolicy &policy,
                                const artifact::Manifest &manifest,
                                const artifact::DecoderProgram *program,
                                const std::string &file, const uint8_t *bytes,
                                size_t size);

/// The host libraries of one artifact's kernel files: under a policy
/// without trust every file maps to one trusted rebuild (built on the
/// first request), with trust each file is its own library.
class HostCodeSet {
public:
  struct Lookup {
    std::shared_ptr<HostKernelLibrary> library;
    /// Set when this request loaded code: what it is (HostCode::how) and
    /// its size, for the caller's notes and ledger.
    std::optional<std::string> how;
    uint64_t bytes = 0;
  };
  /// The library artifact file `file` (verified bytes `bytes`, `name` for
  /// messages) runs from, loading it through loadHostCode when needed.
  Expected<Lookup> forFile(const ArtifactCodePolicy &policy,
                           const artifact::Manifest &manifest,
                           const artifact::DecoderProgram *program,
                           const std::string &file, const std::string &name,
                           const uint8_t *bytes, size_t size);
  void clear() {
    byFile.clear();
    rebuilt.reset();
  }

private:
  std::map<std::string, std::shared_ptr<HostKernelLibrary>> byFile;
  std::shared_ptr<HostKernelLibrary> rebuilt;
};

/// The PTX GPU kernel record `index` runs from when the artifact is not
/// trusted: the trusted rebuild; `file` names the record's file in errors.
Expected<std::string> gpuCode(const ArtifactCodePolicy &policy,
                              const artifact::Manifest &manifest, size_t index,
                              const std::string &file);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_ARTIFACTCODE_H
