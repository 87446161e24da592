//===- TrustedHostCode.h - Host kernels rebuilt from records ----*- C++ -*-===//
//
// The builder behind Runtime/HostCode.h: the runtime never loads an
// artifact's own host code unless told to trust it, so this builds what
// the artifact *records* with this installation's generators and
// toolchain. The records are parsed and checked by the runtime's own
// readers (parseKernelInstance, checkProgramKernels): each host_so entry of
// manifest.kernels becomes the QuantKernelSpec its capability describes,
// and its entry symbols must be the ones that spec builds; a decoder
// program adds the model kernels its config and tensors imply. The built
// object is cached by the SHA-256 of the generated MLIR, the CPU level and
// the source revision, so a second load costs a file read.
//
//   runtime::defaultHostCodePolicy().rebuild =
//       compiler::trustedHostCodeBuilder();
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_COMPILER_TRUSTEDHOSTCODE_H
#define QTENSOR_COMPILER_TRUSTEDHOSTCODE_H

#include "qtensor/Runtime/HostCode.h"

#include <string>

namespace qtensor::compiler {

struct TrustedHostCodeOptions {
  /// Where built objects are kept. Empty: $QTENSOR_KERNEL_CACHE, else
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
                   const TrustedHostCodeOptions &options = {});

/// rebuildHostKernels as a runtime::HostCodeBuilder.
runtime::HostCodeBuilder
trustedHostCodeBuilder(TrustedHostCodeOptions options = {});

} // namespace qtensor::compiler

#endif // QTENSOR_COMPILER_TRUSTEDHOSTCODE_H
