//===- DescriptorJson.cpp - Descriptor <-> JSON ---------------------------===//
//
// Strict both ways: every field toJson writes is one fromJson requires (or
// knows as optional), and fromJson rejects anything else, naming the path.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Descriptor/DescriptorJson.h"

#include "qtensor/Support/JsonObjectReader.h"

#include <cmath>

using namespace qtensor;
using json = nlohmann::json;

//===----------------------------------------------------------------------===//
// toJson
//===----------------------------------------------------------------------===//

json qtensor::toJson(const AffineDescriptor &d) {
  json j;
  j["family"] = "affine";
  j["decoder_version"] = d.decoderVersion;
  j["code"] = {{"bits", d.code.bits},
               {"signed", d.code.isSigned},
               {"encoding", toString(d.encoding)}};
  j["scheme"] = toString(d.scheme);
  j["zero_point"] = toString(d.zeroPoint);
  json g = {{"kind", toString(d.granularity)}};
  if (d.granularity != Granularity::PerTensor)
    g["axis"] = d.axis;
  if (d.granularity == Granularity::Group) {
    g["group_size"] = d.groupSize;
    g["tail"] = toString(d.tail);
  }
  j["granularity"] = g;
  j["scale_dtype"] = toString(d.scaleType);
  j["rounding"] = toString(d.rounding);
  j["saturation"] = toString(d.saturation);
  j["narrow_range"] = d.narrowRange;
  if (d.permutation)
    j["permutation"] = *d.permutation;
  if (d.nested) {
    auto code = [](const CodeType &c) {
      return json{{"bits", c.bits}, {"signed", c.isSigned}};
    };
    json n = {{"scale_code", code(d.nested->scaleCode)},
              {"super_group_size", d.nested->superGroupSize},
              {"super_dtype", toString(d.nested->superType)}};
    if (d.nested->minCode)
      n["min_code"] = code(*d.nested->minCode);
    j["nested"] = n;
  }
  if (d.codebook != Codebook::None) {
    json values = json::array();
    for (float v : codebookValues(d.codebook))
      values.push_back(std::isnan(v) ? json(nullptr) : json(v));
    j["codebook"] = {{"name", toString(d.codebook)}, {"values", values}};
  }
  if (d.scaleFormat != ScaleFormat::Plain)
    j["scale_format"] = toString(d.scaleFormat);
  return j;
}

json qtensor::toJson(const LayoutDescriptor &l) {
  return {{"family", l.family},
          {"version", l.version},
          {"encoding", l.encoding},
          {"tile", l.tile},
          {"padding", l.padding}};
}

json qtensor::toJson(const QuantizedTensorDescriptor &t) {
  return {{"shape", t.shape},
          {"element_type", toString(t.elementType)},
          {"descriptor", toJson(t.descriptor)},
          {"layout", toJson(t.layout)}};
}

//===----------------------------------------------------------------------===//
// fromJson
//===----------------------------------------------------------------------===//

