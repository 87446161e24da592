//===- QuantizedStorage.cpp - Stored codes <-> logical codes --------------===//

#include "qtensor/Formats/QuantizedStorage.h"

#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Descriptor/ScaleFormat.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Numerics/Packing.h"
#include "qtensor/Support/CheckedMath.h"
#include "qtensor/Support/Sha256.h"
#include "qtensor/Support/ThreadPool.h"
#include "qtensor/Support/Xxh3.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>

namespace qtensor::artifact {
namespace {

/// The kernel layout `t` is stored in, or an error naming the layout.
Expected<KernelLayoutSpec> kernelSpec(const QuantizedTensorDescriptor &t) {
  KernelLayoutKind kind;
  if (!parseKernelLayoutFamily(t.layout.family, kind))
    return makeError("layout family \"", t.layout.family,
                     "\" is not a storage layout of this artifact version "
                     "(logical, decode_gemv, prefill_mma)");
  KernelLayoutId id = kernelLayoutId(kind);
  if (t.layout.version != id.version || t.layout.encoding != id.encoding)
    return makeError("layout ", t.layout.family, " v", t.layout.version, " ",
                     t.layout.encoding, " is not the one this build packs (v",
                     id.version, " ", std::string(id.encoding), ")");
  if (t.shape.size() != 2)
    return makeError("layout ", t.layout.family,
                     " stores 2-D weights, the tensor has rank ",
                     t.shape.size());
  const CodeType &code = t.descriptor.code;
  // The layout's geometry refuses the widths it does not hold (2, 3, 5
  // and 6 bits only in decode_gemv's byte fields).
  if (code.bits < 2 || code.bits == 7 || code.bits > 8)
    return makeError("layout ", t.layout.family,
                     " stores 2- to 6- or 8-bit codes, not ", code.bits);
  KernelLayoutSpec spec;
  spec.kind = kind;
  spec.bits = code.bits;
  spec.isSigned = code.isSigned;
  return spec;
}

int64_t rowsOf(const QuantizedTensorDescriptor &t) {
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < t.shape.size(); ++i)
    rows *= t.shape[i];
  return rows;
}
int64_t colsOf(const QuantizedTensorDescriptor &t) {
  return t.shape.empty() ? 1 : t.shape.back();
}

/// Position i of each row holds logical column perm[i]; `inverse` undoes it.
Expected<std::vector<int32_t>> permuteColumns(const std::vector<int32_t> &codes,
                                              int64_t rows, int64_t cols,
                                              const std::vector<int64_t> &perm,
                                              bool inverse) {
  if (int64_t(perm.size()) != cols)
    return makeError("permutation has ", perm.size(), " entries, the weight ",
                     cols, " columns");
  std::vector<int32_t> out(codes.size());
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t *from = codes.data() + size_t(r) * size_t(cols);
    int32_t *to = out.data() + size_t(r) * size_t(cols);
    for (int64_t i = 0; i < cols; ++i) {
      if (inverse)
        to[perm[size_t(i)]] = from[i];
      else
        to[i] = from[perm[size_t(i)]];
    }
  }
  return out;
}

/// packKernelLayout, over blocks of rows on the process's pool where the
/// layout's rows are independent bytes (decode_gemv: whole words per row).
/// A block that fails packs the whole again, serially, for the message
/// that names the first bad code of the tensor.
Expected<std::vector<uint8_t>> packRows(const KernelLayoutSpec &spec,
                                        const int32_t *codes, int64_t rows,
                                        int64_t cols) {
  constexpr int64_t kMinBlock = int64_t(1) << 18; // codes per block
  if (spec.kind != KernelLayoutKind::DecodeGemv || rows < 2 ||
      rows * cols < 2 * kMinBlock)
    return packKernelLayout(spec, codes, rows, cols);
  QTENSOR_ASSIGN_OR_RETURN(KernelLayoutGeometry g,
                           kernelLayoutGeometry(spec, rows, cols));
  const size_t rowBytes = size_t(g.bytes / uint64_t(rows));
  std::vector<uint8_t> bytes(size_t(g.bytes));
  std::atomic<bool> failed{false};
  defaultThreadPool().parallelRanges(
      rows, rows * cols, kMinBlock, [&](int64_t r0, int64_t r1) {
        auto part = packKernelLayout(spec, codes + size_t(r0) * size_t(cols),
                                     r1 - r0, cols);
        if (!part) {
          failed = true;
          return;
        }
        std::memcpy(bytes.data() + size_t(r0) * rowBytes, part->data(),
                    part->size());
      });
  if (failed)
    return packKernelLayout(spec, codes, rows, cols);
  return bytes;
}

} // namespace

