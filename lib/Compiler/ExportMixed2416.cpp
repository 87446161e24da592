//===- ExportMixed2416.cpp - A mixed_2416 linear as stored ----------------===//

#include "ExportMixed2416.h"

#include "qtensor/Numerics/FloatFormats.h"

#include <cstring>

namespace qtensor::compiler {

using safetensors::DType;

namespace {

/// Values exact in `type` (f16 or bf16) as its little-endian bits.
Expected<std::vector<uint8_t>> halfBytes(const std::string &where,
                                         const std::vector<double> &values,
                                         FloatType type) {
  std::vector<uint8_t> out(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const float f = static_cast<float>(values[i]);
    const uint16_t bits =
        type == FloatType::BF16 ? floatToBFloat16Bits(f) : floatToHalfBits(f);
    const double back = type == FloatType::BF16 ? bfloat16BitsToFloat(bits)
                                                : halfBitsToFloat(bits);
    if (back != values[i])
      return makeError(where, "[", i, "]: ", values[i], " is not exact in ",
                       toString(type));
    out[2 * i] = uint8_t(bits);
    out[2 * i + 1] = uint8_t(bits >> 8);
  }
  return out;
}

std::vector<uint8_t> intBytes(const std::vector<int32_t> &v) {
  std::vector<uint8_t> out(v.size() * 4);
  if (!v.empty())
    std::memcpy(out.data(), v.data(), out.size()); // little-endian hosts
  return out;
}

DType halfDType(FloatType t) {
  return t == FloatType::BF16 ? DType::BF16 : DType::F16;
}

} // namespace

Expected<std::vector<StoredStream>>
mixed2416StoredStreams(const std::string &name, const Mixed2416Descriptor &d,
                       const Mixed2416Streams &s) {
  const int64_t n = d.rows(), g = d.groupsPerRow();
  const int64_t seconds = d.secondGroupsPerColumn();
  const int64_t nnz = static_cast<int64_t>(s.sparseValues.size());
  auto where = [&](const char *key) { return name + "." + key; };
  std::vector<StoredStream> out;
  out.push_back({"precision_map",
                 DType::U8,
                 {int64_t(s.precisionMap.size())},
                 s.precisionMap});
  out.push_back(
      {"w2_codes", DType::U8, {int64_t(s.w2Codes.size())}, s.w2Codes});
  out.push_back(
      {"w4_codes", DType::U8, {int64_t(s.w4Codes.size())}, s.w4Codes});
  out.push_back({"first_scale_codes", DType::U8, {n, g}, s.firstScaleCodes});
  out.push_back({"first_zero_points", DType::U8, {n, g}, s.firstZeroPoints});
  QTENSOR_ASSIGN_OR_RETURN(
      std::vector<uint8_t> s2,
      halfBytes(where("second_scales"), s.secondScales, d.secondType));
  out.push_back(
      {"second_scales", halfDType(d.secondType), {seconds, g}, std::move(s2)});
  QTENSOR_ASSIGN_OR_RETURN(
      std::vector<uint8_t> z2,
      halfBytes(where("second_zero_points"), s.secondZeroPoints, d.secondType));
  out.push_back({"second_zero_points",
                 halfDType(d.secondType),
                 {seconds, g},
                 std::move(z2)});
  QTENSOR_ASSIGN_OR_RETURN(
      std::vector<uint8_t> sv,
      halfBytes(where("sparse_values"), s.sparseValues, d.sparseType));
  out.push_back(
      {"sparse_values", halfDType(d.sparseType), {nnz}, std::move(sv)});
  out.push_back(
      {"sparse_columns", DType::I32, {nnz}, intBytes(s.sparseColumns)});
  out.push_back({"sparse_row_pointers",
                 DType::I32,
                 {n + 1},
                 intBytes(s.sparseRowPointers)});
  return out;
}

nlohmann::ordered_json mixed2416Report(const Mixed2416Descriptor &d,
                                       const Mixed2416Rates &r) {
  nlohmann::ordered_json j;
  j["first_group_size"] = d.firstGroupSize;
  j["second_group_size"] = d.secondGroupSize;
  j["second_type"] = toString(d.secondType);
  j["sparse"] = toString(d.sparse);
  j["sparse_type"] = toString(d.sparseType);
  j["w2_groups"] = r.w2Groups;
  j["w4_groups"] = r.w4Groups;
  j["sparse_count"] = r.sparseCount;
  j["sparse_row_min"] = r.sparseRowMin;
  j["sparse_row_max"] = r.sparseRowMax;
  j["code_bytes"] = r.codeBytes;
  j["map_bytes"] = r.mapBytes;
  j["first_level_qparam_bytes"] = r.firstLevelBytes;
  j["second_level_qparam_bytes"] = r.secondLevelBytes;
  j["sparse_bytes"] = r.sparseBytes;
  j["padding_bytes"] = r.paddingBytes;
  j["payload_bits_per_weight"] = r.payloadBitsPerWeight;
  j["bits_per_weight"] = r.bitsPerWeight;
  j["stored_bytes"] = r.totalBytes;
  return j;
}

} // namespace qtensor::compiler
