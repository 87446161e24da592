//===- Reconstruct.cpp - Reference decoder of an affine tensor ------------===//

#include "qtensor/Descriptor/Reconstruct.h"

#include "qtensor/Support/CheckedMath.h"

#include <algorithm>
#include <cmath>

using namespace qtensor;

Expected<std::vector<int64_t>>
qtensor::qparamIndexOfElements(const AffineDescriptor &d,
                               const std::vector<int64_t> &shape) {
  QTENSOR_TRY(verifyDescriptorForShape(d, shape));
  auto count = checkedElementCount(shape, uint64_t(1) << 40);
  if (!count)
    return makeError("element count of ", shapeToString(shape),
                     " exceeds 2^40");
  std::vector<int64_t> index(*count, 0);
  if (d.granularity == Granularity::PerTensor || *count == 0)
    return index;

  std::vector<int64_t> qshape = qparamShape(d, shape);
  size_t rank = shape.size();
  size_t axis = static_cast<size_t>(d.axis);
  // Group of each position along the axis (identity for per-axis).
  int64_t dim = shape[axis];
  std::vector<int64_t> slot(dim);
  std::vector<int64_t> positionOf(dim);
  for (int64_t i = 0; i < dim; ++i)
    positionOf[d.permutation ? (*d.permutation)[i] : i] = i;
  for (int64_t k = 0; k < dim; ++k)
    slot[k] = d.granularity == Granularity::Group ? positionOf[k] / d.groupSize
                                                  : positionOf[k];

  std::vector<int64_t> coord(rank, 0);
  for (uint64_t flat = 0; flat < *count; ++flat) {
    int64_t q = 0;
    if (d.granularity == Granularity::PerAxis) {
      q = slot[coord[axis]];
    } else {
      for (size_t r = 0; r < rank; ++r)
        q = q * qshape[r] + (r == axis ? slot[coord[r]] : coord[r]);
    }
    index[flat] = q;
    for (size_t r = rank; r-- > 0;) {
      if (++coord[r] < shape[r])
        break;
      coord[r] = 0;
    }
  }
  return index;
}

Expected<AffineReconstruction> qtensor::AffineReconstruction::make(
    const QuantizedTensorDescriptor &t, const std::vector<int32_t> &codes,
    const std::vector<double> &scales, const std::vector<double> &zeros) {
  return prepare(t, &codes, scales, zeros);
}

Expected<AffineReconstruction> qtensor::AffineReconstruction::makeWithoutCodes(
    const QuantizedTensorDescriptor &t, const std::vector<double> &scales,
    const std::vector<double> &zeros) {
  return prepare(t, nullptr, scales, zeros);
}

Expected<AffineReconstruction> qtensor::AffineReconstruction::prepare(
    const QuantizedTensorDescriptor &t, const std::vector<int32_t> *codes,
    const std::vector<double> &scales, const std::vector<double> &zeros) {
  const AffineDescriptor &d = t.descriptor;
  QTENSOR_TRY(verifyDescriptorForShape(d, t.shape));
  auto count = checkedElementCount(t.shape, uint64_t(1) << 40);
  if (!count)
    return makeError("element count of ", shapeToString(t.shape),
                     " exceeds 2^40");
  if (codes && codes->size() != *count)
    return makeError("expected ", *count, " codes for shape ",
                     shapeToString(t.shape), ", got ", codes->size());
  AffineReconstruction r(d, codes, scales, zeros);
  r.elements = size_t(*count);
  // A linear's [N, K] weight grouped along K (act-order included: the
  // group of each column from one table of K) or one scale per row: its
  // qparam index follows from the position; anything else (other ranks,
  // axes) goes through the index of every element.
  r.rowGroups =
      t.shape.size() == 2 && d.axis == 1 && d.granularity == Granularity::Group;
  r.perRow = t.shape.size() == 2 && !d.permutation && d.axis == 0 &&
             d.granularity == Granularity::PerAxis;
  if (!r.rowGroups && !r.perRow) {
    QTENSOR_ASSIGN_OR_RETURN(r.index, qparamIndexOfElements(d, t.shape));
  }
  r.cols = t.shape.size() == 2 ? t.shape[1] : 1;
  r.groups = r.rowGroups ? (r.cols + d.groupSize - 1) / d.groupSize : 1;
  if (r.rowGroups) {
    r.groupOfColumn.resize(size_t(r.cols));
    for (int64_t i = 0; i < r.cols; ++i)
      r.groupOfColumn[size_t(d.permutation ? (*d.permutation)[size_t(i)] : i)] =
          i / d.groupSize;
  }
  auto qcount = checkedElementCount(qparamShape(d, t.shape));
  if (scales.size() != *qcount)
    return makeError("expected ", *qcount, " scales, got ", scales.size());
  bool hasZero = d.zeroPoint != ZeroPointKind::None;
  if (zeros.size() != (hasZero ? *qcount : 0))
    return makeError("expected ", hasZero ? *qcount : 0, " zero-points, got ",
                     zeros.size());
  return r;
}

