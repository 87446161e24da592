//===- Mixed2416.h - Intra-weight mixed 2/4/16-bit family -------*- C++ -*-===//
//
// Seed M8.9 0x07D. Inside one [N, K] weight matrix each first-level group of
// G1 consecutive input channels (axis 1) holds 2-bit or 4-bit codes (the
// precision map, one entry per group); selected outliers live in a sparse
// 16-bit CSR stream; and the first-level scales are themselves codes under
// a second-level affine quantizer along the output channels (axis 0), one
// second-level scale and zero-point per G2 rows of a group column.
// Decoding runs the second level first:
//
//   s1[n, g] = s2[n / G2, g] * (qs[n, g] - z2[n / G2, g])
//   w[n, k]  = s1[n, g] * (qw[n, k] - z1[n, g])          (g = k / G1)
//
// and then, at each sparse position, w = v (replacement: the dense code
// there is not read) or w += v (correction). The seed's worked example:
// qs = 5, z2 = 1, s2 = 0.25 give s1 = 1; qw = 3, z1 = 2 then give w = 1.
//
// The descriptor is the contract; the streams are the data it describes.
// Streams are vector-aligned: G1 is a multiple of 64, so every W2 group is
// whole 16-byte vectors and every W4 group whole 32-byte ones.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_DESCRIPTOR_MIXED2416_H
#define QTENSOR_DESCRIPTOR_MIXED2416_H

#include "qtensor/Descriptor/Descriptor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor {

/// What a sparse value means at its position.
enum class SparseSemantics : uint8_t {
  Replacement, ///< w = v; only inside W2 groups (outliers are reserved
               ///< from the 2-bit regions, as the source does)
  Correction,  ///< w = dense + v; anywhere
};

/// What one precision-map entry covers.
enum class PrecisionMapGranularity : uint8_t {
  Group, ///< one first-level group: G1 input channels of one row
};

/// How the first-level qparams are stored.
enum class QParamPacking : uint8_t {
  Bytes, ///< qs and z1 one byte each, in two streams in group order
};

struct Mixed2416Descriptor {
  std::vector<int64_t> shape; ///< [N, K]: output channels, input channels
  FloatType elementType = FloatType::F16;
  int64_t firstGroupAxis = 1; ///< the source's: input channels
  int64_t firstGroupSize = 64;
  int64_t secondGroupAxis = 0; ///< the source's: output channels
  int64_t secondGroupSize = 16;
  PrecisionMapGranularity mapGranularity = PrecisionMapGranularity::Group;
  CodeType firstScaleCode{8, false};     ///< qs
  FloatType secondType = FloatType::F16; ///< s2 and z2 (z2 is real)
  QParamPacking qparamPacking = QParamPacking::Bytes;
  SparseSemantics sparse = SparseSemantics::Replacement;
  FloatType sparseType = FloatType::F16;
  /// The layout id (family, version, encoding) a kernel must match.
  std::string layoutFamily = "mixed_2416";
  uint32_t layoutVersion = 1;
  std::string layoutEncoding = "group_major_lsb_first";
  std::string requiredKernel = "mixed2416_decode_gemv";
  uint32_t decoderVersion = 1;

  int64_t rows() const { return shape.size() == 2 ? shape[0] : 0; }
  int64_t cols() const { return shape.size() == 2 ? shape[1] : 0; }
  /// First-level groups per row, and second-level groups down a column.
  int64_t groupsPerRow() const {
    return firstGroupSize > 0 ? cols() / firstGroupSize : 0;
  }
  int64_t secondGroupsPerColumn() const {
    return secondGroupSize > 0 ? rows() / secondGroupSize : 0;
  }

  bool operator==(const Mixed2416Descriptor &o) const;
  bool operator!=(const Mixed2416Descriptor &o) const { return !(*this == o); }
};

/// The data of one tensor, stream by stream. The precision map is a bitmap
/// (bit g of the row-major group index, lsb first: 1 = W4). W2 codes are
/// the W2 groups' codes in row-major group order, four per byte, lsb
/// first; W4 codes likewise, two per byte, low nibble first. qs and z1 are
/// one byte per group; s2 and z2 one value per [N / G2, K / G1] entry, of
/// the second-level type; the sparse stream is CSR over rows.
struct Mixed2416Streams {
  std::vector<uint8_t> precisionMap;
  std::vector<uint8_t> w2Codes;
  std::vector<uint8_t> w4Codes;
  std::vector<uint8_t> firstScaleCodes; ///< qs
  std::vector<uint8_t> firstZeroPoints; ///< z1, in its group's code range
  std::vector<double> secondScales;     ///< s2
  std::vector<double> secondZeroPoints; ///< z2
  std::vector<double> sparseValues;
  std::vector<int32_t> sparseColumns;     ///< increasing within a row
  std::vector<int32_t> sparseRowPointers; ///< N + 1 entries
};

/// The JSON spellings (the dialect attribute spells them the same way).
const char *toString(SparseSemantics s);
const char *toString(PrecisionMapGranularity g);
const char *toString(QParamPacking p);
std::optional<SparseSemantics> parseSparseSemantics(const std::string &s);
std::optional<PrecisionMapGranularity>
parsePrecisionMapGranularity(const std::string &s);
std::optional<QParamPacking> parseQParamPacking(const std::string &s);

