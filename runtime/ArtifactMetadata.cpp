//===- ArtifactMetadata.cpp - The trace and report the loader reads -------===//

#include "qtensor/Runtime/ArtifactMetadata.h"

#include "qtensor/Runtime/KernelInstance.h"
#include "qtensor/Support/JsonObjectReader.h"

#include <set>

using namespace qtensor;
using namespace qtensor::runtime;
using json = nlohmann::json;

Expected<json> qtensor::runtime::parseBoundedJson(std::string_view text,
                                                  const std::string &name,
                                                  uint64_t maxBytes) {
  return parseStrictJson(text, name, maxBytes, kMaxMetadataDepth);
}

namespace {

Status readFloatType(JsonObjectReader &r, const char *key, FloatType &out) {
  return r.readEnum(key, &qtensor::parseFloatType, out);
}

Status readRanks(const json &topology, const std::string &where,
                 TraceEntry &e) {
  JsonObjectReader r(topology, where);
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(r.readEnum("kind", &kernels::parseTopology, e.topology));
  const json *ranks;
  QTENSOR_TRY(r.readArray("ranks", ranks));
  if (ranks->empty() || ranks->size() > 65536)
    return makeError(r.at("ranks"), ": expected 1 to 65536 ranks, got ",
                     ranks->size());
  for (size_t i = 0; i < ranks->size(); ++i) {
    JsonObjectReader rr((*ranks)[i],
                        JsonObjectReader::indexed(r.at("ranks"), i));
    QTENSOR_TRY(rr.expectObject());
    int64_t rank = 0;
    kernels::RankSlice s;
    QTENSOR_TRY(rr.readInt("rank", 0, 65535, rank));
    if (rank != int64_t(i))
      return makeError(rr.at("rank"), ": ", rank, ", expected ", i,
                       " (ranks in order)");
    QTENSOR_TRY(rr.readInt("n_offset", 0, kMaxDimension, s.nOffset));
    QTENSOR_TRY(rr.readInt("n", 1, kMaxDimension, s.n));
    QTENSOR_TRY(rr.readInt("k_offset", 0, kMaxDimension, s.kOffset));
    QTENSOR_TRY(rr.readInt("k", 1, kMaxDimension, s.k));
    e.ranks.push_back(s);
  }
  // The slices must tile the sliced dimension and hold all of the other.
  using kernels::Topology;
  bool column = e.topology == Topology::Column,
       row = e.topology == Topology::Row;
  if (topology.contains("bias_after_reduce")) {
    QTENSOR_TRY(r.readBool("bias_after_reduce", e.biasAfterReduce));
    if (e.biasAfterReduce && (!row || e.ranks.size() < 2))
      return makeError(r.at("bias_after_reduce"),
                       ": only a row-parallel op over 2 or more ranks adds "
                       "its bias after an all-reduce");
  }
  if ((e.topology == Topology::Single) && e.ranks.size() != 1)
    return makeError(r.at("ranks"), ": a single-rank op lists ", e.ranks.size(),
                     " ranks");
  int64_t nextN = 0, nextK = 0;
  for (size_t i = 0; i < e.ranks.size(); ++i) {
    const kernels::RankSlice &s = e.ranks[i];
    std::string at = JsonObjectReader::indexed(r.at("ranks"), i);
    if (column) {
      if (s.nOffset != nextN || s.kOffset != 0 || s.k != e.k)
        return makeError(at, ": column slice [n_offset ", s.nOffset, ", n ",
                         s.n, ", k_offset ", s.kOffset, ", k ", s.k,
                         "] does not continue at N = ", nextN,
                         " with the whole K = ", e.k);
      nextN += s.n;
    } else if (row) {
      if (s.kOffset != nextK || s.nOffset != 0 || s.n != e.n)
        return makeError(at, ": row slice [n_offset ", s.nOffset, ", n ", s.n,
                         ", k_offset ", s.kOffset, ", k ", s.k,
                         "] does not continue at K = ", nextK,
                         " with the whole N = ", e.n);
      nextK += s.k;
    } else if (s.nOffset != 0 || s.kOffset != 0 || s.n != e.n || s.k != e.k) {
      return makeError(at, ": a ", kernels::toString(e.topology),
                       " rank must hold the whole [", e.n, ", ", e.k,
                       "] weight");
    }
  }
  if (column && nextN != e.n)
    return makeError(r.at("ranks"), ": column slices cover N = ", nextN, " of ",
                     e.n);
  if (row && nextK != e.k)
    return makeError(r.at("ranks"), ": row slices cover K = ", nextK, " of ",
                     e.k);
  return Status::ok();
}

Status readEntry(const json &v, const std::string &where, TraceEntry &e,
                 bool &skipped) {
  JsonObjectReader r(v, where);
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(r.readString("op", e.op));
  if (e.op.empty())
    return makeError(r.at("op"), ": empty op name");
  skipped = r.find("skipped") != nullptr;
  if (skipped)
    return Status::ok(); // a static T outside the compiled phases
  QTENSOR_TRY(r.readEnum("phase", &kernels::parsePhase, e.phase));
  const json *selected;
  QTENSOR_TRY(r.require("selected", selected));
  if (!selected->is_null()) {
    std::string s;
    QTENSOR_TRY(JsonObjectReader::toString(*selected, r.at("selected"), s));
    e.selected = s;
  }
  QTENSOR_TRY(r.readBool("fallback", e.fallback));
  if (e.fallback && !e.selected)
    return makeError(r.at("fallback"), ": a fallback with no kernel selected");
  const json *shape;
  QTENSOR_TRY(r.readObject("shape", shape));
  JsonObjectReader sr(*shape, r.at("shape"));
  QTENSOR_TRY(sr.readInt("N", 1, kMaxDimension, e.n));
  QTENSOR_TRY(sr.readInt("K", 1, kMaxDimension, e.k));
  const json *topology, *signature;
  QTENSOR_TRY(r.readObject("topology", topology));
  QTENSOR_TRY(readRanks(*topology, r.at("topology"), e));
  QTENSOR_TRY(r.readObject("signature", signature));
  JsonObjectReader sig(*signature, r.at("signature"));
  QTENSOR_TRY(readFloatType(sig, "activation", e.activation));
  QTENSOR_TRY(readFloatType(sig, "accumulator", e.accumulator));
  QTENSOR_TRY(readFloatType(sig, "output", e.output));
  QTENSOR_TRY(sig.readEnum("epilogue", &kernels::parseEpilogue, e.epilogue));
  return Status::ok();
}

} // namespace

