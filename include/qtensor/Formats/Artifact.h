//===- Artifact.h - Opening a published artifact directory ------*- C++ -*-===//
//
// openArtifact is the production reader every consumer (and the writer's own
// reopen check, seed M8.9 0x04C) goes through. In order:
//
//  1. open the root directory; open manifest.json under ArtifactPath.h's
//     policy; refuse it above kMaxManifestBytes before reading it;
//  2. parse it strictly (Manifest.h): versions, fields, paths, references,
//     quantized tensor consistency;
//  3. open every listed file under the path policy, check its size and its
//     SHA-256 (of the mapping that is then used);
//  4. parse every shard with the hardened safetensors reader;
//  5. check every physical tensor the manifest declares exists in its shard
//     with the declared dtype and shape, and (unless allowed) that the shard
//     holds no tensor the manifest does not declare.
//
// Each error names the directory, file, tensor or JSON field and what was
// expected. Nothing is returned unless every check passed.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_ARTIFACT_H
#define QTENSOR_FORMATS_ARTIFACT_H

#include "qtensor/Formats/ArtifactPath.h"
#include "qtensor/Formats/Manifest.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Formats/VerifiedFiles.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace qtensor::artifact {

struct OpenOptions {
  OpenPolicy files;
  /// Which digests are checked (VerifiedFiles.h); L0 asks for all.
  DigestCheck digests = DigestCheck::Once;
  /// Accept shard tensors that no manifest entry declares (strict: no).
  bool allowUndeclaredTensors = false;
  safetensors::Limits limits;
};

/// A manifest tensor resolved to views into its shard's mapping.
struct ResolvedTensor {
  const TensorEntry *entry = nullptr;
  const safetensors::TensorView *data = nullptr;  ///< plain tensors
  const safetensors::TensorView *codes = nullptr; ///< quantized tensors
  /// First-level qparams: for a nested descriptor or a scale format
  /// (e8m0, ue4m3), F32 views of the decoded scales (`decoded`), not the
  /// stored codes.
  const safetensors::TensorView *scales = nullptr; ///< quantized tensors
  const safetensors::TensorView *zeros = nullptr;  ///< when declared
  /// A nested descriptor's stored levels (a scale format's codes: only
  /// scaleCodes) as they are in the shard.
  const safetensors::TensorView *scaleCodes = nullptr, *minCodes = nullptr;
  const safetensors::TensorView *superScales = nullptr, *superZeros = nullptr;
  /// The decoded first level `scales` and `zeros` view (nested and scale
  /// formats only). It
  /// lives as long as this result, so memory stays one tensor's when
  /// callers resolve tensors one at a time.
  std::shared_ptr<const DecodedQParams> decoded;
  /// A mixed_2416 tensor's streams by their manifest key (Manifest.h),
  /// as they are in the shard; read them with readMixed2416Streams.
  Mixed2416Views streams;

  /// Every stored tensor of the entry, as it is in the shard (for a nested
  /// descriptor the codes of its first level, not the decoded views).
  std::vector<const safetensors::TensorView *> storedViews() const;
};

/// A validated artifact. Movable; views stay valid as long as it lives.
class Artifact {
public:
  const Manifest &manifest() const { return man; }
  const std::string &directory() const { return dir; }
  /// The parsed shard listed at `path`, or nullptr.
  const safetensors::SafetensorsFile *shard(std::string_view path) const;
  /// The mapping of a non-shard file (graph, kernel, trace), or nullptr.
  const MappedFile *file(std::string_view path) const;
  /// Whether tensor() decodes a nested descriptor's first level.
  enum class QParams { Decoded, StoredOnly };
  /// The tensor named `name` with views of its physical tensors; with
  /// QParams::StoredOnly a nested tensor's scales and zeros are its stored
  /// codes (no decoding: for readers of bytes, not values).
  Expected<ResolvedTensor> tensor(std::string_view name,
                                  QParams qparams = QParams::Decoded) const;

private:
  friend Expected<Artifact> openArtifact(const std::string &,
                                         const OpenOptions &);
  Artifact() = default;
  std::string dir;
  Manifest man;
  std::map<std::string, safetensors::SafetensorsFile, std::less<>> shards;
  std::map<std::string, MappedFile, std::less<>> others;
  /// Tensor name -> index into man.tensors.
  std::map<std::string, size_t, std::less<>> tensorIndex;
};

/// Opens and validates the artifact in `dir` (see the steps above).
Expected<Artifact> openArtifact(const std::string &dir,
                                const OpenOptions &options = {});

/// Reads and parses `root`/manifest.json (steps 1-2). nullopt when the
/// directory has no manifest.json entry at all.
Expected<std::optional<Manifest>> readManifest(const ArtifactRoot &root,
                                               const OpenPolicy &policy = {});

} // namespace qtensor::artifact

#endif // QTENSOR_FORMATS_ARTIFACT_H
