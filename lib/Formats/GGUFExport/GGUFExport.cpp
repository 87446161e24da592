//===- GGUFExport.cpp - An artifact's model as a GGUF file ----------------===//
//
// Tensors are produced one at a time while the file is written, so memory
// stays at one tensor's logical codes. See GGUFExport.h for what maps.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/GGUFExport.h"

#include "qtensor/Descriptor/ScaleFormat.h"
#include "qtensor/Formats/Artifact.h"
#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Formats/GGUFDescriptor.h"
#include "qtensor/Formats/GGUFWriter.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/Models/TensorNames.h"
#include "qtensor/Numerics/FloatFormats.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace qtensor;
using namespace qtensor::artifact;

namespace {

/// The ggml type with nested qparams or a codebook whose blocks decode `d`
/// exactly (a K-quant's or IQ4_XS's stored levels, IQ4_NL's table), or why
/// none does.
Expected<GGMLType> spelledBlockType(const QuantizedTensorDescriptor &t) {
  const AffineDescriptor &d = t.descriptor;
  for (GGMLType type : {GGMLType::Q2_K, GGMLType::Q3_K, GGMLType::Q4_K,
                        GGMLType::Q5_K, GGMLType::Q6_K, GGMLType::IQ4_NL,
                        GGMLType::IQ4_XS, GGMLType::MXFP4, GGMLType::NVFP4}) {
    const GGMLAffineSpelling *g = ggmlAffineSpellingOf(type);
    if (g && t.shape.size() == 2 && d == spelledDescriptor(*g, 1))
      return type;
  }
  if (d.codebook != Codebook::None)
    return makeError("no ggml type stores codebook ", toString(d.codebook),
                     " codes with these qparams (IQ4_NL: f16 scales per 32; "
                     "IQ4_XS: si6 scale codes under an f16 d per 256; "
                     "MXFP4: e2m1 with e8m0 scales per 32; NVFP4: e2m1 with "
                     "ue4m3 scales per 16)");
  return makeError("no ggml K-quant stores these nested qparams");
}

/// The ggml type whose block decoding is `d` exactly, or why none is.
Expected<GGMLType> ggmlSpelling(const QuantizedTensorDescriptor &t) {
  const AffineDescriptor &d = t.descriptor;
  if (d.decoderVersion != 1)
    return makeError("decoder version ", d.decoderVersion,
                     " has no ggml type (ggml's blocks decode version 1)");
  if (d.permutation)
    return makeError("act-order (a permutation of K) has no ggml type");
  if (d.nested || d.codebook != Codebook::None ||
      d.scaleFormat != ScaleFormat::Plain)
    return spelledBlockType(t);
  if (t.shape.size() != 2 || d.granularity != Granularity::Group ||
      d.axis != 1 || d.groupSize != 32)
    return makeError("ggml's legacy types need groups of 32 along K (this "
                     "is ",
                     toString(d.granularity),
                     d.granularity == Granularity::Group
                         ? " of " + std::to_string(d.groupSize)
                         : std::string(),
                     ")");
  if (t.shape[1] % 32)
    return makeError("K = ", t.shape[1], " is not a multiple of 32");
  if (d.scaleType != FloatType::F16)
    return makeError("ggml stores f16 scales, this tensor ",
                     toString(d.scaleType));
  const unsigned bits = d.code.bits;
  if (d.code.isSigned && d.zeroPoint == ZeroPointKind::None && !d.narrowRange) {
    if (bits == 8)
      return GGMLType::Q8_0;
    if (bits == 4)
      return GGMLType::Q4_0;
    if (bits == 5)
      return GGMLType::Q5_0;
  }
  if (!d.code.isSigned && d.zeroPoint == ZeroPointKind::Min) {
    if (bits == 4)
      return GGMLType::Q4_1;
    if (bits == 5)
      return GGMLType::Q5_1;
  }
  return makeError("no ggml type decodes ", d.code.isSigned ? "si" : "ui", bits,
                   " codes with a ", toString(d.zeroPoint), " zero-point");
}

void putHalf(std::vector<uint8_t> &out, double v) {
  uint16_t h = floatToHalfBits(static_cast<float>(v));
  out.push_back(uint8_t(h & 0xFF));
  out.push_back(uint8_t(h >> 8));
}

/// The blocks of `type` for logical codes q [n, k], row by row as ggml
/// stores them: pack(b, codes of block b, out) appends block b's bytes.
template <typename Pack>
std::vector<uint8_t> packEachBlock(GGMLType type, const std::vector<int32_t> &q,
                                   int64_t n, int64_t k, Pack pack) {
  const GGMLTypeTraits &traits = ggmlTypeTraits(type);
  const int64_t size = traits.blockSize, blocks = k / size;
  std::vector<uint8_t> out;
  out.reserve(size_t(n * blocks) * traits.typeSize);
  for (int64_t b = 0; b < n * blocks; ++b)
    pack(size_t(b),
         q.data() + size_t(b / blocks) * size_t(k) +
             size_t(b % blocks) * size_t(size),
         out);
  return out;
}

/// E2M1 codes under one-byte float scales (MXFP4: one e8m0 per 32; NVFP4:
/// four ue4m3 per 64, a sub-block's 16 codes as 8 bytes, low nibbles
/// first). The scales are the decoded codes read back, so each encodes
/// exactly; one that did not would be refused, not rounded.
Expected<std::vector<uint8_t>> packFP4Blocks(GGMLType type,
                                             const std::vector<int32_t> &q,
                                             const std::vector<double> &scales,
                                             int64_t n, int64_t k) {
  const bool mx = type == GGMLType::MXFP4;
  const ScaleFormat format = mx ? ScaleFormat::E8M0 : ScaleFormat::UE4M3;
  const size_t perBlock = mx ? 1 : 4;
  std::string failure;
  std::vector<uint8_t> out = packEachBlock(
      type, q, n, k,
      [&](size_t b, const int32_t *c, std::vector<uint8_t> &out) {
        for (size_t g = 0; g < perBlock; ++g) {
          const size_t at = b * perBlock + g;
          Expected<uint8_t> code = encodeScaleCode(format, scales[at], at);
          if (!code && failure.empty())
            failure = code.message();
          out.push_back(code ? *code : 0);
        }
        const int half = mx ? 16 : 8;
        for (size_t g = 0; g < perBlock; ++g, c += 2 * half)
          for (int j = 0; j < half; ++j)
            out.push_back(uint8_t((c[j] & 0xF) | ((c[j + half] & 0xF) << 4)));
      });
  if (!failure.empty())
    return makeError(failure);
  return out;
}

/// Logical codes and qparams in ggml blocks of 32.
std::vector<uint8_t> packBlocks(GGMLType type, const std::vector<int32_t> &q,
                                const std::vector<double> &scales,
                                const std::vector<double> &mins, int64_t n,
                                int64_t k) {
  return packEachBlock(
      type, q, n, k,
      [&](size_t b, const int32_t *c, std::vector<uint8_t> &out) {
        putHalf(out, scales[b]);
        if (type == GGMLType::Q4_1 || type == GGMLType::Q5_1)
          putHalf(out, mins[b]);
        // Stored fields: signed codes offset by 2^(b-1) (q - 8, q - 16).
        const int32_t offset = type == GGMLType::Q4_0   ? 8
                               : type == GGMLType::Q5_0 ? 16
                                                        : 0;
        if (type == GGMLType::Q8_0) {
          for (int j = 0; j < 32; ++j)
            out.push_back(uint8_t(int8_t(c[j])));
          return;
        }
        if (type == GGMLType::Q5_0 || type == GGMLType::Q5_1) {
          uint32_t qh = 0;
          for (int j = 0; j < 32; ++j)
            qh |= uint32_t(((c[j] + offset) >> 4) & 1) << j;
          for (int i = 0; i < 4; ++i)
            out.push_back(uint8_t(qh >> (8 * i)));
        }
        for (int j = 0; j < 16; ++j)
          out.push_back(uint8_t(((c[j] + offset) & 0xF) |
                                (((c[j + 16] + offset) & 0xF) << 4)));
      });
}

/// A K-quant tensor's two stored levels, row-major like the codes: scale
/// (and min) codes per group, d (and dmin) per super-block of 256.
struct KQuantLevels {
  std::vector<int32_t> scaleCodes, minCodes;
  std::vector<double> d, dmin;
};

/// One Q2_K or Q3_K block (256 codes `c`, super-block `b` of `l`): the
/// inverse of ggml's dequantize_row_q{2,3}_K. Element 128 n + 32 s + 16 h
/// + l is 2-bit field s of byte 32 n + 16 h + l; Q3_K adds 4 to a negative
/// code and clears its hmask bit (bit 4 n + s of byte 16 h + l).
void packLowKQuantBlock(GGMLType type, const int32_t *c, const KQuantLevels &l,
                        size_t b, std::vector<uint8_t> &out) {
  const int32_t *sc = l.scaleCodes.data() + b * 16;
  uint8_t qs[64] = {}, hm[32] = {};
  for (int e = 0; e < 256; ++e) {
    const int n = e / 128, s = (e % 128) / 32, i = e % 32;
    int low = c[e];
    if (type == GGMLType::Q3_K) {
      if (low >= 0)
        hm[i] |= uint8_t(1u << (4 * n + s));
      else
        low += 4;
    }
    qs[32 * n + i] |= uint8_t((low & 3) << (2 * s));
  }
  if (type == GGMLType::Q2_K) {
    const int32_t *m = l.minCodes.data() + b * 16;
    for (int j = 0; j < 16; ++j)
      out.push_back(uint8_t((sc[j] & 0xF) | ((m[j] & 0xF) << 4)));
    out.insert(out.end(), qs, qs + 64);
    putHalf(out, l.d[b]);
    putHalf(out, l.dmin[b]);
    return;
  }
  uint8_t packed[12] = {};
  for (int j = 0; j < 16; ++j) {
    const int u = sc[j] + 32; // 6-bit field
    packed[j < 8 ? j : j - 8] |= uint8_t((u & 0xF) << (j < 8 ? 0 : 4));
    packed[8 + j % 4] |= uint8_t((u >> 4) << (2 * (j / 4)));
  }
  out.insert(out.end(), hm, hm + 32);
  out.insert(out.end(), qs, qs + 64);
  out.insert(out.end(), packed, packed + 12);
  putHalf(out, l.d[b]);
}

/// Logical codes and both qparam levels in ggml K-quant blocks of 256: the
/// inverse of ggml's dequantize_row_q{2,3,4,5,6}_K field by field.
std::vector<uint8_t> packKQuantBlocks(GGMLType type,
                                      const std::vector<int32_t> &q,
                                      const KQuantLevels &l, int64_t n,
                                      int64_t k) {
  return packEachBlock(
      type, q, n, k,
      [&](size_t b, const int32_t *c, std::vector<uint8_t> &out) {
        if (type == GGMLType::Q2_K || type == GGMLType::Q3_K) {
          packLowKQuantBlock(type, c, l, b, out);
          return;
        }
        if (type == GGMLType::IQ4_XS) {
          // d, scales_h, scales_l, then IQ4_NL's nibbles per 32 (the
          // inverse of dequantize_row_iq4_xs); codes stored + 32.
          const int32_t *sc = l.scaleCodes.data() + b * 8;
          putHalf(out, l.d[b]);
          uint16_t high = 0;
          uint8_t low[4] = {0, 0, 0, 0};
          for (int g = 0; g < 8; ++g) {
            const int ls = sc[g] + 32;
            low[g / 2] |= uint8_t((ls & 0xF) << (4 * (g % 2)));
            high |= uint16_t(((ls >> 4) & 3) << (2 * g));
          }
          out.push_back(uint8_t(high));
          out.push_back(uint8_t(high >> 8));
          out.insert(out.end(), low, low + 4);
          for (int g = 0; g < 8; ++g)
            for (int j = 0; j < 16; ++j)
              out.push_back(uint8_t((c[32 * g + j] & 0xF) |
                                    ((c[32 * g + j + 16] & 0xF) << 4)));
          return;
        }
        if (type == GGMLType::Q6_K) {
          const int32_t *sc = l.scaleCodes.data() + b * 16;
          uint8_t ql[128], qh[64];
          for (int half = 0; half < 2; ++half) {
            const int32_t *u = c + 128 * half; // stored as q + 32
            for (int j = 0; j < 32; ++j) {
              int a = u[j] + 32, b1 = u[j + 32] + 32, c2 = u[j + 64] + 32,
                  d3 = u[j + 96] + 32;
              ql[64 * half + j] = uint8_t((a & 0xF) | ((c2 & 0xF) << 4));
              ql[64 * half + j + 32] = uint8_t((b1 & 0xF) | ((d3 & 0xF) << 4));
              qh[32 * half + j] = uint8_t((a >> 4) | ((b1 >> 4) << 2) |
                                          ((c2 >> 4) << 4) | ((d3 >> 4) << 6));
            }
          }
          out.insert(out.end(), ql, ql + 128);
          out.insert(out.end(), qh, qh + 64);
          for (int g = 0; g < 16; ++g)
            out.push_back(uint8_t(int8_t(sc[g])));
          putHalf(out, l.d[b]);
          return;
        }
        // Q4_K, Q5_K: d, dmin, 12 bytes of 6-bit scale and min codes (ggml's
        // get_scale_min_k4 read backwards), [qh,] then nibbles of sub-block
        // pairs (2p low, 2p + 1 high).
        const int32_t *sc = l.scaleCodes.data() + b * 8;
        const int32_t *m = l.minCodes.data() + b * 8;
        putHalf(out, l.d[b]);
        putHalf(out, l.dmin[b]);
        uint8_t packed[12];
        for (int j = 0; j < 4; ++j) {
          packed[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
          packed[j + 4] = uint8_t((m[j] & 63) | ((m[j + 4] >> 4) << 6));
          packed[j + 8] = uint8_t((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
        }
        out.insert(out.end(), packed, packed + 12);
        if (type == GGMLType::Q5_K) {
          for (int e = 0; e < 32; ++e) {
            uint8_t h = 0;
            for (int j = 0; j < 8; ++j)
              h |= uint8_t(((c[32 * j + e] >> 4) & 1) << j);
            out.push_back(h);
          }
        }
        for (int p = 0; p < 4; ++p)
          for (int e = 0; e < 32; ++e)
            out.push_back(uint8_t((c[64 * p + e] & 0xF) |
                                  ((c[64 * p + 32 + e] & 0xF) << 4)));
      });
}

/// The stored levels of a nested tensor (ResolvedTensor's raw views).
Expected<KQuantLevels> readKQuantLevels(const ResolvedTensor &r) {
  KQuantLevels l;
  auto codes = [](const safetensors::TensorView *v,
                  std::vector<int32_t> &out) -> Status {
    if (!v)
      return Status::ok();
    QTENSOR_ASSIGN_OR_RETURN(out, readQParamCodes(*v));
    return Status::ok();
  };
  auto floats = [](const safetensors::TensorView *v,
                   std::vector<double> &out) -> Status {
    if (!v)
      return Status::ok();
    QTENSOR_ASSIGN_OR_RETURN(out,
                             readQParams(v->dtype, v->data, v->byteSize()));
    return Status::ok();
  };
  QTENSOR_TRY(codes(r.scaleCodes, l.scaleCodes));
  QTENSOR_TRY(codes(r.minCodes, l.minCodes));
  QTENSOR_TRY(floats(r.superScales, l.d));
  QTENSOR_TRY(floats(r.superZeros, l.dmin));
  return l;
}

/// Row r of the result is row order[r] of `rows` rows of `width` items.
template <typename T>
std::vector<T> permuteRows(const std::vector<T> &v,
                           const std::vector<int64_t> &order, size_t width) {
  std::vector<T> out(v.size());
  for (size_t r = 0; r < order.size(); ++r)
    std::memcpy(out.data() + r * width, v.data() + size_t(order[r]) * width,
                width * sizeof(T));
  return out;
}

/// llama.cpp's converter for a Hugging Face llama: each head's rows go
/// from halves (NeoX RoPE) to pairs (ggml's): new row 2j + t of a head is
/// its old row t * headDim / 2 + j.
std::vector<int64_t> ropePairOrder(int64_t heads, int64_t headDim) {
  std::vector<int64_t> order;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t j = 0; j < headDim / 2; ++j)
      for (int64_t t = 0; t < 2; ++t)
        order.push_back(h * headDim + t * (headDim / 2) + j);
  return order;
}

struct Export {
  const Artifact &artifact;
  const GGUFExportOptions &options;
  GGUFFileWriter writer;
  GGUFExportResult result;

  /// Adds tensor `name` as `ggufName`; `rowOrder` permutes its rows.
  /// `addend` is added to each value of a plain tensor, written as F32 (a
  /// Hugging Face gemma's norm weights w - 1, which llama.cpp stores as the
  /// 1 + w it multiplies by).
  Status add(const std::string &name, const std::string &ggufName,
             const std::vector<int64_t> *rowOrder, float addend = 0) {
    QTENSOR_ASSIGN_OR_RETURN(ResolvedTensor r, artifact.tensor(name));
    GGUFExportedTensor report{name, ggufName, "", ""};
    GGUFTensorToWrite t;
    t.name = ggufName;
    const Artifact *a = &artifact;
    if (const QuantizedTensor *q = r.entry->quantized()) {
      const QuantizedTensorDescriptor &d = q->logical;
      t.ne.assign(d.shape.rbegin(), d.shape.rend());
      auto spelled = ggmlSpelling(d);
      if (!spelled && !options.dequantize)
        return makeError(name, ": ", spelled.message(),
                         "; --dequantize writes it as F32 values");
      t.type = spelled ? *spelled : GGMLType::F32;
      report.how = spelled ? "codes kept" : "dequantized: " + spelled.message();
      const GGMLType type = t.type;
      const int64_t n = d.shape[0], k = d.shape[1];
      std::vector<int64_t> order =
          rowOrder ? *rowOrder : std::vector<int64_t>();
      t.bytes = [a, name, type, n, k,
                 order]() -> Expected<std::vector<uint8_t>> {
        QTENSOR_ASSIGN_OR_RETURN(ResolvedTensor r, a->tensor(name));
        const QuantizedTensorDescriptor &d = r.entry->quantized()->logical;
        QTENSOR_ASSIGN_OR_RETURN(
            std::vector<int32_t> codes,
            unpackStoredCodes(d, r.codes->data, r.codes->byteSize()));
        QTENSOR_ASSIGN_OR_RETURN(
            std::vector<double> scales,
            readQParams(r.scales->dtype, r.scales->data, r.scales->byteSize()));
        std::vector<double> zeros;
        if (r.zeros) {
          QTENSOR_ASSIGN_OR_RETURN(
              zeros,
              readQParams(r.zeros->dtype, r.zeros->data, r.zeros->byteSize()));
        }
        const size_t groups = scales.size() / size_t(n);
        if (!order.empty()) {
          codes = permuteRows(codes, order, size_t(k));
          scales = permuteRows(scales, order, groups);
          if (!zeros.empty())
            zeros = permuteRows(zeros, order, groups);
        }
        if (type == GGMLType::MXFP4 || type == GGMLType::NVFP4)
          return packFP4Blocks(type, codes, scales, n, k);
        if (d.descriptor.nested) { // both levels as stored
          QTENSOR_ASSIGN_OR_RETURN(KQuantLevels levels, readKQuantLevels(r));
          if (!order.empty()) {
            const size_t supers = levels.d.size() / size_t(n);
            levels.scaleCodes = permuteRows(levels.scaleCodes, order, groups);
            levels.d = permuteRows(levels.d, order, supers);
            if (!levels.minCodes.empty()) {
              levels.minCodes = permuteRows(levels.minCodes, order, groups);
              levels.dmin = permuteRows(levels.dmin, order, supers);
            }
          }
          if (type != GGMLType::F32)
            return packKQuantBlocks(type, codes, levels, n, k);
        } else if (type != GGMLType::F32) {
          return packBlocks(type, codes, scales, zeros, n, k);
        }
        return reconstructionF32Bytes(d, codes, scales, zeros);
      };
    } else if (const Mixed2416Tensor *m = r.entry->mixed2416()) {
      // No ggml type holds the family's streams.
      if (!options.dequantize)
        return makeError(name,
                         ": no ggml type holds a mixed_2416 tensor's streams; "
                         "--dequantize writes it as F32 values");
      const Mixed2416Descriptor d = m->logical;
      t.ne.assign(d.shape.rbegin(), d.shape.rend());
      t.type = GGMLType::F32;
      report.how = "dequantized: mixed_2416";
      std::vector<int64_t> order =
          rowOrder ? *rowOrder : std::vector<int64_t>();
      t.bytes = [a, name, d, order]() -> Expected<std::vector<uint8_t>> {
        QTENSOR_ASSIGN_OR_RETURN(ResolvedTensor r, a->tensor(name));
        QTENSOR_ASSIGN_OR_RETURN(Mixed2416Streams s,
                                 readMixed2416Streams(name, d, r.streams));
        QTENSOR_ASSIGN_OR_RETURN(std::vector<double> w,
                                 reconstructMixed2416(d, s));
        if (!order.empty())
          w = permuteRows(w, order, size_t(d.cols()));
        std::vector<uint8_t> bytes(w.size() * 4);
        for (size_t i = 0; i < w.size(); ++i) {
          const float f = static_cast<float>(w[i]);
          std::memcpy(bytes.data() + 4 * i, &f, 4);
        }
        return bytes;
      };
    } else {
      const safetensors::TensorView &v = *r.data;
      t.ne.assign(v.shape.rbegin(), v.shape.rend());
      switch (v.dtype) {
      case safetensors::DType::F32:
        t.type = GGMLType::F32;
        break;
      case safetensors::DType::F16:
        t.type = GGMLType::F16;
        break;
      case safetensors::DType::BF16:
        t.type = GGMLType::BF16;
        break;
      default:
        return makeError(name, ": plain ", safetensors::dtypeName(v.dtype),
                         " has no ggml float type");
      }
      report.how = "plain";
      // ggml adds and multiplies a norm's or bias's f32 activations by an
      // f32 operand only, so 1-D tensors are F32, as llama.cpp's converter
      // writes them (f16 and bf16 widen exactly).
      const bool widen =
          (v.shape.size() == 1 && t.type != GGMLType::F32) || addend != 0;
      if (widen) {
        report.how =
            t.type == GGMLType::F32 ? "plain" : "plain, widened to F32";
        t.type = GGMLType::F32;
      }
      if (addend != 0)
        report.how += ", + 1 (gemma's 1 + w, as llama.cpp stores it)";
      const size_t row =
          v.shape.empty() ? 0
                          : size_t(v.byteSize() /
                                   uint64_t(std::max<int64_t>(1, v.shape[0])));
      std::vector<int64_t> order =
          rowOrder ? *rowOrder : std::vector<int64_t>();
      t.bytes = [a, name, row, order, widen,
                 addend]() -> Expected<std::vector<uint8_t>> {
        QTENSOR_ASSIGN_OR_RETURN(ResolvedTensor r, a->tensor(name));
        std::vector<uint8_t> bytes;
        if (widen) {
          QTENSOR_ASSIGN_OR_RETURN(std::vector<float> f,
                                   safetensors::toFloat32(*r.data));
          for (float &x : f) // in f32, as the runtime's norm kernel adds it
            x += addend;
          bytes.resize(f.size() * 4);
          std::memcpy(bytes.data(), f.data(), bytes.size());
        } else {
          bytes.assign(r.data->data, r.data->data + r.data->byteSize());
        }
        const size_t width = widen ? 4 : row;
        return order.empty() ? bytes : permuteRows(bytes, order, width);
      };
    }
    if (rowOrder)
      report.how += "; rows permuted for ggml's RoPE pairing";
    report.type = ggmlTypeName(t.type);
    QTENSOR_TRY(writer.addTensor(std::move(t)));
    result.tensors.push_back(std::move(report));
    return Status::ok();
  }

  /// RoPE scaling as llama.cpp reads it: llama's rope_freqs.weight (one
  /// divisor per frequency), else rope.scaling.type linear when every
  /// divisor is the same factor.
  Status addRopeScaling(const DecoderConfig &c) {
    const std::vector<double> &f = c.ropeFreqFactors;
    if (f.empty())
      return Status::ok();
    const std::string arch = result.architecture;
    if (arch == "llama") {
      GGUFTensorToWrite t;
      t.name = "rope_freqs.weight";
      t.type = GGMLType::F32;
      t.ne = {uint64_t(f.size())};
      t.bytes = [f]() -> Expected<std::vector<uint8_t>> {
        std::vector<uint8_t> out(f.size() * 4);
        for (size_t i = 0; i < f.size(); ++i) {
          float v = static_cast<float>(f[i]);
          std::memcpy(out.data() + 4 * i, &v, 4);
        }
        return out;
      };
      QTENSOR_TRY(writer.addTensor(std::move(t)));
      result.tensors.push_back({"(program rope_freq_factors)",
                                "rope_freqs.weight", "F32",
                                "RoPE frequency divisors"});
      return Status::ok();
    }
    if (std::any_of(f.begin(), f.end(), [&](double v) { return v != f[0]; }))
      return makeError("GGUF ", arch,
                       " has no per-frequency RoPE scaling (llama.cpp reads "
                       "rope_freqs for llama only), and these divisors differ");
    writer.setString(arch + ".rope.scaling.type", "linear");
    writer.setFloat32(arch + ".rope.scaling.factor", float(f[0]));
    return Status::ok();
  }

  /// A linear's weight, and its bias (qwen2's q, k, v) when the artifact
  /// holds one: GGUF names it like the weight, ending in ".bias".
  Status addLinear(const std::string &name, const std::string &ggufName,
                   const std::vector<int64_t> *rowOrder) {
    QTENSOR_TRY(add(name, ggufName, rowOrder));
    const std::string bias = biasTensorOf(name);
    if (!artifact.manifest().findTensor(bias))
      return Status::ok();
    return add(bias, biasTensorOf(ggufName), rowOrder);
  }
};

const FileEntry *fileWithRole(const Manifest &m, FileRole role) {
  for (const FileEntry &f : m.files)
    if (f.role == role)
      return &f;
  return nullptr;
}

} // namespace

Expected<GGUFExportResult>
qtensor::exportGGUF(const std::string &dir, const std::string &outPath,
                    const GGUFExportOptions &options) {
  QTENSOR_ASSIGN_OR_RETURN(Artifact artifact, openArtifact(dir));
  const Manifest &m = artifact.manifest();
  const FileEntry *programFile = fileWithRole(m, FileRole::Program);
  if (!programFile)
    return makeError(dir, ": the artifact has no decoder program, so there "
                          "is no model to export (compile a whole "
                          "checkpoint with --tp 1)");
  const MappedFile *programBytes = artifact.file(programFile->path);
  if (!programBytes)
    return makeError(dir, ": ", programFile->path, " is not mapped");
  QTENSOR_ASSIGN_OR_RETURN(
      DecoderProgram program,
      parseProgram({reinterpret_cast<const char *>(programBytes->data()),
                    size_t(programBytes->size())},
                   programFile->path));
  QTENSOR_TRY(validateProgram(program, m, programFile->path));
  const DecoderConfig &c = program.config;

  const models::Architecture *family = models::findArchitecture(c.architecture);
  if (!family) // validateProgram refused it already
    return makeError(dir, ": architecture ", c.architecture,
                     " has no GGUF spelling here (", models::architectureList(),
                     ")");
  const std::string arch(family->ggufName);
  // ggml's llama pairs RoPE dimensions (2j, 2j+1); qwen2 and gemma3 use the
  // NeoX halves, as a Hugging Face checkpoint does.
  const bool permuteQK =
      !family->ggufRotatesHalves && c.rope == RopeStyle::Half;
  if (family->ggufRotatesHalves && c.rope != RopeStyle::Half)
    return makeError(dir, ": ", arch,
                     " in GGUF rotates halves (NeoX), the "
                     "program pairs dimensions");
  if (family->fusedProjections)
    return makeError(dir, ": llama.cpp's ", arch,
                     " graph reads its projections fused (attn_qkv, ffn_up); "
                     "the exporter writes them split, so it cannot write a "
                     "GGUF ",
                     arch, " yet");
  if (!c.ropeFreqFactorsLong.empty() || c.ropeMscale != 1.0)
    return makeError(dir, ": the program has LongRoPE divisors or a factor "
                          "on part of each head's RoPE, which llama.cpp "
                          "reads for phi3 only");
  const bool gemma = models::isGemma(family->family);
  const bool granite = family->family == models::Family::Granite;
  if (!granite && (c.residualScale != 1.0 || c.logitScale != 1.0))
    return makeError(dir, ": llama.cpp's ", arch,
                     " graph scales neither residual branches nor logits");
  if (!gemma && ((c.embedScale != 1.0 && !granite) ||
                 c.gate != GateActivation::Silu || c.slidingWindow))
    return makeError(dir,
                     ": the program's embedding scale, gate or window is not "
                     "what GGUF ",
                     arch, " implies");
  if ((family->family != models::Family::Gemma2 && c.attnSoftcap) ||
      (!gemma && c.finalSoftcap))
    return makeError(dir, ": llama.cpp's ", arch,
                     " graph applies no such logit soft-capping");
  // llama.cpp's gemma3 never scales its local layers' RoPE, the others
  // scale every layer's.
  if (!c.ropeFreqFactors.empty() &&
      c.ropeScalesLocal != (family->family != models::Family::Gemma3))
    return makeError(dir,
                     ": the program's RoPE scaling of the windowed "
                     "layers is not what GGUF ",
                     arch, " implies");
  // Every family's graph scales q.k by 1/sqrt(head dim); a program's other
  // scale is a factor on cos and sin (YaRN's), squared, which llama.cpp
  // applies as rope.scaling.attn_factor whatever the scaling type.
  // The gemma graphs pick their own scale by shape, and no factor on it.
  const double attentionFactorSquared =
      c.qkScale() * std::sqrt(double(c.headDim));
  // granite's graph takes q.k's scale itself (attention.scale).
  const bool scalesAttention =
      !gemma && !granite && std::abs(attentionFactorSquared - 1.0) > 1e-12;
  if (gemma) {
    const double expected = models::ggufGemmaQueryScale(
        family->family, c.layers, c.hidden, c.heads, c.headDim);
    if (std::abs(c.qkScale() / expected - 1.0) > 1e-12)
      return makeError(dir, ": the program scales q.k by ", c.qkScale(),
                       "; llama.cpp's ", arch, " graph scales it by ", expected,
                       " at this shape (query_pre_attn_scalar "
                       "cannot be spelled in GGUF)");
  }

  Export e{artifact, options, {}, {}};
  e.result.architecture = arch;
  GGUFFileWriter &w = e.writer;
  w.setString("general.architecture", arch);
  w.setString("general.name", m.model.name);
  const std::string p = arch + ".";
  w.setUInt32(p + "context_length", uint32_t(c.context));
  w.setUInt32(p + "embedding_length", uint32_t(c.hidden));
  w.setUInt32(p + "block_count", uint32_t(c.layers));
  w.setUInt32(p + "feed_forward_length", uint32_t(c.intermediate));
  w.setUInt32(p + "attention.head_count", uint32_t(c.heads));
  w.setUInt32(p + "attention.head_count_kv", uint32_t(c.kvHeads));
  w.setUInt32(p + "attention.key_length", uint32_t(c.headDim));
  w.setUInt32(p + "attention.value_length", uint32_t(c.headDim));
  w.setUInt32(p + "rope.dimension_count", uint32_t(c.ropeDim));
  w.setUInt32(p + "vocab_size", uint32_t(c.vocab));
  w.setFloat32(p + "rope.freq_base", float(c.ropeBase));
  w.setFloat32(p + "attention.layer_norm_rms_epsilon", float(c.rmsEps));
  if (scalesAttention)
    w.setFloat32(p + "rope.scaling.attn_factor",
                 float(std::sqrt(attentionFactorSquared)));
  if (gemma && c.slidingWindow)
    w.setUInt32(p + "attention.sliding_window", uint32_t(c.slidingWindow));
  if (family->family == models::Family::Gemma2)
    w.setFloat32(p + "attn_logit_softcapping", float(c.attnSoftcap));
  if (c.finalSoftcap)
    w.setFloat32(p + "final_logit_softcapping", float(c.finalSoftcap));
  if (granite) {
    w.setFloat32(p + "embedding_scale", float(c.embedScale));
    w.setFloat32(p + "residual_scale", float(c.residualScale));
    w.setFloat32(p + "attention.scale", float(c.qkScale()));
    w.setFloat32(p + "logit_scale", float(c.logitScale));
  }
  if (program.tokenizerFile) {
    const MappedFile *tok = artifact.file(*program.tokenizerFile);
    if (!tok)
      return makeError(dir, ": ", *program.tokenizerFile, " is not mapped");
    QTENSOR_ASSIGN_OR_RETURN(
        GGUFFile tokenizer,
        GGUFFile::fromBuffer(tok->data(), tok->size(), *program.tokenizerFile));
    QTENSOR_TRY(w.copyMetadata(tokenizer, "tokenizer."));
    e.result.tokenizer = true;
  } else {
    // llama.cpp's spelling of a model without a vocabulary (ids in, ids
    // out), which it loads instead of refusing the file.
    w.setString("tokenizer.ggml.model", "none");
  }

  const std::vector<int64_t> qOrder = ropePairOrder(c.heads, c.headDim);
  const std::vector<int64_t> kOrder = ropePairOrder(c.kvHeads, c.headDim);
  using models::BlockLinear;
  using models::BlockNorm;
  const models::TensorNames &gguf = models::tensorNames(models::Naming::GGUF);
  QTENSOR_TRY(e.add(program.embed, std::string(gguf.embed), nullptr));
  for (size_t l = 0; l < program.layers.size(); ++l) {
    const ProgramLayer &pl = program.layers[l];
    auto linear = [&](BlockLinear role) {
      return models::linearWeightName(models::Naming::GGUF, int64_t(l), role);
    };
    const float offset = float(c.normWeightOffset);
    auto norm = [&](BlockNorm role) {
      return *models::normWeightName(models::Naming::GGUF, *family, int64_t(l),
                                     role);
    };
    QTENSOR_TRY(
        e.add(pl.attnNorm, norm(BlockNorm::Attention), nullptr, offset));
    QTENSOR_TRY(e.addLinear(pl.q.tensor, linear(BlockLinear::Q),
                            permuteQK ? &qOrder : nullptr));
    QTENSOR_TRY(e.addLinear(pl.k.tensor, linear(BlockLinear::K),
                            permuteQK ? &kOrder : nullptr));
    QTENSOR_TRY(e.addLinear(pl.v.tensor, linear(BlockLinear::V), nullptr));
    QTENSOR_TRY(e.addLinear(pl.o.tensor, linear(BlockLinear::O), nullptr));
    QTENSOR_TRY(e.add(pl.ffnNorm, norm(BlockNorm::Mlp), nullptr, offset));
    QTENSOR_TRY(
        e.addLinear(pl.gate.tensor, linear(BlockLinear::Gate), nullptr));
    QTENSOR_TRY(e.addLinear(pl.up.tensor, linear(BlockLinear::Up), nullptr));
    QTENSOR_TRY(
        e.addLinear(pl.down.tensor, linear(BlockLinear::Down), nullptr));
    if (pl.qNorm) {
      QTENSOR_TRY(e.add(*pl.qNorm, norm(BlockNorm::QHead), nullptr, offset));
      QTENSOR_TRY(e.add(*pl.kNorm, norm(BlockNorm::KHead), nullptr, offset));
    }
    if (pl.postAttnNorm) {
      QTENSOR_TRY(e.add(*pl.postAttnNorm, norm(BlockNorm::PostAttention),
                        nullptr, offset));
      QTENSOR_TRY(
          e.add(*pl.postFfnNorm, norm(BlockNorm::PostMlp), nullptr, offset));
    }
  }
  QTENSOR_TRY(e.add(program.finalNorm, std::string(gguf.finalNorm), nullptr,
                    float(c.normWeightOffset)));
  QTENSOR_TRY(e.addRopeScaling(c));
  if (program.head.tensor != program.embed) // else tied, as GGUF spells it
    QTENSOR_TRY(
        e.addLinear(program.head.tensor, std::string(gguf.head), nullptr));
  for (const GGUFExportedTensor &t : e.result.tensors)
    if (t.how.rfind("codes kept", 0) == 0) {
      w.setUInt32("general.quantization_version", 2); // GGML_QNT_VERSION
      break;
    }
  QTENSOR_TRY(w.write(outPath));
  e.result.bytes = w.dataBytes();
  return e.result;
}
