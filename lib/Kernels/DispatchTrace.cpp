//===- DispatchTrace.cpp - The dispatch trace (seed M8.9 0x07B) -----------===//

#include "qtensor/Kernels/DispatchTrace.h"

#include <sstream>

using namespace qtensor;
using namespace qtensor::kernels;
using json = nlohmann::ordered_json;

namespace {
json layoutIdJson(const LayoutId &id) {
  return {{"family", id.family},
          {"version", id.version},
          {"encoding", id.encoding}};
}

json tokensJson(const TokenRange &r) {
  return {{"min", r.min}, {"max", r.max ? json(*r.max) : json(nullptr)}};
}

/// The layout a phase's kernel reads: the secondary copy for the secondary
/// phase, else the weight's layout (a full-dequant kernel reads whatever
/// the weight has).
LayoutId phaseLayout(const TraceOp &op, const PhaseSelection &sel) {
  const DispatchPlan &plan = *op.plan;
  if (plan.secondaryPhase && *plan.secondaryPhase == sel.query.phase)
    return *plan.secondaryLayout;
  if (plan.layout)
    return *plan.layout;
  return LayoutId::of(op.signature->layout);
}
} // namespace

json kernels::signatureToJson(const OpSignature &sig) {
  json j;
  j["representation"] = sig.representation;
  if (sig.representation == "affine") {
    const AffineDescriptor &d = sig.descriptor;
    j["code"] = toString(CodeContract::of(d));
    j["zero_point"] = qtensor::toString(d.zeroPoint);
    j["granularity"] = qtensor::toString(d.granularity);
    if (d.granularity != Granularity::PerTensor)
      j["scale_axis"] = d.axis;
    if (d.granularity == Granularity::Group)
      j["group_size"] = d.groupSize;
    j["scale"] = qtensor::toString(d.scaleType);
    j["act_order"] = d.permutation.has_value();
    j["decoder_version"] = d.decoderVersion;
  } else if (sig.mixed) {
    const Mixed2416Descriptor &m = *sig.mixed;
    j["first_group_size"] = m.firstGroupSize;
    j["second_group_size"] = m.secondGroupSize;
    j["second_type"] = qtensor::toString(m.secondType);
    j["sparse"] = qtensor::toString(m.sparse);
    j["sparse_type"] = qtensor::toString(m.sparseType);
    j["decoder_version"] = m.decoderVersion;
  }
  j["layout"] = {{"family", sig.layout.family},
                 {"version", sig.layout.version},
                 {"encoding", sig.layout.encoding},
                 {"tile", sig.layout.tile},
                 {"padding", sig.layout.padding}};
  j["activation"] = qtensor::toString(sig.activation);
  j["accumulator"] = qtensor::toString(sig.accumulator);
  j["output"] = qtensor::toString(sig.output);
  j["epilogue"] = toString(sig.epilogue);
  // Only W8A8 ops spell it: every other trace stays as it was.
  if (sig.activationQuant != ActivationQuant::None)
    j["activation_quant"] = toString(sig.activationQuant);
  return j;
}

json kernels::traceToJson(const TraceOp &op) {
  const OpSignature &sig = *op.signature;
  const DispatchPlan &plan = *op.plan;
  json ranks = json::array();
  for (size_t r = 0; r < sig.ranks.size(); ++r)
    ranks.push_back({{"rank", r},
                     {"n_offset", sig.ranks[r].nOffset},
                     {"n", sig.ranks[r].n},
                     {"k_offset", sig.ranks[r].kOffset},
                     {"k", sig.ranks[r].k}});
  json topology = {{"kind", toString(sig.topology)}, {"ranks", ranks}};
  if (sig.regrouped)
    topology["regrouped"] = true;
  if (sig.biasAfterReduce)
    topology["bias_after_reduce"] = true;

  json entries = json::array();
  for (const PhaseSelection &sel : plan.phases) {
    json candidates = json::array();
    for (const Candidate &c : sel.candidates)
      candidates.push_back({{"kernel", c.kernel},
                            {"accepted", c.accepted},
                            {"reason", c.reason}});
    bool secondary =
        plan.secondaryPhase && *plan.secondaryPhase == sel.query.phase;
    json e;
    e["op"] = op.name;
    e["index"] = op.index;
    e["phase"] = toString(sel.query.phase);
    e["selected"] = sel.selected ? json(sel.selected->id) : json(nullptr);
    e["fallback"] = sel.fallback;
    e["layout"] = layoutIdJson(phaseLayout(op, sel));
    e["secondary_layout"] = secondary;
    e["repack"] = toString(secondary ? op.secondaryRepack : op.repack);
    e["layout_resolution"] = plan.resolution;
    e["device"] = op.device;
    e["requested"] = describeRequest(sig);
    e["shape"] = {{"N", sig.n},
                  {"K", sig.k},
                  {"T", sig.tokens ? json(*sig.tokens) : json(nullptr)}};
    e["tokens"] = tokensJson(sel.query.tokens);
    e["topology"] = topology;
    e["signature"] = signatureToJson(sig);
    e["candidates"] = std::move(candidates);
    entries.push_back(std::move(e));
  }
  return entries;
}

std::string kernels::traceToText(const TraceOp &op) {
  const OpSignature &sig = *op.signature;
  const DispatchPlan &plan = *op.plan;
  std::ostringstream os;
  os << "dispatch '" << op.name << "': requested " << describeRequest(sig)
     << "; shape [N=" << sig.n << ", K=" << sig.k
     << ", T=" << (sig.tokens ? std::to_string(*sig.tokens) : std::string("?"))
     << "]; device " << op.device << "; topology " << toString(sig.topology);
  if (sig.ranks.size() > 1)
    os << " x" << sig.ranks.size();
  for (const PhaseSelection &sel : plan.phases) {
    os << " | " << toString(sel.query.phase) << " ("
       << toString(sel.query.tokens) << "):";
    for (const Candidate &c : sel.candidates)
      os << " [" << c.kernel << " -> "
         << (c.accepted ? "accepted: " : "rejected: ") << c.reason << "]";
    os << " selected=" << (sel.selected ? sel.selected->id : "none");
    if (sel.fallback)
      os << " (fallback)";
  }
  os << " | layout "
     << toString(plan.layout ? *plan.layout : LayoutId::of(sig.layout)) << " ("
     << plan.resolution << "), repack " << toString(op.repack);
  if (plan.secondaryLayout)
    os << ", secondary " << toString(*plan.secondaryLayout) << " repack "
       << toString(op.secondaryRepack);
  return os.str();
}
