//===- ArtifactWriter.h - Transactional artifact writing --------*- C++ -*-===//
//
// Writes an artifact directory so that a failure or a kill at any point
// leaves either no manifest.json or the previous complete one, never a
// manifest that points at partial files (seed M8.9 0x04B). The sequence:
//
//   lock      flock(LOCK_EX | LOCK_NB) on the directory: one writer at a time
//             (the lock dies with the process, so a killed writer never
//             blocks the next one); stale temporaries of killed writers are
//             removed.
//   previous  read the current manifest.json, if any (what must not break).
//   per file  create ".qtensor-tmp-<pid>-<random>-<name>" (O_EXCL), write,
//             fsync, hash (byte length and SHA-256 of what was written), then
//             reopen it through the production path policy and safetensors
//             reader: the hash of the reopened mapping must equal the hash
//             written, the shard's inventory (names, dtypes, shapes) must be
//             exactly the declared one, and every payload must equal its
//             source bytes (non-shard files: all bytes must).
//   rename    each temporary to its final name; fsync the directory.
//   manifest  write the manifest under a temporary name, fsync, read it back
//             through the production parser (it must equal what was meant),
//             re-check that every final name still holds the inode that was
//             verified; rename to manifest.json (the publish); fsync the
//             directory.
//   collect   remove the files the previous manifest referenced and the new
//             one does not (only after the publish).
//
// Final names (why the previous artifact survives every step before the
// publish): by default each file's final name carries the first 16 hex digits
// of its SHA-256 ("model-00001.safetensors" -> "model-00001.3f2a...c1.
// safetensors"). Renaming can then only replace a file the previous manifest
// references when the previous manifest expects exactly the same bytes
// (same SHA-256), which changes nothing for it. With contentAddressedNames =
// false the caller's names are used verbatim, and a name the previous
// manifest references with a different SHA-256 is refused before anything is
// written. Files are written flat in the root directory.
//
// On failure before the publish, every temporary and every final name this
// write created is removed. After the publish the new artifact is complete;
// a failure of the last directory fsync is still reported as an error (the
// publish may not be durable), and a failure to collect an old file is a
// warning (an unreferenced file remains). A kill leaves temporaries (removed
// by the next writer or removeStaleFiles) and possibly unreferenced renamed
// files (removed by removeStaleFiles), never a reachable partial file.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_ARTIFACTWRITER_H
#define QTENSOR_FORMATS_ARTIFACTWRITER_H

#include "qtensor/Formats/ArtifactPath.h"
#include "qtensor/Formats/Manifest.h"
#include "qtensor/Formats/Safetensors.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::artifact {

/// The steps of ArtifactWriter::write, in order; per-file steps repeat for
/// every file (shards first, then other files, in the order they were added).
enum class WriteStep : uint8_t {
  OpenDirectory, ///< create (one level) and open the target, take the lock
  ReadPrevious,  ///< read the current manifest.json
  CreateTemp,    ///< per file
  WriteTemp,     ///< per file
  SyncTemp,      ///< per file
  VerifyTemp,    ///< per file: hash, reopen, inventory and byte checks
  RenameFile,    ///< per file: temporary -> final name
  SyncDirectory, ///< make the renames durable before the manifest exists
  WriteManifest, ///< the manifest's temporary file
  SyncManifest,
  VerifyManifest,  ///< parse it back; re-check the final names' identity
  PublishManifest, ///< rename to manifest.json
  SyncPublished,   ///< fsync the directory after the publish
  CollectGarbage,  ///< per file the previous manifest referenced, no more
};
const char *toString(WriteStep step);

/// What the failure hook sees before each step.
struct WriteEvent {
  WriteStep step;
  std::string file; ///< the file's name as added ("" for directory steps)
  std::string path; ///< the path the step works on, relative to the root
};

struct WriteOptions {
  /// Alignment of each shard's byte buffer (SafetensorsWriter::Options).
  uint64_t bufferAlignment = safetensors::SafetensorsWriter::kPageSize;
  /// Insert the SHA-256 prefix into final names (see above).
  bool contentAddressedNames = true;
  /// Files longer than this get chunk digests of this size in the manifest
  /// (FileEntry::chunks), for loaders that hash on every core; 0: none.
  uint64_t digestChunkBytes = kDigestChunkBytes;
  /// Called before every step; an error is treated as that step's failure.
  /// For failure-injection tests.
  std::function<Status(const WriteEvent &)> hook;
  /// Called just before the rename that publishes the manifest (after
  /// every check): what must undo a publish the caller will not stand
  /// behind yet is armed here (ExitCleanup), so that no moment exists in
  /// which the new manifest is loadable and nothing would withdraw it.
  std::function<void()> beforePublish;
  /// Called right after that rename succeeded: from here the new manifest
  /// is the published one, even if a later step (the directory's fsync)
  /// fails.
  std::function<void()> afterPublish;
  safetensors::Limits limits;
};

