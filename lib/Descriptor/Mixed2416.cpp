//===- Mixed2416.cpp - Intra-weight mixed 2/4/16-bit family ---------------===//

#include "qtensor/Descriptor/Mixed2416.h"

#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Support/EnumSpelling.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace qtensor {
namespace {

/// Matrices larger than this are refused before any size is computed from
/// the shape (2^40 weights: far beyond any checkpoint, far below overflow).
constexpr int64_t kMaxWeights = int64_t(1) << 40;

/// A finite value that `t` represents exactly.
bool isValueOf(double v, FloatType t) {
  return std::isfinite(v) && roundToFormat(v, floatFormatOf(t)) == v;
}

Status sizeIs(const char *stream, size_t got, int64_t expected) {
  if (got != static_cast<size_t>(expected))
    return makeError(stream, ": expected ", expected, " entries, got ", got);
  return Status::ok();
}

/// Bytes of `groups` groups of `size` codes of `bits` bits each.
int64_t codeBytes(int64_t groups, int64_t size, unsigned bits) {
  return groups * size * bits / 8;
}

/// Bytes of one value of `t`.
int64_t bytesOf(FloatType t) { return t == FloatType::F32 ? 4 : 2; }

/// Bytes of one sparse entry: its value and its I32 column.
int64_t sparseEntryBytes(const Mixed2416Descriptor &d) {
  return bytesOf(d.sparseType) + 4;
}

constexpr std::pair<const char *, SparseSemantics> kSparseSemantics[] = {
    {"replacement", SparseSemantics::Replacement},
    {"correction", SparseSemantics::Correction}};
constexpr std::pair<const char *, PrecisionMapGranularity> kMapGranularities[] =
    {{"group", PrecisionMapGranularity::Group}};
constexpr std::pair<const char *, QParamPacking> kQParamPackings[] = {
    {"bytes", QParamPacking::Bytes}};

/// Row-major group counts by precision, for stream sizes.
struct GroupCounts {
  int64_t w2 = 0, w4 = 0;
};
GroupCounts countGroups(const Mixed2416Descriptor &d,
                        const std::vector<uint8_t> &map) {
  GroupCounts c;
  const int64_t groups = d.rows() * d.groupsPerRow();
  for (int64_t g = 0; g < groups; ++g)
    (isW4Group(map, g) ? c.w4 : c.w2) += 1;
  return c;
}

unsigned codeAt(const std::vector<uint8_t> &stream, int64_t index,
                unsigned bits) {
  const int64_t bit = index * bits;
  return (stream[static_cast<size_t>(bit / 8)] >> (bit % 8)) &
         ((1u << bits) - 1);
}

} // namespace

const char *toString(SparseSemantics s) {
  return spellEnum(s, kSparseSemantics);
}
const char *toString(PrecisionMapGranularity g) {
  return spellEnum(g, kMapGranularities);
}
const char *toString(QParamPacking p) { return spellEnum(p, kQParamPackings); }

std::optional<SparseSemantics> parseSparseSemantics(const std::string &s) {
  return lookupEnum(s, kSparseSemantics);
}
std::optional<PrecisionMapGranularity>
parsePrecisionMapGranularity(const std::string &s) {
  return lookupEnum(s, kMapGranularities);
}
std::optional<QParamPacking> parseQParamPacking(const std::string &s) {
  return lookupEnum(s, kQParamPackings);
}

bool Mixed2416Descriptor::operator==(const Mixed2416Descriptor &o) const {
  return shape == o.shape && elementType == o.elementType &&
         firstGroupAxis == o.firstGroupAxis &&
         firstGroupSize == o.firstGroupSize &&
         secondGroupAxis == o.secondGroupAxis &&
         secondGroupSize == o.secondGroupSize &&
         mapGranularity == o.mapGranularity &&
         firstScaleCode == o.firstScaleCode && secondType == o.secondType &&
         qparamPacking == o.qparamPacking && sparse == o.sparse &&
         sparseType == o.sparseType && layoutFamily == o.layoutFamily &&
         layoutVersion == o.layoutVersion &&
         layoutEncoding == o.layoutEncoding &&
         requiredKernel == o.requiredKernel &&
         decoderVersion == o.decoderVersion;
}

