//===- OpRun.cpp - Run an artifact's linears op by op and report ----------===//

#include "qtensor/Runtime/OpRun.h"

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Runtime/ActivationInput.h"
#include "qtensor/Runtime/Reference.h"
#include "qtensor/Support/Sha256.h"

#include <cstdio>
#include <cstring>
#include <functional>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

using json = nlohmann::ordered_json;

OpRunReport failed(const std::string &stage, const std::string &message,
                   bool speaks = true) {
  OpRunReport r;
  r.failedStage = stage;
  r.error = message;
  r.speaks = speaks;
  r.json = json{{"ok", false}, {"stage", stage}, {"error", message}};
  return r;
}

Status checkFits(const OpRunOptions &o, int64_t t, int64_t n, int64_t k) {
  return o.check ? checkReferenceFits(t, n, k) : Status::ok();
}

Expected<KernelError> checkOutput(const LoadedModel &model, const OpPlan &op,
                                  const HostTensor &x, const HostTensor &y) {
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> w, model.referenceWeight(op));
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> b, model.referenceBias(op));
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> magnitudes,
                           model.referenceMagnitudes(op));
  return measureKernelError(op.kernelActivations(x.toDoubles(), x.rows), w, b,
                            y.toDoubles(), x.rows, op.n(), op.k(), op.output,
                            magnitudes.empty() ? nullptr : &magnitudes);
}

std::string hexPrefix(const std::vector<uint8_t> &bytes) {
  auto h = sha256Hex(bytes.data(), bytes.size());
  return h ? h->substr(0, 16) : "?";
}

/// Mapped bytes per byte the plan references (seed 0x06C).
double amplificationOf(const LoadedModel &m) {
  return m.referencedBytes()
             ? double(m.mappedBytes()) / double(m.referencedBytes())
             : 0.0;
}

json readJson(const LoadedModel &m) {
  return {{"mapped_bytes", m.mappedBytes()},
          {"referenced_bytes", m.referencedBytes()},
          {"amplification", amplificationOf(m)}};
}

json backendFallbackJson(const LoadedModel &m) {
  return m.backendFallback() ? json(*m.backendFallback()) : json(nullptr);
}

/// The dispatch trace, startup timeline, ledgers and read amplification of
/// one loaded rank, as text; `prefix` names the rank in a group.
std::string loadReportText(const LoadedModel &m, const std::string &prefix) {
  std::string out = prefix + "dispatch trace:\n" + m.trace().toText() + prefix +
                    "startup timeline:\n" + m.timeline().toText() + prefix +
                    "memory ledgers:\n" + m.ledger().toText();
  char line[160];
  std::snprintf(line, sizeof(line),
                "  read amplification: %s mapped for %s referenced (%.2fx)\n",
                formatBytes(m.mappedBytes()).c_str(),
                formatBytes(m.referencedBytes()).c_str(), amplificationOf(m));
  return out + line;
}

/// The input file, opened once for every op (none without one).
Expected<std::optional<safetensors::SafetensorsFile>>
openInput(const OpRunOptions &o) {
  std::optional<safetensors::SafetensorsFile> input;
  if (!o.input.empty()) {
    QTENSOR_ASSIGN_OR_RETURN(safetensors::SafetensorsFile f,
                             safetensors::SafetensorsFile::open(o.input));
    input.emplace(std::move(f));
  }
  return input;
}

/// An op's activations: the input file's (`fromInput`) or generated rows,
/// within the check's size limit (checked before T rows are generated, and
/// on the rows the file has). `stage` names the step that failed.
Expected<HostTensor>
activationsFor(const OpRunOptions &o, bool haveInput,
               const std::function<Expected<HostTensor>()> &fromInput,
               FloatType dtype, int64_t n, int64_t k, const std::string &name,
               const char *&stage) {
  stage = "check";
  QTENSOR_TRY(checkFits(o, haveInput ? 1 : o.tokens.value_or(1), n, k));
  stage = "input";
  QTENSOR_ASSIGN_OR_RETURN(
      HostTensor x, haveInput
                        ? fromInput()
                        : deterministicActivations(dtype, o.tokens.value_or(1),
                                                   k, o.seed, name));
  stage = "check";
  QTENSOR_TRY(checkFits(o, x.rows, n, k));
  return x;
}