Status qtensor::AffineReconstruction::range(size_t begin, size_t end,
                                            double *out,
                                            ReconstructedPart part) const {
  if (!codes)
    return makeError("the reconstruction was prepared without its codes");
  return rangeOf(codes->data(), 0, begin, end, out, part);
}

Status qtensor::AffineReconstruction::rangeOf(const int32_t *block,
                                              size_t blockBegin, size_t begin,
                                              size_t end, double *out,
                                              ReconstructedPart part) const {
  const bool magnitudes = part == ReconstructedPart::RoundingMagnitude;
  if (begin < blockBegin || end < begin || end > elements)
    return makeError(
        "elements [", begin, ", ", end,
        ") are outside the tensor or before the codes given (from ", blockBegin,
        ")");
  // The code of flat index i is codes[i - blockBegin].
  const int32_t *codes = block;
  const CodeBounds bounds = codeBounds(d);
  // With a codebook a code's value is its table entry (exact in f32).
  const std::vector<float> &table = codebookValues(d.codebook);
  auto outOfRange = [&](size_t i) {
    return makeError("code ", codes[i - blockBegin], " at flat index ", i,
                     " is outside the code range [", bounds.min, ", ",
                     bounds.max, "]");
  };
  // One run of elements [i, runEnd) sharing qparam g: the range check,
  // then the value, each the same double arithmetic for every kind.
  auto run = [&](size_t i, size_t runEnd, int64_t g) -> Status {
    const double s = scales[size_t(g)];
    bool inRange = true;
    for (size_t j = i; j < runEnd; ++j)
      inRange &= codes[j - blockBegin] >= bounds.min &&
                 codes[j - blockBegin] <= bounds.max;
    if (!inRange)
      for (size_t j = i; j < runEnd; ++j)
        if (codes[j - blockBegin] < bounds.min ||
            codes[j - blockBegin] > bounds.max)
          return outOfRange(j);
    double *o = out + (i - begin);
    const int32_t *q = codes + (i - blockBegin);
    const size_t n = runEnd - i;
    switch (d.zeroPoint) {
    case ZeroPointKind::None:
      if (table.empty()) {
        for (size_t j = 0; j < n; ++j)
          o[j] = s * double(q[j]);
        break;
      }
      for (size_t j = 0; j < n; ++j) {
        if (std::isnan(table[size_t(q[j])]))
          return makeError("code ", q[j], " at flat index ", i + j,
                           " is NaN in codebook ", toString(d.codebook));
        o[j] = s * double(table[size_t(q[j])]);
      }
      break;
    case ZeroPointKind::Integer:
    case ZeroPointKind::Float: {
      const double z = zeros[size_t(g)];
      for (size_t j = 0; j < n; ++j)
        o[j] = s * (double(q[j]) - z);
      break;
    }
    case ZeroPointKind::Min: {
      const double m = zeros[size_t(g)];
      if (magnitudes) {
        for (size_t j = 0; j < n; ++j)
          o[j] = std::fabs(s * double(q[j])) + std::fabs(m);
        return Status::ok();
      }
      for (size_t j = 0; j < n; ++j)
        o[j] = s * double(q[j]) + m;
      break;
    }
    }
    if (magnitudes)
      for (size_t j = 0; j < n; ++j)
        o[j] = std::fabs(o[j]);
    return Status::ok();
  };
  // Contiguous columns of a row share a qparam unless the columns are
  // permuted (then each column finds its group) or the index is general.
  const bool contiguousGroups = rowGroups && !d.permutation;
  for (size_t i = begin; i < end;) {
    const int64_t r = int64_t(i) / cols;
    int64_t c = int64_t(i) % cols;
    const size_t rowEnd = std::min(end, size_t(r + 1) * size_t(cols));
    while (i < rowEnd) {
      size_t runEnd = i + 1;
      int64_t g;
      if (contiguousGroups) {
        g = r * groups + c / d.groupSize;
        runEnd = std::min(rowEnd, i + size_t(d.groupSize - c % d.groupSize));
      } else if (perRow) {
        g = r;
        runEnd = rowEnd;
      } else {
        g = rowGroups ? r * groups + groupOfColumn[size_t(c)] : index[i];
      }
      QTENSOR_TRY(run(i, runEnd, g));
      c += int64_t(runEnd - i);
      i = runEnd;
    }
  }
  return Status::ok();
}

