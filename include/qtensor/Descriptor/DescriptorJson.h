//===- DescriptorJson.h - Descriptor <-> JSON (manifest schema) -*- C++ -*-===//
//
// The manifest's per-tensor schema. Parsing is strict: a missing required
// field, an unknown field, a wrong JSON type or an unknown enum spelling is an
// error that names the JSON path; the result is verified before it returns.
// See docs/descriptor-json.md for the schema.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_DESCRIPTOR_DESCRIPTORJSON_H
#define QTENSOR_DESCRIPTOR_DESCRIPTORJSON_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Descriptor/Mixed2416.h"

#include <nlohmann/json.hpp>

namespace qtensor {

nlohmann::json toJson(const AffineDescriptor &d);
nlohmann::json toJson(const LayoutDescriptor &l);
nlohmann::json toJson(const QuantizedTensorDescriptor &t);

Expected<AffineDescriptor> affineDescriptorFromJson(const nlohmann::json &j);
Expected<LayoutDescriptor> layoutDescriptorFromJson(const nlohmann::json &j);
Expected<QuantizedTensorDescriptor>
tensorDescriptorFromJson(const nlohmann::json &j);

/// A mixed_2416 tensor's contract in the same shape as an affine tensor's:
/// {shape, element_type, descriptor: {family: "mixed_2416", ...}, layout}
/// (docs/descriptor-json.md). Parsing is as strict, then verifyMixed2416.
nlohmann::json toJson(const Mixed2416Descriptor &d);
Expected<Mixed2416Descriptor>
mixed2416DescriptorFromJson(const nlohmann::json &j);

} // namespace qtensor

#endif // QTENSOR_DESCRIPTOR_DESCRIPTORJSON_H