Status verifyMixed2416Fields(const Mixed2416Descriptor &d) {
  if (d.firstGroupAxis != 1 || d.secondGroupAxis != 0)
    return makeError("mixed_2416: first-level groups run along axis 1 (input "
                     "channels) and second-level groups along axis 0 (output "
                     "channels), got axes ",
                     d.firstGroupAxis, " and ", d.secondGroupAxis);
  if (d.firstGroupSize <= 0 || d.firstGroupSize % 64 != 0)
    return makeError("mixed_2416: first_group_size must be a positive "
                     "multiple of 64 (a W2 group is whole 16-byte vectors), "
                     "got ",
                     d.firstGroupSize);
  if (d.secondGroupSize <= 0)
    return makeError("mixed_2416: second_group_size must be positive, got ",
                     d.secondGroupSize);
  if (d.firstScaleCode.isSigned || d.firstScaleCode.bits < 2 ||
      d.firstScaleCode.bits > 8)
    return makeError("mixed_2416: first-level scale codes are unsigned of 2 "
                     "to 8 bits, got ",
                     d.firstScaleCode.isSigned ? "si" : "ui",
                     d.firstScaleCode.bits);
  if (d.sparseType == FloatType::F32)
    return makeError("mixed_2416: the sparse stream is 16-bit (f16 or bf16), "
                     "got f32");
  if (d.layoutFamily != "mixed_2416" || d.layoutVersion != 1 ||
      d.layoutEncoding != "group_major_lsb_first")
    return makeError("mixed_2416: unknown layout id (", d.layoutFamily, ", ",
                     d.layoutVersion, ", ", d.layoutEncoding,
                     "); known: (mixed_2416, 1, group_major_lsb_first)");
  if (d.requiredKernel.empty())
    return makeError("mixed_2416: required_kernel is empty");
  if (d.decoderVersion != 1)
    return makeError("mixed_2416: decoder version ", d.decoderVersion,
                     " is unknown (known: 1)");
  return Status::ok();
}

Status verifyMixed2416(const Mixed2416Descriptor &d) {
  QTENSOR_TRY(verifyMixed2416Fields(d));
  if (d.shape.size() != 2)
    return makeError("mixed_2416: a weight matrix [N, K] is required, got "
                     "shape ",
                     shapeToString(d.shape));
  const int64_t n = d.shape[0], k = d.shape[1];
  if (n <= 0 || k <= 0 || n > kMaxWeights / k)
    return makeError("mixed_2416: shape ", shapeToString(d.shape),
                     " must be positive with at most 2^40 weights");
  if (k % d.firstGroupSize != 0)
    return makeError("mixed_2416: K = ", k,
                     " is not a multiple of "
                     "first_group_size ",
                     d.firstGroupSize);
  if (n % d.secondGroupSize != 0)
    return makeError("mixed_2416: second_group_size ", d.secondGroupSize,
                     " does not divide N = ", n);
  return Status::ok();
}

