//===- OpBinding.cpp - Which op runs on which weight and kernel -----------===//

#include "qtensor/Formats/OpBinding.h"

#include "qtensor/Support/JsonObjectReader.h"

using namespace qtensor;
using namespace qtensor::artifact;
using json = nlohmann::json;

namespace {

/// Largest N, K and slice extent accepted (as for kernel records).
constexpr int64_t kMaxExtent = int64_t(1) << 31;

Status readFloatType(JsonObjectReader &r, const char *key, FloatType &out) {
  return r.readEnum(key, &qtensor::parseFloatType, out);
}

/// The slices tile the sliced dimension and hold all of the other.
Status checkRanks(const OpBinding &b, const std::string &at) {
  using kernels::Topology;
  const bool column = b.topology == Topology::Column,
             row = b.topology == Topology::Row;
  if (b.topology == Topology::Single && b.ranks.size() != 1)
    return makeError(at, ": a single-rank op lists ", b.ranks.size(), " ranks");
  if (b.biasAfterReduce && (!row || b.ranks.size() < 2))
    return makeError(at, ": bias_after_reduce, but only a row-parallel op "
                         "over 2 or more ranks adds its bias after an "
                         "all-reduce");
  int64_t nextN = 0, nextK = 0;
  for (size_t i = 0; i < b.ranks.size(); ++i) {
    const kernels::RankSlice &s = b.ranks[i];
    std::string where = JsonObjectReader::indexed(at, i);
    if (column) {
      if (s.nOffset != nextN || s.kOffset != 0 || s.k != b.k)
        return makeError(where, ": column slice [n_offset ", s.nOffset, ", n ",
                         s.n, ", k_offset ", s.kOffset, ", k ", s.k,
                         "] does not continue at N = ", nextN,
                         " with the whole K = ", b.k);
      nextN += s.n;
    } else if (row) {
      if (s.kOffset != nextK || s.nOffset != 0 || s.n != b.n)
        return makeError(where, ": row slice [n_offset ", s.nOffset, ", n ",
                         s.n, ", k_offset ", s.kOffset, ", k ", s.k,
                         "] does not continue at K = ", nextK,
                         " with the whole N = ", b.n);
      nextK += s.k;
    } else if (s.nOffset != 0 || s.kOffset != 0 || s.n != b.n || s.k != b.k) {
      return makeError(where, ": a ", kernels::toString(b.topology),
                       " rank must hold the whole [", b.n, ", ", b.k,
                       "] weight");
    }
  }
  if (column && nextN != b.n)
    return makeError(at, ": column slices cover N = ", nextN, " of ", b.n);
  if (row && nextK != b.k)
    return makeError(at, ": row slices cover K = ", nextK, " of ", b.k);
  return Status::ok();
}

Status readRanks(JsonObjectReader &r, OpBinding &b) {
  const json *ranks;
  QTENSOR_TRY(r.readArray("ranks", ranks));
  if (ranks->empty() || ranks->size() > 65536)
    return makeError(r.at("ranks"), ": expected 1 to 65536 ranks, got ",
                     ranks->size());
  for (size_t i = 0; i < ranks->size(); ++i) {
    JsonObjectReader rr((*ranks)[i],
                        JsonObjectReader::indexed(r.at("ranks"), i));
    QTENSOR_TRY(rr.expectObject());
    kernels::RankSlice s;
    QTENSOR_TRY(rr.readInt("n_offset", 0, kMaxExtent, s.nOffset));
    QTENSOR_TRY(rr.readInt("n", 1, kMaxExtent, s.n));
    QTENSOR_TRY(rr.readInt("k_offset", 0, kMaxExtent, s.kOffset));
    QTENSOR_TRY(rr.readInt("k", 1, kMaxExtent, s.k));
    QTENSOR_TRY(rr.noUnknownKeys());
    b.ranks.push_back(s);
  }
  return checkRanks(b, r.at("ranks"));
}

Status readPhases(JsonObjectReader &r, OpBinding &b) {
  const json *phases;
  QTENSOR_TRY(r.readArray("phases", phases));
  if (phases->size() > 2)
    return makeError(r.at("phases"), ": expected at most 2 phases, got ",
                     phases->size());
  for (size_t i = 0; i < phases->size(); ++i) {
    JsonObjectReader pr((*phases)[i],
                        JsonObjectReader::indexed(r.at("phases"), i));
    QTENSOR_TRY(pr.expectObject());
    PhaseBinding p;
    QTENSOR_TRY(pr.readEnum("phase", &kernels::parsePhase, p.phase));
    if (!b.phases.empty() && p.phase <= b.phases.back().phase)
      return makeError(pr.at("phase"), ": ", kernels::toString(p.phase),
                       " after ", kernels::toString(b.phases.back().phase),
                       " (each phase once, decode first)");
    QTENSOR_TRY(pr.readString("kernel", p.kernel));
    if (p.kernel.empty())
      return makeError(pr.at("kernel"), ": empty registry kernel id");
    QTENSOR_TRY(pr.readBool("fallback", p.fallback));
    QTENSOR_TRY(pr.noUnknownKeys());
    b.phases.push_back(std::move(p));
  }
  return Status::ok();
}

} // namespace

