//===- Manifest.cpp - The artifact's root manifest.json -------------------===//
//
// Strict both ways: every field toJson writes is one manifestFromJson
// requires (or knows as optional), and manifestFromJson rejects anything
// else, naming the JSON path. docs/manifest.schema.json says the same.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/Manifest.h"

#include "qtensor/Support/JsonObjectReader.h"

#include "qtensor/Descriptor/DescriptorJson.h"
#include "qtensor/Formats/ArtifactPath.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Support/CheckedMath.h"

#include <cstring>
#include <map>
#include <set>
#include <utility>

using namespace qtensor;
using namespace qtensor::artifact;
using json = nlohmann::json;
using safetensors::DType;

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

/// Safetensors can hold at most this rank (safetensors::Limits::maxRank).
static constexpr size_t kMaxStoredRank = 32;

bool artifact::isSha256Hex(std::string_view s) {
  if (s.size() != 64)
    return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

const char *artifact::toString(FileRole role) {
  switch (role) {
  case FileRole::Shard:
    return "shard";
  case FileRole::Graph:
    return "graph";
  case FileRole::Kernel:
    return "kernel";
  case FileRole::Trace:
    return "trace";
  case FileRole::Report:
    return "report";
  case FileRole::Program:
    return "program";
  case FileRole::Tokenizer:
    return "tokenizer";
  }
  return "?";
}

std::optional<FileRole> artifact::parseFileRole(std::string_view s) {
  for (FileRole r :
       {FileRole::Shard, FileRole::Graph, FileRole::Kernel, FileRole::Trace,
        FileRole::Report, FileRole::Program, FileRole::Tokenizer})
    if (s == toString(r))
      return r;
  return std::nullopt;
}

static std::string inQuotes(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

static std::string indexed(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

static bool isIntegerDType(DType t) {
  switch (t) {
  case DType::U8:
  case DType::I8:
  case DType::U16:
  case DType::I16:
  case DType::U32:
  case DType::I32:
  case DType::U64:
  case DType::I64:
    return true;
  default:
    return false;
  }
}

//===----------------------------------------------------------------------===//
// Equality
//===----------------------------------------------------------------------===//

bool Versions::operator==(const Versions &o) const {
  return containerProfile == o.containerProfile &&
         artifactSchema == o.artifactSchema &&
         packingLayout == o.packingLayout && graph == o.graph &&
         runtime == o.runtime && kernelAbi == o.kernelAbi;
}
bool ModelIdentity::operator==(const ModelIdentity &o) const {
  return architecture == o.architecture && name == o.name &&
         revision == o.revision && tokenizerSha256 == o.tokenizerSha256;
}
bool QuantizationSpec::operator==(const QuantizationSpec &o) const {
  return family == o.family && config == o.config &&
         configSha256 == o.configSha256;
}
bool Topology::operator==(const Topology &o) const {
  return tp == o.tp && pp == o.pp && ep == o.ep;
}
bool ChunkDigests::operator==(const ChunkDigests &o) const {
  return bytes == o.bytes && sha256 == o.sha256;
}
bool FileEntry::operator==(const FileEntry &o) const {
  return path == o.path && bytes == o.bytes && sha256 == o.sha256 &&
         role == o.role && chunks == o.chunks;
}
bool StoredTensor::operator==(const StoredTensor &o) const {
  return tensor == o.tensor && dtype == o.dtype && shape == o.shape;
}
bool PlainTensor::operator==(const PlainTensor &o) const {
  return dtype == o.dtype && shape == o.shape;
}
const char *artifact::toString(TensorUse use) {
  return use == TensorUse::Embedding ? "embedding" : "linear";
}

bool QuantizedTensor::operator==(const QuantizedTensor &o) const {
  return logical == o.logical && use == o.use && codes == o.codes &&
         scales == o.scales && zeros == o.zeros &&
         superScales == o.superScales && superZeros == o.superZeros;
}
/// The one list of a mixed_2416 tensor's streams and their keys.
template <typename Tensor, typename Stored>
static std::vector<std::pair<const char *, Stored *>> mixedStreams(Tensor &t) {
  return {{"precision_map", &t.precisionMap},
          {"w2_codes", &t.w2Codes},
          {"w4_codes", &t.w4Codes},
          {"first_scale_codes", &t.firstScaleCodes},
          {"first_zero_points", &t.firstZeroPoints},
          {"second_scales", &t.secondScales},
          {"second_zero_points", &t.secondZeroPoints},
          {"sparse_values", &t.sparseValues},
          {"sparse_columns", &t.sparseColumns},
          {"sparse_row_pointers", &t.sparseRowPointers}};
}
std::vector<std::pair<const char *, const StoredTensor *>>
Mixed2416Tensor::streams() const {
  return mixedStreams<const Mixed2416Tensor, const StoredTensor>(*this);
}
std::vector<std::pair<const char *, StoredTensor *>>
Mixed2416Tensor::streams() {
  return mixedStreams<Mixed2416Tensor, StoredTensor>(*this);
}
bool Mixed2416Tensor::operator==(const Mixed2416Tensor &o) const {
  if (logical != o.logical)
    return false;
  auto mine = streams(), theirs = o.streams();
  for (size_t i = 0; i < mine.size(); ++i)
    if (!(*mine[i].second == *theirs[i].second))
      return false;
  return true;
}
const std::vector<int64_t> &TensorEntry::logicalShape() const {
  if (const PlainTensor *p = plain())
    return p->shape;
  if (const QuantizedTensor *q = quantized())
    return q->logical.shape;
  return mixed2416()->logical.shape;
}
const char *TensorEntry::kind() const {
  return plain() ? "plain" : quantized() ? "quantized" : "mixed_2416";
}
bool TensorEntry::operator==(const TensorEntry &o) const {
  return name == o.name && file == o.file && data == o.data;
}
bool Provenance::operator==(const Provenance &o) const {
  return sourceCheckpointSha256 == o.sourceCheckpointSha256 &&
         converterName == o.converterName &&
         converterRevision == o.converterRevision && createdBy == o.createdBy &&
         calibrationManifestSha256 == o.calibrationManifestSha256;
}
bool Manifest::operator==(const Manifest &o) const {
  return versions == o.versions && model == o.model &&
         quantization == o.quantization && topology == o.topology &&
         files == o.files && tensors == o.tensors && kernels == o.kernels &&
         bindings == o.bindings && provenance == o.provenance;
}

const FileEntry *Manifest::findFile(std::string_view path) const {
  for (const FileEntry &f : files)
    if (f.path == path)
      return &f;
  return nullptr;
}

std::string qtensor::artifact::biasTensorOf(const std::string &weight) {
  static const std::string suffix = ".weight";
  return weight.size() > suffix.size() &&
                 weight.compare(weight.size() - suffix.size(), suffix.size(),
                                suffix) == 0
             ? weight.substr(0, weight.size() - suffix.size()) + ".bias"
             : weight + ".bias";
}

const TensorEntry *Manifest::findTensor(std::string_view name) const {
  for (const TensorEntry &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

std::vector<std::pair<const char *, StoredTensor>>
TensorEntry::storedTensors() const {
  std::vector<std::pair<const char *, StoredTensor>> out;
  if (const PlainTensor *p = plain()) {
    out.emplace_back("data", StoredTensor{name, p->dtype, p->shape});
  } else if (const QuantizedTensor *q = quantized()) {
    out.emplace_back("codes", q->codes);
    out.emplace_back("scales", q->scales);
    if (q->zeros)
      out.emplace_back("zeros", *q->zeros);
    if (q->superScales)
      out.emplace_back("super_scales", *q->superScales);
    if (q->superZeros)
      out.emplace_back("super_zeros", *q->superZeros);
  } else if (const Mixed2416Tensor *m = mixed2416()) {
    for (const auto &[key, stored] : m->streams())
      out.emplace_back(key, *stored);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// validateManifest
//===----------------------------------------------------------------------===//

static Status checkVersions(const Versions &v) {
  const std::string p = "manifest.versions.";
  if (v.containerProfile != kContainerProfile)
    return makeError(p, "container_profile: unsupported container profile ",
                     inQuotes(v.containerProfile), " (this build reads ",
                     kContainerProfile, ")");
  const std::pair<const char *, std::pair<uint32_t, uint32_t>> ints[] = {
      {"artifact_schema", {v.artifactSchema, kArtifactSchemaVersion}},
      {"packing_layout", {v.packingLayout, kPackingLayoutVersion}},
      {"graph", {v.graph, kGraphVersion}},
      {"runtime", {v.runtime, kRuntimeVersion}},
      {"kernel_abi", {v.kernelAbi, kKernelAbiVersion}},
  };
  for (const auto &[key, pair] : ints)
    if (pair.first != pair.second)
      return makeError(p, key, ": unsupported version ", pair.first,
                       " (this build reads ", pair.second, ")");
  return Status::ok();
}

static Status checkDigest(const std::string &path, const std::string &value) {
  if (!isSha256Hex(value))
    return makeError(
        path, ": expected 64 lowercase hex digits (SHA-256), got ",
        inQuotes(value.size() > 80 ? value.substr(0, 80) + "..." : value));
  return Status::ok();
}

/// A file's chunk digests: a piece size within the bounds, and one digest
/// per piece of its `fileBytes`.
static Status checkChunkDigests(const std::string &path, uint64_t fileBytes,
                                const ChunkDigests &c) {
  if (c.bytes < kMinDigestChunkBytes || c.bytes > kMaxDigestChunkBytes)
    return makeError(path, ".bytes: ", c.bytes, " is outside [",
                     kMinDigestChunkBytes, ", ", kMaxDigestChunkBytes, "]");
  uint64_t pieces = fileBytes / c.bytes + (fileBytes % c.bytes != 0);
  if (c.sha256.size() != pieces)
    return makeError(path, ".sha256: ", c.sha256.size(),
                     " digests, but a file of ", fileBytes, " bytes has ",
                     pieces, " pieces of ", c.bytes, " bytes");
  for (size_t i = 0; i < c.sha256.size(); ++i)
    QTENSOR_TRY(
        checkDigest(path + ".sha256[" + std::to_string(i) + "]", c.sha256[i]));
  return Status::ok();
}

static Status checkNonEmpty(const std::string &path, const std::string &value) {
  if (value.empty())
    return makeError(path, ": must not be empty");
  return Status::ok();
}

/// Shape sanity shared by every stored tensor: rank, non-negative dims, the
/// byte size fits in 64 bits.
static Status checkStoredShape(const std::string &path, DType dtype,
                               const std::vector<int64_t> &shape) {
  if (shape.size() > kMaxStoredRank)
    return makeError(path, ".shape: rank ", shape.size(), " exceeds the limit ",
                     kMaxStoredRank);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      return makeError(path, ".shape[", i, "]: ", shape[i], " is negative");
  auto count = checkedElementCount(shape);
  if (!count || !checkedMul(*count, safetensors::dtypeSize(dtype)))
    return makeError(path, ".shape: ", shapeToString(shape),
                     " overflows 64-bit byte arithmetic");
  return Status::ok();
}

/// The code tensor's expected shape for the logical layout, or the minimum
/// byte count for other layouts (see QuantizedTensor).
static Status checkCodes(const std::string &path, const QuantizedTensor &q) {
  const QuantizedTensorDescriptor &t = q.logical;
  const StoredTensor &c = q.codes;
  unsigned bits = t.descriptor.code.bits;
  if (c.dtype != DType::U8)
    return makeError(path,
                     ".dtype: codes are stored as packed bytes (U8), "
                     "got ",
                     safetensors::dtypeName(c.dtype));
  if (t.layout.isLogical()) {
    std::vector<int64_t> expected = t.shape;
    if (expected.empty())
      expected.push_back(1);
    auto rowBits = checkedMul(static_cast<uint64_t>(expected.back()), bits);
    if (!rowBits || ceilDiv(*rowBits, 8) > static_cast<uint64_t>(INT64_MAX))
      return makeError(path, ": the logical shape ", shapeToString(t.shape),
                       " overflows 64-bit arithmetic");
    expected.back() = static_cast<int64_t>(ceilDiv(*rowBits, 8));
    if (c.shape != expected)
      return makeError(path, ".shape: the logical layout stores ",
                       shapeToString(t.shape), " ", bits,
                       "-bit codes in rows of ceil(cols * bits / 8) bytes: "
                       "expected ",
                       shapeToString(expected), ", got ",
                       shapeToString(c.shape));
    return Status::ok();
  }
  if (c.shape.empty())
    return makeError(path, ".shape: packed codes need rank >= 1");
  std::vector<uint64_t> padded(t.shape.begin(), t.shape.end());
  for (size_t i = 0; i < t.layout.padding.size() && i < padded.size(); ++i) {
    auto sum =
        checkedAdd(padded[i], static_cast<uint64_t>(t.layout.padding[i]));
    if (!sum)
      return makeError(path, ": padded dimension ", i, " overflows 64 bits");
    padded[i] = *sum;
  }
  auto count = checkedElementCount(padded);
  auto needBits = count ? checkedMul(*count, bits) : std::nullopt;
  auto have = checkedElementCount(c.shape);
  if (!needBits || !have)
    return makeError(path, ": shape arithmetic overflows 64 bits");
  if (*have < ceilDiv(*needBits, 8))
    return makeError(
        path, ".shape: ", shapeToString(c.shape), " holds ", *have,
        " bytes but layout ", inQuotes(t.layout.family), " needs at least ",
        ceilDiv(*needBits, 8), " for ",
        shapeToString(std::vector<int64_t>(padded.begin(), padded.end())), " ",
        bits, "-bit codes");
  return Status::ok();
}

/// One stored tensor of a nested descriptor: present iff `wanted`, with
/// the dtype and shape its level prescribes.
static Status checkNestedPart(const std::string &path, const char *key,
                              const std::optional<StoredTensor> &t, bool wanted,
                              DType dtype, const std::vector<int64_t> &shape,
                              const char *what) {
  if (!wanted) {
    if (t)
      return makeError(path, ".", key, ": the nested descriptor has no ", what,
                       " but the tensor is declared");
    return Status::ok();
  }
  if (!t)
    return makeError(path, ".", key, ": required field is missing (", what,
                     " of the nested descriptor)");
  if (t->dtype != dtype)
    return makeError(path, ".", key, ".dtype: ", what, " are stored as ",
                     safetensors::dtypeName(dtype), ", got ",
                     safetensors::dtypeName(t->dtype));
  if (t->shape != shape)
    return makeError(path, ".", key, ".shape: expected ", shapeToString(shape),
                     ", got ", shapeToString(t->shape));
  return Status::ok();
}

static Status checkNested(const std::string &path, const QuantizedTensor &q) {
  const QuantizedTensorDescriptor &t = q.logical;
  const NestedQParams &n = *t.descriptor.nested;
  std::vector<int64_t> qshape = qparamShape(t.descriptor, t.shape);
  std::vector<int64_t> sshape = superQParamShape(t.descriptor, t.shape);
  auto codeDType = [](const CodeType &c) {
    return c.isSigned ? DType::I8 : DType::U8;
  };
  std::optional<StoredTensor> scales = q.scales;
  QTENSOR_TRY(checkNestedPart(path, "scales", scales, true,
                              codeDType(n.scaleCode), qshape, "scale codes"));
  const bool hasMin = n.minCode.has_value();
  QTENSOR_TRY(checkNestedPart(path, "zeros", q.zeros, hasMin,
                              codeDType(n.minCode.value_or(CodeType{})), qshape,
                              "min codes"));
  QTENSOR_TRY(checkNestedPart(path, "super_scales", q.superScales, true,
                              floatDType(n.superType), sshape,
                              "second-level scales"));
  return checkNestedPart(path, "super_zeros", q.superZeros, hasMin,
                         floatDType(n.superType), sshape, "second-level mins");
}

static Status checkQuantized(const std::string &path,
                             const QuantizedTensor &q) {
  const QuantizedTensorDescriptor &t = q.logical;
  if (Status s = verifyTensorDescriptor(t); !s)
    return makeError(path, ".logical: ", s.message());
  QTENSOR_TRY(checkCodes(path + ".codes", q));
  if (t.descriptor.nested)
    return checkNested(path, q);
  if (q.superScales || q.superZeros)
    return makeError(path, q.superScales ? ".super_scales" : ".super_zeros",
                     ": the descriptor has no nested qparams but a "
                     "second-level tensor is declared");
  std::vector<int64_t> qshape = qparamShape(t.descriptor, t.shape);
  const ScaleFormat format = t.descriptor.scaleFormat;
  if (format != ScaleFormat::Plain && q.scales.dtype != DType::U8)
    return makeError(path, ".scales.dtype: the descriptor's scale_format ",
                     toString(format), " stores one code per scale (U8), got ",
                     safetensors::dtypeName(q.scales.dtype));
  DType scaleType = format != ScaleFormat::Plain
                        ? DType::U8
                        : floatDType(t.descriptor.scaleType);
  if (q.scales.dtype != scaleType)
    return makeError(path, ".scales.dtype: the descriptor's scale_dtype is ",
                     toString(t.descriptor.scaleType), " (",
                     safetensors::dtypeName(scaleType), "), got ",
                     safetensors::dtypeName(q.scales.dtype));
  if (q.scales.shape != qshape)
    return makeError(path, ".scales.shape: expected ", shapeToString(qshape),
                     " (the descriptor's qparam shape for ",
                     shapeToString(t.shape), "), got ",
                     shapeToString(q.scales.shape));
  ZeroPointKind zp = t.descriptor.zeroPoint;
  if (zp == ZeroPointKind::None) {
    if (q.zeros)
      return makeError(path, ".zeros: the descriptor has no zero-point "
                             "(zero_point \"none\") but a zero tensor is "
                             "declared");
    return Status::ok();
  }
  if (!q.zeros)
    return makeError(path, ".zeros: required field is missing (zero_point \"",
                     toString(zp), "\")");
  const StoredTensor &z = *q.zeros;
  if (zp == ZeroPointKind::Integer) {
    if (!isIntegerDType(z.dtype))
      return makeError(path,
                       ".zeros.dtype: integer zero-points need an "
                       "integer dtype, got ",
                       safetensors::dtypeName(z.dtype));
  } else if (z.dtype != scaleType) {
    return makeError(path, ".zeros.dtype: ", toString(zp),
                     " zero-points are stored in the scale dtype ",
                     safetensors::dtypeName(scaleType), ", got ",
                     safetensors::dtypeName(z.dtype));
  }
  if (z.shape != qshape)
    return makeError(path, ".zeros.shape: expected ", shapeToString(qshape),
                     " (the descriptor's qparam shape), got ",
                     shapeToString(z.shape));
  return Status::ok();
}

/// The streams of a mixed_2416 tensor against its descriptor: every dtype
/// and shape the family prescribes, and W2 and W4 sizes that one W4 group
/// count explains (Mixed2416Tensor).
static Status checkMixed2416(const std::string &path,
                             const Mixed2416Tensor &m) {
  const Mixed2416Descriptor &d = m.logical;
  if (Status s = verifyMixed2416(d); !s)
    return makeError(path, ".logical: ", s.message());
  const int64_t n = d.rows(), perRow = d.groupsPerRow();
  const int64_t groups = n * perRow; // verifyMixed2416: at most 2^40 weights
  auto expect = [&](const char *key, const StoredTensor &t, DType dtype,
                    const std::vector<int64_t> &shape) -> Status {
    if (t.dtype != dtype)
      return makeError(path, ".", key, ".dtype: expected ",
                       safetensors::dtypeName(dtype), ", got ",
                       safetensors::dtypeName(t.dtype));
    if (t.shape != shape)
      return makeError(path, ".", key, ".shape: expected ",
                       shapeToString(shape), ", got ", shapeToString(t.shape));
    return Status::ok();
  };
  auto oneDim = [&](const char *key, const StoredTensor &t,
                    DType dtype) -> Status {
    if (t.shape.size() != 1)
      return makeError(path, ".", key, ".shape: expected one dimension, got ",
                       shapeToString(t.shape));
    return expect(key, t, dtype, t.shape);
  };
  QTENSOR_TRY(
      expect("precision_map", m.precisionMap, DType::U8, {(groups + 7) / 8}));
  QTENSOR_TRY(oneDim("w2_codes", m.w2Codes, DType::U8));
  QTENSOR_TRY(oneDim("w4_codes", m.w4Codes, DType::U8));
  const int64_t w4Group = d.firstGroupSize / 2, w2Group = d.firstGroupSize / 4;
  const int64_t w4Bytes = m.w4Codes.shape[0], w2Bytes = m.w2Codes.shape[0];
  if (w4Bytes % w4Group != 0 || w4Bytes / w4Group > groups)
    return makeError(path, ".w4_codes.shape: ", w4Bytes,
                     " bytes are not a whole number of W4 groups of ", w4Group,
                     " bytes, at most ", groups);
  const int64_t w4Groups = w4Bytes / w4Group;
  if (w2Bytes != (groups - w4Groups) * w2Group)
    return makeError(path, ".w2_codes.shape: with ", w4Groups, " W4 groups of ",
                     groups, ", the W2 stream holds ",
                     (groups - w4Groups) * w2Group, " bytes, got ", w2Bytes);
  const std::vector<int64_t> firstShape = {n, perRow};
  QTENSOR_TRY(
      expect("first_scale_codes", m.firstScaleCodes, DType::U8, firstShape));
  QTENSOR_TRY(
      expect("first_zero_points", m.firstZeroPoints, DType::U8, firstShape));
  const std::vector<int64_t> secondShape = {d.secondGroupsPerColumn(), perRow};
  QTENSOR_TRY(expect("second_scales", m.secondScales, floatDType(d.secondType),
                     secondShape));
  QTENSOR_TRY(expect("second_zero_points", m.secondZeroPoints,
                     floatDType(d.secondType), secondShape));
  QTENSOR_TRY(
      oneDim("sparse_values", m.sparseValues, floatDType(d.sparseType)));
  QTENSOR_TRY(expect("sparse_columns", m.sparseColumns, DType::I32,
                     m.sparseValues.shape));
  return expect("sparse_row_pointers", m.sparseRowPointers, DType::I32,
                {n + 1});
}

namespace {
/// Whether each kernel entry and op binding still needs its reader's rules
/// (built in memory), or came from that reader (parsed).
enum class RecordRules { Reread, AlreadyRead };
Status checkManifest(const Manifest &m, RecordRules records);
} // namespace

Status artifact::validateManifest(const Manifest &m) {
  return checkManifest(m, RecordRules::Reread);
}

namespace {
Status checkManifest(const Manifest &m, RecordRules records) {
  QTENSOR_TRY(checkVersions(m.versions));

  QTENSOR_TRY(
      checkNonEmpty("manifest.model.architecture", m.model.architecture));
  if (m.model.tokenizerSha256)
    QTENSOR_TRY(checkDigest("manifest.model.tokenizer_sha256",
                            *m.model.tokenizerSha256));

  QTENSOR_TRY(
      checkNonEmpty("manifest.quantization.family", m.quantization.family));
  if (!m.quantization.config.is_object())
    return makeError("manifest.quantization.config: expected a JSON object, "
                     "got ",
                     m.quantization.config.type_name());
  if (m.quantization.configSha256)
    QTENSOR_TRY(checkDigest("manifest.quantization.config_sha256",
                            *m.quantization.configSha256));

  const std::pair<const char *, int64_t> degrees[] = {
      {"tp", m.topology.tp}, {"pp", m.topology.pp}, {"ep", m.topology.ep}};
  for (const auto &[key, value] : degrees)
    if (value < 1 || value > kMaxTopologyDegree)
      return makeError("manifest.topology.", key, ": ", value,
                       " is outside [1, ", kMaxTopologyDegree, "]");

  std::map<std::string, size_t, std::less<>> fileIndex;
  for (size_t i = 0; i < m.files.size(); ++i) {
    const FileEntry &f = m.files[i];
    std::string p = indexed("manifest.files", i);
    if (Status s = checkArtifactPath(f.path); !s)
      return makeError(p, ".path: ", s.message());
    if (f.path == kManifestFileName)
      return makeError(p, ".path: ", inQuotes(f.path),
                       " is the manifest itself");
    for (size_t start = 0;;) {
      if (f.path.compare(start, std::strlen(kTempPrefix), kTempPrefix) == 0)
        return makeError(p, ".path: ", inQuotes(f.path),
                         " names a temporary file of the writer (prefix \"",
                         kTempPrefix, "\"); a manifest never references one");
      size_t slash = f.path.find('/', start);
      if (slash == std::string::npos)
        break;
      start = slash + 1;
    }
    if (auto [it, fresh] = fileIndex.emplace(f.path, i); !fresh)
      return makeError(p, ".path: duplicate path ", inQuotes(f.path),
                       " (also manifest.files[", it->second, "])");
    QTENSOR_TRY(checkDigest(p + ".sha256", f.sha256));
    if (f.chunks)
      QTENSOR_TRY(checkChunkDigests(p + ".chunks", f.bytes, *f.chunks));
  }

  std::map<std::string, size_t, std::less<>> tensorIndex;
  // (file, stored tensor name) -> "manifest.tensors[i].codes"
  std::map<std::pair<std::string, std::string>, std::string> storedOwner;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const TensorEntry &t = m.tensors[i];
    std::string p = indexed("manifest.tensors", i);
    QTENSOR_TRY(checkNonEmpty(p + ".name", t.name));
    if (auto [it, fresh] = tensorIndex.emplace(t.name, i); !fresh)
      return makeError(p, ".name: duplicate tensor ", inQuotes(t.name),
                       " (also manifest.tensors[", it->second, "])");
    auto file = fileIndex.find(t.file);
    if (file == fileIndex.end())
      return makeError(p, ".file: ", inQuotes(t.file),
                       " is not listed in manifest.files");
    if (m.files[file->second].role != FileRole::Shard)
      return makeError(p, ".file: ", inQuotes(t.file), " has role ",
                       inQuotes(toString(m.files[file->second].role)),
                       "; tensors live in files with role \"shard\"");
    if (const QuantizedTensor *q = t.quantized()) {
      QTENSOR_TRY(
          checkStoredShape(p + ".codes", q->codes.dtype, q->codes.shape));
      QTENSOR_TRY(
          checkStoredShape(p + ".scales", q->scales.dtype, q->scales.shape));
      if (q->zeros)
        QTENSOR_TRY(
            checkStoredShape(p + ".zeros", q->zeros->dtype, q->zeros->shape));
      QTENSOR_TRY(checkQuantized(p, *q));
    } else if (const Mixed2416Tensor *mixed = t.mixed2416()) {
      for (const auto &[key, stored] : mixed->streams())
        QTENSOR_TRY(
            checkStoredShape(p + "." + key, stored->dtype, stored->shape));
      QTENSOR_TRY(checkMixed2416(p, *mixed));
    } else {
      QTENSOR_TRY(checkStoredShape(p, t.plain()->dtype, t.plain()->shape));
    }
    for (const auto &[role, stored] : t.storedTensors()) {
      std::string where = std::string(role) == "data" ? p : p + "." + role;
      if (!t.plain())
        QTENSOR_TRY(checkNonEmpty(where + ".tensor", stored.tensor));
      auto [it, fresh] =
          storedOwner.emplace(std::make_pair(t.file, stored.tensor), where);
      if (!fresh)
        return makeError(where, ": stored tensor ", inQuotes(stored.tensor),
                         " in ", inQuotes(t.file), " is also claimed by ",
                         it->second);
    }
  }

  std::set<std::string, std::less<>> kernelIds;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const KernelEntry &k = m.kernels[i];
    std::string p = indexed("manifest.kernels", i);
    QTENSOR_TRY(checkNonEmpty(p + ".id", k.id));
    if (!kernelIds.insert(k.id).second)
      return makeError(p, ".id: duplicate kernel id ", inQuotes(k.id));
    // The record's own rules, from the one reader: what the writer writes
    // is what the reader accepts.
    if (records == RecordRules::Reread)
      if (Expected<KernelEntry> reread = kernelEntryFromJson(toJson(k), p);
          !reread)
        return reread.error();
    if (k.file) {
      auto file = fileIndex.find(*k.file);
      if (file == fileIndex.end())
        return makeError(p, ".file: ", inQuotes(*k.file),
                         " is not listed in manifest.files");
      if (m.files[file->second].role != FileRole::Kernel)
        return makeError(p, ".file: ", inQuotes(*k.file), " has role ",
                         inQuotes(toString(m.files[file->second].role)),
                         "; expected \"kernel\"");
    }
    for (size_t o = 0; o < k.ops.size(); ++o) {
      const TensorEntry *t = m.findTensor(k.ops[o]);
      // A mixed_2416 kernel reads mixed_2416 streams, any other kernel an
      // affine tensor's codes.
      if (!t || (k.mixed ? !t->mixed2416() : !t->isQuantized()))
        return makeError(indexed(p + ".ops", o), ": ", inQuotes(k.ops[o]),
                         !t        ? " is not a manifest tensor"
                         : k.mixed ? " is not a mixed_2416 tensor"
                                   : " is not a quantized tensor");
    }
  }

  // Each op once; each rank's weight a quantized tensor of the manifest.
  std::set<std::string, std::less<>> boundOps;
  for (size_t i = 0; i < m.bindings.size(); ++i) {
    const OpBinding &b = m.bindings[i];
    std::string p = indexed("manifest.bindings", i);
    if (records == RecordRules::Reread)
      if (Expected<OpBinding> reread = opBindingFromJson(toJson(b), p); !reread)
        return reread.error();
    if (!boundOps.insert(b.op).second)
      return makeError(p, ".op: ", inQuotes(b.op), " is bound twice");
    const int64_t stored = b.sliced() ? int64_t(b.ranks.size()) : 1;
    for (int64_t r = 0; r < stored; ++r) {
      const std::string name = b.tensorOf(r);
      const TensorEntry *t = m.findTensor(name);
      if (!t || !(t->isQuantized() || t->mixed2416()))
        return makeError(p, ": ", inQuotes(name),
                         t ? " is not a quantized tensor"
                           : " is not a manifest tensor",
                         " (the weight of rank ", r, ")");
      if (t->quantized() && t->quantized()->use != TensorUse::Linear)
        return makeError(p, ": ", inQuotes(name), " is the ",
                         toString(t->quantized()->use),
                         " table, not a linear weight an op may bind");
    }
  }

  QTENSOR_TRY(checkDigest("manifest.provenance.source_checkpoint_sha256",
                          m.provenance.sourceCheckpointSha256));
  QTENSOR_TRY(checkNonEmpty("manifest.provenance.converter.name",
                            m.provenance.converterName));
  if (m.provenance.calibrationManifestSha256)
    QTENSOR_TRY(checkDigest("manifest.provenance.calibration_manifest_sha256",
                            *m.provenance.calibrationManifestSha256));
  return Status::ok();
}
} // namespace

//===----------------------------------------------------------------------===//
// toJson
//===----------------------------------------------------------------------===//

static json storedJson(const StoredTensor &s) {
  json j = json::object();
  j["tensor"] = s.tensor;
  j["dtype"] = std::string(safetensors::dtypeName(s.dtype));
  j["shape"] = s.shape;
  return j;
}

json artifact::toJson(const Manifest &m) {
  json j = json::object();
  j["versions"] = {{"container_profile", m.versions.containerProfile},
                   {"artifact_schema", m.versions.artifactSchema},
                   {"packing_layout", m.versions.packingLayout},
                   {"graph", m.versions.graph},
                   {"runtime", m.versions.runtime},
                   {"kernel_abi", m.versions.kernelAbi}};
  json model = {{"architecture", m.model.architecture},
                {"name", m.model.name},
                {"revision", m.model.revision}};
  if (m.model.tokenizerSha256)
    model["tokenizer_sha256"] = *m.model.tokenizerSha256;
  j["model"] = std::move(model);
  json quant = {{"family", m.quantization.family},
                {"config", m.quantization.config}};
  if (m.quantization.configSha256)
    quant["config_sha256"] = *m.quantization.configSha256;
  j["quantization"] = std::move(quant);
  j["topology"] = {
      {"tp", m.topology.tp}, {"pp", m.topology.pp}, {"ep", m.topology.ep}};

  json files = json::array();
  for (const FileEntry &f : m.files) {
    json e = {{"path", f.path},
              {"bytes", f.bytes},
              {"sha256", f.sha256},
              {"role", toString(f.role)}};
    if (f.chunks)
      e["chunks"] = {{"bytes", f.chunks->bytes}, {"sha256", f.chunks->sha256}};
    files.push_back(std::move(e));
  }
  j["files"] = std::move(files);

  json tensors = json::array();
  for (const TensorEntry &t : m.tensors) {
    json e = json::object();
    e["name"] = t.name;
    e["file"] = t.file;
    if (const PlainTensor *p = t.plain()) {
      e["kind"] = "plain";
      e["dtype"] = std::string(safetensors::dtypeName(p->dtype));
      e["shape"] = p->shape;
    } else if (const Mixed2416Tensor *m = t.mixed2416()) {
      e["kind"] = "mixed_2416";
      e["logical"] = qtensor::toJson(m->logical);
      for (const auto &[key, stored] : m->streams())
        e[key] = storedJson(*stored);
    } else {
      const QuantizedTensor &q = *t.quantized();
      e["kind"] = "quantized";
      if (q.use != TensorUse::Linear) // absent for a linear, as before
        e["use"] = toString(q.use);
      e["logical"] = qtensor::toJson(q.logical);
      e["codes"] = storedJson(q.codes);
      e["scales"] = storedJson(q.scales);
      if (q.zeros)
        e["zeros"] = storedJson(*q.zeros);
      if (q.superScales)
        e["super_scales"] = storedJson(*q.superScales);
      if (q.superZeros)
        e["super_zeros"] = storedJson(*q.superZeros);
    }
    tensors.push_back(std::move(e));
  }
  j["tensors"] = std::move(tensors);

  json kernels = json::array();
  for (const KernelEntry &k : m.kernels)
    kernels.push_back(toJson(k));
  j["kernels"] = std::move(kernels);
  json bindings = json::array();
  for (const OpBinding &b : m.bindings)
    bindings.push_back(toJson(b));
  j["bindings"] = std::move(bindings);

  json prov = {
      {"source_checkpoint_sha256", m.provenance.sourceCheckpointSha256},
      {"converter",
       {{"name", m.provenance.converterName},
        {"revision", m.provenance.converterRevision}}},
      {"created_by", m.provenance.createdBy}};
  if (m.provenance.calibrationManifestSha256)
    prov["calibration_manifest_sha256"] =
        *m.provenance.calibrationManifestSha256;
  j["provenance"] = std::move(prov);
  return j;
}

//===----------------------------------------------------------------------===//
// manifestFromJson
//===----------------------------------------------------------------------===//

namespace {
using ObjectReader = JsonObjectReader;

Status readShape(ObjectReader &r, const char *key, std::vector<int64_t> &out) {
  const json *v;
  QTENSOR_TRY(r.require(key, v));
  std::string where = r.at(key);
  if (!v->is_array())
    return makeError(where, ": expected an array of integers, got ",
                     v->type_name());
  if (v->size() > kMaxStoredRank)
    return makeError(where, ": rank ", v->size(), " exceeds the limit ",
                     kMaxStoredRank);
  out.clear();
  for (size_t i = 0; i < v->size(); ++i) {
    uint64_t d;
    QTENSOR_TRY(ObjectReader::toUInt((*v)[i], indexed(where, i), 0,
                                     static_cast<uint64_t>(INT64_MAX), d));
    out.push_back(static_cast<int64_t>(d));
  }
  return Status::ok();
}

Status readDType(ObjectReader &r, const char *key, DType &out) {
  std::string s;
  QTENSOR_TRY(r.readString(key, s));
  auto d = safetensors::parseDType(s);
  if (!d)
    return makeError(r.at(key), ": unknown dtype ", inQuotes(s),
                     " (expected a safetensors dtype such as \"U8\", "
                     "\"F16\")");
  out = *d;
  return Status::ok();
}

Status parseVersions(ObjectReader &root, Versions &v) {
  const json *j;
  QTENSOR_TRY(root.readObject("versions", j));
  ObjectReader r(*j, root.at("versions"));
  QTENSOR_TRY(r.readString("container_profile", v.containerProfile));
  if (v.containerProfile != kContainerProfile)
    return makeError(r.at("container_profile"),
                     ": unsupported container profile ",
                     inQuotes(v.containerProfile), " (this build reads ",
                     kContainerProfile, ")");
  const std::pair<const char *, std::pair<uint32_t *, uint32_t>> ints[] = {
      {"artifact_schema", {&v.artifactSchema, kArtifactSchemaVersion}},
      {"packing_layout", {&v.packingLayout, kPackingLayoutVersion}},
      {"graph", {&v.graph, kGraphVersion}},
      {"runtime", {&v.runtime, kRuntimeVersion}},
      {"kernel_abi", {&v.kernelAbi, kKernelAbiVersion}},
  };
  for (const auto &[key, target] : ints) {
    const json *x;
    QTENSOR_TRY(r.require(key, x));
    if (!x->is_number_integer())
      return makeError(r.at(key), ": expected an integer, got ",
                       x->type_name());
    // Any integer other than ours, however large or negative, is a version
    // this build does not read.
    bool same = x->is_number_unsigned()
                    ? x->get<uint64_t>() == target.second
                    : x->get<int64_t>() == static_cast<int64_t>(target.second);
    if (!same)
      return makeError(r.at(key), ": unsupported version ", x->dump(),
                       " (this build reads ", target.second, ")");
    *target.first = target.second;
  }
  return r.noUnknownKeys();
}

Status parseStored(const json &j, const std::string &path, StoredTensor &s) {
  ObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(r.readString("tensor", s.tensor));
  QTENSOR_TRY(readDType(r, "dtype", s.dtype));
  QTENSOR_TRY(readShape(r, "shape", s.shape));
  return r.noUnknownKeys();
}

/// A file's "chunks" object; validateManifest checks the values.
Status parseChunkDigests(const json &j, const std::string &path, FileEntry &f) {
  ObjectReader r(j, path);
  ChunkDigests c;
  QTENSOR_TRY(r.readUInt("bytes", 0, UINT64_MAX, c.bytes));
  const json *digests;
  QTENSOR_TRY(r.readArray("sha256", digests));
  c.sha256.resize(digests->size());
  for (size_t i = 0; i < digests->size(); ++i)
    QTENSOR_TRY(ObjectReader::toString(
        (*digests)[i], ObjectReader::indexed(r.at("sha256"), i), c.sha256[i]));
  QTENSOR_TRY(r.noUnknownKeys());
  f.chunks = std::move(c);
  return Status::ok();
}

/// Re-roots DescriptorJson's "tensor..." paths under `path`.
Error rerooted(const std::string &path, const std::string &message) {
  if (message.rfind("tensor", 0) == 0)
    return makeError(path, message.substr(6));
  return makeError(path, ": ", message);
}

Status parseTensor(const json &j, const std::string &path, TensorEntry &t) {
  ObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(r.readString("name", t.name));
  QTENSOR_TRY(r.readString("file", t.file));
  std::string kind;
  QTENSOR_TRY(r.readString("kind", kind));
  if (kind == "plain") {
    PlainTensor p;
    QTENSOR_TRY(readDType(r, "dtype", p.dtype));
    QTENSOR_TRY(readShape(r, "shape", p.shape));
    t.data = std::move(p);
  } else if (kind == "quantized") {
    QuantizedTensor q;
    const json *logical, *codes, *scales;
    QTENSOR_TRY(r.require("logical", logical));
    auto d = tensorDescriptorFromJson(*logical);
    if (!d)
      return rerooted(r.at("logical"), d.message());
    q.logical = d.take();
    if (r.find("use")) {
      std::string use;
      QTENSOR_TRY(r.readString("use", use));
      if (use == toString(TensorUse::Embedding))
        q.use = TensorUse::Embedding;
      else if (use != toString(TensorUse::Linear))
        return makeError(r.at("use"), ": unknown tensor use ", inQuotes(use),
                         " (expected \"linear\" or \"embedding\")");
    }
    QTENSOR_TRY(r.require("codes", codes));
    QTENSOR_TRY(parseStored(*codes, r.at("codes"), q.codes));
    QTENSOR_TRY(r.require("scales", scales));
    QTENSOR_TRY(parseStored(*scales, r.at("scales"), q.scales));
    if (const json *zeros = r.find("zeros")) {
      StoredTensor z;
      QTENSOR_TRY(parseStored(*zeros, r.at("zeros"), z));
      q.zeros = std::move(z);
    }
    for (auto [key, field] : {std::pair{"super_scales", &q.superScales},
                              std::pair{"super_zeros", &q.superZeros}})
      if (const json *j = r.find(key)) {
        StoredTensor t;
        QTENSOR_TRY(parseStored(*j, r.at(key), t));
        *field = std::move(t);
      }
    t.data = std::move(q);
  } else if (kind == "mixed_2416") {
    Mixed2416Tensor m;
    const json *logical;
    QTENSOR_TRY(r.require("logical", logical));
    auto d = mixed2416DescriptorFromJson(*logical);
    if (!d)
      return rerooted(r.at("logical"), d.message());
    m.logical = d.take();
    for (const auto &[key, stored] : m.streams()) {
      const json *j;
      QTENSOR_TRY(r.require(key, j));
      QTENSOR_TRY(parseStored(*j, r.at(key), *stored));
    }
    t.data = std::move(m);
  } else {
    return makeError(r.at("kind"), ": unknown tensor kind ", inQuotes(kind),
                     " (expected \"plain\", \"quantized\" or "
                     "\"mixed_2416\")");
  }
  return r.noUnknownKeys();
}
} // namespace

Expected<Manifest> artifact::manifestFromJson(const json &j) {
  ObjectReader root(j, "manifest");
  QTENSOR_TRY(root.expectObject());
  Manifest m;
  // Versions first: a manifest of another schema may legitimately have
  // fields this build does not know, and the version is the real reason.
  QTENSOR_TRY(parseVersions(root, m.versions));
  for (const char *key : {"model", "quantization", "topology", "files",
                          "tensors", "kernels", "bindings", "provenance"})
    root.find(key);
  QTENSOR_TRY(root.noUnknownKeys());

  {
    const json *v;
    QTENSOR_TRY(root.readObject("model", v));
    ObjectReader r(*v, root.at("model"));
    QTENSOR_TRY(r.readString("architecture", m.model.architecture));
    QTENSOR_TRY(r.readString("name", m.model.name));
    QTENSOR_TRY(r.readString("revision", m.model.revision));
    QTENSOR_TRY(
        r.readOptionalString("tokenizer_sha256", m.model.tokenizerSha256));
    QTENSOR_TRY(r.noUnknownKeys());
  }
  {
    const json *v, *config;
    QTENSOR_TRY(root.readObject("quantization", v));
    ObjectReader r(*v, root.at("quantization"));
    QTENSOR_TRY(r.readString("family", m.quantization.family));
    QTENSOR_TRY(r.readObject("config", config));
    m.quantization.config = *config;
    QTENSOR_TRY(
        r.readOptionalString("config_sha256", m.quantization.configSha256));
    QTENSOR_TRY(r.noUnknownKeys());
  }
  {
    const json *v;
    QTENSOR_TRY(root.readObject("topology", v));
    ObjectReader r(*v, root.at("topology"));
    for (auto [key, out] :
         {std::pair{"tp", &m.topology.tp}, std::pair{"pp", &m.topology.pp},
          std::pair{"ep", &m.topology.ep}}) {
      uint64_t x;
      QTENSOR_TRY(r.readUInt(key, 1, kMaxTopologyDegree, x));
      *out = static_cast<int64_t>(x);
    }
    QTENSOR_TRY(r.noUnknownKeys());
  }
  {
    const json *v;
    QTENSOR_TRY(root.readArray("files", v));
    for (size_t i = 0; i < v->size(); ++i) {
      ObjectReader r((*v)[i], indexed(root.at("files"), i));
      QTENSOR_TRY(r.expectObject());
      FileEntry f;
      QTENSOR_TRY(r.readString("path", f.path));
      QTENSOR_TRY(r.readUInt("bytes", 0, UINT64_MAX, f.bytes));
      QTENSOR_TRY(r.readString("sha256", f.sha256));
      std::string role;
      QTENSOR_TRY(r.readString("role", role));
      auto parsed = parseFileRole(role);
      if (!parsed)
        return makeError(r.at("role"), ": unknown role ", inQuotes(role),
                         " (expected \"shard\", \"graph\", \"kernel\", "
                         "\"trace\" or \"report\")");
      f.role = *parsed;
      if (r.find("chunks")) {
        const json *c;
        QTENSOR_TRY(r.readObject("chunks", c));
        QTENSOR_TRY(parseChunkDigests(*c, r.at("chunks"), f));
      }
      QTENSOR_TRY(r.noUnknownKeys());
      m.files.push_back(std::move(f));
    }
  }
  {
    const json *v;
    QTENSOR_TRY(root.readArray("tensors", v));
    for (size_t i = 0; i < v->size(); ++i) {
      TensorEntry t;
      QTENSOR_TRY(parseTensor((*v)[i], indexed(root.at("tensors"), i), t));
      m.tensors.push_back(std::move(t));
    }
  }
  {
    const json *v;
    QTENSOR_TRY(root.readArray("kernels", v));
    for (size_t i = 0; i < v->size(); ++i) {
      QTENSOR_ASSIGN_OR_RETURN(
          KernelEntry k,
          kernelEntryFromJson((*v)[i], indexed(root.at("kernels"), i)));
      m.kernels.push_back(std::move(k));
    }
  }
  {
    const json *v;
    QTENSOR_TRY(root.readArray("bindings", v));
    for (size_t i = 0; i < v->size(); ++i) {
      QTENSOR_ASSIGN_OR_RETURN(
          OpBinding b,
          opBindingFromJson((*v)[i], indexed(root.at("bindings"), i)));
      m.bindings.push_back(std::move(b));
    }
  }
  {
    const json *v, *converter;
    QTENSOR_TRY(root.readObject("provenance", v));
    ObjectReader r(*v, root.at("provenance"));
    QTENSOR_TRY(r.readString("source_checkpoint_sha256",
                             m.provenance.sourceCheckpointSha256));
    QTENSOR_TRY(r.readObject("converter", converter));
    ObjectReader c(*converter, r.at("converter"));
    QTENSOR_TRY(c.readString("name", m.provenance.converterName));
    QTENSOR_TRY(c.readString("revision", m.provenance.converterRevision));
    QTENSOR_TRY(c.noUnknownKeys());
    QTENSOR_TRY(r.readString("created_by", m.provenance.createdBy));
    QTENSOR_TRY(r.readOptionalString("calibration_manifest_sha256",
                                     m.provenance.calibrationManifestSha256));
    QTENSOR_TRY(r.noUnknownKeys());
  }
  // The kernel entries and bindings were just read by their own readers.
  QTENSOR_TRY(checkManifest(m, RecordRules::AlreadyRead));
  return m;
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

Expected<std::string> artifact::serializeManifest(const Manifest &m) {
  std::string text;
  try {
    text = toJson(m).dump(2) + "\n";
  } catch (const std::exception &e) {
    return makeError("manifest: cannot serialize: ", e.what());
  }
  if (text.size() > kMaxManifestBytes)
    return makeError("manifest: ", text.size(), " bytes exceed the limit of ",
                     kMaxManifestBytes);
  return text;
}

Expected<Manifest> artifact::parseManifest(std::string_view text,
                                           const std::string &name) {
  QTENSOR_ASSIGN_OR_RETURN(
      json j, parseStrictJson(text, name, kMaxManifestBytes, kMaxManifestDepth,
                              " (a manifest is UTF-8 JSON text)"));
  return manifestFromJson(j);
}