/// The sum and first eight values of an output, and its hash prefix.
void summarize(const HostTensor &y, json &entry, std::string &text) {
  double sum = 0;
  json values = json::array();
  for (size_t i = 0; i < y.size(); ++i) {
    sum += y.at(i);
    if (i < 8)
      values.push_back(y.at(i));
  }
  entry["shape"] = {y.rows, y.cols};
  entry["dtype"] = qtensor::toString(y.dtype);
  entry["sha256_16"] = hexPrefix(y.bytes);
  entry["sum"] = sum;
  entry["values"] = values;
  char line[96];
  std::snprintf(line, sizeof(line), "    sha256 %s  sum %.9g  first",
                entry["sha256_16"].get<std::string>().c_str(), sum);
  text += line;
  for (const auto &v : values) {
    std::snprintf(line, sizeof(line), " %.6g", v.get<double>());
    text += line;
  }
  text += "\n";
}

/// An op's output for the outputs file, as F32.
Status addOutput(safetensors::SafetensorsWriter &outputs,
                 const std::string &name, const HostTensor &y) {
  std::vector<double> values = y.toDoubles();
  std::vector<uint8_t> bytes(values.size() * 4);
  for (size_t i = 0; i < values.size(); ++i) {
    float f = float(values[i]);
    std::memcpy(&bytes[i * 4], &f, 4);
  }
  return outputs.addTensor(name, safetensors::DType::F32, {y.rows, y.cols},
                           std::move(bytes));
}

/// The check's JSON and its text line; `bound` and `suffix` name what the
/// error is measured against.
json checkJson(const KernelError &c, int64_t n, const char *bound,
               const char *suffix, std::string &text, bool group) {
  const bool ok = c.within();
  json j = {{"ok", ok}};
  if (group) {
    j["reference"] = "whole weight";
    j["bound"] = bound;
  }
  j["finite"] = c.finite;
  j["max_abs_error"] = c.maxAbsError;
  j["worst_error_over_bound"] = c.worstRatio;
  char line[256];
  if (!c.finite)
    std::snprintf(line, sizeof(line),
                  "    check: FAILED, non-finite output or reference at "
                  "[%zu, %zu]%s\n",
                  c.nonFiniteIndex / size_t(n), c.nonFiniteIndex % size_t(n),
                  suffix);
  else
    std::snprintf(line, sizeof(line),
                  "    check: %s, max |y - y_ref| %.3g, worst error / "
                  "%s %.3g%s\n",
                  ok ? "ok" : "FAILED", c.maxAbsError, bound, c.worstRatio,
                  suffix);
  text += line;
  return j;
}

/// The policy line both reports share.
json policyJson(const RunPlan &plan) {
  return {{"policy", kernels::toString(plan.policy)},
          {"source", plan.policySource}};
}

} // namespace