namespace {
using ObjectReader = JsonObjectReader;

Status parseNestedCode(ObjectReader &parent, const char *key, CodeType &c) {
  const json *j;
  QTENSOR_TRY(parent.require(key, j));
  ObjectReader r(*j, parent.at(key));
  QTENSOR_TRY(r.expectObject());
  int64_t bits;
  QTENSOR_TRY(r.readInt("bits", 1, 64, bits));
  c.bits = static_cast<unsigned>(bits);
  QTENSOR_TRY(r.readBool("signed", c.isSigned));
  return r.noUnknownKeys();
}

Expected<NestedQParams> parseNested(const json &j, const std::string &path) {
  ObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  NestedQParams n;
  QTENSOR_TRY(parseNestedCode(r, "scale_code", n.scaleCode));
  if (r.find("min_code")) {
    CodeType m;
    QTENSOR_TRY(parseNestedCode(r, "min_code", m));
    n.minCode = m;
  }
  QTENSOR_TRY(r.readInt("super_group_size", 1, INT64_MAX, n.superGroupSize));
  QTENSOR_TRY(r.readEnum("super_dtype", parseFloatType, n.superType));
  QTENSOR_TRY(r.noUnknownKeys());
  return n;
}

/// The table's name, and its values exactly as the name defines them: a
/// reader that took the values would decode a tampered table silently.
Status parseCodebook(const json &j, const std::string &path, Codebook &out) {
  ObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(r.readEnum("name", qtensor::parseCodebook, out));
  if (out == Codebook::None)
    return makeError(r.at("name"),
                     ": \"none\" is spelled by leaving codebook out");
  const json *values;
  QTENSOR_TRY(r.readArray("values", values));
  const std::vector<float> &expected = codebookValues(out);
  if (values->size() != expected.size())
    return makeError(r.at("values"), ": ", toString(out), " has ",
                     expected.size(), " entries, got ", values->size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const json &v = (*values)[i];
    // A NaN entry (E4M3's 0x7f, 0xff) is spelled null, JSON having no NaN.
    const bool nan = std::isnan(expected[i]);
    if (nan ? !v.is_null()
            : !v.is_number() || v.get<double>() != double(expected[i]))
      return makeError(ObjectReader::indexed(r.at("values"), i), ": ",
                       toString(out), "'s entry ", i, " is ",
                       nan ? std::string("null (NaN)")
                           : json(double(expected[i])).dump(),
                       ", got ", v.dump());
  }
  return r.noUnknownKeys();
}

Expected<AffineDescriptor> parseAffine(const json &j, const std::string &path) {
  ObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  std::string family;
  QTENSOR_TRY(r.readString("family", family));
  if (family != "affine")
    return makeError(r.at("family"), ": unknown descriptor family \"", family,
                     "\" (this build knows: affine)");
  AffineDescriptor d;
  int64_t version;
  QTENSOR_TRY(r.readInt("decoder_version", 1, UINT32_MAX, version));
  d.decoderVersion = static_cast<uint32_t>(version);

  const json *code;
  QTENSOR_TRY(r.require("code", code));
  ObjectReader c(*code, r.at("code"));
  QTENSOR_TRY(c.expectObject());
  int64_t bits;
  QTENSOR_TRY(c.readInt("bits", 1, 64, bits));
  d.code.bits = static_cast<unsigned>(bits);
  QTENSOR_TRY(c.readBool("signed", d.code.isSigned));
  QTENSOR_TRY(c.readEnum("encoding", parseSignedEncoding, d.encoding));
  QTENSOR_TRY(c.noUnknownKeys());

  QTENSOR_TRY(r.readEnum("scheme", parseQuantScheme, d.scheme));
  QTENSOR_TRY(r.readEnum("zero_point", parseZeroPointKind, d.zeroPoint));

  const json *gran;
  QTENSOR_TRY(r.require("granularity", gran));
  ObjectReader g(*gran, r.at("granularity"));
  QTENSOR_TRY(g.expectObject());
  QTENSOR_TRY(g.readEnum("kind", parseGranularity, d.granularity));
  if (d.granularity != Granularity::PerTensor)
    QTENSOR_TRY(g.readInt("axis", 0, INT64_MAX, d.axis));
  if (d.granularity == Granularity::Group) {
    QTENSOR_TRY(g.readInt("group_size", 1, INT64_MAX, d.groupSize));
    QTENSOR_TRY(g.readEnum("tail", parseTailRule, d.tail));
  }
  QTENSOR_TRY(g.noUnknownKeys());

  QTENSOR_TRY(r.readEnum("scale_dtype", parseFloatType, d.scaleType));
  QTENSOR_TRY(r.readEnum("rounding", parseRoundingMode, d.rounding));
  QTENSOR_TRY(r.readEnum("saturation", parseSaturationMode, d.saturation));
  QTENSOR_TRY(r.readBool("narrow_range", d.narrowRange));
  if (const json *perm = r.find("permutation")) {
    std::vector<int64_t> p;
    QTENSOR_TRY(ObjectReader::toIntArray(*perm, r.at("permutation"), p));
    d.permutation = std::move(p);
  }
  if (const json *nested = r.find("nested")) {
    QTENSOR_ASSIGN_OR_RETURN(d.nested, parseNested(*nested, r.at("nested")));
  }
  if (const json *codebook = r.find("codebook"))
    QTENSOR_TRY(parseCodebook(*codebook, r.at("codebook"), d.codebook));
  if (r.find("scale_format")) {
    QTENSOR_TRY(r.readEnum("scale_format", parseScaleFormat, d.scaleFormat));
    if (d.scaleFormat == ScaleFormat::Plain)
      return makeError(r.at("scale_format"),
                       ": \"plain\" is spelled by leaving scale_format out");
  }
  QTENSOR_TRY(r.noUnknownKeys());
  if (Status s = verifyDescriptor(d); !s)
    return makeError(path, ": ", s.message());
  return d;
}

Expected<LayoutDescriptor> parseLayout(const json &j, const std::string &path) {
  ObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  LayoutDescriptor l;
  QTENSOR_TRY(r.readString("family", l.family));
  int64_t version;
  QTENSOR_TRY(r.readInt("version", 1, UINT32_MAX, version));
  l.version = static_cast<uint32_t>(version);
  QTENSOR_TRY(r.readString("encoding", l.encoding));
  QTENSOR_TRY(r.readIntArray("tile", l.tile));
  QTENSOR_TRY(r.readIntArray("padding", l.padding));
  QTENSOR_TRY(r.noUnknownKeys());
  return l;
}
} // namespace

Expected<AffineDescriptor> qtensor::affineDescriptorFromJson(const json &j) {
  return parseAffine(j, "descriptor");
}

Expected<LayoutDescriptor> qtensor::layoutDescriptorFromJson(const json &j) {
  auto l = parseLayout(j, "layout");
  if (!l)
    return l;
  // Without a shape only the shape-free layout rules can be checked.
  if (Status s = verifyLayout(*l); !s)
    return makeError("layout: ", s.message());
  return l;
}

Expected<QuantizedTensorDescriptor>
qtensor::tensorDescriptorFromJson(const json &j) {
  ObjectReader r(j, "tensor");
  QTENSOR_TRY(r.expectObject());
  QuantizedTensorDescriptor t;
  QTENSOR_TRY(r.readIntArray("shape", t.shape));
  QTENSOR_TRY(r.readEnum("element_type", parseFloatType, t.elementType));
  const json *desc, *layout;
  QTENSOR_TRY(r.require("descriptor", desc));
  QTENSOR_TRY(r.require("layout", layout));
  QTENSOR_TRY(r.noUnknownKeys());
  auto d = parseAffine(*desc, "tensor.descriptor");
  if (!d)
    return d.error();
  auto l = parseLayout(*layout, "tensor.layout");
  if (!l)
    return l.error();
  t.descriptor = d.take();
  t.layout = l.take();
  if (Status s = verifyTensorDescriptor(t); !s)
    return makeError("tensor: ", s.message());
  return t;
}