Expected<std::vector<uint8_t>>
packKernelCodes(const AffineDescriptor &d, KernelLayoutKind kind,
                const std::vector<int32_t> &codes, int64_t rows, int64_t cols) {
  KernelLayoutSpec spec{kind, d.code.bits, d.code.isSigned};
  if (!d.permutation)
    return packRows(spec, codes.data(), rows, cols);
  QTENSOR_ASSIGN_OR_RETURN(
      std::vector<int32_t> ordered,
      permuteColumns(codes, rows, cols, *d.permutation, /*inverse=*/false));
  return packRows(spec, ordered.data(), rows, cols);
}

Expected<std::vector<int64_t>>
storedCodeShape(const QuantizedTensorDescriptor &t) {
  if (t.layout.isLogical()) {
    std::vector<int64_t> shape = t.shape;
    if (shape.empty())
      shape.push_back(1);
    shape.back() = packedRowBytes(shape.back(), t.descriptor.code.bits);
    return shape;
  }
  QTENSOR_ASSIGN_OR_RETURN(KernelLayoutSpec spec, kernelSpec(t));
  QTENSOR_ASSIGN_OR_RETURN(KernelLayoutGeometry g,
                           kernelLayoutGeometry(spec, t.shape[0], t.shape[1]));
  return std::vector<int64_t>{static_cast<int64_t>(g.bytes)};
}

Expected<std::vector<uint8_t>>
packStoredCodes(const QuantizedTensorDescriptor &t,
                const std::vector<int32_t> &codes) {
  int64_t rows = rowsOf(t), cols = colsOf(t);
  if (static_cast<uint64_t>(rows) * static_cast<uint64_t>(cols) != codes.size())
    return makeError("expected ", rows * cols, " codes, got ", codes.size());
  if (t.layout.isLogical())
    return packCodes(codes.data(), rows, cols, t.descriptor.code.bits,
                     t.descriptor.code.isSigned, t.descriptor.encoding,
                     BitOrder::LsbFirst, RowAlignment::Byte);
  QTENSOR_ASSIGN_OR_RETURN(KernelLayoutSpec spec, kernelSpec(t));
  return packKernelCodes(t.descriptor, spec.kind, codes, rows, cols);
}

