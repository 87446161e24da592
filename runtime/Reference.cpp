//===- Reference.cpp - The reference weight and matmul of one op ----------===//

#include "qtensor/Runtime/Reference.h"

#include "qtensor/Runtime/ReferenceDot.h"

#include "qtensor/Support/ThreadPool.h"

#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Formats/QuantizedStorage.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {
/// A quantized tensor's logical codes and qparams, read from its stored
/// physical tensors; errors name the one that failed.
struct StoredParts {
  const artifact::QuantizedTensor *q = nullptr;
  std::vector<int32_t> codes;
  std::vector<double> scales, zeros;
};

/// Without `withCodes` the codes are left packed (read a block of rows at a
/// time by ReferenceRows).
Expected<StoredParts> readStoredParts(const artifact::TensorEntry &entry,
                                      const safetensors::TensorView &codes,
                                      const safetensors::TensorView &scales,
                                      const safetensors::TensorView *zeros,
                                      bool withCodes = true) {
  StoredParts p;
  p.q = entry.quantized();
  if (!p.q)
    return makeError(entry.name, ": not a quantized tensor");
  if (withCodes) {
    auto logical =
        artifact::unpackStoredCodes(p.q->logical, codes.data, codes.byteSize());
    if (!logical)
      return makeError(entry.name, ".codes: ", logical.message());
    p.codes = logical.take();
  }
  auto s = artifact::readQParams(scales.dtype, scales.data, scales.byteSize());
  if (!s)
    return makeError(entry.name, ".scales: ", s.message());
  p.scales = s.take();
  if (zeros) {
    auto read =
        artifact::readQParams(zeros->dtype, zeros->data, zeros->byteSize());
    if (!read)
      return makeError(entry.name, ".zeros: ", read.message());
    p.zeros = read.take();
  }
  return p;
}
} // namespace

Expected<std::vector<double>> qtensor::runtime::reconstructWeight(
    const artifact::TensorEntry &entry, const safetensors::TensorView &codes,
    const safetensors::TensorView &scales, const safetensors::TensorView *zeros,
    ReconstructedPart part) {
  QTENSOR_ASSIGN_OR_RETURN(StoredParts p,
                           readStoredParts(entry, codes, scales, zeros));
  auto made =
      AffineReconstruction::make(p.q->logical, p.codes, p.scales, p.zeros);
  std::vector<double> w(made ? made->size() : 0);
  Status s =
      made ? made->range(0, w.size(), w.data(), part) : Status(made.error());
  if (!s)
    return makeError(entry.name, ": reconstruction: ", s.message());
  return w;
}

Expected<std::vector<double>> qtensor::runtime::reconstructWeightRows(
    const artifact::TensorEntry &entry, const safetensors::TensorView &codes,
    const safetensors::TensorView &scales, const safetensors::TensorView *zeros,
    const std::vector<int64_t> &rows, ReconstructedPart part) {
  QTENSOR_ASSIGN_OR_RETURN(
      std::unique_ptr<ReferenceRows> r,
      ReferenceRows::open(entry, codes, scales, zeros, part));
  const int64_t n = r->rows(), k = r->cols(), unit = r->rowUnit();
  for (int64_t row : rows)
    if (row < 0 || row >= n)
      return makeError(entry.name, ": row ", row, " is outside [0, ", n, ")");
  // Each stored unit of rows holding a wanted row is reconstructed once.
  std::map<int64_t, std::vector<size_t>> byUnit; // first row -> indices
  for (size_t i = 0; i < rows.size(); ++i)
    byUnit[rows[i] / unit * unit].push_back(i);
  std::vector<double> w(rows.size() * size_t(k)), block;
  for (const auto &[first, wanted] : byUnit) {
    const int64_t count = std::min(unit, n - first);
    block.resize(size_t(count) * size_t(k));
    QTENSOR_TRY(r->fill(first, count, block.data()));
    for (size_t i : wanted)
      std::copy_n(block.begin() + (rows[i] - first) * k, k,
                  w.begin() + i * size_t(k));
  }
  return w;
}

Expected<std::unique_ptr<FloatWeightRows>>
FloatWeightRows::make(std::vector<float> values, int64_t n, int64_t k,
                      const std::string &name) {
  if (n < 0 || k < 0 || values.size() != size_t(n) * size_t(k))
    return makeError(name, ": ", uint64_t(values.size()),
                     " float values for a weight of [", n, ", ", k, "]");
  std::unique_ptr<FloatWeightRows> w(new FloatWeightRows());
  w->values = std::move(values);
  w->n = n;
  w->k = k;
  w->name = name;
  return w;
}