Expected<std::vector<double>> qtensor::reconstructAffine(
    const QuantizedTensorDescriptor &t, const std::vector<int32_t> &codes,
    const std::vector<double> &scales, const std::vector<double> &zeros) {
  QTENSOR_ASSIGN_OR_RETURN(AffineReconstruction r,
                           AffineReconstruction::make(t, codes, scales, zeros));
  std::vector<double> out(r.size());
  QTENSOR_TRY(r.range(0, out.size(), out.data()));
  return out;
}

Expected<NestedFirstLevel>
qtensor::decodeNestedQParams(const AffineDescriptor &d,
                             const std::vector<int64_t> &shape,
                             const std::vector<int32_t> &scaleCodes,
                             const std::vector<double> &superScales,
                             const std::vector<int32_t> &minCodes,
                             const std::vector<double> &superMins) {
  if (!d.nested)
    return makeError("the descriptor has no nested qparams");
  QTENSOR_TRY(verifyDescriptorForShape(d, shape));
  const NestedQParams &n = *d.nested;
  const bool hasMin = n.minCode.has_value();
  auto groups = checkedElementCount(qparamShape(d, shape), uint64_t(1) << 40);
  auto supers =
      checkedElementCount(superQParamShape(d, shape), uint64_t(1) << 40);
  if (!groups || !supers)
    return makeError("qparam count of ", shapeToString(shape), " exceeds 2^40");
  auto checkSize = [](const char *what, size_t have, uint64_t want) -> Status {
    if (have != want)
      return makeError(what, ": ", have, " values, expected ", want);
    return Status::ok();
  };
  QTENSOR_TRY(checkSize("scale codes", scaleCodes.size(), *groups));
  QTENSOR_TRY(checkSize("second-level scales", superScales.size(), *supers));
  QTENSOR_TRY(checkSize("min codes", minCodes.size(), hasMin ? *groups : 0));
  QTENSOR_TRY(
      checkSize("second-level mins", superMins.size(), hasMin ? *supers : 0));

  // Group j of the flattened qparam tensor: (outer, g, inner) with g along
  // the axis; its super-group is (outer, g / ratio, inner).
  const size_t axis = static_cast<size_t>(d.axis);
  int64_t inner = 1;
  for (size_t i = axis + 1; i < shape.size(); ++i)
    inner *= shape[i];
  const int64_t groupsAlong = shape[axis] / d.groupSize;
  const int64_t supersAlong = shape[axis] / n.superGroupSize;
  const int64_t ratio = n.superGroupSize / d.groupSize;
  auto inRange = [](const CodeType &c, int32_t v) {
    const CodeBounds b = codeBounds(c);
    return v >= b.min && v <= b.max;
  };

  auto asFloat = [](const char *what, double v, uint64_t i) -> Expected<float> {
    float f = static_cast<float>(v);
    if (!std::isfinite(v) || double(f) != v)
      return makeError(what, " ", i, " (", v, ") is not a finite f32 value");
    return f;
  };
  NestedFirstLevel out;
  out.scales.resize(*groups);
  if (hasMin)
    out.mins.resize(*groups);
  for (uint64_t j = 0; j < *groups; ++j) {
    const int64_t in = int64_t(j) % inner;
    const int64_t g = (int64_t(j) / inner) % groupsAlong;
    const int64_t outer = int64_t(j) / inner / groupsAlong;
    const uint64_t J = uint64_t((outer * supersAlong + g / ratio) * inner + in);
    if (!inRange(n.scaleCode, scaleCodes[j]))
      return makeError("scale code ", j, " (", scaleCodes[j],
                       ") is outside its ", n.scaleCode.bits, "-bit range");
    QTENSOR_ASSIGN_OR_RETURN(float dJ,
                             asFloat("second-level scale", superScales[J], J));
    out.scales[j] = dJ * static_cast<float>(scaleCodes[j]);
    if (hasMin) {
      if (!inRange(*n.minCode, minCodes[j]))
        return makeError("min code ", j, " (", minCodes[j], ") is outside its ",
                         n.minCode->bits, "-bit range");
      QTENSOR_ASSIGN_OR_RETURN(float mJ,
                               asFloat("second-level min", superMins[J], J));
      out.mins[j] = -(mJ * static_cast<float>(minCodes[j]));
    }
  }
  return out;
}
