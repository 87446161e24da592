//===- Manifest.h - The artifact's root manifest.json -----------*- C++ -*-===//
//
// An artifact is one directory; `manifest.json` is its root of reachability
// (seed M8.9 0x04B): it lists every file with its byte length and SHA-256,
// every tensor with the physical tensors that store it, the kernels, the
// ops' bindings and the provenance. It is written last and published by rename (ArtifactWriter.h).
//
// Every interpretation layer carries its own version (0x0CA): the container
// profile, the artifact schema, the packing layout, the graph, the runtime and
// the kernel ABI evolve at different rates, so one `format_version` cannot
// stand in for them. A version this build does not know is rejected before
// anything else is read.
//
// Parsing is strict (0x05B): every required field must be present with the
// right JSON type, unknown fields are rejected at every level (except inside
// the free-form object `quantization.config`), duplicate JSON keys,
// duplicate file paths, tensor names, kernel ids and bound ops are rejected, file paths follow the rules of ArtifactPath.h, and the quantized
// tensors' physical tensors must agree with their logical descriptor. Every
// error names the JSON path (`manifest.tensors[3].scales.shape: ...`).
// docs/manifest.md describes the fields; docs/manifest.schema.json is the same
// contract as a JSON Schema.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_FORMATS_MANIFEST_H
#define QTENSOR_FORMATS_MANIFEST_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Formats/KernelEntry.h"
#include "qtensor/Formats/OpBinding.h"
#include "qtensor/Formats/SafetensorsDType.h"
#include "qtensor/Support/Expected.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace qtensor::artifact {

/// The file name of the manifest inside the artifact directory.
inline constexpr const char *kManifestFileName = "manifest.json";
/// Largest manifest accepted (and written): the reader never sizes a buffer
/// from an unchecked length (0x05A).
inline constexpr uint64_t kMaxManifestBytes = 64ull << 20;
/// Deepest JSON nesting accepted in a manifest (the schema itself needs 7;
/// the rest is headroom for the free-form objects).
inline constexpr unsigned kMaxManifestDepth = 32;

// The versions this build writes and reads. Each one changes only when the
// meaning of its own layer changes.
inline constexpr const char *kContainerProfile = "qtensor.safetensors.v1";
/// 2: the manifest holds the ops' bindings (OpBinding.h); the runtime no
/// longer reads the dispatch trace or the report.
inline constexpr uint32_t kArtifactSchemaVersion = 2;
inline constexpr uint32_t kPackingLayoutVersion = 1;
inline constexpr uint32_t kGraphVersion = 1;
inline constexpr uint32_t kRuntimeVersion = 1;
/// 2: kernel entries are typed records (KernelEntry.h), no free-form
/// capability object.
inline constexpr uint32_t kKernelAbiVersion = 2;
/// Largest tp, pp or ep accepted.
inline constexpr int64_t kMaxTopologyDegree = 65536;

struct Versions {
  std::string containerProfile = kContainerProfile;
  uint32_t artifactSchema = kArtifactSchemaVersion;
  uint32_t packingLayout = kPackingLayoutVersion;
  uint32_t graph = kGraphVersion;
  uint32_t runtime = kRuntimeVersion;
  uint32_t kernelAbi = kKernelAbiVersion;
  bool operator==(const Versions &o) const;
};

struct ModelIdentity {
  std::string architecture; ///< non-empty, e.g. "llama"
  std::string name;
  std::string revision;
  std::optional<std::string> tokenizerSha256; ///< 64 lowercase hex digits
  bool operator==(const ModelIdentity &o) const;
};

struct QuantizationSpec {
  std::string family; ///< non-empty, e.g. "affine_w4a16"
  nlohmann::json config = nlohmann::json::object(); ///< free-form summary
  std::optional<std::string> configSha256; ///< of the full config, if kept
  bool operator==(const QuantizationSpec &o) const;
};

struct Topology {
  int64_t tp = 1, pp = 1, ep = 1; ///< each in [1, kMaxTopologyDegree]
  bool operator==(const Topology &o) const;
};

enum class FileRole : uint8_t {
  Shard,     ///< a safetensors file holding tensors
  Graph,     ///< the graph (.mlir)
  Kernel,    ///< PTX, cubin or host code
  Trace,     ///< the dispatch trace
  Report,    ///< the compile report (quantization error, ledger, parity)
  Program,   ///< the decoder program (DecoderProgram.h)
  Tokenizer, ///< the tokenizer, as a GGUF file with only tokenizer metadata
};
const char *toString(FileRole role);
std::optional<FileRole> parseFileRole(std::string_view s);