Status FloatWeightRows::fill(int64_t first, int64_t count, double *out) const {
  if (first < 0 || count < 0 || first + count > n)
    return makeError(name, ": rows [", first, ", ", first + count,
                     ") are outside [0, ", n, ")");
  const float *from = values.data() + size_t(first) * size_t(k);
  std::copy(from, from + size_t(count) * size_t(k), out);
  return Status::ok();
}

struct ReferenceRows::Parts {
  StoredParts stored; ///< qparams; the codes stay packed
  artifact::QuantizedTensor tensor;
  const uint8_t *codes = nullptr; ///< the stored codes, borrowed
  size_t codeBytes = 0;
};

ReferenceRows::~ReferenceRows() = default;

int64_t ReferenceRows::rowUnit() const {
  return artifact::storedCodeRowUnit(parts->tensor.logical);
}

Expected<std::unique_ptr<ReferenceRows>> ReferenceRows::open(
    const artifact::TensorEntry &entry, const safetensors::TensorView &codes,
    const safetensors::TensorView &scales, const safetensors::TensorView *zeros,
    ReconstructedPart part) {
  std::unique_ptr<ReferenceRows> r(new ReferenceRows());
  r->name = entry.name;
  r->part = part;
  r->parts = std::make_unique<Parts>();
  QTENSOR_ASSIGN_OR_RETURN(
      r->parts->stored,
      readStoredParts(entry, codes, scales, zeros, /*withCodes=*/false));
  const StoredParts &p = r->parts->stored;
  r->parts->tensor = *p.q;
  r->parts->codes = codes.data;
  r->parts->codeBytes = codes.byteSize();
  // The stored size is checked now; each run of rows' codes when read.
  if (auto none = artifact::unpackStoredCodeRows(p.q->logical, codes.data,
                                                 codes.byteSize(), 0, 0);
      !none)
    return makeError(entry.name, ".codes: ", none.message());
  const std::vector<int64_t> &shape = p.q->logical.shape;
  if (shape.size() != 2)
    return makeError(entry.name, ": rows of a rank-", shape.size(), " tensor");
  r->n = shape[0];
  r->k = shape[1];
  // The reconstruction refers to the qparams, which stay where they are.
  auto made =
      AffineReconstruction::makeWithoutCodes(p.q->logical, p.scales, p.zeros);
  if (!made)
    return makeError(entry.name, ": reconstruction: ", made.message());
  r->reconstruction = std::make_unique<AffineReconstruction>(made.take());
  return r;
}

Status ReferenceRows::fill(int64_t first, int64_t count, double *out) const {
  if (first < 0 || count < 0 || first + count > n)
    return makeError(name, ": rows [", first, ", ", first + count,
                     ") are outside [0, ", n, ")");
  // Only these rows' codes are unpacked (4 bytes a weight, never the
  // whole tensor's).
  auto codes = artifact::unpackStoredCodeRows(
      parts->tensor.logical, parts->codes, parts->codeBytes, first, count);
  if (!codes)
    return makeError(name, ".codes: ", codes.message());
  const size_t begin = size_t(first) * size_t(k);
  if (Status s =
          reconstruction->rangeOf(codes->data(), begin, begin,
                                  begin + size_t(count) * size_t(k), out, part);
      !s)
    return makeError(name, ": reconstruction: ", s.message());
  return Status::ok();
}

namespace {
/// Calls output(at, o, dot, magnitude) for the T outputs of weight rows
/// [first, first + count), held from `wr` on (at = r n + o for row r of x;
/// magnitude is 0 unless `Magnitudes`): x's rows kReferenceDotRows at a
/// time, each block against every weight row before the next, so that the
/// block (4 K float64) stays in cache while the weight rows stream by; each
/// value summed in the reference's one order (ReferenceDot.h) whatever the
/// blocking.
template <bool Magnitudes, typename Output>
void outputsOfRows(const std::vector<double> &x, int64_t t, int64_t n,
                   int64_t k, int64_t first, int64_t count, const double *wr,
                   Output &output) {
  double dot[kReferenceDotRows], mag[kReferenceDotRows] = {};
  for (int64_t r = 0; r < t; r += kReferenceDotRows) {
    const int64_t rows = std::min(kReferenceDotRows, t - r);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t o = first + i;
      referenceDots(x.data() + size_t(r) * size_t(k), rows, k,
                    wr + size_t(i) * size_t(k), dot,
                    Magnitudes ? mag : nullptr);
      for (int64_t j = 0; j < rows; ++j)
        output(size_t(r + j) * size_t(n) + size_t(o), size_t(o), dot[j],
               mag[j]);
    }
  }
}

/// Rows of K float64 weights that make about 1 MiB (at least one): the
/// block of weight rows each thread dots (and fills) before the next.
int64_t rowsOfAboutOneMiB(int64_t k) {
  return k > 0 ? std::max<int64_t>(1, (int64_t(1) << 17) / k) : int64_t(1);
}

