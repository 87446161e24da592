//===- Export.cpp - Writing the compiled artifact -------------------------===//

#include "Export.h"
#include "ExportMixed2416.h"

#include "qtensor/Support/Progress.h"

#include "qtensor/Descriptor/DescriptorJson.h"
#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Descriptor/ScaleFormat.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Support/FileIO.h"
#include "qtensor/Support/Sha256.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <unistd.h>

namespace qtensor::compiler {
namespace {

using artifact::TensorData;
using safetensors::DType;

/// One rank's slice of a linear, in logical form.
struct Slice {
  QuantizedTensorDescriptor logical; ///< local shape, logical layout
  std::vector<int32_t> codes;
  std::vector<float> scales;
  std::vector<int32_t> zeros;
  std::vector<float> zeroFloats;
  std::vector<int32_t> scaleCodes, minCodes; ///< nested only
  std::vector<float> superScales, superMins; ///< nested only
  std::vector<uint16_t> bias;
};

/// Rows [rb, re) x cols [cb, ce) of a row-major [*, cols] matrix.
template <typename T>
std::vector<T> block(const std::vector<T> &m, int64_t cols, int64_t rb,
                     int64_t re, int64_t cb, int64_t ce) {
  std::vector<T> out;
  out.reserve(static_cast<size_t>((re - rb) * (ce - cb)));
  for (int64_t r = rb; r < re; ++r)
    out.insert(out.end(), m.begin() + r * cols + cb, m.begin() + r * cols + ce);
  return out;
}

/// Rank `rank`'s slice of `w`. A slice that is the whole weight takes
/// w's codes instead of copying them (a weight-sized buffer) when
/// `takeCodes`: the caller's last use of them.
Expected<Slice> sliceLinear(const ExportLinear &l, QuantizedWeight &w,
                            int64_t rank, bool takeCodes) {
  const AffineDescriptor &d = w.logical.descriptor;
  int64_t n = w.logical.shape[0], k = w.logical.shape[1];
  int64_t rb = 0, re = n, cb = 0, ce = k;
  using Kind = WeightPlacement::Kind;
  if (l.placement.kind == Kind::Column || l.placement.kind == Kind::Row) {
    const std::vector<int64_t> &b = l.placement.bounds;
    int64_t extent = l.placement.kind == Kind::Column ? n : k;
    if (rank + 1 >= static_cast<int64_t>(b.size()) || b[rank] < 0 ||
        b[rank] >= b[rank + 1] || b[rank + 1] > extent)
      return makeError(l.source->name, ": placement bounds do not give rank ",
                       rank, " a slice of [0, ", extent, ")");
  }
  if (l.placement.kind == Kind::Column) {
    rb = l.placement.bounds[rank];
    re = l.placement.bounds[rank + 1];
  } else if (l.placement.kind == Kind::Row) {
    cb = l.placement.bounds[rank];
    ce = l.placement.bounds[rank + 1];
  }
  Slice s;
  s.logical = w.logical;
  s.logical.shape = {re - rb, ce - cb};
  if (takeCodes && rb == 0 && re == n && cb == 0 && ce == k)
    s.codes = std::move(w.codes);
  else
    s.codes = block(w.codes, k, rb, re, cb, ce);

  // qparams follow the codes: [N, ceil(K/G)] for groups along K, [N] per
  // output channel, one value per tensor.
  int64_t qb = 0, qe = 1, gb = 0, ge = 1, qcols = 1;
  if (d.granularity == Granularity::Group) {
    int64_t g = d.groupSize;
    if (cb % g != 0 || (ce % g != 0 && ce != k))
      return makeError(l.source->name, ": rank ", rank, "'s columns [", cb,
                       ", ", ce, ") cut a group of ", g,
                       "; the exporter stores group-aligned slices only "
                       "(use group-policy=align)");
    qcols = (k + g - 1) / g;
    qb = rb, qe = re, gb = cb / g, ge = (ce + g - 1) / g;
  } else if (d.granularity == Granularity::PerAxis) {
    qcols = 1;
    qb = rb, qe = re, gb = 0, ge = 1;
  }
  auto qslice = [&](const auto &v) {
    return d.granularity == Granularity::PerTensor
               ? v
               : block(v, qcols, qb, qe, gb, ge);
  };
  s.scales = qslice(w.scales);
  if (!w.zeros.empty())
    s.zeros = qslice(w.zeros);
  if (!w.zeroFloats.empty())
    s.zeroFloats = qslice(w.zeroFloats);
  if (d.nested) {
    // The second level follows its super-groups: a slice along K must hold
    // whole ones (their d and dmin are not split or repeated).
    const int64_t sg = d.nested->superGroupSize;
    if (cb % sg != 0 || ce % sg != 0)
      return makeError(l.source->name, ": rank ", rank, "'s columns [", cb,
                       ", ", ce, ") cut a super-group of ", sg,
                       " (nested qparams); the exporter stores whole "
                       "super-groups only");
    s.scaleCodes = qslice(w.scaleCodes);
    if (!w.minCodes.empty())
      s.minCodes = qslice(w.minCodes);
    auto superSlice = [&](const std::vector<float> &v) {
      return block(v, k / sg, rb, re, cb / sg, ce / sg);
    };
    s.superScales = superSlice(w.superScales);
    if (!w.superMins.empty())
      s.superMins = superSlice(w.superMins);
  }
  if (!w.bias.empty()) {
    if (l.placement.kind == Kind::Column)
      s.bias.assign(w.bias.begin() + rb, w.bias.begin() + re);
    else if (rank == 0) // row-parallel: added once, after the reduction
      s.bias = w.bias;
  }
  return s;
}

/// The stored layout of a slice: the selected family with the padding its
/// packer adds to the local shape.
Expected<LayoutDescriptor> storedLayout(const LayoutDescriptor &selected,
                                        const std::vector<int64_t> &shape) {
  LayoutDescriptor layout = selected;
  layout.padding.clear();
  if (layout.tile.empty())
    return layout;
  if (layout.tile.size() != shape.size())
    return makeError("layout ", layout.family, " has ", layout.tile.size(),
                     " tile sizes for a rank-", shape.size(), " tensor");
  bool any = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t t = layout.tile[i];
    int64_t pad = (t - shape[i] % t) % t;
    layout.padding.push_back(pad);
    any |= pad != 0;
  }
  if (!any)
    layout.padding.clear();
  return layout;
}

/// Float qparams (each exact in `type`) as the bytes of `type`.
std::vector<uint8_t> qparamBytes(const std::vector<float> &values,
                                 FloatType type) {
  const size_t width = type == FloatType::F32 ? 4 : 2;
  std::vector<uint8_t> bytes(values.size() * width);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == FloatType::F32) {
      std::memcpy(bytes.data() + 4 * i, &values[i], 4);
      continue;
    }
    uint16_t bits = type == FloatType::BF16 ? floatToBFloat16Bits(values[i])
                                            : floatToHalfBits(values[i]);
    bytes[2 * i] = uint8_t(bits);
    bytes[2 * i + 1] = uint8_t(bits >> 8);
  }
  return bytes;
}

