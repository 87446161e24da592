//===- Mixed2416Json.cpp - The mixed_2416 contract <-> JSON ---------------===//
//
// As strict as the affine spelling (DescriptorJson.cpp): every field toJson
// writes is required, anything else is refused by its JSON path, and the
// result is verified before it returns.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Descriptor/DescriptorJson.h"

#include "qtensor/Support/JsonObjectReader.h"

using namespace qtensor;
using json = nlohmann::json;

json qtensor::toJson(const Mixed2416Descriptor &d) {
  json desc = {
      {"family", "mixed_2416"},
      {"decoder_version", d.decoderVersion},
      {"first_level",
       {{"axis", d.firstGroupAxis},
        {"group_size", d.firstGroupSize},
        {"scale_code",
         {{"bits", d.firstScaleCode.bits},
          {"signed", d.firstScaleCode.isSigned}}}}},
      {"second_level",
       {{"axis", d.secondGroupAxis},
        {"group_size", d.secondGroupSize},
        {"dtype", toString(d.secondType)}}},
      {"precision_map", {{"granularity", toString(d.mapGranularity)}}},
      {"qparam_packing", toString(d.qparamPacking)},
      {"sparse",
       {{"semantics", toString(d.sparse)}, {"dtype", toString(d.sparseType)}}},
      {"required_kernel", d.requiredKernel}};
  json layout = {{"family", d.layoutFamily},
                 {"version", d.layoutVersion},
                 {"encoding", d.layoutEncoding},
                 {"tile", json::array()},
                 {"padding", json::array()}};
  return {{"shape", d.shape},
          {"element_type", toString(d.elementType)},
          {"descriptor", desc},
          {"layout", layout}};
}

namespace {
using ObjectReader = JsonObjectReader;

/// The object at `key` of `parent`, read by `body`, no other keys.
template <typename Body>
Status readSection(ObjectReader &parent, const char *key, Body body) {
  const json *j;
  QTENSOR_TRY(parent.require(key, j));
  ObjectReader r(*j, parent.at(key));
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(body(r));
  return r.noUnknownKeys();
}

Status parseDescriptor(const json &j, const std::string &path,
                       Mixed2416Descriptor &d) {
  ObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  std::string family;
  QTENSOR_TRY(r.readString("family", family));
  if (family != "mixed_2416")
    return makeError(r.at("family"), ": expected \"mixed_2416\", got \"",
                     family, "\"");
  int64_t version;
  QTENSOR_TRY(r.readInt("decoder_version", 1, UINT32_MAX, version));
  d.decoderVersion = static_cast<uint32_t>(version);
  QTENSOR_TRY(readSection(r, "first_level", [&](ObjectReader &f) -> Status {
    QTENSOR_TRY(f.readInt("axis", 0, 1, d.firstGroupAxis));
    QTENSOR_TRY(f.readInt("group_size", 1, INT64_MAX, d.firstGroupSize));
    return readSection(f, "scale_code", [&](ObjectReader &c) -> Status {
      int64_t bits;
      QTENSOR_TRY(c.readInt("bits", 1, 64, bits));
      d.firstScaleCode.bits = static_cast<unsigned>(bits);
      return c.readBool("signed", d.firstScaleCode.isSigned);
    });
  }));
  QTENSOR_TRY(readSection(r, "second_level", [&](ObjectReader &s) -> Status {
    QTENSOR_TRY(s.readInt("axis", 0, 1, d.secondGroupAxis));
    QTENSOR_TRY(s.readInt("group_size", 1, INT64_MAX, d.secondGroupSize));
    return s.readEnum("dtype", parseFloatType, d.secondType);
  }));
  QTENSOR_TRY(readSection(r, "precision_map", [&](ObjectReader &m) {
    return m.readEnum("granularity", parsePrecisionMapGranularity,
                      d.mapGranularity);
  }));
  QTENSOR_TRY(
      r.readEnum("qparam_packing", parseQParamPacking, d.qparamPacking));
  QTENSOR_TRY(readSection(r, "sparse", [&](ObjectReader &s) -> Status {
    QTENSOR_TRY(s.readEnum("semantics", parseSparseSemantics, d.sparse));
    return s.readEnum("dtype", parseFloatType, d.sparseType);
  }));
  QTENSOR_TRY(r.readString("required_kernel", d.requiredKernel));
  return r.noUnknownKeys();
}
} // namespace

Expected<Mixed2416Descriptor>
qtensor::mixed2416DescriptorFromJson(const json &j) {
  ObjectReader r(j, "tensor");
  QTENSOR_TRY(r.expectObject());
  Mixed2416Descriptor d;
  QTENSOR_TRY(r.readIntArray("shape", d.shape));
  QTENSOR_TRY(r.readEnum("element_type", parseFloatType, d.elementType));
  const json *desc, *layout;
  QTENSOR_TRY(r.require("descriptor", desc));
  QTENSOR_TRY(r.require("layout", layout));
  QTENSOR_TRY(r.noUnknownKeys());
  QTENSOR_TRY(parseDescriptor(*desc, "tensor.descriptor", d));
  auto l = layoutDescriptorFromJson(*layout);
  if (!l)
    return makeError("tensor.", l.message());
  if (!l->tile.empty() || !l->padding.empty())
    return makeError("tensor.layout: the mixed_2416 layout has no tiles or "
                     "padding");
  d.layoutFamily = l->family;
  d.layoutVersion = l->version;
  d.layoutEncoding = l->encoding;
  if (Status s = verifyMixed2416(d); !s)
    return makeError("tensor: ", s.message());
  return d;
}