/// outputsOfRows for every row of W, output rows split over the pool: each
/// value is summed in the same order whatever the split.
template <bool Magnitudes, typename Output>
void forEachOutput(const std::vector<double> &x, const std::vector<double> &w,
                   int64_t t, int64_t n, int64_t k, Output output) {
  defaultThreadPool().parallelRanges(
      n, n * t * k, int64_t(1) << 16, [&](int64_t begin, int64_t end) {
        const int64_t block = rowsOfAboutOneMiB(k);
        for (int64_t o = begin; o < end; o += block)
          outputsOfRows<Magnitudes>(x, t, n, k, o, std::min(block, end - o),
                                    &w[size_t(o) * size_t(k)], output);
      });
}
} // namespace

std::vector<double> qtensor::runtime::referenceLinear(
    const std::vector<double> &x, const std::vector<double> &w, int64_t t,
    int64_t n, int64_t k, const std::vector<double> &bias) {
  std::vector<double> y(size_t(t) * size_t(n));
  forEachOutput<false>(x, w, t, n, k,
                       [&](size_t at, size_t o, double dot, double) {
                         y[at] = dot + (bias.empty() ? 0.0 : bias[o]);
                       });
  return y;
}

Expected<std::vector<double>>
qtensor::runtime::referenceLinear(const std::vector<double> &x,
                                  const WeightRows &w, int64_t t,
                                  const std::vector<double> &bias) {
  const int64_t n = w.rows(), k = w.cols();
  if (x.size() != size_t(t) * size_t(k) ||
      (!bias.empty() && bias.size() != size_t(n)))
    return makeError("reference linear: x holds ", uint64_t(x.size()),
                     " values for T = ", t, ", K = ", k, "; bias ",
                     uint64_t(bias.size()), " for N = ", n);
  std::vector<double> y(size_t(t) * size_t(n));
  auto output = [&](size_t at, size_t o, double dot, double) {
    y[at] = dot + (bias.empty() ? 0.0 : bias[o]);
  };
  // Blocks of rows of about 1 MiB of float64 per thread, in whole stored
  // units (a unit's codes are unpacked together).
  const int64_t unit = std::max<int64_t>(1, w.rowUnit());
  const int64_t rowsPerMiB = rowsOfAboutOneMiB(k);
  const int64_t block = (rowsPerMiB + unit - 1) / unit * unit;
  std::mutex failureMutex;
  std::optional<Error> failure;
  defaultThreadPool().parallelRanges(
      n, n * t * k, int64_t(1) << 16, [&](int64_t begin, int64_t end) {
        std::vector<double> rows(size_t(std::min(block, end - begin)) *
                                 size_t(k));
        for (int64_t first = begin; first < end; first += block) {
          const int64_t count = std::min(block, end - first);
          if (Status s = w.fill(first, count, rows.data()); !s) {
            std::lock_guard<std::mutex> lock(failureMutex);
            if (!failure)
              failure = s.error();
            return;
          }
          outputsOfRows<false>(x, t, n, k, first, count, rows.data(), output);
        }
      });
  if (failure)
    return *failure;
  return y;
}

