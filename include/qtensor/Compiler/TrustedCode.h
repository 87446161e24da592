//===- TrustedCode.h - Kernels rebuilt from an artifact's records *- C++ -*-===//
//
// The builders behind Runtime/ArtifactCode.h: the runtime never loads an
// artifact's own kernel code unless told to trust it, so these build what
// the artifact *records* with this installation's generators and
// toolchain. The records are parsed and checked by the readers the runtime
// uses (kernelEntryFromJson, checkProgramKernels): each kernel record of
// manifest.kernels becomes the QuantKernelSpec it describes,
// and its entry symbols (and, for a GPU kernel, its launch geometry) must
// be the ones that spec builds; a decoder program adds the model kernels
// its config and tensors imply. Built code is cached by the SHA-256 of the
// generated MLIR, the target and the source revision, so a second load
// costs a file read.
//
//   compiler::installTrustedCodeBuilders(runtime::defaultArtifactCodePolicy());
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_COMPILER_TRUSTEDCODE_H
#define QTENSOR_COMPILER_TRUSTEDCODE_H

#include "qtensor/Runtime/ArtifactCode.h"

#include <string>

namespace qtensor::compiler {

struct TrustedCodeOptions {
  /// Where built code is kept. Empty: $QTENSOR_KERNEL_CACHE, else
  /// $XDG_CACHE_HOME/qtensor/kernels, else $HOME/.cache/qtensor/kernels;
  /// "off" keeps none (every load builds).
  std::string cacheDir;
};

/// The shared object holding every host kernel `manifest` records (and,
/// with `program`, its model kernels), built or read from the cache.
/// Errors name the record that does not describe a kernel this
/// installation builds.
Expected<runtime::TrustedHostCode>
rebuildHostKernels(const artifact::Manifest &manifest,
                   const artifact::DecoderProgram *program,
                   const TrustedCodeOptions &options = {});

/// The PTX of GPU kernel record `manifest.kernels[index]` (a ptx or cubin
/// entry for sm_80 / sm_90), built or read from the cache.
Expected<std::string> rebuildGpuKernel(const artifact::Manifest &manifest,
                                       size_t index,
                                       const TrustedCodeOptions &options = {});

/// Sets `policy`'s host and GPU builders to the two above.
void installTrustedCodeBuilders(runtime::ArtifactCodePolicy &policy,
                                TrustedCodeOptions options = {});

} // namespace qtensor::compiler

#endif // QTENSOR_COMPILER_TRUSTEDCODE_H
