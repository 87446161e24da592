//===- ArtifactCode.cpp - Where an artifact's kernel code comes from ------===//

#include "qtensor/Runtime/ArtifactCode.h"

using namespace qtensor;
using namespace qtensor::runtime;

ArtifactCodePolicy &qtensor::runtime::defaultArtifactCodePolicy() {
  static ArtifactCodePolicy policy;
  return policy;
}

namespace {
Error noBuilder(const std::string &file, const char *what, const char *why) {
  return makeError(file, ": refusing to load ", what, " from the artifact (",
                   why,
                   "); this runtime has no trusted kernel builder to rebuild "
                   "it from the artifact's records. Load it through qtc, "
                   "which rebuilds it, or trust the artifact "
                   "(--trust-artifact-code)");
}
} // namespace

Expected<HostCode> qtensor::runtime::loadHostCode(
    const ArtifactCodePolicy &policy, const artifact::Manifest &manifest,
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
    return noBuilder(file, "host code",
                     "its constructors would run in this process before any "
                     "check");
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

Expected<HostCodeSet::Lookup> HostCodeSet::forFile(
    const ArtifactCodePolicy &policy, const artifact::Manifest &manifest,
    const artifact::DecoderProgram *program, const std::string &file,
    const std::string &name, const uint8_t *bytes, size_t size) {
  std::shared_ptr<HostKernelLibrary> &lib = byFile[file];
  if (!lib && rebuilt && !policy.trustArtifactCode)
    lib = rebuilt;
  if (lib)
    return Lookup{lib, std::nullopt, 0};
  QTENSOR_ASSIGN_OR_RETURN(
      HostCode code,
      loadHostCode(policy, manifest, program, name, bytes, size));
  lib = code.library;
  if (!policy.trustArtifactCode)
    rebuilt = lib;
  return Lookup{lib, code.how, code.bytes};
}

Expected<std::string>
qtensor::runtime::gpuCode(const ArtifactCodePolicy &policy,
                          const artifact::Manifest &manifest, size_t index,
                          const std::string &file) {
  if (!policy.rebuildGpu)
    return noBuilder(file, "GPU code",
                     "machine code or PTX the runtime did not generate");
  auto built = policy.rebuildGpu(manifest, index);
  if (!built)
    return makeError(file,
                     ": rebuilding the kernel's PTX from its record "
                     "(the artifact's own code is not loaded): ",
                     built.message());
  return built.take();
}