unsigned qparamWidthBits(FloatType type) {
  return type == FloatType::F32 ? 32 : 16;
}

nlohmann::json finiteOrNull(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

/// Stored bytes appended to an unlinked scratch file, read back by offset:
/// what the writer fills the shards from.
class Spool {
public:
  static Expected<std::shared_ptr<Spool>> create(const std::string &dir) {
    std::string pattern =
        (dir.empty() ? std::string("/tmp") : dir) + "/qtc-spool-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    int fd = ::mkstemp(name.data());
    if (fd < 0)
      return makeError(
          pattern, ": cannot create the export spool: ", std::strerror(errno));
    ::unlink(name.data()); // gone with the descriptor, whatever happens
    auto spool = std::shared_ptr<Spool>(new Spool(fd, name.data()));
    return spool;
  }
  ~Spool() { ::close(fd); }

  /// Appends `bytes`; returns the tensor that reads them back.
  Expected<TensorData> append(std::string tensorName, DType dtype,
                              std::vector<int64_t> shape,
                              const std::vector<uint8_t> &bytes,
                              const std::shared_ptr<Spool> &self) {
    TensorData t;
    t.name = std::move(tensorName);
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.size = bytes.size();
    QTENSOR_ASSIGN_OR_RETURN(t.sha256, sha256Hex(bytes.data(), bytes.size()));
    uint64_t offset = end;
    QTENSOR_TRY(writeAll(fd, bytes.data(), bytes.size(), path, end));
    std::weak_ptr<Spool> weak = self;
    t.fill = [weak, offset](uint8_t *out, uint64_t size) -> Status {
      std::shared_ptr<Spool> spool = weak.lock();
      if (!spool)
        return makeError("the export spool is gone");
      return spool->read(offset, out, size);
    };
    return t;
  }

private:
  Spool(int fd, std::string path) : fd(fd), path(std::move(path)) {}
  Status read(uint64_t offset, uint8_t *out, uint64_t size) const {
    return readAll(fd, out, size, offset, path + " (the export spool)");
  }
  int fd;
  std::string path;
  uint64_t end = 0;
};

/// A mixed_2416 linear's streams, spooled (Mixed2416Tensor order).
struct StagedMixed {
  std::string shard, name;
  Mixed2416Descriptor logical;
  std::vector<TensorData> streams;
};

struct StagedQuantized {
  std::string shard, name;
  artifact::TensorUse use = artifact::TensorUse::Linear;
  QuantizedTensorDescriptor stored;
  TensorData codes, scales;
  std::optional<TensorData> zeros, superScales, superZeros;
};

} // namespace

