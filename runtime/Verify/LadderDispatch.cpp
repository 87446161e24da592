//===- LadderDispatch.cpp - L5: dispatch and resource parity --------------===//
//
// What the compiler decided must still hold for the build that loads the
// artifact: each (op, phase) of the dispatch trace is re-admitted by this
// build's kernel registry with the signature rebuilt from the manifest (the
// stored descriptor, layout and per-rank shapes) and the trace's graph facts
// (activation, output, epilogue), and planning it again selects the same
// kernel, and every quantized weight has a selection. Fallbacks must be
// within the recorded policy; no plain tensor may carry a quantized weight's
// name (a float copy kept beside it, e.g. one rank slice stored dequantized);
// the bytes of the stored tensors must equal the report's ledger.
//
//===----------------------------------------------------------------------===//

#include "LadderLevels.h"

#include "qtensor/Kernels/Admission.h"
#include "qtensor/Kernels/Mixed2416Admission.h"
#include "qtensor/Kernels/Registry.h"

#include <map>
#include <set>

namespace qtensor::verify::detail {
namespace {

using nlohmann::json;

/// A string field of a JSON object, or an error naming it.
Expected<std::string> field(const json &o, const char *key,
                            const std::string &where) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_string())
    return makeError(where, ".", key, ": expected a string");
  return o[key].get<std::string>();
}

kernels::PhaseQuery phaseQuery(const json &e, kernels::Phase phase) {
  kernels::PhaseQuery query;
  query.phase = phase;
  const json &tokens = e.value("tokens", json::object());
  query.tokens.min = tokens.value("min", int64_t(1));
  if (tokens.contains("max") && tokens["max"].is_number_integer())
    query.tokens.max = tokens["max"].get<int64_t>();
  return query;
}