namespace {

/// Stored bytes of `t` (whose shape may be a row range of the stored
/// tensor, then its own bytes) -> logical codes; errors name elements of
/// the stored tensor, whose first row here is `rowBase`.
Expected<std::vector<int32_t>> unpackCodesOf(const QuantizedTensorDescriptor &t,
                                             const uint8_t *bytes,
                                             size_t numBytes, int64_t rowBase) {
  int64_t rows = rowsOf(t), cols = colsOf(t);
  std::vector<int32_t> codes;
  if (t.layout.isLogical()) {
    QTENSOR_ASSIGN_OR_RETURN(
        codes, unpackCodes(bytes, numBytes, rows, cols, t.descriptor.code.bits,
                           t.descriptor.code.isSigned, t.descriptor.encoding,
                           BitOrder::LsbFirst, RowAlignment::Byte));
  } else {
    QTENSOR_ASSIGN_OR_RETURN(KernelLayoutSpec spec, kernelSpec(t));
    auto unpacked = unpackKernelLayout(spec, bytes, numBytes, rows, cols);
    if (!unpacked && rowBase)
      return makeError("rows from ", rowBase, ": ", unpacked.message());
    if (!unpacked)
      return unpacked.error();
    codes = unpacked.take();
    if (const auto &perm = t.descriptor.permutation) {
      QTENSOR_ASSIGN_OR_RETURN(
          codes, permuteColumns(codes, rows, cols, *perm, /*inverse=*/true));
    }
  }
  CodeBounds bounds = codeBounds(t.descriptor);
  // A codebook's NaN entries (E4M3's 0x7f, 0xff) name no weight.
  const std::vector<float> &table = codebookValues(t.descriptor.codebook);
  // Most tensors pass: one vectorizable scan of the extremes says so, and
  // only a tensor that may fail takes the loop that names the first bad
  // element.
  if (table.empty() && !codes.empty()) {
    int32_t lo = codes[0], hi = codes[0];
    for (int32_t c : codes) {
      lo = std::min(lo, c);
      hi = std::max(hi, c);
    }
    if (lo >= bounds.min && hi <= bounds.max)
      return codes;
  }
  const size_t base = size_t(rowBase) * size_t(cols);
  for (size_t i = 0; i < codes.size(); ++i) {
    const size_t at = base + i;
    if (codes[i] < bounds.min || codes[i] > bounds.max)
      return makeError("code ", codes[i], " at element ", at, " (row ",
                       int64_t(at) / cols, ", column ", int64_t(at) % cols,
                       ") is outside the descriptor's "
                       "range [",
                       bounds.min, ", ", bounds.max, "]");
    if (!table.empty() && std::isnan(table[size_t(codes[i])]))
      return makeError("code ", codes[i], " at element ", at, " (row ",
                       int64_t(at) / cols, ", column ", int64_t(at) % cols,
                       ") is NaN in codebook ",
                       toString(t.descriptor.codebook));
  }
  return codes;
}

/// Bytes of `rows` whole stored rows (a multiple of storedCodeRowUnit, or
/// the tensor's last rows; all of them for a tensor that is not 2-D) of
/// `t`.
Expected<uint64_t> storedRowBytes(const QuantizedTensorDescriptor &t,
                                  int64_t rows) {
  QuantizedTensorDescriptor part = t;
  if (rows != rowsOf(t))
    part.shape[0] = rows; // 2-D: storedCodeRowUnit is 1 row otherwise
  QTENSOR_ASSIGN_OR_RETURN(std::vector<int64_t> shape, storedCodeShape(part));
  uint64_t bytes = 1;
  for (int64_t d : shape)
    bytes *= uint64_t(d);
  return bytes;
}

} // namespace

Expected<std::vector<int32_t>>
unpackStoredCodes(const QuantizedTensorDescriptor &t, const uint8_t *bytes,
                  size_t numBytes) {
  return unpackCodesOf(t, bytes, numBytes, 0);
}

int64_t storedCodeRowUnit(const QuantizedTensorDescriptor &t) {
  if (t.shape.size() != 2 || t.shape[0] <= 0)
    return std::max<int64_t>(1, rowsOf(t));
  if (t.layout.isLogical())
    return 1;
  Expected<KernelLayoutSpec> spec = kernelSpec(t);
  if (!spec)
    return t.shape[0];
  if (spec->kind == KernelLayoutKind::DecodeGemv)
    return 1;
  // prefill_mma: one panel of rows (the padded extent of a single row).
  Expected<KernelLayoutGeometry> g = kernelLayoutGeometry(*spec, 1, t.shape[1]);
  return g ? g->paddedRows : t.shape[0];
}