struct StagedExport {
  std::shared_ptr<Spool> spool;
  std::vector<StagedQuantized> quantized;
  std::vector<StagedMixed> mixed;
  std::vector<std::pair<std::string, TensorData>> plain; ///< shard, tensor
};

namespace {

template <typename T> std::vector<uint8_t> asBytes(const std::vector<T> &v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty())
    std::memcpy(b.data(), v.data(), b.size());
  return b;
}

/// Scales of a scale format as their U8 codes. Exact or refused: the codes
/// were picked against these scales, so a rounded scale would store a
/// different tensor than the one verified.
Expected<std::vector<uint8_t>>
scaleFormatBytes(const std::vector<float> &scales, ScaleFormat format,
                 const std::string &name) {
  std::vector<uint8_t> bytes(scales.size());
  for (size_t i = 0; i < scales.size(); ++i) {
    Expected<uint8_t> c = encodeScaleCode(format, scales[i], i);
    if (!c)
      return makeError(name, ": ", c.message());
    bytes[i] = *c;
  }
  return bytes;
}

/// A slice's scales and zero-points as stored: floats in the scale dtype
/// (a scale format's U8 codes), integer zero-points one per byte (U8).
template <typename Spooled>
Status stageQParams(const Slice &s, StagedQuantized &q, const std::string &name,
                    const std::vector<int64_t> &qshape, Spooled &spooled) {
  const FloatType type = q.stored.descriptor.scaleType;
  if (const ScaleFormat format = q.stored.descriptor.scaleFormat;
      format != ScaleFormat::Plain) {
    QTENSOR_ASSIGN_OR_RETURN(std::vector<uint8_t> codes,
                             scaleFormatBytes(s.scales, format, name));
    QTENSOR_ASSIGN_OR_RETURN(
        q.scales, spooled(name + ".scales", DType::U8, qshape, codes));
    return Status::ok(); // zero-point none (verifyDescriptor)
  }
  QTENSOR_ASSIGN_OR_RETURN(q.scales,
                           spooled(name + ".scales", artifact::floatDType(type),
                                   qshape, qparamBytes(s.scales, type)));
  if (!s.zeros.empty()) {
    std::vector<uint8_t> z8;
    for (int32_t z : s.zeros) {
      if (z < 0 || z > 255)
        return makeError(name, ": zero-point ", z,
                         " does not fit the U8 it is stored in");
      z8.push_back(static_cast<uint8_t>(z));
    }
    QTENSOR_ASSIGN_OR_RETURN(q.zeros,
                             spooled(name + ".zeros", DType::U8, qshape, z8));
  } else if (!s.zeroFloats.empty()) {
    QTENSOR_ASSIGN_OR_RETURN(
        q.zeros, spooled(name + ".zeros", artifact::floatDType(type), qshape,
                         qparamBytes(s.zeroFloats, type)));
  }
  return Status::ok();
}

