//===- RegistryJson.cpp - The registry as JSON and as text ----------------===//
//
// Strict both ways, like the descriptor JSON: every field registryToJson
// writes, registryFromJson requires; anything else is an error naming its
// JSON path. docs/kernels.md documents the schema.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Kernels/Registry.h"

#include "qtensor/Support/JsonObjectReader.h"

#include <sstream>

using namespace qtensor;
using namespace qtensor::kernels;
using json = nlohmann::json;

namespace {
constexpr const char *kSchema = "qtensor.kernels";
constexpr int64_t kSchemaVersion = 1;

//===----------------------------------------------------------------------===//
// toJson
//===----------------------------------------------------------------------===//

template <typename T, typename Spell>
json spellAll(const std::vector<T> &values, Spell spell) {
  json a = json::array();
  for (const T &v : values)
    a.push_back(spell(v));
  return a;
}

json layoutIdToJson(const LayoutId &id) {
  return {{"family", id.family},
          {"version", id.version},
          {"encoding", id.encoding}};
}

json kernelToJson(const KernelCapability &k) {
  auto floats = [](FloatType t) { return qtensor::toString(t); };
  auto zeroPoint = [](ZeroPointKind z) { return qtensor::toString(z); };
  json j;
  j["id"] = k.id;
  j["summary"] = k.summary;
  j["phases"] = spellAll(k.phases, [](Phase p) { return toString(p); });
  j["backends"] = spellAll(k.backends, [](Backend b) { return toString(b); });
  j["min_capability"] = k.minCapability;
  j["representations"] = k.representations;
  j["layout"] = k.layout ? layoutIdToJson(*k.layout) : json(nullptr);
  j["codes"] =
      spellAll(k.codes, [](const CodeContract &c) { return toString(c); });
  j["qparams"] = {
      {"zero_points",
       {{"signed", spellAll(k.signedZeroPoints, zeroPoint)},
        {"unsigned", spellAll(k.unsignedZeroPoints, zeroPoint)}}},
      {"codebooks",
       spellAll(k.codebooks, [](Codebook c) { return qtensor::toString(c); })},
      {"scales", spellAll(k.scaleTypes, floats)},
      {"group_sizes", k.anyGroupSize ? json("any") : json(k.groupSizes)},
      {"per_channel", k.perChannel},
      {"per_tensor", k.perTensor},
      {"act_order", k.actOrder},
      {"decoder_version", k.decoderVersion},
      {"scale_axis", {{"group", k.groupAxis}, {"channel", k.channelAxis}}}};
  j["activations"] = spellAll(k.activations, floats);
  j["accumulators"] = spellAll(k.accumulators, floats);
  j["outputs"] = spellAll(k.outputs, floats);
  j["topologies"] =
      spellAll(k.topologies, [](Topology t) { return toString(t); });
  j["tile"] = {{"n", k.tileN}, {"k", k.tileK}};
  j["tokens"] = {{"min", k.tokens.min},
                 {"max", k.tokens.max ? json(*k.tokens.max) : json(nullptr)}};
  j["epilogues"] =
      spellAll(k.epilogues, [](Epilogue e) { return toString(e); });
  j["priority"] = k.priority;
  j["full_dequant"] = k.fullDequant;
  j["row_split"] = k.rowSplit;
  j["activation_block"] = k.activationBlock;
  j["max_k"] = k.maxK ? json(*k.maxK) : json(nullptr);
  j["activation_quants"] = spellAll(
      k.activationQuants, [](ActivationQuant a) { return toString(a); });
  j["chunk_rows"] = k.chunkRows;
  return j;
}

//===----------------------------------------------------------------------===//
// fromJson
//===----------------------------------------------------------------------===//

/// Reads an array of spelled enum values.
template <typename T, typename Parse>
Status readSpelled(JsonObjectReader &r, const char *key, Parse parse,
                   std::vector<T> &out) {
  const json *a;
  QTENSOR_TRY(r.readArray(key, a));
  out.clear();
  for (size_t i = 0; i < a->size(); ++i) {
    std::string where = JsonObjectReader::indexed(r.at(key), i), s;
    QTENSOR_TRY(JsonObjectReader::toString((*a)[i], where, s));
    std::optional<T> v = parse(s);
    if (!v)
      return makeError(where, ": unknown value \"", s, "\"");
    out.push_back(*v);
  }
  return Status::ok();
}

Expected<LayoutId> layoutIdFromJson(const json &j, const std::string &path) {
  JsonObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  LayoutId id;
  int64_t version;
  QTENSOR_TRY(r.readString("family", id.family));
  QTENSOR_TRY(r.readInt("version", 1, UINT32_MAX, version));
  QTENSOR_TRY(r.readString("encoding", id.encoding));
  QTENSOR_TRY(r.noUnknownKeys());
  id.version = static_cast<uint32_t>(version);
  return id;
}

Status readFloats(JsonObjectReader &r, const char *key,
                  std::vector<FloatType> &out) {
  return readSpelled(r, key, parseFloatType, out);
}

Expected<KernelCapability> kernelFromJson(const json &j,
                                          const std::string &path) {
  JsonObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  KernelCapability k;
  QTENSOR_TRY(r.readString("id", k.id));
  QTENSOR_TRY(r.readString("summary", k.summary));
  QTENSOR_TRY(readSpelled(r, "phases", parsePhase, k.phases));
  QTENSOR_TRY(readSpelled(r, "backends", parseBackend, k.backends));
  int64_t minCapability;
  QTENSOR_TRY(r.readInt("min_capability", 0, 10000, minCapability));
  k.minCapability = static_cast<uint32_t>(minCapability);
  QTENSOR_TRY(readSpelled(
      r, "representations",
      [](const std::string &s) { return std::optional<std::string>(s); },
      k.representations));
  const json *layout;
  QTENSOR_TRY(r.require("layout", layout));
  if (!layout->is_null()) {
    auto id = layoutIdFromJson(*layout, r.at("layout"));
    if (!id)
      return id.error();
    k.layout = *id;
  }
  QTENSOR_TRY(readSpelled(r, "codes", parseCodeContract, k.codes));

  const json *qparams;
  QTENSOR_TRY(r.readObject("qparams", qparams));
  JsonObjectReader q(*qparams, r.at("qparams"));
  const json *zeroPoints;
  QTENSOR_TRY(q.readObject("zero_points", zeroPoints));
  JsonObjectReader z(*zeroPoints, q.at("zero_points"));
  QTENSOR_TRY(readSpelled(z, "signed", parseZeroPointKind, k.signedZeroPoints));
  QTENSOR_TRY(
      readSpelled(z, "unsigned", parseZeroPointKind, k.unsignedZeroPoints));
  QTENSOR_TRY(z.noUnknownKeys());
  QTENSOR_TRY(readSpelled(q, "codebooks", parseCodebook, k.codebooks));
  QTENSOR_TRY(readFloats(q, "scales", k.scaleTypes));
  const json *groups;
  QTENSOR_TRY(q.require("group_sizes", groups));
  if (groups->is_string() && *groups == "any") {
    k.anyGroupSize = true;
  } else {
    QTENSOR_TRY(JsonObjectReader::toIntArray(*groups, q.at("group_sizes"),
                                             k.groupSizes));
  }
  QTENSOR_TRY(q.readBool("per_channel", k.perChannel));
  QTENSOR_TRY(q.readBool("per_tensor", k.perTensor));
  QTENSOR_TRY(q.readBool("act_order", k.actOrder));
  int64_t decoderVersion;
  QTENSOR_TRY(q.readInt("decoder_version", 1, UINT32_MAX, decoderVersion));
  k.decoderVersion = static_cast<uint32_t>(decoderVersion);
  const json *axis;
  QTENSOR_TRY(q.readObject("scale_axis", axis));
  JsonObjectReader a(*axis, q.at("scale_axis"));
  QTENSOR_TRY(a.readInt("group", 0, 1, k.groupAxis));
  QTENSOR_TRY(a.readInt("channel", 0, 1, k.channelAxis));
  QTENSOR_TRY(a.noUnknownKeys());
  QTENSOR_TRY(q.noUnknownKeys());

  QTENSOR_TRY(readFloats(r, "activations", k.activations));
  QTENSOR_TRY(readFloats(r, "accumulators", k.accumulators));
  QTENSOR_TRY(readFloats(r, "outputs", k.outputs));
  QTENSOR_TRY(readSpelled(r, "topologies", parseTopology, k.topologies));
  const json *tile;
  QTENSOR_TRY(r.readObject("tile", tile));
  JsonObjectReader t(*tile, r.at("tile"));
  QTENSOR_TRY(t.readInt("n", 1, INT32_MAX, k.tileN));
  QTENSOR_TRY(t.readInt("k", 1, INT32_MAX, k.tileK));
  QTENSOR_TRY(t.noUnknownKeys());
  const json *tokens;
  QTENSOR_TRY(r.readObject("tokens", tokens));
  JsonObjectReader tr(*tokens, r.at("tokens"));
  QTENSOR_TRY(tr.readInt("min", 1, INT64_MAX, k.tokens.min));
  const json *max;
  QTENSOR_TRY(tr.require("max", max));
  if (!max->is_null()) {
    int64_t m;
    QTENSOR_TRY(JsonObjectReader::toInt(*max, tr.at("max"), 1, INT64_MAX, m));
    k.tokens.max = m;
  }
  QTENSOR_TRY(tr.noUnknownKeys());
  QTENSOR_TRY(readSpelled(r, "epilogues", parseEpilogue, k.epilogues));
  int64_t priority;
  QTENSOR_TRY(r.readInt("priority", INT32_MIN, INT32_MAX, priority));
  k.priority = static_cast<int>(priority);
  QTENSOR_TRY(r.readBool("full_dequant", k.fullDequant));
  QTENSOR_TRY(r.readBool("row_split", k.rowSplit));
  QTENSOR_TRY(r.readInt("activation_block", 0, 1 << 20, k.activationBlock));
  const json *maxK;
  QTENSOR_TRY(r.require("max_k", maxK));
  if (!maxK->is_null()) {
    int64_t m;
    QTENSOR_TRY(JsonObjectReader::toInt(*maxK, r.at("max_k"), 1, INT64_MAX, m));
    k.maxK = m;
  }
  QTENSOR_TRY(readSpelled(r, "activation_quants", parseActivationQuant,
                          k.activationQuants));
  QTENSOR_TRY(r.readInt("chunk_rows", 0, kMaxDecodeTokens, k.chunkRows));
  QTENSOR_TRY(r.noUnknownKeys());
  return k;
}

Expected<KernelLayout> layoutFromJson(const json &j, const std::string &path) {
  JsonObjectReader r(j, path);
  QTENSOR_TRY(r.expectObject());
  KernelLayout l;
  int64_t version;
  QTENSOR_TRY(r.readString("family", l.id.family));
  QTENSOR_TRY(r.readInt("version", 1, UINT32_MAX, version));
  l.id.version = static_cast<uint32_t>(version);
  QTENSOR_TRY(r.readString("encoding", l.id.encoding));
  QTENSOR_TRY(r.readString("summary", l.summary));
  std::vector<int64_t> bits;
  QTENSOR_TRY(r.readIntArray("bits", bits));
  for (int64_t b : bits) {
    if (b != 2 && b != 3 && b != 4 && b != 5 && b != 6 && b != 8)
      return makeError(r.at("bits"), ": code width ", b,
                       " has no tile field (4; 2, 3, 5, 6 or 8 in tile_w8)");
    l.bits.push_back(static_cast<unsigned>(b));
  }
  QTENSOR_TRY(r.readIntArray("tile_w4", l.tileW4));
  QTENSOR_TRY(r.readIntArray("tile_w8", l.tileW8));
  QTENSOR_TRY(r.noUnknownKeys());
  return l;
}

} // namespace

