//===- SafetensorsIndex.h - Sharded safetensors checkpoints -----*- C++ -*-===//
//
// A Hugging Face sharded checkpoint is a `model.safetensors.index.json` with
// {"metadata": {"total_size": T, ...}, "weight_map": {tensor: shard file}}
// next to its shards (seed M8.9 0x06A). SafetensorsIndex::open validates the
// index and every shard before exposing anything (0x05B):
//
//  - the index is valid UTF-8 JSON (at most IndexOptions::maxIndexBytes), one
//    object without duplicate keys; "metadata" is an object whose
//    "total_size" is a non-negative integer; "weight_map" is an object of
//    string -> string. Other top-level and metadata keys are ignored.
//  - a shard name is a relative path of non-empty components without "." or
//    "..", backslashes or NUL; it is resolved against the index's directory.
//    The opened file's real path (after symlinks) must lie inside
//    IndexOptions::root (default: the index's directory): an escaping symlink
//    is rejected, a symlink that stays inside is followed. For the Hugging
//    Face cache layout (snapshots/<rev>/x -> ../../blobs/<sha>) pass the
//    repository folder (models--org--name) as root.
//  - every distinct shard is opened and fully validated by SafetensorsFile;
//  - every weight_map tensor is present in the shard it names; a tensor found
//    in a shard but absent from weight_map, or mapped to another shard, is an
//    error (so each tensor lives in exactly one shard, and the shards hold
//    nothing the index does not list);
//  - total_size == the sum of all tensors' byte sizes (payload bytes only,
//    excluding the 8-byte prefixes and headers; this is what huggingface_hub
//    writes: the corpus 6-shard set says 4305 = the sum of its 36 tensors'
//    nbytes, while the shard files total 7017 bytes). Real checkpoints whose
//    total_size was computed before a dtype change exist; set
//    IndexOptions::checkTotalSize = false to accept them.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_SAFETENSORSINDEX_H
#define QTENSOR_FORMATS_SAFETENSORSINDEX_H

#include "qtensor/Formats/Safetensors.h"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qtensor::safetensors {

struct IndexOptions {
  Limits shardLimits;
  uint64_t maxIndexBytes = 100'000'000;
  uint64_t maxShards = 1u << 14;
  /// Directory every shard must resolve into; empty = the index's directory.
  std::string root;
  bool checkTotalSize = true;
};

class SafetensorsIndex {
public:
  static Expected<SafetensorsIndex> open(const std::string &indexPath,
                                         const IndexOptions &options = {});

  SafetensorsIndex(SafetensorsIndex &&) = default;
  SafetensorsIndex &operator=(SafetensorsIndex &&) = default;

  const std::string &path() const { return indexPath; }
  /// metadata.total_size as declared (verified unless checkTotalSize=false).
  uint64_t totalSize() const { return declaredTotal; }
  /// Sum of every tensor's byte size over all shards.
  uint64_t tensorBytes() const { return actualTotal; }

  /// weight_map: tensor name -> shard file name.
  const std::map<std::string, std::string> &weightMap() const { return map; }
  /// Distinct shard names, sorted.
  const std::vector<std::string> &shardNames() const { return names; }
  /// The opened shards, parallel to shardNames().
  const std::vector<SafetensorsFile> &shards() const { return files; }

  /// The tensor `name` in its shard, or nullptr.
  const TensorView *find(std::string_view name) const;
  /// The shard holding `name`, or nullptr.
  const SafetensorsFile *shardOf(std::string_view name) const;

private:
  SafetensorsIndex() = default;
  std::string indexPath;
  uint64_t declaredTotal = 0, actualTotal = 0;
  std::map<std::string, std::string> map;
  std::vector<std::string> names;
  std::vector<SafetensorsFile> files;
  /// tensor name -> (shard index, tensor index in that shard)
  std::map<std::string, std::pair<size_t, size_t>, std::less<>> where;
};

} // namespace qtensor::safetensors

#endif // QTENSOR_FORMATS_SAFETENSORSINDEX_H