Expected<std::vector<int32_t>>
unpackStoredCodeRows(const QuantizedTensorDescriptor &t, const uint8_t *bytes,
                     size_t numBytes, int64_t firstRow, int64_t rowCount) {
  const int64_t rows = rowsOf(t), cols = colsOf(t);
  if (firstRow < 0 || rowCount < 0 || firstRow > rows - rowCount)
    return makeError("rows [", firstRow, ", ", firstRow + rowCount,
                     ") are outside [0, ", rows, ")");
  // The whole buffer is checked first: a row range of a truncated or
  // oversized tensor is an error too.
  QTENSOR_ASSIGN_OR_RETURN(uint64_t whole, storedRowBytes(t, rows));
  if (numBytes != whole)
    return makeError("the stored codes hold ", numBytes, " bytes, but ", rows,
                     " x ", cols, " codes in ", t.layout.family, " take ",
                     whole);
  if (rowCount == 0)
    return std::vector<int32_t>();
  const int64_t unit = storedCodeRowUnit(t);
  if (unit >= rows || t.shape.size() != 2) {
    QTENSOR_ASSIGN_OR_RETURN(std::vector<int32_t> all,
                             unpackCodesOf(t, bytes, numBytes, 0));
    auto from = all.begin() + firstRow * cols;
    return std::vector<int32_t>(from, from + rowCount * cols);
  }
  // Whole units covering the range: [first unit, last unit) of rows.
  const int64_t lo = firstRow / unit * unit;
  const int64_t hi =
      std::min(rows, (firstRow + rowCount + unit - 1) / unit * unit);
  QTENSOR_ASSIGN_OR_RETURN(uint64_t unitBytes, storedRowBytes(t, unit));
  const uint64_t skip = unitBytes * uint64_t(lo / unit);
  QTENSOR_ASSIGN_OR_RETURN(uint64_t size, storedRowBytes(t, hi - lo));
  QuantizedTensorDescriptor part = t;
  part.shape[0] = hi - lo;
  QTENSOR_ASSIGN_OR_RETURN(std::vector<int32_t> block,
                           unpackCodesOf(part, bytes + skip, size, lo));
  if (lo == firstRow && hi == firstRow + rowCount)
    return block;
  auto from = block.begin() + (firstRow - lo) * cols;
  return std::vector<int32_t>(from, from + rowCount * cols);
}

safetensors::DType scaleDType(const AffineDescriptor &d) {
  return floatDType(d.scaleType);
}

safetensors::DType floatDType(FloatType t) {
  switch (t) {
  case FloatType::F16:
    return safetensors::DType::F16;
  case FloatType::BF16:
    return safetensors::DType::BF16;
  case FloatType::F32:
    return safetensors::DType::F32;
  }
  return safetensors::DType::F32;
}

std::optional<FloatType> floatTypeOfDType(safetensors::DType d) {
  switch (d) {
  case safetensors::DType::F32:
    return FloatType::F32;
  case safetensors::DType::F16:
    return FloatType::F16;
  case safetensors::DType::BF16:
    return FloatType::BF16;
  default:
    return std::nullopt;
  }
}

