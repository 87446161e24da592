//===- Mixed2416TestData.h - A small mixed_2416 tensor for tests -*- C++ -*-===//
//
// One [16, 128] mixed_2416 tensor (G1 64, G2 8) with streams that verify,
// and an artifact holding it: shared by the format, inspect and ladder
// tests.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_TEST_MIXED2416_TEST_DATA_H
#define QTENSOR_TEST_MIXED2416_TEST_DATA_H

#include "ArtifactTestSupport.h"

#include "qtensor/Numerics/FloatFormats.h"

#include <cstring>
#include <random>

namespace arttest {

inline Mixed2416Descriptor smallDescriptor() {
  Mixed2416Descriptor d;
  d.shape = {16, 128}; // 2 groups of 64 a row, 32 in all
  d.secondGroupSize = 8;
  return d;
}

/// Streams that verify: every other group W4, codes and qparams from a
/// fixed seed, two outliers in each even row, inside its W2 group.
inline Mixed2416Streams smallStreams(const Mixed2416Descriptor &d) {
  std::mt19937 rng(2416);
  std::uniform_int_distribution<int> byte(0, 255);
  Mixed2416Streams s;
  const int64_t groups = d.rows() * d.groupsPerRow();
  s.precisionMap.assign(size_t((groups + 7) / 8), 0);
  for (int64_t g = 1; g < groups; g += 2)
    s.precisionMap[size_t(g / 8)] |= uint8_t(1u << (g % 8));
  s.w2Codes.resize(size_t(groups / 2 * d.firstGroupSize / 4));
  s.w4Codes.resize(size_t(groups / 2 * d.firstGroupSize / 2));
  for (uint8_t &b : s.w2Codes)
    b = uint8_t(byte(rng));
  for (uint8_t &b : s.w4Codes)
    b = uint8_t(byte(rng));
  for (int64_t g = 0; g < groups; ++g) {
    s.firstScaleCodes.push_back(uint8_t(byte(rng)));
    s.firstZeroPoints.push_back(
        uint8_t(g % 2 ? byte(rng) % 16 : byte(rng) % 4));
  }
  for (int64_t i = 0; i < d.secondGroupsPerColumn() * d.groupsPerRow(); ++i) {
    s.secondScales.push_back(0.0009765625 * double(1 + i % 3)); // exact f16
    s.secondZeroPoints.push_back(double(i % 7));
  }
  s.sparseRowPointers.push_back(0);
  for (int64_t row = 0; row < d.rows(); ++row) {
    if (row % 2 == 0)
      for (int32_t col : {3, 40}) { // group 0: W2 (even group index)
        s.sparseColumns.push_back(col);
        s.sparseValues.push_back(row % 4 ? 2.5 : -1.25);
      }
    s.sparseRowPointers.push_back(int32_t(s.sparseColumns.size()));
  }
  return s;
}

/// The streams as the writer's tensors, in Mixed2416Tensor order; the
/// bytes live in `keep`.
inline std::vector<TensorData>
streamData(const std::string &name, const Mixed2416Descriptor &d,
           const Mixed2416Streams &s,
           std::vector<std::unique_ptr<std::vector<uint8_t>>> &keep) {
  auto hold = [&](std::vector<uint8_t> bytes) -> std::vector<uint8_t> & {
    keep.push_back(std::make_unique<std::vector<uint8_t>>(std::move(bytes)));
    return *keep.back();
  };
  auto halves = [&](const std::vector<double> &v) {
    std::vector<uint8_t> out(v.size() * 2);
    for (size_t i = 0; i < v.size(); ++i) {
      uint16_t h = floatToHalfBits(float(v[i]));
      std::memcpy(out.data() + 2 * i, &h, 2);
    }
    return out;
  };
  auto ints = [&](const std::vector<int32_t> &v) {
    std::vector<uint8_t> out(v.size() * 4);
    if (!v.empty())
      std::memcpy(out.data(), v.data(), out.size());
    return out;
  };
  auto data = [&](const char *key, DType dtype, std::vector<int64_t> shape,
                  std::vector<uint8_t> bytes) {
    std::vector<uint8_t> &b = hold(std::move(bytes));
    return TensorData{name + "." + key, dtype, std::move(shape), b.data(),
                      b.size()};
  };
  const int64_t n = d.rows(), g = d.groupsPerRow();
  const int64_t nnz = int64_t(s.sparseValues.size());
  return {
      data("precision_map", DType::U8, {int64_t(s.precisionMap.size())},
           s.precisionMap),
      data("w2_codes", DType::U8, {int64_t(s.w2Codes.size())}, s.w2Codes),
      data("w4_codes", DType::U8, {int64_t(s.w4Codes.size())}, s.w4Codes),
      data("first_scale_codes", DType::U8, {n, g}, s.firstScaleCodes),
      data("first_zero_points", DType::U8, {n, g}, s.firstZeroPoints),
      data("second_scales", DType::F16, {d.secondGroupsPerColumn(), g},
           halves(s.secondScales)),
      data("second_zero_points", DType::F16, {d.secondGroupsPerColumn(), g},
           halves(s.secondZeroPoints)),
      data("sparse_values", DType::F16, {nnz}, halves(s.sparseValues)),
      data("sparse_columns", DType::I32, {nnz}, ints(s.sparseColumns)),
      data("sparse_row_pointers", DType::I32, {n + 1},
           ints(s.sparseRowPointers)),
  };
}

inline constexpr const char *kWeight = "layers.0.mlp.down.weight";
inline constexpr const char *kShard = "model-00001.safetensors";

/// An artifact holding one mixed_2416 tensor (and a plain one).
struct MixedArtifact {
  explicit MixedArtifact(const Mixed2416Streams &streams)
      : writer(baseManifest()) {
    const Mixed2416Descriptor d = smallDescriptor();
    Status added = writer.addMixed2416Tensor(
        kShard, kWeight, d, streamData(kWeight, d, streams, keep));
    EXPECT_TRUE(added) << added.message();
    std::vector<uint8_t> &norm = *keep.emplace_back(
        std::make_unique<std::vector<uint8_t>>(pattern(256, 7)));
    Status plain = writer.addPlainTensor(
        kShard, {"norm.weight", DType::F16, {128}, norm.data(), norm.size()});
    EXPECT_TRUE(plain) << plain.message();
  }
  std::vector<std::unique_ptr<std::vector<uint8_t>>> keep;
  ArtifactWriter writer;
};

} // namespace arttest

#endif // QTENSOR_TEST_MIXED2416_TEST_DATA_H