OpRunReport qtensor::runtime::runOps(LoadedModel &model,
                                     const OpRunOptions &o) {
  auto input = openInput(o);
  if (!input)
    return failed("input", input.message());

  json ops = json::array();
  bool allOk = true;
  std::string text;
  safetensors::SafetensorsWriter outputs;
  const RunPlan &plan = model.plan();
  for (const OpPlan &op : plan.ops) {
    const char *stage = "";
    Expected<HostTensor> x = activationsFor(
        o, input->has_value(), [&] { return activationsFromFile(**input, op); },
        op.activation, op.n(), op.k(), op.tensor, stage);
    if (!x)
      return failed(stage, x.message());
    auto y = model.run(op.tensor, *x);
    if (!y)
      return failed("run", y.message());
    const DispatchRecord &call = model.trace().all().back();
    json entry;
    entry["op"] = op.tensor;
    entry["kernel"] = call.kernel;
    entry["backend"] = call.backend;
    entry["phase"] = kernels::toString(call.phase);
    entry["fallback"] = call.fallback;
    char line[256];
    std::snprintf(line, sizeof(line), "  %s: [%lld, %lld] %s via %s (%s%s)\n",
                  op.tensor.c_str(), (long long)y->rows, (long long)y->cols,
                  qtensor::toString(y->dtype), call.kernel.c_str(),
                  call.backend.c_str(), call.fallback ? ", FALLBACK" : "");
    text += line;
    summarize(*y, entry, text);
    if (!o.outputs.empty()) {
      if (Status s = addOutput(outputs, op.tensor, *y); !s)
        return failed("outputs", s.message());
    }
    if (op.signature.topology == kernels::Topology::Row) {
      entry["partial_sum"] = "row-parallel rank " + std::to_string(plan.rank) +
                             " of " + std::to_string(plan.tp) +
                             ": run --rank all for the all-reduce and the "
                             "bias";
      text += "    (" + entry["partial_sum"].get<std::string>() + ")\n";
    }
    if (o.check) {
      auto c = checkOutput(model, op, *x, *y);
      if (!c)
        return failed("check", c.message());
      entry["check"] = checkJson(*c, op.n(), "bound", "", text, false);
      allOk &= c->within();
    }
    ops.push_back(std::move(entry));
  }
  if (!o.outputs.empty())
    if (auto written = outputs.writeFile(o.outputs); !written)
      return failed("outputs", written.message());

  OpRunReport r;
  r.ok = allOk;
  json &out = r.json;
  out["ok"] = allOk;
  out["artifact"] = o.artifact;
  out["backend"] = model.backend();
  out["backend_fallback"] = backendFallbackJson(model);
  out["rank"] = plan.rank;
  out["tp"] = plan.tp;
  out["fallback_policy"] = policyJson(plan);
  out["fallbacks"] = plan.fallbacks();
  out["schema"] = model.schema().summary;
  out["notes"] = model.notes();
  out["ops"] = std::move(ops);
  out["trace"] = model.trace().toJson();
  out["timeline"] = model.timeline().toJson();
  out["ledger"] = model.ledger().toJson(/*withItems=*/true);
  out["read"] = readJson(model);

  r.text =
      "loaded " + o.artifact + " on " + model.backend() + " (rank " +
      std::to_string(plan.rank) + " of " + std::to_string(plan.tp) + ", " +
      std::to_string(plan.ops.size()) + " ops, " +
      std::to_string(plan.fallbacks()) +
      " full-dequant fallbacks, fallback=" + kernels::toString(plan.policy) +
      " from " + plan.policySource + ")\n";
  r.text += "  schema: " + model.schema().summary + "\n";
  for (const std::string &n : model.notes())
    r.text += "  note: " + n + "\n";
  r.text += "outputs:\n" + text + loadReportText(model, "");
  return r;
}