Expected<std::vector<double>>
readQParams(safetensors::DType dtype, const uint8_t *bytes, size_t numBytes) {
  switch (dtype) {
  case safetensors::DType::F16:
  case safetensors::DType::BF16:
  case safetensors::DType::F32:
  case safetensors::DType::U8:
  case safetensors::DType::U16:
  case safetensors::DType::U32:
  case safetensors::DType::I8:
  case safetensors::DType::I16:
  case safetensors::DType::I32:
    break;
  default:
    return makeError("qparams of dtype ", safetensors::dtypeName(dtype),
                     " are not supported");
  }
  unsigned size = safetensors::dtypeSize(dtype);
  if (size == 0 || numBytes % size != 0)
    return makeError("qparams of ", numBytes,
                     " bytes are not a whole number "
                     "of ",
                     safetensors::dtypeName(dtype), " values");
  std::vector<double> out(numBytes / size);
  // One loop per dtype: the element width and its conversion are fixed
  // inside it (safetensors and the host: little-endian).
  auto convert = [&](auto element, auto toDouble) {
    using T = decltype(element);
    for (size_t i = 0; i < out.size(); ++i) {
      T raw;
      std::memcpy(&raw, bytes + i * sizeof(T), sizeof(T));
      out[i] = toDouble(raw);
    }
  };
  auto same = [](auto v) { return static_cast<double>(v); };
  switch (dtype) {
  case safetensors::DType::F16:
    convert(uint16_t(), [](uint16_t h) { return double(halfBitsToFloat(h)); });
    break;
  case safetensors::DType::BF16:
    convert(uint16_t(),
            [](uint16_t h) { return double(bfloat16BitsToFloat(h)); });
    break;
  case safetensors::DType::F32:
    convert(float(), same);
    break;
  case safetensors::DType::U8:
    convert(uint8_t(), same);
    break;
  case safetensors::DType::U16:
    convert(uint16_t(), same);
    break;
  case safetensors::DType::U32:
    convert(uint32_t(), same);
    break;
  case safetensors::DType::I8:
    convert(int8_t(), same);
    break;
  case safetensors::DType::I16:
    convert(int16_t(), same);
    break;
  case safetensors::DType::I32:
    convert(int32_t(), same);
    break;
  default:
    break; // refused above
  }
  return out;
}

Expected<std::vector<uint8_t>> reconstructionF32Bytes(
    const QuantizedTensorDescriptor &t, const std::vector<int32_t> &codes,
    const std::vector<double> &scales, const std::vector<double> &zeros) {
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> values,
                           reconstructAffine(t, codes, scales, zeros));
  std::vector<uint8_t> bytes(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    float f = static_cast<float>(values[i]);
    std::memcpy(bytes.data() + 4 * i, &f, 4);
  }
  return bytes;
}

namespace {

/// Where reconstructed values go, in order: a running digest of one form.
class ValueDigest {
public:
  static Expected<ValueDigest> create(DigestForm form) {
    ValueDigest d;
    if (form == DigestForm::Sha256) {
      QTENSOR_ASSIGN_OR_RETURN(Sha256Stream sha, Sha256Stream::create());
      d.sha.emplace(std::move(sha));
    } else {
      QTENSOR_ASSIGN_OR_RETURN(Xxh3Stream xxh, Xxh3Stream::create());
      d.xxh.emplace(std::move(xxh));
    }
    return d;
  }
  /// The next n values of the tensor.
  Status add(const float *values, size_t n) {
    const auto *bytes = reinterpret_cast<const uint8_t *>(values);
    return sha ? sha->update(bytes, n * sizeof(float))
               : xxh->update(bytes, n * sizeof(float));
  }
  Expected<std::string> finish() {
    if (sha)
      return sha->finishHex();
    return xxh->finishHex();
  }

private:
  std::optional<Sha256Stream> sha;
  std::optional<Xxh3Stream> xxh;
};

/// Elements [begin, end) of `r`, whose codes from flat index `codesBegin`
/// are `codes`, reconstructed across the thread pool in blocks, each
/// rounded once to f32 and given in order to `digest`.
Status digestReconstruction(const AffineReconstruction &r, ValueDigest &digest,
                            const int32_t *codes, size_t codesBegin,
                            size_t begin, size_t end) {
  constexpr size_t kBlock = size_t(1) << 22;
  std::vector<float> block(std::min(end - begin, kBlock));
  for (size_t b = begin; b < end; b += kBlock) {
    const size_t e = std::min(end, b + kBlock);
    std::mutex failureMutex;
    size_t failedAt = end;
    std::string failure;
    defaultThreadPool().parallelRanges(
        int64_t(e - b), int64_t(e - b), int64_t(1) << 16,
        [&](int64_t x0, int64_t x1) {
          std::vector<double> values(size_t(x1 - x0));
          Status s = r.rangeOf(codes, codesBegin, b + size_t(x0),
                               b + size_t(x1), values.data());
          if (!s) {
            std::lock_guard<std::mutex> lock(failureMutex);
            if (b + size_t(x0) < failedAt) {
              failedAt = b + size_t(x0);
              failure = s.message();
            }
            return;
          }
          for (size_t i = 0; i < values.size(); ++i)
            block[size_t(x0) + i] = static_cast<float>(values[i]);
        });
    if (!failure.empty())
      return makeError(failure);
    QTENSOR_TRY(digest.add(block.data(), e - b));
  }
  return Status::ok();
}

} // namespace

