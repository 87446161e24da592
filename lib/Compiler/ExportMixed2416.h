//===- ExportMixed2416.h - A mixed_2416 linear as stored --------*- C++ -*-===//
//
// What the export writes for a linear compiled under --quant mixed2416: the
// converter's streams as the manifest's physical tensors (Manifest.h
// Mixed2416Tensor, in its stream order, dtypes and shapes), and the
// report's record of what they cost (Mixed2416Rates, seed 0x01B's separate
// claims). The stored bytes add up to Mixed2416Rates::totalBytes.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_EXPORTMIXED2416_H
#define QTENSOR_LIB_COMPILER_EXPORTMIXED2416_H

#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Support/Expected.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace qtensor::compiler {

/// One stream as stored: its manifest key, dtype, shape and bytes.
struct StoredStream {
  std::string key; ///< "precision_map", ..., "sparse_row_pointers"
  safetensors::DType dtype = safetensors::DType::U8;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// The streams of `s` (verified against `d`) in Mixed2416Tensor::streams()
/// order: u8 bytes, second-level and outlier values in their dtypes
/// (refused when one is not exact there: the stored tensor must be the
/// one verified), i32 columns and row pointers. `name` prefixes errors.
Expected<std::vector<StoredStream>>
mixed2416StoredStreams(const std::string &name, const Mixed2416Descriptor &d,
                       const Mixed2416Streams &s);

/// The report's per-tensor record of a mixed_2416 linear: group counts,
/// outliers, qparam bytes per level, padding, payload and whole-tensor
/// bits per weight, and the stored bytes (their sum).
nlohmann::ordered_json mixed2416Report(const Mixed2416Descriptor &d,
                                       const Mixed2416Rates &r);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_EXPORTMIXED2416_H