OpRunReport qtensor::runtime::runGroupOps(TensorParallelGroup &group,
                                          RankExchange *exchange,
                                          const OpRunOptions &o) {
  // One process speaks for the group.
  const bool speaks = !exchange || exchange->rank() == 0;
  // A failure this process met outside a collective, while the other
  // ranks may be entering the next one: agreed through the group, so every
  // rank fails there together (RankExchange.h).
  auto failHere = [&](const char *stage, const std::string &message) {
    Status agreed = group.agree(Status(makeError(message)));
    return failed(stage, agreed.message(), speaks);
  };
  const LoadedModel &first = group.rank(group.firstLocalRank());
  safetensors::SafetensorsWriter outputs;

  auto input = openInput(o);
  if (!input)
    return failHere("input", input.message());

  json ops = json::array();
  bool allOk = true;
  std::string text;
  Status outputsOk = Status::ok(); // reported after the last collective
  for (const GroupOp &op : group.ops()) {
    const char *stage = "";
    Expected<HostTensor> x = activationsFor(
        o, input->has_value(),
        [&] { return wholeActivationsFromFile(**input, op); }, op.activation,
        op.n, op.k, op.op, stage);
    if (!x)
      return failHere(stage, x.message());
    auto out = group.run(op, *x);
    if (!out)
      return failed("run", out.message(), speaks);
    const GroupCall &call = group.calls().back();
    if (!o.outputs.empty() && speaks && outputsOk)
      outputsOk = addOutput(outputs, op.op, out->y);
    json entry;
    entry["op"] = op.op;
    entry["topology"] = kernels::toString(op.topology);
    entry["collective"] = call.collective;
    entry["phase"] = kernels::toString(call.phase);
    bool fallback = false;
    json ranks = json::array();
    std::string rankText;
    for (size_t r = 0; r < out->parts.size(); ++r) {
      const DispatchRecord &d = call.ranks[r];
      const HostTensor &part = out->parts[r];
      fallback |= d.fallback;
      ranks.push_back({{"rank", r},
                       {"op", d.op},
                       {"kernel", d.kernel},
                       {"backend", d.backend},
                       {"fallback", d.fallback},
                       {"shape", {part.rows, part.cols}},
                       {"sha256_16", hexPrefix(part.bytes)}});
      char line[160];
      std::snprintf(line, sizeof(line), "    rank %zu: [%lld, %lld] via ", r,
                    (long long)part.rows, (long long)part.cols);
      rankText += line + d.kernel + " (" + d.backend +
                  (d.fallback ? ", FALLBACK" : "") + ")\n";
    }
    entry["fallback"] = fallback;
    char line[256];
    std::snprintf(line, sizeof(line), "  %s: [%lld, %lld] %s, %s: %s\n",
                  op.op.c_str(), (long long)out->y.rows, (long long)out->y.cols,
                  qtensor::toString(out->y.dtype),
                  kernels::toString(op.topology), call.collective.c_str());
    text += line + rankText;
    if (op.reducedBias) {
      entry["bias_after_reduce"] = *op.reducedBias;
      text += "    + " + *op.reducedBias + " after the all-reduce\n";
    }
    summarize(out->y, entry, text);
    entry["ranks"] = std::move(ranks);
    if (o.check) {
      auto c = group.check(op, *x, out->y);
      if (!c)
        return failed("check", c.message(), speaks);
      const char *bound = op.collective == Collective::AllReduceSum
                              ? "all-reduce bound"
                              : "kernel bound";
      entry["check"] =
          checkJson(*c, op.n, bound, " (whole weight)", text, true);
      allOk &= c->within();
    }
    ops.push_back(std::move(entry));
  }

  if (!outputsOk)
    return failed("outputs", outputsOk.message(), speaks);
  if (!o.outputs.empty() && speaks)
    if (auto written = outputs.writeFile(o.outputs); !written)
      return failed("outputs", written.message(), speaks);
  OpRunReport r;
  r.ok = allOk;
  r.speaks = speaks;
  if (!speaks)
    return r;
  // This process's ranks: every rank, or (MPI) rank 0.
  const int64_t from = group.firstLocalRank(), to = from + group.localRanks();
  size_t fallbacks = 0;
  for (int64_t rk = from; rk < to; ++rk)
    fallbacks += group.rank(rk).plan().fallbacks();
  std::vector<std::string> notes = group.notes();
  for (int64_t rk = from; rk < to; ++rk)
    for (const std::string &n : group.rank(rk).notes())
      notes.push_back("rank " + std::to_string(rk) + ": " + n);
  const std::string collectives =
      exchange ? group.transport() +
                     ": every rank's output all-gathered, joined in rank "
                     "order as --rank all joins it"
               : "in process, on the host (a stand-in for NCCL, not NCCL)";
  json &out = r.json;
  out["ok"] = allOk;
  out["artifact"] = o.artifact;
  out["backend"] = first.backend();
  out["backend_fallback"] = backendFallbackJson(first);
  out["rank"] = exchange ? "mpi" : "all";
  out["tp"] = group.tp();
  out["collectives"] = collectives;
  out["fallback_policy"] = policyJson(first.plan());
  out["fallbacks"] = fallbacks;
  out["schema"] = first.schema().summary;
  out["notes"] = notes;
  out["ops"] = std::move(ops);
  out["collective_trace"] = group.callsToJson();
  out["group_mapped_bytes"] = group.mappedBytes();
  json ranks = json::array();
  for (int64_t rk = from; rk < to; ++rk) {
    const LoadedModel &m = group.rank(rk);
    ranks.push_back({{"rank", rk},
                     {"backend", m.backend()},
                     {"trace", m.trace().toJson()},
                     {"timeline", m.timeline().toJson()},
                     {"ledger", m.ledger().toJson(/*withItems=*/true)},
                     {"read", readJson(m)}});
  }
  out["ranks"] = std::move(ranks);

  const std::string rankWord = group.tp() == 1 ? " rank" : " ranks";
  r.text = "loaded " + o.artifact + " on " + first.backend() + " (" +
           (exchange ? "rank 0 of " : "all ") + std::to_string(group.tp()) +
           rankWord +
           (exchange ? ", one process each, " : " in this process, ") +
           std::to_string(group.ops().size()) + " ops, " +
           std::to_string(fallbacks) + " full-dequant fallbacks, fallback=" +
           kernels::toString(first.plan().policy) + " from " +
           first.plan().policySource + ")\n";
  r.text += "  collectives: " + collectives + "\n";
  r.text += "  schema: " + first.schema().summary + "\n";
  for (const std::string &n : notes)
    r.text += "  note: " + n + "\n";
  r.text += "outputs (joined over " + std::to_string(group.tp()) + rankWord +
            "):\n" + text;
  r.text += "collective trace:\n" + group.callsToText();
  for (int64_t rk = from; rk < to; ++rk)
    r.text +=
        loadReportText(group.rank(rk), "rank " + std::to_string(rk) + " ");
  return r;
}