/// A nested slice's two levels as stored (Manifest.h): scale and min codes
/// (I8 or U8) in the qparam shape, second-level floats per super-group.
/// First proves they decode to the first level the L2 digest was taken
/// over, bit for bit, so what is stored is what was verified.
template <typename Spooled>
Status stageNested(const Slice &s, StagedQuantized &q, const std::string &name,
                   const std::vector<int64_t> &qshape, Spooled &spooled) {
  const AffineDescriptor &d = q.stored.descriptor;
  const NestedQParams &n = *d.nested;
  auto first = decodeNestedQParams(
      d, q.stored.shape, s.scaleCodes,
      std::vector<double>(s.superScales.begin(), s.superScales.end()),
      s.minCodes, std::vector<double>(s.superMins.begin(), s.superMins.end()));
  if (!first)
    return makeError(name, ": nested qparams: ", first.message());
  auto differs = [](const std::vector<float> &a, const std::vector<float> &b) {
    return a.size() != b.size() ||
           (!a.empty() &&
            std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) != 0);
  };
  if (differs(first->scales, s.scales) || differs(first->mins, s.zeroFloats))
    return makeError(name, ": nested qparams do not decode to the scales and "
                           "mins they were read with");
  auto codeBytes = [](const std::vector<int32_t> &codes) {
    std::vector<uint8_t> b(codes.size());
    for (size_t i = 0; i < codes.size(); ++i)
      b[i] = static_cast<uint8_t>(codes[i]); // I8: two's complement
    return b;
  };
  auto codeDType = [](const CodeType &c) {
    return c.isSigned ? DType::I8 : DType::U8;
  };
  std::vector<int64_t> sshape = superQParamShape(d, q.stored.shape);
  QTENSOR_ASSIGN_OR_RETURN(q.scales,
                           spooled(name + ".scales", codeDType(n.scaleCode),
                                   qshape, codeBytes(s.scaleCodes)));
  QTENSOR_ASSIGN_OR_RETURN(q.superScales,
                           spooled(name + ".super_scales",
                                   artifact::floatDType(n.superType), sshape,
                                   qparamBytes(s.superScales, n.superType)));
  if (n.minCode) {
    QTENSOR_ASSIGN_OR_RETURN(q.zeros,
                             spooled(name + ".zeros", codeDType(*n.minCode),
                                     qshape, codeBytes(s.minCodes)));
    QTENSOR_ASSIGN_OR_RETURN(q.superZeros,
                             spooled(name + ".super_zeros",
                                     artifact::floatDType(n.superType), sshape,
                                     qparamBytes(s.superMins, n.superType)));
  }
  return Status::ok();
}