namespace {
std::vector<double> absoluteValues(const std::vector<double> &x) {
  std::vector<double> a(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    a[i] = std::fabs(x[i]);
  return a;
}
} // namespace

std::vector<double>
qtensor::runtime::absoluteProducts(const std::vector<double> &x,
                                   const std::vector<double> &w, int64_t t,
                                   int64_t n, int64_t k) {
  std::vector<double> y(size_t(t) * size_t(n));
  forEachOutput<true>(
      x, w, t, n, k,
      [&](size_t at, size_t, double, double abs) { y[at] = abs; });
  return y;
}

double qtensor::runtime::kernelErrorBound(double absSum, double yRef, int64_t k,
                                          FloatType output) {
  const double u = std::ldexp(1.0, -24);
  double m = double(k + 2);
  double gamma = m * u / (1.0 - m * u);
  double f32Error = gamma * absSum;
  double uOut = output == FloatType::F16    ? std::ldexp(1.0, -11)
                : output == FloatType::BF16 ? std::ldexp(1.0, -8)
                                            : 0.0;
  double underflow = output == FloatType::F16 ? std::ldexp(1.0, -25) : 0.0;
  return f32Error + uOut * (std::fabs(yRef) + f32Error) + underflow;
}

namespace {
/// Adds output i (y against its reference, `mag` = the sum of |x w| and
/// |b|) to e; false, with the first non-finite index kept, when the error
/// is not finite.
bool recordOutput(KernelError &e, size_t i, double y, double ref, double mag,
                  int64_t k, FloatType output) {
  const double err = std::fabs(y - ref);
  if (!std::isfinite(err)) {
    if (e.finite)
      e.nonFiniteIndex = i;
    e.finite = false;
    return false;
  }
  const double ratio = err / kernelErrorBound(mag, ref, k, output);
  e.maxAbsError = std::max(e.maxAbsError, err);
  if (ratio > e.worstRatio) {
    e.worstRatio = ratio;
    e.worstIndex = i;
  }
  return true;
}
} // namespace

KernelError qtensor::runtime::measureKernelError(
    const std::vector<double> &x, const std::vector<double> &w,
    const std::vector<double> &bias, const std::vector<double> &y, int64_t t,
    int64_t n, int64_t k, FloatType output,
    const std::vector<double> *magnitudes) {
  // The reference and the magnitudes in one pass over W, split by output
  // rows over the pool: every value is summed in the same order as
  // referenceLinear and absoluteProducts sum it, whatever the split.
  std::vector<double> ref(size_t(t) * size_t(n)), mag(ref.size());
  forEachOutput<true>(x, w, t, n, k,
                      [&](size_t at, size_t o, double dot, double abs) {
                        ref[at] = dot + (bias.empty() ? 0.0 : bias[o]);
                        mag[at] = abs;
                      });
  // Magnitudes of their own: sum |x| a, a second pass over them.
  assert(!magnitudes || magnitudes->size() == w.size());
  if (magnitudes)
    mag = referenceLinear(absoluteValues(x), *magnitudes, t, n, k);
  KernelError e;
  for (size_t i = 0; i < ref.size() && i < y.size(); ++i) {
    double b = bias.empty() ? 0.0 : std::fabs(bias[i % size_t(n)]);
    recordOutput(e, i, y[i], ref[i], mag[i] + b, k, output);
  }
  e.finite &= y.size() == ref.size();
  return e;
}

KernelError qtensor::runtime::measureKernelErrorOnRows(
    const std::vector<double> &x, const std::vector<double> &wRows,
    const std::vector<double> &bias, const std::vector<double> &y, int64_t t,
    int64_t n, int64_t k, FloatType output, const std::vector<int64_t> &rows,
    const std::vector<double> *magnitudes) {
  KernelError e;
  e.finite = y.size() == size_t(t) * size_t(n);
  for (size_t i = 0; i < y.size(); ++i)
    if (!std::isfinite(y[i])) {
      if (e.finite)
        e.nonFiniteIndex = i;
      e.finite = false;
      break;
    }
  if (!e.finite)
    return e;
  const std::vector<double> absX =
      magnitudes ? absoluteValues(x) : std::vector<double>();
  for (int64_t row = 0; row < t; ++row)
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      const int64_t r = rows[ri];
      const double *xr = &x[size_t(row) * size_t(k)];
      const double *wr = &wRows[ri * size_t(k)];
      assert(!magnitudes || magnitudes->size() == wRows.size());
      const double *ar = magnitudes ? &(*magnitudes)[ri * size_t(k)] : nullptr;
      // As referenceLinear and measureKernelError sum them: the dot, then
      // the bias.
      double ref, mag;
      referenceDots(xr, 1, k, wr, &ref, ar ? nullptr : &mag);
      if (ar)
        referenceDots(absX.data() + size_t(row) * size_t(k), 1, k, ar, &mag,
                      nullptr);
      if (!bias.empty()) {
        ref += bias[size_t(r)];
        mag += std::fabs(bias[size_t(r)]);
      }
      const size_t i = size_t(row) * size_t(n) + size_t(r);
      if (!recordOutput(e, i, y[i], ref, mag, k, output))
        return e;
    }
  return e;
}

Expected<std::unique_ptr<Mixed2416WeightRows>>
Mixed2416WeightRows::make(const std::string &name, Mixed2416Descriptor d,
                          Mixed2416Streams s, Mixed2416Part part) {
  auto rowW4 = mixed2416RowW4Groups(d, s.precisionMap);
  if (!rowW4)
    return makeError(name, ": ", rowW4.message());
  std::unique_ptr<Mixed2416WeightRows> r(new Mixed2416WeightRows());
  r->name = name;
  r->d = std::move(d);
  r->s = std::move(s);
  r->rowW4 = rowW4.take();
  r->part = part;
  return r;
}

Status Mixed2416WeightRows::fill(int64_t first, int64_t count,
                                 double *out) const {
  if (first < 0 || count < 0 || first + count > d.rows())
    return makeError(name, ": rows [", first, ", ", first + count,
                     ") are outside [0, ", d.rows(), ")");
  reconstructMixed2416Rows(d, s, rowW4, first, count, out, part);
  return Status::ok();
}