Status verifyMixed2416Streams(const Mixed2416Descriptor &d,
                              const Mixed2416Streams &s) {
  QTENSOR_TRY(verifyMixed2416(d));
  const int64_t n = d.rows(), k = d.cols();
  const int64_t perRow = d.groupsPerRow(), groups = n * perRow;
  const int64_t seconds = d.secondGroupsPerColumn() * perRow;
  QTENSOR_TRY(sizeIs("precision_map", s.precisionMap.size(), (groups + 7) / 8));
  if (groups % 8 != 0 && (s.precisionMap.back() >> (groups % 8)) != 0)
    return makeError("precision_map: bits past group ", groups - 1,
                     " must be zero");
  const GroupCounts c = countGroups(d, s.precisionMap);
  QTENSOR_TRY(sizeIs("w2_codes", s.w2Codes.size(),
                     codeBytes(c.w2, d.firstGroupSize, 2)));
  QTENSOR_TRY(sizeIs("w4_codes", s.w4Codes.size(),
                     codeBytes(c.w4, d.firstGroupSize, 4)));
  QTENSOR_TRY(sizeIs("first_scale_codes", s.firstScaleCodes.size(), groups));
  QTENSOR_TRY(sizeIs("first_zero_points", s.firstZeroPoints.size(), groups));
  QTENSOR_TRY(sizeIs("second_scales", s.secondScales.size(), seconds));
  QTENSOR_TRY(sizeIs("second_zero_points", s.secondZeroPoints.size(), seconds));
  const unsigned maxScaleCode = (1u << d.firstScaleCode.bits) - 1;
  for (int64_t g = 0; g < groups; ++g) {
    if (s.firstScaleCodes[g] > maxScaleCode)
      return makeError("first_scale_codes[", g,
                       "]: ", unsigned(s.firstScaleCodes[g]),
                       " is outside [0, ", maxScaleCode, "]");
    const unsigned maxCode = isW4Group(s.precisionMap, g) ? 15 : 3;
    if (s.firstZeroPoints[g] > maxCode)
      return makeError("first_zero_points[", g,
                       "]: ", unsigned(s.firstZeroPoints[g]),
                       " is outside its ", maxCode == 15 ? "W4" : "W2",
                       " group's codes [0, ", maxCode, "]");
  }
  for (int64_t i = 0; i < seconds; ++i) {
    if (!isValueOf(s.secondScales[i], d.secondType))
      return makeError("second_scales[", i, "]: ", s.secondScales[i],
                       " is not a finite ", toString(d.secondType), " value");
    if (!isValueOf(s.secondZeroPoints[i], d.secondType))
      return makeError("second_zero_points[", i, "]: ", s.secondZeroPoints[i],
                       " is not a finite ", toString(d.secondType), " value");
  }
  QTENSOR_TRY(sizeIs("sparse_row_pointers", s.sparseRowPointers.size(), n + 1));
  QTENSOR_TRY(sizeIs("sparse_columns", s.sparseColumns.size(),
                     static_cast<int64_t>(s.sparseValues.size())));
  if (s.sparseRowPointers.front() != 0)
    return makeError("sparse_row_pointers[0]: must be 0, got ",
                     s.sparseRowPointers.front());
  if (s.sparseRowPointers.back() != static_cast<int64_t>(s.sparseValues.size()))
    return makeError("sparse_row_pointers[", n, "]: must be the value count ",
                     s.sparseValues.size(), ", got ",
                     s.sparseRowPointers.back());
  // All pointers first: with the first 0 and the last the count, a
  // non-decreasing sequence keeps every row's range inside the streams.
  for (int64_t row = 0; row < n; ++row)
    if (s.sparseRowPointers[row + 1] < s.sparseRowPointers[row])
      return makeError(
          "sparse_row_pointers[", row + 1, "]: ", s.sparseRowPointers[row + 1],
          " is below the previous pointer ", s.sparseRowPointers[row]);
  for (int64_t row = 0; row < n; ++row) {
    const int32_t begin = s.sparseRowPointers[row];
    const int32_t end = s.sparseRowPointers[row + 1];
    for (int32_t i = begin; i < end; ++i) {
      const int32_t col = s.sparseColumns[i];
      if (col < 0 || col >= k)
        return makeError("sparse_columns[", i, "]: ", col, " is outside [0, ",
                         k, ") (row ", row, ")");
      if (i > begin && col <= s.sparseColumns[i - 1])
        return makeError("sparse_columns[", i, "]: ", col,
                         " does not increase within row ", row, " (previous ",
                         s.sparseColumns[i - 1], ")");
      if (!isValueOf(s.sparseValues[i], d.sparseType))
        return makeError("sparse_values[", i, "]: ", s.sparseValues[i],
                         " is not a finite ", toString(d.sparseType), " value");
      const int64_t g = row * perRow + col / d.firstGroupSize;
      if (d.sparse == SparseSemantics::Replacement &&
          isW4Group(s.precisionMap, g))
        return makeError("sparse_columns[", i, "]: (", row, ", ", col,
                         ") lies in W4 group ", g,
                         "; replacement outliers are reserved from W2 groups");
    }
  }
  return Status::ok();
}