json kernels::registryToJson(const KernelRegistry &registry) {
  json layouts = json::array(), paths = json::array(), list = json::array();
  for (const KernelLayout &l : registry.layouts)
    layouts.push_back({{"family", l.id.family},
                       {"version", l.id.version},
                       {"encoding", l.id.encoding},
                       {"summary", l.summary},
                       {"bits", l.bits},
                       {"tile_w4", l.tileW4},
                       {"tile_w8", l.tileW8}});
  for (const RepackPath &p : registry.repackPaths)
    paths.push_back({{"from", layoutIdToJson(p.from)},
                     {"to", layoutIdToJson(p.to)},
                     {"at_export", p.atExport}});
  for (const KernelCapability &k : registry.kernels)
    list.push_back(kernelToJson(k));
  return {{"schema", kSchema},
          {"version", kSchemaVersion},
          {"layouts", layouts},
          {"repack_paths", paths},
          {"kernels", list}};
}

Expected<KernelRegistry> kernels::registryFromJson(const json &j) {
  JsonObjectReader r(j, "registry");
  QTENSOR_TRY(r.expectObject());
  std::string schema;
  QTENSOR_TRY(r.readString("schema", schema));
  if (schema != kSchema)
    return makeError(r.at("schema"), ": expected \"", kSchema, "\", got \"",
                     schema, "\"");
  int64_t version;
  QTENSOR_TRY(r.readInt("version", 1, INT64_MAX, version));
  if (version != kSchemaVersion)
    return makeError(r.at("version"), ": this build reads version ",
                     kSchemaVersion, ", got ", version);
  KernelRegistry registry;
  const json *layouts, *paths, *list;
  QTENSOR_TRY(r.readArray("layouts", layouts));
  for (size_t i = 0; i < layouts->size(); ++i) {
    auto l = layoutFromJson((*layouts)[i],
                            JsonObjectReader::indexed(r.at("layouts"), i));
    if (!l)
      return l.error();
    registry.layouts.push_back(l.take());
  }
  QTENSOR_TRY(r.readArray("repack_paths", paths));
  for (size_t i = 0; i < paths->size(); ++i) {
    std::string where = JsonObjectReader::indexed(r.at("repack_paths"), i);
    JsonObjectReader p((*paths)[i], where);
    QTENSOR_TRY(p.expectObject());
    const json *from, *to;
    RepackPath path;
    QTENSOR_TRY(p.readObject("from", from));
    QTENSOR_TRY(p.readObject("to", to));
    QTENSOR_TRY(p.readBool("at_export", path.atExport));
    QTENSOR_TRY(p.noUnknownKeys());
    auto f = layoutIdFromJson(*from, p.at("from"));
    if (!f)
      return f.error();
    auto t = layoutIdFromJson(*to, p.at("to"));
    if (!t)
      return t.error();
    path.from = *f;
    path.to = *t;
    registry.repackPaths.push_back(std::move(path));
  }
  QTENSOR_TRY(r.readArray("kernels", list));
  for (size_t i = 0; i < list->size(); ++i) {
    auto k = kernelFromJson((*list)[i],
                            JsonObjectReader::indexed(r.at("kernels"), i));
    if (!k)
      return k.error();
    registry.kernels.push_back(k.take());
  }
  QTENSOR_TRY(r.noUnknownKeys());
  if (Status s = verifyRegistry(registry); !s)
    return makeError("registry: ", s.message());
  return registry;
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

namespace {
template <typename T, typename Spell>
std::string joined(const std::vector<T> &values, Spell spell) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::string(spell(values[i]));
  return s;
}

std::string spellTile(const std::vector<int64_t> &tile) {
  return shapeToString(tile);
}
} // namespace