struct WriteResult {
  Manifest manifest;                 ///< as published
  std::vector<std::string> removed;  ///< old files collected after publish
  std::vector<std::string> warnings; ///< collection failures
};

/// The bytes of one physical tensor. Either `data` is borrowed (it must stay
/// valid until write() returns), or `fill` produces them when the writer
/// reaches the tensor (an artifact larger than memory: the writer holds one
/// filled tensor at a time). A filled tensor declares its `sha256`: the
/// bytes filled and the bytes reopened must hash to it.
struct TensorData {
  std::string name;
  safetensors::DType dtype = safetensors::DType::U8;
  std::vector<int64_t> shape;
  const uint8_t *data = nullptr;
  uint64_t size = 0;
  safetensors::SafetensorsWriter::Fill fill = nullptr;
  std::string sha256 = {}; ///< with `fill`: 64 lowercase hex digits
};

class ArtifactWriter {
public:
  /// `base` provides every manifest field except `files` and `tensors`,
  /// which the writer fills (they must be empty). Kernels may name a file
  /// added with role Kernel by its added name.
  explicit ArtifactWriter(Manifest base) : base(std::move(base)) {}

  /// Adds a tensor stored as is in `shard` (a flat name ending in
  /// ".safetensors"; shards are created by their first tensor).
  Status addPlainTensor(const std::string &shard, TensorData tensor);
  /// Adds a quantized tensor: its logical descriptor and its physical tensors
  /// (all in `shard`); a nested descriptor's second level too, and what
  /// reads the tensor (Manifest.h).
  /// Consistency is checked by write() (validateManifest).
  Status
  addQuantizedTensor(const std::string &shard, std::string name,
                     QuantizedTensorDescriptor logical, TensorData codes,
                     TensorData scales,
                     std::optional<TensorData> zeros = std::nullopt,
                     std::optional<TensorData> superScales = std::nullopt,
                     std::optional<TensorData> superZeros = std::nullopt,
                     TensorUse use = TensorUse::Linear);
  /// Adds a mixed_2416 tensor: its descriptor and one physical tensor per
  /// stream, in Mixed2416Tensor::streams() order (all in `shard`).
  /// Consistency is checked by write() (validateManifest).
  Status addMixed2416Tensor(const std::string &shard, std::string name,
                            Mixed2416Descriptor logical,
                            std::vector<TensorData> streams);
  /// Adds a non-shard file (graph, kernel or trace) with the given bytes.
  Status addFile(std::string name, FileRole role, std::vector<uint8_t> bytes);
  /// The path a file added with addFile will be published under by
  /// write(dir, options), for records that refer to other files (the
  /// decoder program names the kernel library and the tokenizer).
  Expected<std::string> publishedName(const std::string &name,
                                      const WriteOptions &options = {}) const;

  /// Writes the artifact into `dir` (created if missing; its parent must
  /// exist) as described above.
  Expected<WriteResult> write(const std::string &dir,
                              const WriteOptions &options = {}) const;

private:
  struct Shard {
    std::string name;
    std::vector<TensorData> tensors;
  };
  struct Blob {
    std::string name;
    FileRole role;
    std::vector<uint8_t> bytes;
  };
  Shard *findShard(const std::string &name);
  Status checkNewStored(const std::string &shard, const TensorData &t) const;

  Manifest base;
  std::vector<TensorEntry> tensors; ///< files refer to the added names
  std::vector<Shard> shards;
  std::vector<Blob> blobs;
};

/// Removes what killed writers left in `dir`: temporaries (names starting
/// with kTempPrefix) and, unless `keepOrphans`, renamed files that the current
/// manifest does not reference and that carry a content-address (a name
/// "<stem>.<16 hex>[.<ext>]" whose file's SHA-256 starts with those digits).
/// Orphans are kept when manifest.json exists but cannot be read (nobody can
/// tell what it references). Takes the writer's lock (fails while a writer
/// is active). Returns the removed names.
Expected<std::vector<std::string>> removeStaleFiles(const std::string &dir,
                                                    bool keepOrphans = false);

} // namespace qtensor::artifact

#endif // QTENSOR_FORMATS_ARTIFACTWRITER_H
