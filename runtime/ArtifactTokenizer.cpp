//===- ArtifactTokenizer.cpp - The tokenizer an artifact carries ----------===//

#include "qtensor/Runtime/ArtifactTokenizer.h"

#include "qtensor/Formats/Artifact.h"
#include "qtensor/Formats/ArtifactPath.h"
#include "qtensor/Formats/GGUF.h"

using namespace qtensor;

Expected<Tokenizer> qtensor::runtime::tokenizerFromArtifactFile(
    const MappedFile &file, const std::string &name,
    const std::optional<std::string> &declared) {
  QTENSOR_ASSIGN_OR_RETURN(
      GGUFFile gguf, GGUFFile::fromBuffer(file.data(), file.size(), name));
  QTENSOR_ASSIGN_OR_RETURN(Tokenizer t, Tokenizer::fromGGUF(gguf, name));
  if (!declared || *declared != t.sha256())
    return makeError(name, ": the tokenizer's digest ", t.sha256(),
                     " is not the manifest's model.tokenizer_sha256 (",
                     declared.value_or("absent"), ")");
  return t;
}

Expected<Tokenizer>
qtensor::runtime::openArtifactTokenizer(const std::string &dir) {
  QTENSOR_ASSIGN_OR_RETURN(artifact::ArtifactRoot root,
                           artifact::ArtifactRoot::open(dir));
  QTENSOR_ASSIGN_OR_RETURN(std::optional<artifact::Manifest> manifest,
                           artifact::readManifest(root));
  if (!manifest)
    return makeError(dir, ": no manifest.json (not a published artifact)");
  for (const artifact::FileEntry &f : manifest->files) {
    if (f.role != artifact::FileRole::Tokenizer)
      continue;
    QTENSOR_ASSIGN_OR_RETURN(MappedFile file,
                             root.readVerified(f.path, f.bytes, f.sha256));
    return tokenizerFromArtifactFile(file, root.display(f.path),
                                     manifest->model.tokenizerSha256);
  }
  return makeError(dir, ": the artifact carries no tokenizer (its source had "
                        "none the compiler could read)");
}