Expected<std::string> reconstructionDigest(const QuantizedTensorDescriptor &t,
                                           const std::vector<int32_t> &codes,
                                           const std::vector<double> &scales,
                                           const std::vector<double> &zeros,
                                           DigestForm form) {
  QTENSOR_ASSIGN_OR_RETURN(AffineReconstruction r,
                           AffineReconstruction::make(t, codes, scales, zeros));
  QTENSOR_ASSIGN_OR_RETURN(ValueDigest digest, ValueDigest::create(form));
  // Streamed in blocks, so the digest is the whole tensor's and memory is
  // one block's whatever the tensor's size.
  QTENSOR_TRY(digestReconstruction(r, digest, codes.data(), 0, 0, r.size()));
  return digest.finish();
}

Expected<std::string>
storedReconstructionDigest(const QuantizedTensorDescriptor &t,
                           const uint8_t *bytes, size_t numBytes,
                           const std::vector<double> &scales,
                           const std::vector<double> &zeros, DigestForm form) {
  QTENSOR_ASSIGN_OR_RETURN(
      AffineReconstruction r,
      AffineReconstruction::makeWithoutCodes(t, scales, zeros));
  QTENSOR_ASSIGN_OR_RETURN(ValueDigest digest, ValueDigest::create(form));
  const size_t cols = size_t(colsOf(t));
  QTENSOR_TRY(forEachStoredRowBlock(
      t, bytes, numBytes, uint64_t(1) << 22,
      [&](int64_t first, int64_t count,
          const std::vector<int32_t> &codes) -> Status {
        const size_t begin = size_t(first) * cols;
        return digestReconstruction(r, digest, codes.data(), begin, begin,
                                    begin + size_t(count) * cols);
      }));
  return digest.finish();
}

Expected<std::pair<uint64_t, uint64_t>>
storedRowsByteRange(const QuantizedTensorDescriptor &t, int64_t firstRow,
                    int64_t rowCount) {
  const int64_t rows = rowsOf(t), unit = storedCodeRowUnit(t);
  if (firstRow < 0 || rowCount < 0 || firstRow > rows - rowCount ||
      firstRow % unit != 0 ||
      (rowCount % unit != 0 && firstRow + rowCount != rows))
    return makeError("rows [", firstRow, ", ", firstRow + rowCount,
                     ") are not whole stored units of ", unit, " rows of [0, ",
                     rows, ")");
  if (rowCount == 0)
    return std::pair<uint64_t, uint64_t>(0, 0);
  if (t.shape.size() != 2) {
    QTENSOR_ASSIGN_OR_RETURN(uint64_t whole, storedRowBytes(t, rows));
    return std::pair<uint64_t, uint64_t>(0, whole);
  }
  QTENSOR_ASSIGN_OR_RETURN(uint64_t unitBytes, storedRowBytes(t, unit));
  QTENSOR_ASSIGN_OR_RETURN(uint64_t size, storedRowBytes(t, rowCount));
  return std::pair<uint64_t, uint64_t>(unitBytes * uint64_t(firstRow / unit),
                                       size);
}