Expected<std::vector<double>>
decodeMixed2416FirstScales(const Mixed2416Descriptor &d,
                           const Mixed2416Streams &s) {
  QTENSOR_TRY(verifyMixed2416Streams(d, s));
  const int64_t perRow = d.groupsPerRow();
  std::vector<double> scales(static_cast<size_t>(d.rows() * perRow));
  for (int64_t row = 0; row < d.rows(); ++row)
    for (int64_t g = 0; g < perRow; ++g) {
      // Second level first: s1 = s2 * (qs - z2).
      const int64_t second = (row / d.secondGroupSize) * perRow + g;
      const int64_t first = row * perRow + g;
      scales[first] =
          s.secondScales[second] *
          (double(s.firstScaleCodes[first]) - s.secondZeroPoints[second]);
    }
  return scales;
}

Expected<std::vector<int32_t>>
mixed2416RowW4Groups(const Mixed2416Descriptor &d,
                     const std::vector<uint8_t> &map) {
  const int64_t groups = d.rows() * d.groupsPerRow();
  if (groups > INT32_MAX)
    return makeError("mixed_2416 ", d.rows(), "x", d.cols(), " has ", groups,
                     " first-level groups; the row table holds at most ",
                     INT32_MAX);
  if (map.size() * 8 < static_cast<size_t>(groups))
    return makeError("mixed_2416 precision map: ", map.size(),
                     " bytes cannot cover ", groups, " groups");
  std::vector<int32_t> before(static_cast<size_t>(d.rows() + 1), 0);
  const int64_t perRow = d.groupsPerRow();
  int64_t count = 0;
  for (int64_t row = 0; row < d.rows(); ++row) {
    before[static_cast<size_t>(row)] = static_cast<int32_t>(count);
    for (int64_t g = 0; g < perRow; ++g)
      count += isW4Group(map, row * perRow + g) ? 1 : 0;
  }
  before.back() = static_cast<int32_t>(count);
  return before;
}

void reconstructMixed2416Rows(const Mixed2416Descriptor &d,
                              const Mixed2416Streams &s,
                              const std::vector<int32_t> &rowW4Groups,
                              int64_t first, int64_t count, double *out,
                              Mixed2416Part part) {
  const int64_t k = d.cols(), g1 = d.firstGroupSize;
  const int64_t perRow = d.groupsPerRow();
  const bool replace = d.sparse == SparseSemantics::Replacement;
  std::vector<double> outlierTerms;
  for (int64_t row = first; row < first + count; ++row) {
    // Groups of each stream before this row's: the row table's W4 count,
    // the rest W2.
    int64_t w4Seen = rowW4Groups[static_cast<size_t>(row)];
    int64_t w2Seen = row * perRow - w4Seen;
    double *rowOut = out + (row - first) * k;
    for (int64_t g = 0; g < perRow; ++g) {
      const int64_t group = row * perRow + g;
      // Second level first: s1 = s2 * (qs - z2).
      const int64_t second = (row / d.secondGroupSize) * perRow + g;
      const double scale =
          s.secondScales[second] *
          (double(s.firstScaleCodes[group]) - s.secondZeroPoints[second]);
      const bool w4 = isW4Group(s.precisionMap, group);
      const unsigned bits = w4 ? 4 : 2;
      const std::vector<uint8_t> &stream = w4 ? s.w4Codes : s.w2Codes;
      const int64_t base = (w4 ? w4Seen++ : w2Seen++) * g1;
      const double zero = s.firstZeroPoints[group];
      double *o = rowOut + g * g1;
      for (int64_t j = 0; j < g1; ++j)
        o[j] = scale * (double(codeAt(stream, base + j, bits)) - zero);
    }
    const int32_t begin = s.sparseRowPointers[row],
                  end = s.sparseRowPointers[row + 1];
    if (part == Mixed2416Part::Value) {
      for (int32_t i = begin; i < end; ++i) {
        double &x = rowOut[s.sparseColumns[i]];
        x = replace ? s.sparseValues[i] : x + s.sparseValues[i];
      }
      continue;
    }
    // A kernel sums the dense code everywhere, then each outlier's
    // difference from it (replacement) or its value (correction): those
    // terms are taken while the row still holds signed dense values.
    outlierTerms.clear();
    for (int32_t i = begin; i < end; ++i) {
      const double dense = rowOut[s.sparseColumns[i]];
      outlierTerms.push_back(
          std::fabs(replace ? s.sparseValues[i] - dense : s.sparseValues[i]));
    }
    for (int64_t c = 0; c < k; ++c)
      rowOut[c] = std::fabs(rowOut[c]);
    for (int32_t i = begin; i < end; ++i)
      rowOut[s.sparseColumns[i]] +=
          outlierTerms[static_cast<size_t>(i - begin)];
  }
}