/// Re-admits and re-plans one trace entry. Returns "" when it holds.
std::string checkEntry(const artifact::Artifact &a, const json &e,
                       const std::string &where, const kernels::Target &target,
                       kernels::FallbackPolicy policy, bool int8Activations,
                       const std::vector<kernels::PhaseQuery> &opPhases) {
  const kernels::KernelRegistry &registry = kernels::builtinRegistry();
  auto op = field(e, "op", where);
  auto phaseName = field(e, "phase", where);
  if (!op || !phaseName)
    return !op ? op.message() : phaseName.message();
  auto phase = kernels::parsePhase(*phaseName);
  if (!phase)
    return where + ".phase: unknown phase \"" + *phaseName + "\"";
  if (!e.contains("selected"))
    return where + ": no \"selected\" field";
  if (e["selected"].is_null())
    return ""; // nothing selected: the trace says why (a skipped phase)
  if (!e["selected"].is_string())
    return where + ".selected: expected a kernel id or null";
  std::string selected = e["selected"];
  // The mixed 2/4/16 GEMV is no registry kernel: its own predicate
  // (Mixed2416Admission.h) admits it, through planDispatch below.
  const kernels::KernelCapability &mixedKernel =
      kernels::mixed2416KernelCapability();
  const bool mixed = selected == mixedKernel.id;
  const kernels::KernelCapability *kernel =
      mixed ? &mixedKernel : registry.findKernel(selected);
  if (!kernel)
    return *op + " (" + *phaseName + "): kernel \"" + selected +
           "\" is not in this build's registry";

  // The manifest's tensors for the op, one per rank.
  const json &sigJson = e.value("signature", json::object());
  const json &topo = e.value("topology", json::object());
  const json &ranks = topo.value("ranks", json::array());
  if (!ranks.is_array() || ranks.empty())
    return where + ".topology.ranks: expected a non-empty list";
  kernels::OpSignature sig;
  for (const char *key : {"activation", "accumulator", "output"}) {
    auto v = field(sigJson, key, where + ".signature");
    if (!v)
      return v.message();
    auto t = parseFloatType(*v);
    if (!t)
      return where + ".signature." + key + ": unknown type \"" + *v + "\"";
    (std::string(key) == "activation"    ? sig.activation
     : std::string(key) == "accumulator" ? sig.accumulator
                                         : sig.output) = *t;
  }
  // W8A8 ops spell how their activations are quantized; others leave it.
  if (sigJson.contains("activation_quant")) {
    auto form = field(sigJson, "activation_quant", where + ".signature");
    if (!form)
      return form.message();
    auto parsed = kernels::parseActivationQuant(*form);
    if (!parsed)
      return where + ".signature.activation_quant: unknown form \"" + *form +
             "\"";
    sig.activationQuant = *parsed;
  }
  auto epilogue = field(sigJson, "epilogue", where + ".signature");
  auto topology = field(topo, "kind", where + ".topology");
  if (!epilogue || !topology)
    return !epilogue ? epilogue.message() : topology.message();
  auto ep = kernels::parseEpilogue(*epilogue);
  auto tp = kernels::parseTopology(*topology);
  if (!ep || !tp)
    return where + ": unknown epilogue or topology";
  sig.epilogue = *ep;
  sig.topology = *tp;
  if (topo.value("regrouped", false))
    sig.regrouped = true;
  if (topo.value("bias_after_reduce", false))
    sig.biasAfterReduce = true;

  // Weight names carry ".weight" in a checkpoint; the trace names the op by
  // its qtensor.weight, which is the manifest's tensor name.
  int64_t count = static_cast<int64_t>(ranks.size());
  for (int64_t r = 0; r < count; ++r) {
    const json &rank = ranks[r];
    if (!rank.is_object() || !rank.contains("n") || !rank.contains("k") ||
        !rank["n"].is_number_integer() || !rank["k"].is_number_integer())
      return where + ".topology.ranks[" + std::to_string(r) +
             "]: expected integer n and k";
    std::string name = count > 1 && *tp != kernels::Topology::Replicated
                           ? *op + "@rank" + std::to_string(r)
                           : *op;
    const artifact::TensorEntry *entry = a.manifest().findTensor(name);
    if (mixed) {
      if (!entry || !entry->mixed2416() || count != 1)
        return *op + ": the manifest has no mixed_2416 tensor \"" + name +
               "\" for " + selected + " (on one rank)";
      const Mixed2416Descriptor &d = entry->mixed2416()->logical;
      if (d.shape != std::vector<int64_t>{rank["n"], rank["k"]})
        return name + ": stored shape differs from the trace's slice";
      sig.representation = "mixed_2416";
      sig.mixed = d;
      sig.ranks.push_back({0, d.rows(), 0, d.cols()});
      break;
    }
    if (!entry || !entry->isQuantized())
      return *op + ": the manifest has no quantized tensor \"" + name + "\"";
    const QuantizedTensorDescriptor &d = entry->quantized()->logical;
    int64_t n = rank["n"], k = rank["k"];
    if (d.shape != std::vector<int64_t>{n, k})
      return name + ": stored shape differs from the trace's rank " +
             std::to_string(r) + " slice [" + std::to_string(n) + ", " +
             std::to_string(k) + "]";
    // Offsets follow from the stored slices (prefix sums along the sliced
    // dimension), not from what the trace claims; they must agree.
    kernels::RankSlice slice;
    slice.n = n;
    slice.k = k;
    if (r > 0) {
      const kernels::RankSlice &prev = sig.ranks.back();
      bool column = *tp == kernels::Topology::Column;
      bool row = *tp == kernels::Topology::Row;
      slice.nOffset = column ? prev.nOffset + prev.n : 0;
      slice.kOffset = row ? prev.kOffset + prev.k : 0;
      if ((row && n != prev.n) || (column && k != prev.k))
        return name + ": ranks of a " + *topology +
               " placement disagree on the unsliced dimension";
    }
    if (rank.value("n_offset", int64_t(0)) != slice.nOffset ||
        rank.value("k_offset", int64_t(0)) != slice.kOffset)
      return where + ".topology.ranks[" + std::to_string(r) +
             "]: offsets differ from the stored slices (n " +
             std::to_string(slice.nOffset) + ", k " +
             std::to_string(slice.kOffset) + ")";
    sig.ranks.push_back(slice);
    if (r == 0) {
      sig.descriptor = d.descriptor;
      sig.layout = d.layout;
    } else if (d.descriptor != sig.descriptor ||
               kernels::LayoutId::of(d.layout) !=
                   kernels::LayoutId::of(sig.layout)) {
      return name + ": ranks disagree on the descriptor or layout";
    }
  }
  // The global shape, from the rank slices.
  sig.n = *tp == kernels::Topology::Column ? 0 : sig.ranks[0].n;
  sig.k = *tp == kernels::Topology::Row ? 0 : sig.ranks[0].k;
  for (const kernels::RankSlice &s : sig.ranks) {
    if (*tp == kernels::Topology::Column)
      sig.n += s.n;
    if (*tp == kernels::Topology::Row)
      sig.k += s.k;
  }

  kernels::PhaseQuery query = phaseQuery(e, *phase);
  kernels::Verdict verdict =
      mixed ? kernels::Verdict{}
            : kernels::admit(registry, *kernel, sig, query, target, policy);
  if (!verdict.accepted())
    return *op + " (" + *phaseName + "): this build's registry rejects \"" +
           selected + "\": " + verdict.reason();

  // Planned again with every phase the compiler planned for this op: one
  // shared layout can make a kernel serve a phase it would not win alone.
  kernels::DispatchQuery dq;
  dq.target = target;
  dq.policy = policy;
  dq.phases = opPhases;
  dq.int8Activations = int8Activations;
  kernels::DispatchPlan plan = kernels::planDispatch(registry, sig, dq);
  const kernels::KernelCapability *again = nullptr;
  for (const kernels::PhaseSelection &p : plan.phases)
    if (p.query.phase == *phase)
      again = p.selected;
  if (!again || again->id != selected)
    return *op + " (" + *phaseName + "): the trace selected \"" + selected +
           "\" but this build selects " +
           (again ? "\"" + again->id + "\"" : std::string("nothing"));
  return "";
}

} // namespace