std::string OpBinding::tensorOf(int64_t rank) const {
  return sliced() ? op + "@rank" + std::to_string(rank) : op;
}

bool OpBinding::operator==(const OpBinding &o) const {
  return op == o.op && n == o.n && k == o.k && topology == o.topology &&
         ranks == o.ranks && biasAfterReduce == o.biasAfterReduce &&
         activation == o.activation && accumulator == o.accumulator &&
         output == o.output && epilogue == o.epilogue && phases == o.phases &&
         fallbackPolicy == o.fallbackPolicy &&
         activationQuant == o.activationQuant;
}

json qtensor::artifact::toJson(const OpBinding &b) {
  json ranks = json::array();
  for (const kernels::RankSlice &s : b.ranks)
    ranks.push_back({{"n_offset", s.nOffset},
                     {"n", s.n},
                     {"k_offset", s.kOffset},
                     {"k", s.k}});
  json phases = json::array();
  for (const PhaseBinding &p : b.phases)
    phases.push_back({{"phase", kernels::toString(p.phase)},
                      {"kernel", p.kernel},
                      {"fallback", p.fallback}});
  json j = {{"op", b.op},
            {"n", b.n},
            {"k", b.k},
            {"topology", kernels::toString(b.topology)},
            {"ranks", std::move(ranks)},
            {"activation", toString(b.activation)},
            {"accumulator", toString(b.accumulator)},
            {"output", toString(b.output)},
            {"epilogue", kernels::toString(b.epilogue)},
            {"phases", std::move(phases)},
            {"fallback_policy", kernels::toString(b.fallbackPolicy)}};
  if (b.biasAfterReduce)
    j["bias_after_reduce"] = true;
  if (b.activationQuant != kernels::ActivationQuant::None)
    j["activation_quant"] = kernels::toString(b.activationQuant);
  return j;
}

Expected<OpBinding>
qtensor::artifact::opBindingFromJson(const json &j, const std::string &where) {
  OpBinding b;
  JsonObjectReader r(j, where);
  QTENSOR_TRY(r.expectObject());
  QTENSOR_TRY(r.readString("op", b.op));
  if (b.op.empty())
    return makeError(r.at("op"), ": empty op name");
  QTENSOR_TRY(r.readInt("n", 1, kMaxExtent, b.n));
  QTENSOR_TRY(r.readInt("k", 1, kMaxExtent, b.k));
  QTENSOR_TRY(r.readEnum("topology", &kernels::parseTopology, b.topology));
  if (r.find("bias_after_reduce"))
    QTENSOR_TRY(r.readBool("bias_after_reduce", b.biasAfterReduce));
  QTENSOR_TRY(readRanks(r, b));
  QTENSOR_TRY(readFloatType(r, "activation", b.activation));
  if (r.find("activation_quant")) {
    QTENSOR_TRY(r.readEnum("activation_quant", &kernels::parseActivationQuant,
                           b.activationQuant));
    if (b.activationQuant == kernels::ActivationQuant::None)
      return makeError(r.at("activation_quant"),
                       ": \"none\" is spelled by leaving the field out");
  }
  QTENSOR_TRY(readFloatType(r, "accumulator", b.accumulator));
  QTENSOR_TRY(readFloatType(r, "output", b.output));
  QTENSOR_TRY(r.readEnum("epilogue", &kernels::parseEpilogue, b.epilogue));
  QTENSOR_TRY(readPhases(r, b));
  QTENSOR_TRY(r.readEnum("fallback_policy", &kernels::parseFallbackPolicy,
                         b.fallbackPolicy));
  QTENSOR_TRY(r.noUnknownKeys());
  return b;
}