/// Whether group `g` (row-major index over [N, K / G1]) holds 4-bit codes.
inline bool isW4Group(const std::vector<uint8_t> &map, int64_t g) {
  return (map[static_cast<size_t>(g / 8)] >> (g % 8)) & 1;
}

/// Every field but the shape: the source's axes, G1 a multiple of 64, G2
/// positive, the code and float types, the layout id, the kernel named,
/// the decoder version. (The dialect attribute checks this; the tensor
/// type adds the shape.)
Status verifyMixed2416Fields(const Mixed2416Descriptor &d);
/// verifyMixed2416Fields, then the shape: [N, K] with at most 2^40
/// weights, G1 dividing K and G2 dividing N.
Status verifyMixed2416(const Mixed2416Descriptor &d);

/// The streams against the descriptor (after verifyMixed2416): every size,
/// the map covering the matrix, every z1 and qs in its code range, s2 and
/// z2 finite values of their type, CSR row pointers from 0 and
/// non-decreasing to the value count, columns in bounds and strictly
/// increasing within a row, sparse values finite values of their type, and
/// under replacement every outlier inside a W2 group. Errors name the
/// stream and the index.
Status verifyMixed2416Streams(const Mixed2416Descriptor &d,
                              const Mixed2416Streams &s);

/// s1 = s2 * (qs - z2) for every group, row-major over [N, K / G1].
Expected<std::vector<double>>
decodeMixed2416FirstScales(const Mixed2416Descriptor &d,
                           const Mixed2416Streams &s);

/// W4 groups before each row in stream order, N + 1 prefix counts (the
/// last is the tensor's W4 group count): what a kernel needs to find a
/// row's codes, derived once at load from a map that passed
/// verifyMixed2416Streams. Refused above 2^31 - 1 groups (i32 counts).
Expected<std::vector<int32_t>>
mixed2416RowW4Groups(const Mixed2416Descriptor &d,
                     const std::vector<uint8_t> &map);

/// What reconstructMixed2416Rows writes.
enum class Mixed2416Part : uint8_t {
  Value, ///< W_hat
  /// What a kernel's rounding grows with at each element: it sums the
  /// dense code everywhere, then at each outlier the difference from it
  /// (replacement) or the value (correction): |dense| + |v - dense|,
  /// |dense| + |v|, and |dense| elsewhere.
  RoundingMagnitude,
};

/// Rows [first, first + count) of the reference decoder's result into
/// `out` ([count, K] row-major), from streams that passed
/// verifyMixed2416Streams and their row table (mixed2416RowW4Groups): the
/// values reconstructMixed2416 gives those rows, which it computes this
/// way. The caller keeps the rows within [0, N).
void reconstructMixed2416Rows(const Mixed2416Descriptor &d,
                              const Mixed2416Streams &s,
                              const std::vector<int32_t> &rowW4Groups,
                              int64_t first, int64_t count, double *out,
                              Mixed2416Part part = Mixed2416Part::Value);

/// The reference decoder (parity level 2): every element, row-major, by
/// the formulas above. Verifies the descriptor and the streams first.
Expected<std::vector<double>> reconstructMixed2416(const Mixed2416Descriptor &d,
                                                   const Mixed2416Streams &s);

/// What the streams cost, stream by stream (seed 0x01B: payload, qparams,
/// whole-tensor and per-weight rates are different claims; 0x07D's list).
/// `totalBytes` is the sum of every stream's bytes.
struct Mixed2416Rates {
  int64_t weights = 0;
  int64_t w2Groups = 0, w4Groups = 0;
  int64_t sparseCount = 0;
  int64_t sparseRowMin = 0, sparseRowMax = 0; ///< outliers in one row
  int64_t codeBytes = 0;                      ///< W2 and W4 streams
  int64_t mapBytes = 0;                       ///< the precision map
  int64_t firstLevelBytes = 0;                ///< qs and z1
  int64_t secondLevelBytes = 0;               ///< s2 and z2
  int64_t sparseBytes = 0;  ///< values, columns and row pointers
  int64_t paddingBytes = 0; ///< alignment padding (none: whole groups)
  int64_t totalBytes = 0;
  /// 2 * W2 + 4 * W4 code bits per weight: the fixed-slot payload alone.
  double payloadBitsPerWeight = 0;
  /// totalBytes * 8 per weight: the whole tensor.
  double bitsPerWeight = 0;
};
/// The rates of streams that passed verifyMixed2416Streams.
Mixed2416Rates mixed2416Rates(const Mixed2416Descriptor &d,
                              const Mixed2416Streams &s);

/// The bytes all streams of a tensor of `d` take with `w4Groups` W4 groups
/// (the rest W2) and `sparseCount` outliers: the sizes the verifier
/// requires, added up (Mixed2416Rates::totalBytes), for a converter that
/// plans to a budget before it has streams. `d` must verify.
int64_t mixed2416StreamBytes(const Mixed2416Descriptor &d, int64_t w4Groups,
                             int64_t sparseCount);

} // namespace qtensor

#endif // QTENSOR_DESCRIPTOR_MIXED2416_H