LevelResult levelDispatch(const artifact::Artifact &a,
                          const LadderOptions &ladder) {
  LevelResult r{"L5", "dispatch and resources", false, ""};
  auto report = readReport(a);
  auto trace = readRoleJson(a, artifact::FileRole::Trace, "dispatch trace");
  if (!report || !trace) {
    r.detail = !report ? report.message() : trace.message();
    return r;
  }
  if (!trace->is_array()) {
    r.detail = "the dispatch trace is not a JSON list";
    return r;
  }
  const json &options = report->value("options", json::object());
  auto targetName = field(options, "target", "report.options");
  auto policyName = field(options, "fallback", "report.options");
  if (!targetName || !policyName) {
    r.detail = !targetName ? targetName.message() : policyName.message();
    return r;
  }
  auto target = kernels::parseTarget(*targetName);
  auto policy = kernels::parseFallbackPolicy(*policyName);
  if (!target || !policy) {
    r.detail = "report.options: unknown target or fallback policy";
    return r;
  }
  // Compiles before --host-activations kept every activation float.
  const json activations = options.value("host_activations", json("float"));
  if (activations != "int8" && activations != "float") {
    r.detail = "report.options.host_activations: expected \"int8\" or "
               "\"float\", got " +
               activations.dump();
    return r;
  }
  const bool int8Activations = activations == "int8";

  // The phases planned per op, as the compiler planned them together.
  std::map<std::string, std::vector<kernels::PhaseQuery>> phasesOf;
  for (const json &e : *trace) {
    if (!e.is_object() || !e.contains("op") || !e["op"].is_string() ||
        !e.contains("phase") || !e["phase"].is_string())
      continue; // reported below with its index
    if (auto p = kernels::parsePhase(e["phase"]))
      phasesOf[e["op"]].push_back(phaseQuery(e, *p));
  }

  int64_t fallbacks = 0, checked = 0;
  for (size_t i = 0; i < trace->size(); ++i) {
    const json &e = (*trace)[i];
    std::string where = "dispatch trace[" + std::to_string(i) + "]";
    if (!e.is_object()) {
      r.detail = where + ": expected an object";
      return r;
    }
    fallbacks += e.value("fallback", false) ? 1 : 0;
    std::string op = e.value("op", "");
    if (std::string why = checkEntry(a, e, where, *target, *policy,
                                     int8Activations, phasesOf[op]);
        !why.empty()) {
      r.detail = why;
      return r;
    }
    ++checked;
  }
  // Every quantized weight must have been planned: a trace that lost an op
  // proves nothing about it. (The embedding table is no op: the decoder
  // program's embedding kernel reads it, and L4 runs that.)
  std::set<std::string> planned;
  for (const json &e : *trace)
    if (e.is_object() && e.contains("op") && e["op"].is_string() &&
        e.contains("selected") && e["selected"].is_string())
      planned.insert(e["op"].get<std::string>());
  for (const artifact::TensorEntry &e : a.manifest().tensors)
    if (!e.plain() &&
        !(e.quantized() &&
          e.quantized()->use == artifact::TensorUse::Embedding) &&
        !planned.count(e.name.substr(0, e.name.find('@')))) {
      r.detail = e.name + ": no kernel selection for it in the dispatch trace";
      return r;
    }
  // The bindings the runtime plans from say what the compiler's trace
  // says: per op, the same kernel and fallback for each compiled phase, and
  // the report's policy.
  std::map<std::pair<std::string, std::string>, SelectedKernel> selected;
  for (const json &e : *trace)
    if (e.contains("selected") && e["selected"].is_string())
      selected[{e["op"].get<std::string>(), e["phase"].get<std::string>()}] = {
          e["selected"].get<std::string>(), e.value("fallback", false)};
  size_t boundPhases = 0;
  for (const artifact::OpBinding &b : a.manifest().bindings) {
    const std::string where = "manifest.bindings op \"" + b.op + "\"";
    if (b.fallbackPolicy != *policy) {
      r.detail = where + ": fallback_policy " +
                 kernels::toString(b.fallbackPolicy) + ", the report's is " +
                 *policyName;
      return r;
    }
    for (const artifact::PhaseBinding &p : b.phases) {
      auto it = selected.find({b.op, kernels::toString(p.phase)});
      if (it == selected.end() || it->second.kernel != p.kernel ||
          it->second.fallback != p.fallback) {
        r.detail = where + " " + kernels::toString(p.phase) + ": binds " +
                   p.kernel + (p.fallback ? " (fallback)" : "") +
                   ", the dispatch trace " +
                   (it == selected.end()
                        ? std::string("selects nothing")
                        : "selects " + it->second.kernel +
                              (it->second.fallback ? " (fallback)" : ""));
        return r;
      }
      ++boundPhases;
    }
  }
  if (boundPhases != selected.size()) {
    r.detail = "the bindings bind " + std::to_string(boundPhases) +
               " (op, phase) pairs, the dispatch trace selects " +
               std::to_string(selected.size());
    return r;
  }
  if (*policy == kernels::FallbackPolicy::Forbid && fallbacks != 0) {
    r.detail = std::to_string(fallbacks) +
               " fallbacks in the trace under fallback=forbid";
    return r;
  }
  if (report->value("fallbacks", int64_t(-1)) != fallbacks) {
    r.detail = "the report counts " +
               std::to_string(report->value("fallbacks", int64_t(-1))) +
               " fallbacks, the trace " + std::to_string(fallbacks);
    return r;
  }

  // No float copy of a quantized weight, and stored bytes = the ledger.
  std::set<std::string> quantizedSources;
  uint64_t quantizedBytes = 0, plainBytes = 0;
  for (const artifact::TensorEntry &e : a.manifest().tensors) {
    auto resolved = a.tensor(e.name, artifact::Artifact::QParams::StoredOnly);
    if (!resolved) {
      r.detail = resolved.message();
      return r;
    }
    if (!e.plain()) { // quantized, or mixed_2416 streams
      quantizedSources.insert(e.name.substr(0, e.name.find('@')));
      for (const safetensors::TensorView *v : resolved->storedViews())
        quantizedBytes += v->byteSize();
    }
  }
  for (const artifact::TensorEntry &e : a.manifest().tensors) {
    if (!e.plain())
      continue;
    if (quantizedSources.count(e.name.substr(0, e.name.find('@')))) {
      r.detail = e.name + ": a float copy of a quantized weight is stored "
                          "(a persistent full-dequant buffer)";
      return r;
    }
    plainBytes += a.tensor(e.name)->data->byteSize();
  }
  const json &ledger = report->value("ledger", json::object());
  uint64_t expectQuantized = ledger.value("stored_quantized_bytes", 0ull);
  // An embedding table kept as codes is counted apart from the linears.
  if (const auto table = ledger.find("embedding_table");
      table != ledger.end() && table->is_object())
    expectQuantized += table->value("stored_bytes", 0ull);
  // Biases are stored as plain tensors beside the weights they belong to.
  uint64_t expectPlain =
      ledger.value("plain_bytes", 0ull) + ledger.value("bias_bytes", 0ull);
  if (quantizedBytes != expectQuantized || plainBytes != expectPlain) {
    r.detail = "stored bytes (" + std::to_string(quantizedBytes) +
               " quantized, " + std::to_string(plainBytes) +
               " plain) differ from the report's ledger (" +
               std::to_string(expectQuantized) + ", " +
               std::to_string(expectPlain) + ")";
    return r;
  }
  r.detail = std::to_string(checked) +
             " (op, phase) selections re-admitted, re-selected and bound, " +
             std::to_string(fallbacks) + " fallbacks (" + *policyName + "), " +
             std::to_string(quantizedBytes) + " quantized bytes = ledger";

  // The runtime, watched carrying the selections out.
  if (!a.manifest().kernels.empty()) {
    auto observed = observeRuntime(a, ladder, selected);
    if (!observed) {
      r.detail += "; at run time: " + observed.message();
      return r;
    }
    r.detail += "; " + *observed;
  }
  r.ok = true;
  return r;
}

} // namespace qtensor::verify::detail