std::string kernels::registryToText(const KernelRegistry &registry) {
  auto floats = [](FloatType t) { return qtensor::toString(t); };
  std::ostringstream os;
  os << "kernel capability registry: " << registry.kernels.size()
     << " kernels, " << registry.layouts.size() << " layouts, "
     << registry.repackPaths.size() << " repack paths\n";
  os << "\nlayouts:\n";
  for (const KernelLayout &l : registry.layouts) {
    os << "  " << toString(l.id) << "  " << l.summary << "\n";
    if (!l.tileW4.empty())
      os << "      tile for 4-bit codes " << spellTile(l.tileW4) << "\n";
    if (!l.tileW8.empty())
      os << "      tile for 8-bit codes " << spellTile(l.tileW8) << "\n";
  }
  os << "\nrepack paths (code-preserving):\n";
  for (const RepackPath &p : registry.repackPaths)
    os << "  " << toString(p.from) << " -> " << toString(p.to) << "  "
       << (p.atExport ? "prepacked at export" : "at load time") << "\n";
  for (const KernelCapability &k : registry.kernels) {
    os << "\n" << k.id << "\n";
    os << "  summary         " << k.summary << "\n";
    os << "  phases          "
       << joined(k.phases, [](Phase p) { return toString(p); }) << " ("
       << toString(k.tokens) << ")";
    if (k.chunkRows)
      os << "; prefill in chunks of " << k.chunkRows << " rows";
    os << "\n";
    os << "  targets         ";
    for (size_t i = 0; i < k.backends.size(); ++i) {
      os << (i ? ", " : "");
      if (k.backends[i] == Backend::Cuda)
        os << "cuda " << capabilityName(k.minCapability) << "+";
      else
        os << "host";
    }
    os << "\n";
    os << "  representation  "
       << joined(k.representations, [](auto &s) { return s; }) << "\n";
    os << "  layout          "
       << (k.layout ? toString(*k.layout) : "any (reference decoder)") << "\n";
    os << "  codes           "
       << joined(k.codes, [](const CodeContract &c) { return toString(c); })
       << "\n";
    auto zeroPoint = [](ZeroPointKind z) { return qtensor::toString(z); };
    os << "  zero-points     signed codes: "
       << joined(k.signedZeroPoints, zeroPoint);
    if (!k.unsignedZeroPoints.empty()) // none: it admits no unsigned codes
      os << "; unsigned codes: " << joined(k.unsignedZeroPoints, zeroPoint);
    os << "\n";
    os << "  codebooks       "
       << joined(k.codebooks, [](Codebook c) { return qtensor::toString(c); })
       << "\n";
    os << "  scales          " << joined(k.scaleTypes, floats) << "\n";
    os << "  groups          ";
    if (k.anyGroupSize)
      os << "any size";
    else
      os << joined(k.groupSizes, [](int64_t g) { return std::to_string(g); });
    os << " along K (axis " << k.groupAxis << ")";
    if (k.perChannel)
      os << "; per-channel along N (axis " << k.channelAxis << ")";
    if (k.perTensor)
      os << "; per-tensor";
    if (k.actOrder)
      os << "; act-order";
    os << "\n";
    os << "  activations     " << joined(k.activations, floats);
    if (k.activationBlock)
      os << " (quantized to int8 per " << k.activationBlock << " at T = 1)";
    if (k.activationQuants !=
        std::vector<ActivationQuant>{ActivationQuant::None})
      os << " (quantized to int8 at run time: "
         << joined(k.activationQuants,
                   [](ActivationQuant a) { return toString(a); })
         << ")";
    os << "\n";
    os << "  accumulator     " << joined(k.accumulators, floats) << "\n";
    os << "  outputs         " << joined(k.outputs, floats) << "\n";
    os << "  topologies      "
       << joined(k.topologies, [](Topology t) { return toString(t); }) << "\n";
    os << "  tile multiples  N % " << k.tileN << ", K % " << k.tileK
       << " (local, every rank)";
    if (k.maxK)
      os << "; K at most " << *k.maxK;
    os << "\n";
    os << "  epilogues       "
       << joined(k.epilogues, [](Epilogue e) { return toString(e); }) << "\n";
    os << "  priority        " << k.priority
       << (k.fullDequant ? " (full-dequant fallback: only when the policy "
                           "allows it)"
                         : "")
       << "\n";
  }
  return os.str();
}