Expected<std::vector<double>> reconstructMixed2416(const Mixed2416Descriptor &d,
                                                   const Mixed2416Streams &s) {
  QTENSOR_TRY(verifyMixed2416Streams(d, s));
  QTENSOR_ASSIGN_OR_RETURN(std::vector<int32_t> rowW4,
                           mixed2416RowW4Groups(d, s.precisionMap));
  std::vector<double> w(static_cast<size_t>(d.rows() * d.cols()));
  reconstructMixed2416Rows(d, s, rowW4, 0, d.rows(), w.data());
  return w;
}

Mixed2416Rates mixed2416Rates(const Mixed2416Descriptor &d,
                              const Mixed2416Streams &s) {
  Mixed2416Rates r;
  r.weights = d.rows() * d.cols();
  const GroupCounts c = countGroups(d, s.precisionMap);
  r.w2Groups = c.w2;
  r.w4Groups = c.w4;
  r.sparseCount = static_cast<int64_t>(s.sparseValues.size());
  r.sparseRowMin = std::numeric_limits<int64_t>::max();
  for (int64_t row = 0; row < d.rows(); ++row) {
    const int64_t count =
        s.sparseRowPointers[row + 1] - s.sparseRowPointers[row];
    r.sparseRowMin = std::min(r.sparseRowMin, count);
    r.sparseRowMax = std::max(r.sparseRowMax, count);
  }
  r.codeBytes = static_cast<int64_t>(s.w2Codes.size() + s.w4Codes.size());
  r.mapBytes = static_cast<int64_t>(s.precisionMap.size());
  // Every stream holds whole groups (G1 a multiple of 64): nothing is
  // padded; the map's spare bits in its last byte count in mapBytes.
  r.paddingBytes = 0;
  r.firstLevelBytes =
      static_cast<int64_t>(s.firstScaleCodes.size() + s.firstZeroPoints.size());
  r.secondLevelBytes =
      static_cast<int64_t>(s.secondScales.size() + s.secondZeroPoints.size()) *
      bytesOf(d.secondType);
  r.sparseBytes = r.sparseCount * sparseEntryBytes(d) +
                  static_cast<int64_t>(s.sparseRowPointers.size()) * 4;
  r.totalBytes = r.codeBytes + r.mapBytes + r.firstLevelBytes +
                 r.secondLevelBytes + r.sparseBytes;
  r.payloadBitsPerWeight = double(2 * c.w2 + 4 * c.w4) *
                           double(d.firstGroupSize) / double(r.weights);
  r.bitsPerWeight = double(r.totalBytes) * 8.0 / double(r.weights);
  return r;
}

int64_t mixed2416StreamBytes(const Mixed2416Descriptor &d, int64_t w4Groups,
                             int64_t sparseCount) {
  const int64_t groups = d.rows() * d.groupsPerRow();
  const int64_t seconds = d.secondGroupsPerColumn() * d.groupsPerRow();
  return (groups + 7) / 8 +                                      // map
         codeBytes(groups - w4Groups, d.firstGroupSize, 2) +     // W2
         codeBytes(w4Groups, d.firstGroupSize, 4) +              // W4
         2 * groups +                                            // qs, z1
         2 * seconds * bytesOf(d.secondType) +                   // s2, z2
         sparseCount * sparseEntryBytes(d) + (d.rows() + 1) * 4; // CSR
}

} // namespace qtensor