/// SHA-256 of each `bytes`-long piece of a file, in order (the last piece
/// may be shorter): a loader hashes the pieces on every core at once, where
/// the file's one SHA-256 is a serial chain.
struct ChunkDigests {
  uint64_t bytes = 0;
  std::vector<std::string> sha256; ///< ceil(file bytes / bytes) digests
  bool operator==(const ChunkDigests &o) const;
};
/// The piece size the writer uses, and the bounds a reader accepts.
inline constexpr uint64_t kDigestChunkBytes = uint64_t(32) << 20;
inline constexpr uint64_t kMinDigestChunkBytes = uint64_t(1) << 20;
inline constexpr uint64_t kMaxDigestChunkBytes = uint64_t(1) << 32;

struct FileEntry {
  std::string path;   ///< relative to the artifact root (ArtifactPath.h rules)
  uint64_t bytes = 0; ///< exact file size
  std::string sha256; ///< 64 lowercase hex digits
  FileRole role = FileRole::Shard;
  /// Optional (manifest key "chunks"); the writer lists them for files of
  /// more than one chunk.
  std::optional<ChunkDigests> chunks = std::nullopt;
  bool operator==(const FileEntry &o) const;
};

/// One physical tensor inside a shard.
struct StoredTensor {
  std::string tensor; ///< its name in the shard's header
  safetensors::DType dtype = safetensors::DType::U8;
  std::vector<int64_t> shape;
  bool operator==(const StoredTensor &o) const;
};

/// A tensor stored as is: the shard holds a tensor of the same name.
struct PlainTensor {
  safetensors::DType dtype = safetensors::DType::F16;
  std::vector<int64_t> shape;
  bool operator==(const PlainTensor &o) const;
};

/// A quantized tensor: the logical descriptor (docs/descriptor-json.md) and
/// the physical tensors holding its codes and qparams.
///
/// Consistency rules (checked by validateManifest):
///  - codes: U8. For the "logical" layout (row-major, rows byte-aligned) the
///    shape is the logical shape with the last dimension replaced by
///    ceil(last * bits / 8) ([1] for a rank-0 tensor). Other layouts must be
///    rank >= 1 and hold at least ceil(prod(shape + padding) * bits / 8) bytes.
///  - scales: the descriptor's scale dtype, shape == qparamShape(descriptor).
///  - zeros: absent iff the zero-point kind is `none`; shape == qparamShape;
///    an integer dtype for `integer` zero-points (stored unpacked, one per
///    qparam), the scale dtype for `float` and `min`.
///  - nested descriptors store the two levels as they are (NestedQParams):
///    scales (and zeros, the min codes) hold the first-level codes, I8 for
///    signed and U8 for unsigned codes, in the qparam shape; super_scales
///    (and super_zeros, the min scales, iff there is a min) hold the second
///    level in its float dtype, shape superQParamShape. Readers decode the
///    first level once (decodeNestedQParams).
///  - use: what reads the tensor. A linear weight is an op of the run plan
///    and needs a binding; the embedding table is read by the decoder
///    program's embedding kernel, row by row, and is bound to no op.
enum class TensorUse : uint8_t {
  Linear,    ///< a linear op's weight (the default; "use" absent)
  Embedding, ///< the decoder program's token-embedding table
};
const char *toString(TensorUse use);

struct QuantizedTensor {
  QuantizedTensorDescriptor logical;
  TensorUse use = TensorUse::Linear;
  StoredTensor codes;
  StoredTensor scales;
  std::optional<StoredTensor> zeros;
  std::optional<StoredTensor> superScales; ///< nested only
  std::optional<StoredTensor> superZeros;  ///< nested with a min only
  bool operator==(const QuantizedTensor &o) const;
};

/// A mixed 2/4/16 tensor (Descriptor/Mixed2416.h, kind "mixed_2416"): its
/// descriptor and one physical tensor per stream, 1-D unless noted, with
/// G = K / G1 groups a row and N G in all:
///  - precision_map U8 [ceil(N G / 8)]; w2_codes U8 [W2 groups * G1 / 4];
///    w4_codes U8 [W4 groups * G1 / 2] (the two counts add up to N G);
///  - first_scale_codes, first_zero_points U8 [N, G];
///  - second_scales, second_zero_points in the second-level dtype
///    [N / G2, G];
///  - sparse_values in the sparse dtype [nnz], sparse_columns I32 [nnz],
///    sparse_row_pointers I32 [N + 1].
/// The bytes are checked against the map and the descriptor when they are
/// read (readMixed2416Streams, QuantizedStorage.h).
struct Mixed2416Tensor {
  Mixed2416Descriptor logical;
  StoredTensor precisionMap, w2Codes, w4Codes;
  StoredTensor firstScaleCodes, firstZeroPoints;
  StoredTensor secondScales, secondZeroPoints;
  StoredTensor sparseValues, sparseColumns, sparseRowPointers;
  /// Each stream with its manifest key, in the order above.
  std::vector<std::pair<const char *, const StoredTensor *>> streams() const;
  std::vector<std::pair<const char *, StoredTensor *>> streams();
  bool operator==(const Mixed2416Tensor &o) const;
};