Status forEachStoredRowBlock(
    const QuantizedTensorDescriptor &t, const uint8_t *bytes, size_t numBytes,
    uint64_t elements,
    const std::function<Status(int64_t, int64_t, const std::vector<int32_t> &)>
        &visit) {
  const int64_t rows = rowsOf(t), cols = colsOf(t);
  const int64_t unit = storedCodeRowUnit(t);
  const int64_t perBlock =
      std::max<int64_t>(
          1, int64_t(elements / uint64_t(std::max<int64_t>(1, cols * unit)))) *
      unit;
  for (int64_t first = 0; first < rows; first += perBlock) {
    const int64_t count = std::min(perBlock, rows - first);
    QTENSOR_ASSIGN_OR_RETURN(
        std::vector<int32_t> codes,
        unpackStoredCodeRows(t, bytes, numBytes, first, count));
    QTENSOR_TRY(visit(first, count, codes));
  }
  return Status::ok();
}

Expected<std::vector<int32_t>>
readQParamCodes(const safetensors::TensorView &codes) {
  if (safetensors::isFloatDType(codes.dtype))
    return makeError("codes of dtype ", safetensors::dtypeName(codes.dtype),
                     " are not integers");
  QTENSOR_ASSIGN_OR_RETURN(
      std::vector<double> values,
      readQParams(codes.dtype, codes.data, codes.byteSize()));
  return std::vector<int32_t>(values.begin(), values.end());
}

namespace {
safetensors::TensorView viewOf(const std::vector<float> &values,
                               std::string name,
                               const std::vector<int64_t> &shape) {
  safetensors::TensorView v;
  v.name = std::move(name);
  v.dtype = safetensors::DType::F32;
  v.shape = shape;
  v.begin = 0;
  v.end = values.size() * sizeof(float);
  v.data = reinterpret_cast<const uint8_t *>(values.data());
  return v;
}
} // namespace

Expected<std::unique_ptr<DecodedQParams>>
decodeStoredNestedQParams(const std::string &name,
                          const QuantizedTensorDescriptor &t,
                          const safetensors::TensorView &scaleCodes,
                          const safetensors::TensorView &superScales,
                          const safetensors::TensorView *minCodes,
                          const safetensors::TensorView *superMins) {
  auto fail = [&](const std::string &why) {
    return makeError(name, ": nested qparams: ", why);
  };
  auto read = [&](auto reader, const safetensors::TensorView &v,
                  auto &out) -> Status {
    auto r = reader(v);
    if (!r)
      return fail(v.name + ": " + r.message());
    out = r.take();
    return Status::ok();
  };
  auto readFloats = [](const safetensors::TensorView &v) {
    return readQParams(v.dtype, v.data, v.byteSize());
  };
  std::vector<int32_t> sc, mc;
  std::vector<double> d, dmin;
  QTENSOR_TRY(read(readQParamCodes, scaleCodes, sc));
  QTENSOR_TRY(read(readFloats, superScales, d));
  if (minCodes)
    QTENSOR_TRY(read(readQParamCodes, *minCodes, mc));
  if (superMins)
    QTENSOR_TRY(read(readFloats, *superMins, dmin));
  auto first = decodeNestedQParams(t.descriptor, t.shape, sc, d, mc, dmin);
  if (!first)
    return fail(first.message());
  auto out = std::make_unique<DecodedQParams>();
  out->scales = std::move(first->scales);
  out->mins = std::move(first->mins);
  std::vector<int64_t> qshape = qparamShape(t.descriptor, t.shape);
  out->scalesView = viewOf(out->scales, scaleCodes.name + " (decoded)", qshape);
  if (minCodes)
    out->minsView = viewOf(out->mins, minCodes->name + " (decoded)", qshape);
  return out;
}