/// Quantizes, slices, packs and hashes every linear, one at a time, into
/// the spool; fills the report's tensors, plain, stored_sha256 and ledger.
Expected<std::shared_ptr<StagedExport>> stageExport(ExportInput &input,
                                                    ProgressSink &progress) {
  auto out = std::make_shared<StagedExport>();
  QTENSOR_ASSIGN_OR_RETURN(out->spool, Spool::create(input.scratchDir));
  Spool &spool = *out->spool;
  auto spooled = [&](std::string name, DType dtype, std::vector<int64_t> shape,
                     const std::vector<uint8_t> &bytes) {
    return spool.append(std::move(name), dtype, std::move(shape), bytes,
                        out->spool);
  };

  // SHA-256 of every stored tensor's bytes: with a shard's hash mismatch,
  // `qtc verify` names the tensor whose bytes changed.
  nlohmann::ordered_json storedDigests = nlohmann::ordered_json::object();
  auto digestOf = [&](const TensorData &t) -> Status {
    if (t.fill) {
      storedDigests[t.name] = t.sha256;
      return Status::ok();
    }
    QTENSOR_ASSIGN_OR_RETURN(std::string hex, sha256Hex(t.data, t.size));
    storedDigests[t.name] = hex;
    return Status::ok();
  };
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  // What the ledger counts, for the linears and apart for the embedding
  // table.
  struct Counts {
    uint64_t values = 0, codeBits = 0, qparamBits = 0, storedBytes = 0;
  } linears, table;
  uint64_t biasBytes = 0;
  size_t done = 0;
  // A linear's bias, whole, in its own small shard (as an affine one's).
  auto stageBias = [&](const SourceLinear &source, FloatType element,
                       const std::vector<uint16_t> &bits) -> Status {
    QTENSOR_ASSIGN_OR_RETURN(
        TensorData bias,
        spooled(source.bias->name,
                element == FloatType::BF16 ? DType::BF16 : DType::F16,
                {int64_t(bits.size())}, asBytes(bits)));
    biasBytes += bias.size;
    QTENSOR_TRY(digestOf(bias));
    out->plain.emplace_back("biases.safetensors", std::move(bias));
    return Status::ok();
  };
  // A mixed_2416 linear: quantized from its floats by the mixed 2/4/16
  // converter and stored whole, one physical tensor per stream.
  auto stageMixed = [&](const ExportLinear &l) -> Status {
    const Mixed2416Descriptor &planned = *l.mixed;
    const std::string &name = l.source->name;
    if (l.placement.ranks() != 1)
      return makeError(name, ": a mixed_2416 tensor is stored whole; the "
                             "placement slices it");
    QTENSOR_ASSIGN_OR_RETURN(std::vector<float> values,
                             input.checkpoint->readFloat(l.source->weight));
    input.checkpoint->releaseSource(l.source->weight);
    auto q = quantizeMixed2416(values.data(), planned.rows(), planned.cols(),
                               mixed2416OptionsFor(planned, input.spec));
    if (!q)
      return makeError(name, ": --quant ", input.spec.text, ": ", q.message());
    if (q->descriptor != planned)
      return makeError(name, ": the mixed_2416 converter returned another "
                             "descriptor than the one planned");
    QTENSOR_ASSIGN_OR_RETURN(std::vector<double> w,
                             reconstructMixed2416(q->descriptor, q->streams));
    double err2 = 0, ref2 = 0, maxAbs = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      const double e = w[i] - double(values[i]);
      err2 += e * e;
      ref2 += double(values[i]) * double(values[i]);
      maxAbs = std::max(maxAbs, std::abs(e));
    }
    values = {};
    QTENSOR_ASSIGN_OR_RETURN(
        std::string digest,
        artifact::mixed2416ReconstructionDigest(q->descriptor, q->streams));
    QTENSOR_ASSIGN_OR_RETURN(
        std::vector<StoredStream> streams,
        mixed2416StoredStreams(name, q->descriptor, q->streams));
    StagedMixed m{"weights.safetensors", name, q->descriptor, {}};
    uint64_t stored = 0;
    for (StoredStream &st : streams) {
      QTENSOR_ASSIGN_OR_RETURN(
          TensorData t,
          spooled(name + "." + st.key, st.dtype, st.shape, st.bytes));
      QTENSOR_TRY(digestOf(t));
      stored += t.size;
      m.streams.push_back(std::move(t));
    }
    if (stored != uint64_t(q->rates.totalBytes))
      return makeError(name, ": ", stored,
                       " stream bytes stored, the "
                       "rates count ",
                       q->rates.totalBytes);
    linears.values += uint64_t(q->rates.weights);
    linears.codeBits += uint64_t(q->rates.codeBytes) * 8;
    linears.qparamBits += uint64_t(stored - uint64_t(q->rates.codeBytes)) * 8;
    linears.storedBytes += stored;
    if (l.source->bias) {
      QTENSOR_ASSIGN_OR_RETURN(
          std::vector<uint16_t> bias,
          readBias(*input.checkpoint, *l.source, planned.elementType));
      QTENSOR_TRY(stageBias(*l.source, planned.elementType, bias));
    }
    const double relative = ref2 > 0 ? std::sqrt(err2 / ref2) : 0.0;
    nlohmann::ordered_json t;
    t["name"] = name;
    t["source"] = name;
    t["rank"] = 0;
    t["shape"] = q->descriptor.shape;
    t["layout"] = q->descriptor.layoutFamily;
    t["source_dtype"] = l.source->weight.dtype;
    t["kept_codes"] = false;
    t["relative_error"] = relative;
    t["max_abs_error"] = maxAbs;
    t["sqnr_db"] =
        finiteOrNull(err2 > 0 ? 10.0 * std::log10(ref2 / err2)
                              : std::numeric_limits<double>::infinity());
    t["reconstruction_sha256"] = digest;
    t["stored_bytes"] = stored;
    t["mixed_2416"] = mixed2416Report(q->descriptor, q->rates);
    tensors.push_back(std::move(t));
    out->mixed.push_back(std::move(m));
    return Status::ok();
  };
  for (const ExportLinear &l : input.linears) {
    if (l.mixed) {
      QTENSOR_TRY(stageMixed(l));
      progress.advance(++done, input.linears.size(), "weights packed");
      continue;
    }
    QTENSOR_ASSIGN_OR_RETURN(QuantizedWeight w,
                             quantizeLinear(*input.checkpoint, *l.source,
                                            input.spec, l.logical.elementType));
    if (!(w.logical == l.logical))
      return makeError(l.source->name, ": quantized as ",
                       toJson(w.logical).dump(), " but planned as ",
                       toJson(l.logical).dump());
    int64_t ranks = l.placement.kind == WeightPlacement::Kind::Column ||
                            l.placement.kind == WeightPlacement::Kind::Row
                        ? l.placement.ranks()
                        : 1;
    const bool linear = l.use == artifact::TensorUse::Linear;
    Counts &counts = linear ? linears : table;
    counts.values += static_cast<uint64_t>(w.codes.size());
    counts.codeBits += w.codes.size() * w.logical.descriptor.code.bits;
    // Integer zero-points are stored one per byte (U8), as are a nested
    // descriptor's scale and min codes, under its second-level floats.
    if (const auto &n = w.logical.descriptor.nested)
      counts.qparamBits += (w.scaleCodes.size() + w.minCodes.size()) * 8 +
                           (w.superScales.size() + w.superMins.size()) *
                               qparamWidthBits(n->superType);
    else if (w.logical.descriptor.scaleFormat != ScaleFormat::Plain)
      counts.qparamBits += w.scales.size() * 8; // one code per scale
    else
      counts.qparamBits += (w.scales.size() + w.zeroFloats.size()) *
                               qparamWidthBits(w.logical.descriptor.scaleType) +
                           w.zeros.size() * 8;
    for (int64_t rank = 0; rank < ranks; ++rank) {
      QTENSOR_ASSIGN_OR_RETURN(Slice s,
                               sliceLinear(l, w, rank, rank + 1 == ranks));
      std::string name = rankTensorName(l.source->name, rank, ranks);
      std::string shard =
          ranks > 1 ? "weights-rank" + std::to_string(rank) + ".safetensors"
                    : "weights.safetensors";
      // L2 reference: the reconstruction of exactly what is stored.
      std::vector<double> zeros =
          s.zeroFloats.empty()
              ? std::vector<double>(s.zeros.begin(), s.zeros.end())
              : std::vector<double>(s.zeroFloats.begin(), s.zeroFloats.end());
      QTENSOR_ASSIGN_OR_RETURN(
          std::string digest,
          artifact::reconstructionDigest(
              s.logical, s.codes,
              std::vector<double>(s.scales.begin(), s.scales.end()), zeros,
              artifact::DigestForm::Xxh3));
      StagedQuantized q;
      q.shard = shard;
      q.name = name;
      q.use = l.use;
      q.stored = s.logical;
      QTENSOR_ASSIGN_OR_RETURN(q.stored.layout,
                               storedLayout(l.layout, s.logical.shape));
      auto packed = artifact::packStoredCodes(q.stored, s.codes);
      if (!packed)
        return makeError(name, ": packing into ", q.stored.layout.family, ": ",
                         packed.message());
      QTENSOR_ASSIGN_OR_RETURN(std::vector<int64_t> codeShape,
                               artifact::storedCodeShape(q.stored));
      std::vector<int64_t> qshape =
          qparamShape(q.stored.descriptor, q.stored.shape);
      QTENSOR_ASSIGN_OR_RETURN(
          q.codes, spooled(name + ".codes", DType::U8, codeShape, *packed));
      QTENSOR_TRY(q.stored.descriptor.nested
                      ? stageNested(s, q, name, qshape, spooled)
                      : stageQParams(s, q, name, qshape, spooled));
      QTENSOR_TRY(digestOf(q.codes));
      QTENSOR_TRY(digestOf(q.scales));
      uint64_t stored = q.codes.size + q.scales.size;
      for (const std::optional<TensorData> *t :
           {&q.zeros, &q.superScales, &q.superZeros})
        if (*t) {
          QTENSOR_TRY(digestOf(**t));
          stored += (*t)->size;
        }
      counts.storedBytes += stored;
      if (!s.bias.empty()) {
        std::string biasName = rankTensorName(
            l.source->bias->name,
            l.placement.kind == WeightPlacement::Kind::Column ? rank : 0,
            l.placement.kind == WeightPlacement::Kind::Column ? ranks : 1);
        DType biasType =
            w.logical.elementType == FloatType::BF16 ? DType::BF16 : DType::F16;
        QTENSOR_ASSIGN_OR_RETURN(TensorData bias,
                                 spooled(biasName, biasType,
                                         {int64_t(s.bias.size())},
                                         asBytes(s.bias)));
        biasBytes += bias.size;
        QTENSOR_TRY(digestOf(bias));
        // A column slice's bias travels with the rank's codes; any other
        // bias (whole, or added after a row all-reduce) goes to a small
        // shard of its own, so reading it does not map and hash the
        // embeddings in plain.safetensors.
        out->plain.emplace_back(l.placement.kind ==
                                        WeightPlacement::Kind::Column
                                    ? shard
                                    : "biases.safetensors",
                                std::move(bias));
      }
      nlohmann::ordered_json t;
      t["name"] = name;
      t["source"] = l.source->name;
      t["rank"] = rank;
      t["shape"] = q.stored.shape;
      t["layout"] = q.stored.layout.family;
      t["source_dtype"] = w.sourceDType;
      t["kept_codes"] = w.keptStoredCodes;
      t["relative_error"] = w.relativeError;
      t["max_abs_error"] = w.maxAbsError;
      t["sqnr_db"] = finiteOrNull(w.sqnrDb);
      t["reconstruction_xxh3_128"] = digest;
      t["stored_bytes"] = stored;
      if (!linear)
        t["use"] = artifact::toString(l.use);
      tensors.push_back(std::move(t));
      out->quantized.push_back(std::move(q));
    }
    progress.advance(++done, input.linears.size(), "weights packed");
  }

  // Everything else is kept: float safetensors tensors copied as stored
  // (borrowed from the checkpoint's mapping), the rest (GGUF blocks)
  // decoded to F32 (Checkpoint::storedPlainDType) and spooled.
  uint64_t plainBytes = 0;
  nlohmann::ordered_json plain = nlohmann::ordered_json::array();
  for (const SourceTensor &t : input.checkpoint->others()) {
    if (input.notStored.count(t.name))
      continue;
    TensorData data;
    DType dtype = Checkpoint::storedPlainDType(t);
    if (t.view && t.view->dtype == dtype) { // copied as stored
      data.name = t.name;
      data.shape = t.shape;
      data.dtype = dtype;
      data.data = t.view->data;
      data.size = t.view->byteSize();
    } else { // decoded to F32
      QTENSOR_ASSIGN_OR_RETURN(std::vector<float> f,
                               input.checkpoint->readFloat(t));
      input.checkpoint->releaseSource(t);
      QTENSOR_ASSIGN_OR_RETURN(data,
                               spooled(t.name, dtype, t.shape, asBytes(f)));
    }
    plainBytes += data.size;
    plain.push_back({{"name", t.name},
                     {"source_dtype", t.dtype},
                     {"stored_dtype", safetensors::dtypeName(data.dtype)},
                     {"bytes", data.size}});
    QTENSOR_TRY(digestOf(data));
    out->plain.emplace_back("plain.safetensors", std::move(data));
  }

  nlohmann::ordered_json &ledger = input.report["ledger"];
  ledger["statement"] =
      "bits_per_weight counts the code bits and stored qparam bits (scales, "
      "zero-points) of the quantized linears, divided by their number of "
      "weights; it excludes the plain tensors listed under not_quantized "
      "(by default the embeddings, the norms and the output head; linears "
      "kept in float by --exclude), biases, layout padding and rank "
      "duplication; "
      "stored_quantized_bytes counts what is stored for the quantized "
      "linears (codes with padding, scales, zero-points, every rank)";
  if (!out->mixed.empty())
    ledger["statement"] =
        ledger["statement"].get<std::string>() +
        "; for mixed_2416 tensors code_bits are the W2 and W4 code streams "
        "and qparam_bits the precision map, both qparam levels and the "
        "outlier stream (tensors[i].mixed_2416 itemizes them)";
  ledger["quantized_weights"] = linears.values;
  ledger["code_bits"] = linears.codeBits;
  ledger["qparam_bits"] = linears.qparamBits;
  ledger["bits_per_weight"] =
      linears.values ? double(linears.codeBits + linears.qparamBits) /
                           double(linears.values)
                     : 0.0;
  ledger["stored_quantized_bytes"] = linears.storedBytes;
  if (table.values)
    ledger["embedding_table"] = {
        {"statement", "the token-embedding table kept as its checkpoint's "
                      "codes, counted apart from the linears"},
        {"weights", table.values},
        {"bits_per_weight",
         double(table.codeBits + table.qparamBits) / double(table.values)},
        {"stored_bytes", table.storedBytes}};
  ledger["plain_bytes"] = plainBytes;
  ledger["bias_bytes"] = biasBytes;
  input.report["tensors"] = std::move(tensors);
  input.report["plain"] = std::move(plain);
  input.report["stored_sha256"] = std::move(storedDigests);
  return out;
}

} // namespace