Expected<std::vector<TraceEntry>>
qtensor::runtime::parseTrace(const json &j, const std::string &name) {
  if (!j.is_array())
    return makeError(name, ": expected a JSON list of trace entries, got ",
                     j.type_name());
  std::vector<TraceEntry> out;
  std::set<std::pair<std::string, int>> seen;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string where = JsonObjectReader::indexed(name, i);
    TraceEntry e;
    bool skipped = false;
    QTENSOR_TRY(readEntry(j[i], where, e, skipped));
    if (skipped)
      continue;
    if (!seen.insert({e.op, int(e.phase)}).second)
      return makeError(where, ": a second ", kernels::toString(e.phase),
                       " entry for op \"", e.op, "\"");
    out.push_back(std::move(e));
  }
  return out;
}

Expected<ReportOptions>
qtensor::runtime::parseReportOptions(const json &j, const std::string &name) {
  if (!j.is_object())
    return makeError(name, ": expected a JSON object, got ", j.type_name());
  ReportOptions o;
  if (auto p = j.find("program"); p != j.end() && p->is_object())
    if (auto none = p->find("none"); none != p->end() && none->is_string())
      o.programGap = none->get<std::string>().substr(0, 1000);
  auto it = j.find("options");
  if (it == j.end())
    return o;
  JsonObjectReader r(*it, name + ".options");
  QTENSOR_TRY(r.expectObject());
  if (r.find("fallback")) {
    kernels::FallbackPolicy p;
    QTENSOR_TRY(r.readEnum("fallback", &kernels::parseFallbackPolicy, p));
    o.fallback = p;
  }
  QTENSOR_TRY(r.readOptionalString("target", o.target));
  if (r.find("tp")) {
    int64_t tp = 0;
    QTENSOR_TRY(r.readInt("tp", 1, 65536, tp));
    o.tp = tp;
  }
  return o;
}

Status qtensor::runtime::checkShardInventory(
    const artifact::Manifest &m, const std::string &path,
    const safetensors::SafetensorsFile &shard) {
  std::set<std::string, std::less<>> declared;
  for (const artifact::TensorEntry &t : m.tensors) {
    if (t.file != path)
      continue;
    for (const auto &[role, stored] : t.storedTensors()) {
      declared.insert(stored.tensor);
      const safetensors::TensorView *v = shard.find(stored.tensor);
      if (!v)
        return makeError(shard.path(), ": tensor \"", stored.tensor, "\" (",
                         role, " of \"", t.name,
                         "\") is missing from the shard");
      if (v->dtype != stored.dtype || v->shape != stored.shape)
        return makeError(shard.path(), ": tensor \"", stored.tensor, "\" is ",
                         safetensors::dtypeName(v->dtype), " ",
                         shapeToString(v->shape), ", the manifest declares ",
                         safetensors::dtypeName(stored.dtype), " ",
                         shapeToString(stored.shape));
    }
  }
  for (const safetensors::TensorView &v : shard.tensors())
    if (!declared.count(v.name))
      return makeError(shard.path(), ": tensor \"", v.name,
                       "\" is not declared by any manifest tensor (strict "
                       "inventory)");
  return Status::ok();
}