Expected<std::unique_ptr<DecodedQParams>>
decodeStoredScaleCodes(const std::string &name,
                       const QuantizedTensorDescriptor &t,
                       const safetensors::TensorView &scaleCodes) {
  const ScaleFormat format = t.descriptor.scaleFormat;
  if (scaleCodes.dtype != safetensors::DType::U8)
    return makeError(name, ": ", scaleCodes.name, ": ", toString(format),
                     " scale codes are stored as U8, got ",
                     safetensors::dtypeName(scaleCodes.dtype));
  const std::vector<int64_t> qshape = qparamShape(t.descriptor, t.shape);
  auto count = checkedElementCount(qshape, uint64_t(1) << 40);
  if (!count || *count != scaleCodes.byteSize())
    return makeError(name, ": ", scaleCodes.name, ": expected ",
                     shapeToString(qshape), " scale codes, got ",
                     scaleCodes.byteSize(), " bytes");
  auto out = std::make_unique<DecodedQParams>();
  out->scales.resize(*count);
  for (size_t i = 0; i < *count; ++i) {
    Expected<float> s = decodeScaleCode(format, scaleCodes.data[i]);
    if (!s)
      return makeError(name, ": ", scaleCodes.name, ": scale ", i, ": ",
                       s.message());
    out->scales[i] = *s;
  }
  out->scalesView = viewOf(out->scales, scaleCodes.name + " (decoded)", qshape);
  return out;
}

Expected<Mixed2416Streams> readMixed2416Streams(const std::string &name,
                                                const Mixed2416Descriptor &d,
                                                const Mixed2416Views &views) {
  auto view =
      [&](const char *key) -> Expected<const safetensors::TensorView *> {
    auto it = views.find(key);
    if (it == views.end() || !it->second)
      return makeError(name, ": its ", key, " stream is missing");
    return it->second;
  };
  auto bytes = [&](const char *key, std::vector<uint8_t> &out) -> Status {
    QTENSOR_ASSIGN_OR_RETURN(const safetensors::TensorView *v, view(key));
    out.assign(v->data, v->data + v->byteSize());
    return Status::ok();
  };
  auto values = [&](const char *key, std::vector<double> &out) -> Status {
    QTENSOR_ASSIGN_OR_RETURN(const safetensors::TensorView *v, view(key));
    Expected<std::vector<double>> read =
        readQParams(v->dtype, v->data, v->byteSize());
    if (!read)
      return makeError(name, ": ", key, ": ", read.message());
    out = read.take();
    return Status::ok();
  };
  auto indices = [&](const char *key, std::vector<int32_t> &out) -> Status {
    std::vector<double> wide;
    QTENSOR_TRY(values(key, wide));
    out.assign(wide.begin(), wide.end()); // I32 values: exact
    return Status::ok();
  };
  Mixed2416Streams s;
  QTENSOR_TRY(bytes("precision_map", s.precisionMap));
  QTENSOR_TRY(bytes("w2_codes", s.w2Codes));
  QTENSOR_TRY(bytes("w4_codes", s.w4Codes));
  QTENSOR_TRY(bytes("first_scale_codes", s.firstScaleCodes));
  QTENSOR_TRY(bytes("first_zero_points", s.firstZeroPoints));
  QTENSOR_TRY(values("second_scales", s.secondScales));
  QTENSOR_TRY(values("second_zero_points", s.secondZeroPoints));
  QTENSOR_TRY(values("sparse_values", s.sparseValues));
  QTENSOR_TRY(indices("sparse_columns", s.sparseColumns));
  QTENSOR_TRY(indices("sparse_row_pointers", s.sparseRowPointers));
  if (Status ok = verifyMixed2416Streams(d, s); !ok)
    return makeError(name, ": ", ok.message());
  return s;
}

Expected<std::string>
mixed2416ReconstructionDigest(const Mixed2416Descriptor &d,
                              const Mixed2416Streams &s) {
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> values,
                           reconstructMixed2416(d, s));
  std::vector<float> rounded(values.begin(), values.end());
  return sha256Hex(reinterpret_cast<const uint8_t *>(rounded.data()),
                   rounded.size() * sizeof(float));
}

} // namespace qtensor::artifact