std::string rankTensorName(const std::string &name, int64_t rank,
                           int64_t ranks) {
  return ranks <= 1 ? name : name + "@rank" + std::to_string(rank);
}

Expected<artifact::WriteResult> exportArtifact(ExportInput &input,
                                               const std::string &dir,
                                               ProgressSink &progress) {
  if (!input.staged) {
    auto staged = stageExport(input, progress);
    if (!staged)
      return staged.error();
    input.staged = staged.take();
  }
  const StagedExport &staged = *input.staged;
  artifact::Manifest base;
  base.model = input.model;
  base.quantization = input.quantization;
  base.topology.tp = input.tp;
  base.kernels = input.kernels;
  base.bindings = input.bindings;
  base.provenance = input.provenance;
  artifact::ArtifactWriter writer(base);
  for (const StagedQuantized &q : staged.quantized)
    QTENSOR_TRY(writer.addQuantizedTensor(q.shard, q.name, q.stored, q.codes,
                                          q.scales, q.zeros, q.superScales,
                                          q.superZeros, q.use));
  for (const StagedMixed &m : staged.mixed)
    QTENSOR_TRY(
        writer.addMixed2416Tensor(m.shard, m.name, m.logical, m.streams));
  for (const auto &[shard, tensor] : staged.plain)
    QTENSOR_TRY(writer.addPlainTensor(shard, tensor));
  for (ExportFile &f : input.files)
    QTENSOR_TRY(writer.addFile(f.name, f.role, f.bytes));
  if (input.program) {
    artifact::DecoderProgram program = *input.program;
    QTENSOR_ASSIGN_OR_RETURN(program.kernelFile,
                             writer.publishedName(program.kernelFile));
    if (program.tokenizerFile) {
      QTENSOR_ASSIGN_OR_RETURN(*program.tokenizerFile,
                               writer.publishedName(*program.tokenizerFile));
    }
    std::string json = artifact::toJson(program).dump(1) + "\n";
    QTENSOR_TRY(writer.addFile("program.json", artifact::FileRole::Program,
                               std::vector<uint8_t>(json.begin(), json.end())));
  }
  std::string text = input.report.dump(2) + "\n";
  QTENSOR_TRY(writer.addFile("report.json", artifact::FileRole::Report,
                             std::vector<uint8_t>(text.begin(), text.end())));
  artifact::WriteOptions options;
  options.beforePublish = input.beforePublish;
  options.afterPublish = input.afterPublish;
  return writer.write(dir, options);
}

} // namespace qtensor::compiler
