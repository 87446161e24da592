//===- HostCode.cpp - Where an artifact's host kernel code comes from -----===//

#include "qtensor/Runtime/HostCode.h"

using namespace qtensor;
using namespace qtensor::runtime;

HostCodePolicy &qtensor::runtime::defaultHostCodePolicy() {
  static HostCodePolicy policy;
  return policy;
}

Expected<HostCode> qtensor::runtime::loadHostCode(
    const HostCodePolicy &policy, const artifact::Manifest &manifest,
    const artifact::DecoderProgram *program, const std::string &file,
    const uint8_t *bytes, size_t size) {
  HostCode code;
  if (policy.trustArtifactCode) {
    QTENSOR_ASSIGN_OR_RETURN(std::unique_ptr<HostKernelLibrary> lib,
                             HostKernelLibrary::load(bytes, size, file));
    code.library = std::move(lib);
    code.bytes = size;
    code.how = file + ": the artifact's own host code, loaded because the "
                      "artifact is trusted (--trust-artifact-code)";
    return code;
  }
  if (!policy.rebuild)
    return makeError(
        file,
        ": refusing to load host code from the artifact (its constructors "
        "would run in this process before any check); this runtime has no "
        "trusted kernel builder to rebuild it from the artifact's records. "
        "Load it through qtc, which rebuilds it, or trust the artifact "
        "(--trust-artifact-code)");
  auto built = policy.rebuild(manifest, program);
  if (!built)
    return makeError(file,
                     ": rebuilding the artifact's host kernels from its "
                     "records (its own code is not loaded): ",
                     built.message());
  QTENSOR_ASSIGN_OR_RETURN(
      std::unique_ptr<HostKernelLibrary> lib,
      HostKernelLibrary::load(built->bytes.data(), built->bytes.size(),
                              file + " (trusted rebuild)"));
  code.library = std::move(lib);
  code.bytes = built->bytes.size();
  code.how = built->how;
  return code;
}