struct TensorEntry {
  std::string name; ///< logical name, non-empty, unique in the manifest
  std::string file; ///< a listed file with role "shard"
  std::variant<PlainTensor, QuantizedTensor, Mixed2416Tensor> data;

  /// An affine-family quantized tensor (what kernels and bindings read).
  bool isQuantized() const { return data.index() == 1; }
  const PlainTensor *plain() const { return std::get_if<PlainTensor>(&data); }
  const QuantizedTensor *quantized() const {
    return std::get_if<QuantizedTensor>(&data);
  }
  const Mixed2416Tensor *mixed2416() const {
    return std::get_if<Mixed2416Tensor>(&data);
  }
  /// The tensor's logical shape, whatever its kind.
  const std::vector<int64_t> &logicalShape() const;
  /// "plain", "quantized" or "mixed_2416".
  const char *kind() const;
  /// The physical tensors this entry owns in `file`, each with the role it
  /// plays ("data", "codes", "scales", "zeros", "super_scales",
  /// "super_zeros", or a mixed_2416 stream's key).
  std::vector<std::pair<const char *, StoredTensor>> storedTensors() const;
  bool operator==(const TensorEntry &o) const;
};

struct Provenance {
  std::string sourceCheckpointSha256; ///< 64 lowercase hex digits
  std::string converterName;          ///< non-empty
  std::string converterRevision;
  std::string createdBy;
  std::optional<std::string> calibrationManifestSha256;
  bool operator==(const Provenance &o) const;
};

struct Manifest {
  Versions versions;
  ModelIdentity model;
  QuantizationSpec quantization;
  Topology topology;
  std::vector<FileEntry> files;
  std::vector<TensorEntry> tensors;
  std::vector<KernelEntry> kernels;
  std::vector<OpBinding> bindings;
  Provenance provenance;

  const FileEntry *findFile(std::string_view path) const;
  const TensorEntry *findTensor(std::string_view name) const;
  bool operator==(const Manifest &o) const;
  bool operator!=(const Manifest &o) const { return !(*this == o); }
};

/// The plain tensor that holds a whole weight's bias, by the exporter's
/// naming: "<p>.weight" -> "<p>.bias" ("<name>.bias" otherwise).
std::string biasTensorOf(const std::string &weight);

/// Whether `s` is 64 lowercase hexadecimal digits.
bool isSha256Hex(std::string_view s);

/// Every rule that does not depend on the JSON spelling: supported versions,
/// path rules, uniqueness, references, hex digests and the quantized tensors'
/// consistency; and each kernel entry and op binding re-read with its one
/// reader (kernelEntryFromJson, opBindingFromJson), so that a record built
/// in memory obeys the rules a reader applies. The writer applies it before
/// writing anything. manifestFromJson applies the same rules, except the
/// re-read: its records come from those readers already.
Status validateManifest(const Manifest &m);

/// The JSON form (docs/manifest.md). Keys come out sorted (nlohmann::json
/// objects are ordered maps), so equal manifests serialize to equal bytes.
nlohmann::json toJson(const Manifest &m);
/// Strict parsing of the JSON form, then validateManifest.
Expected<Manifest> manifestFromJson(const nlohmann::json &j);

/// The bytes of manifest.json: toJson pretty-printed with a final newline.
/// Fails on a string that is not valid UTF-8 or a result above
/// kMaxManifestBytes.
Expected<std::string> serializeManifest(const Manifest &m);
/// Parses manifest.json text: at most kMaxManifestBytes, valid UTF-8 JSON,
/// no duplicate keys, nesting at most kMaxManifestDepth, then
/// manifestFromJson. `name` prefixes syntax errors (the file's path).
Expected<Manifest> parseManifest(std::string_view text,
                                 const std::string &name = kManifestFileName);

} // namespace qtensor::artifact

#endif // QTENSOR_FORMATS_MANIFEST_H
