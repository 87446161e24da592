//===- Run.cpp - `qtc run`: load an artifact and run its linears ----------===//
//
// A thin driver over the runtime: options -> LoadOptions, activations from
// --input or the deterministic generator (Runtime/Activations.h), one call
// per op, then the report. --check compares each output with the float64
// reference of the reference-dequantized weight, against the error bound of
// Runtime/Reference.h. --rank all loads every rank in this process and
// joins their outputs with the host stand-in for the collectives
// (Runtime/TensorParallel.h; not NCCL), checked against the whole weight.
// No MLIR: qtc run works in a QTENSOR_ENABLE_MLIR=OFF build too.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "CommandLine.h"
#include "Generate.h"

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Runtime/ActivationInput.h"
#include "qtensor/Runtime/Activations.h"
#include "qtensor/Runtime/Loader.h"
#include "qtensor/Runtime/RankExchange.h"
#include "qtensor/Runtime/Reference.h"
#include "qtensor/Runtime/TensorParallel.h"
#include "qtensor/Support/Sha256.h"
#include "qtensor/Support/ThreadPool.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>

namespace qtensor::qtc {
namespace {

using json = nlohmann::ordered_json;
using namespace qtensor::runtime;

const char *kRunUsage =
    "usage: qtc run DIR --prompt TEXT | --prompt-ids ID,ID,... [-n N]\n"
    "               [--temperature X] [--seed S] [--context C]\n"
    "               [--logits-out FILE] [--threads N] [--json]\n"
    "       qtc run DIR [--op NAME] [--input FILE.safetensors] [--tokens T]\n"
    "               [--rank R|all] [--backend host|cuda|auto]\n"
    "               [--fallback forbid|warn|allow] [--seed S] [--check]\n"
    "               [--no-warmup] [--json]\n"
    "  with --prompt: run the artifact's decoder program (docs/model.md):\n"
    "  tokenize TEXT with the artifact's tokenizer (BOS per the model's\n"
    "  rule), prefill it, decode up to N tokens (default 16; greedy at\n"
    "  temperature 0, the default, else sampled with --seed), stream the\n"
    "  text and print prefill and decode tokens/s\n"
    "  --prompt-ids  the prompt as token ids (no tokenizer needed)\n"
    "  --context C   KV cache positions (default: the trained context)\n"
    "  --logits-out FILE  the logits after the last prompt token, raw\n"
    "                little-endian float32 (n_vocab values)\n"
    "  --json        one object: prompt_tokens, tokens, text, timings\n"
    "  --threads N   host threads a linear's rows are split across (default:\n"
    "                $QTENSOR_THREADS, else every core); both modes\n"
    "\n"
    "  otherwise: load the artifact in DIR (verified, admitted,\n"
    "  materialized: seed M8.9 0x05D) and run its quantized linears, or the\n"
    "  one named\n"
    "  --op NAME     a manifest tensor or bound op name (default: every op\n"
    "                of this rank)\n"
    "  --input FILE  activations: the tensor named after the op, else \"x\";\n"
    "                [T, K] or [K] (T = 1), any float dtype, rounded to the\n"
    "                op's activation dtype; a row-parallel rank takes its K\n"
    "                slice of a [T, K_global] input (with --rank all: the\n"
    "                tensor named after the op or \"x\", [T, K_global])\n"
    "  --outputs FILE  write every op's output as an F32 tensor named after\n"
    "                the op into a safetensors file (to compare with another\n"
    "                framework's outputs on the same --input)\n"
    "  --tokens T    rows of generated activations (default 1; seeded by\n"
    "                --seed, default 0x5EED, and the op name: "
    "docs/runtime.md)\n"
    "  --rank R      tensor-parallel rank to load (default 0)\n"
    "  --rank all    load every rank in this process and join their outputs\n"
    "                as the collectives would (all_gather of column slices,\n"
    "                all_reduce(sum) of row partials, then the bias; on the\n"
    "                host, standing in for NCCL); --check then compares with\n"
    "                the whole weight\n"
    "  --rank mpi    under `mpirun -np TP`: this process runs its MPI rank "
    "and\n"
    "                the outputs are joined through MPI, bit for bit as\n"
    "                --rank all joins them; rank 0 prints\n"
    "  --backend     host, cuda, or auto (default: the GPU when the artifact\n"
    "                has GPU kernels and a GPU is present)\n"
    "  --fallback    override the report's full-dequant fallback policy\n"
    "  --backend-fallback forbid|warn|allow\n"
    "                with --backend auto, a GPU artifact where no GPU is\n"
    "                usable: refuse (forbid, the default), or run its host\n"
    "                twins, warning on stderr (warn) or not (allow)\n"
    "  --check       compare each output with the float64 reference and its\n"
    "                error bound; exit 1 if any output exceeds it\n"
    "  --no-warmup   skip the load-time warmup calls\n"
    "  --trust-artifact-code  load the artifact's own host code (its\n"
    "                constructors run in this process) instead of this\n"
    "                installation's rebuild of its kernel records (both\n"
    "                modes; docs/security.md)\n"
    "  --mmap        map the artifact's files instead of reading them into\n"
    "                memory (no copy; the files must not change while in\n"
    "                use: a truncated one ends the run with exit status 74)\n"
    "  --json        print one JSON object\n"
    "exit status: 0 ran (and checked), 1 load, run or check failure, 2 usage\n";

struct Options {
  std::string dir, op, input, outputs;
  std::optional<int64_t> tokens;
  int64_t rank = 0;
  bool allRanks = false; ///< --rank all (or mpi)
  bool mpiRanks = false; ///< --rank mpi: this process's rank, MPI between
  uint64_t seed = kDefaultActivationSeed;
  BackendChoice backend = BackendChoice::Auto;
  std::optional<kernels::FallbackPolicy> fallback;
  kernels::FallbackPolicy backendFallback = kernels::FallbackPolicy::Forbid;
  bool check = false, warmup = true, json = false;
  bool trustArtifactCode = false, mapFiles = false;
  // --prompt mode (Generate.h).
  std::optional<std::string> prompt;
  std::optional<std::vector<int32_t>> promptIds;
  int64_t maxTokens = 16, context = 0;
  double temperature = 0;
  bool seedGiven = false;
  std::string logitsOut;
};

std::optional<std::vector<int32_t>> parseIds(const std::string &v) {
  std::vector<int32_t> ids;
  size_t at = 0;
  while (at <= v.size()) {
    size_t comma = v.find(',', at);
    std::string item = v.substr(
        at, comma == std::string::npos ? std::string::npos : comma - at);
    std::optional<int64_t> id = parseInteger(item, 0, INT32_MAX, 0);
    if (!id || ids.size() >= (1u << 20))
      return std::nullopt;
    ids.push_back(int32_t(*id));
    if (comma == std::string::npos)
      break;
    at = comma + 1;
  }
  return ids;
}

std::optional<double> parseTemperature(const std::string &v) {
  char *end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x) || x < 0 || x > 100)
    return std::nullopt;
  return x;
}

/// Parses argv into `o`; none when the run should go ahead, else the exit
/// status (usage printed).
std::optional<int> parse(const std::vector<std::string> &args, Options &o) {
  using Error = std::optional<std::string>;
  CommandLine cl("qtc run", kRunUsage);
  cl.flag({"--json"}, o.json)
      .flag({"--check"}, o.check)
      .flag({"--no-warmup"}, o.warmup, false)
      .flag({"--trust-artifact-code"}, o.trustArtifactCode)
      .flag({"--mmap"}, o.mapFiles)
      .option({"--op"}, "a value", o.op)
      .option({"--outputs"}, "a value", o.outputs)
      .option({"--prompt"}, "a value",
              [&o](const std::string &v) -> Error {
                o.prompt = v;
                return std::nullopt;
              })
      .option({"--prompt-ids"}, "a value",
              parsedInto(o.promptIds, parseIds,
                         "expected comma-separated token ids"))
      .option({"-n"}, "a value",
              parsedInto(
                  o.maxTokens,
                  [](const std::string &v) {
                    return parseInteger(v, 0, 1 << 20, 0);
                  },
                  "expected an integer in [0, 2^20]"))
      .option({"--context"}, "a value",
              parsedInto(
                  o.context,
                  [](const std::string &v) {
                    return parseInteger(v, 1, 1 << 24, 0);
                  },
                  "expected an integer in [1, 2^24]"))
      .option({"--temperature"}, "a value",
              parsedInto(o.temperature, parseTemperature,
                         "expected a number in [0, 100]"))
      .option({"--logits-out"}, "a value", o.logitsOut)
      .option({"--input"}, "a value", o.input)
      .option({"--tokens"}, "a value",
              parsedInto(
                  o.tokens,
                  [](const std::string &v) {
                    return parseInteger(v, 1, 1 << 20, 0);
                  },
                  "expected an integer in [1, 2^20]"))
      .option({"--rank"}, "a value",
              [&o](const std::string &v) -> Error {
                auto r = parseInteger(v, 0, 65535, 0);
                if (v != "all" && v != "mpi" && !r)
                  return "expected all, mpi or an integer in [0, 65535]";
                o.allRanks = v == "all" || v == "mpi";
                o.mpiRanks = v == "mpi";
                o.rank = r.value_or(0);
                return std::nullopt;
              })
      .option({"--seed"}, "a value",
              [&o](const std::string &v) -> Error {
                std::optional<int64_t> s = parseInteger(v, 0, INT64_MAX, 0);
                if (!s)
                  return "expected a non-negative integer";
                o.seed = uint64_t(*s);
                o.seedGiven = true;
                return std::nullopt;
              })
      .option({"--threads"}, "a value",
              [](const std::string &v) -> Error {
                std::optional<int64_t> n = parseInteger(v, 1, 256);
                if (!n || !setDefaultThreadCount(unsigned(*n)))
                  return "expected an integer in [1, 256]";
                return std::nullopt;
              })
      .option({"--backend"}, "a value",
              parsedInto(o.backend, parseBackendChoice,
                         "expected host, cuda or auto"))
      .option({"--fallback"}, "a value",
              parsedInto(o.fallback, kernels::parseFallbackPolicy,
                         "expected forbid, warn or allow"))
      .option({"--backend-fallback"}, "a value",
              parsedInto(o.backendFallback, kernels::parseFallbackPolicy,
                         "expected forbid, warn or allow"))
      .positional(o.dir, "missing DIR");
  if (std::optional<int> status = cl.parse(args))
    return status;
  if (!o.input.empty() && o.tokens)
    return cl.usageError(
        "--tokens applies to generated activations, not --input");
  const bool generate = o.prompt || o.promptIds;
  if (o.prompt && o.promptIds)
    return cl.usageError("give --prompt or --prompt-ids, not both");
  if (generate &&
      (!o.op.empty() || !o.input.empty() || o.tokens || o.allRanks || o.check))
    return cl.usageError("--prompt runs the whole model; --op, --input, "
                         "--tokens, --rank all and --check are per-op");
  if (!generate && (!o.logitsOut.empty() || o.context || o.temperature))
    return cl.usageError(
        "--logits-out, --context and --temperature need --prompt");
  return std::nullopt;
}

Status checkFits(const Options &o, int64_t t, int64_t n, int64_t k) {
  return o.check ? checkReferenceFits(t, n, k) : Status::ok();
}

Expected<KernelError> checkOutput(const LoadedModel &model, const OpPlan &op,
                                  const HostTensor &x, const HostTensor &y) {
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> w, model.referenceWeight(op));
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> b, model.referenceBias(op));
  return measureKernelError(x.toDoubles(), w, b, y.toDoubles(), x.rows, op.n(),
                            op.k(), op.output);
}

std::string hexPrefix(const std::vector<uint8_t> &bytes) {
  auto h = sha256Hex(bytes.data(), bytes.size());
  return h ? h->substr(0, 16) : "?";
}

int fail(const Options &o, const char *stage, const std::string &message) {
  if (o.json)
    std::cout << json{{"ok", false}, {"stage", stage}, {"error", message}}.dump(
                     2)
              << "\n";
  std::cerr << "qtc run: error: " << message << "\n";
  return 1;
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
/// one loaded rank, as text; `prefix` names the rank in --rank all.
void printLoadReport(const LoadedModel &m, const std::string &prefix) {
  std::cout << prefix << "dispatch trace:\n" << m.trace().toText();
  std::cout << prefix << "startup timeline:\n" << m.timeline().toText();
  std::cout << prefix << "memory ledgers:\n" << m.ledger().toText();
  char line[160];
  std::snprintf(line, sizeof(line),
                "  read amplification: %s mapped for %s referenced (%.2fx)\n",
                formatBytes(m.mappedBytes()).c_str(),
                formatBytes(m.referencedBytes()).c_str(), amplificationOf(m));
  std::cout << line;
}

/// --backend-fallback warn says so on stderr (the JSON marks it either way).
void warnOnBackendFallback(const Options &o, const LoadedModel &model) {
  if (model.backendFallback() &&
      o.backendFallback == kernels::FallbackPolicy::Warn)
    std::cerr << "qtc run: warning: " << *model.backendFallback() << "\n";
}

/// The load options both modes share (the rank is the caller's).
LoadOptions loadOptionsOf(const Options &o) {
  LoadOptions lo;
  lo.backend = o.backend;
  lo.backendFallback = o.backendFallback;
  lo.fallback = o.fallback;
  lo.warmup = o.warmup;
  lo.code.trustArtifactCode = o.trustArtifactCode;
  lo.access = o.mapFiles ? FileAccess::Map : FileAccess::Read;
  if (!o.op.empty())
    lo.ops = {o.op};
  return lo;
}

/// The --input file, opened once for every op (none without --input).
Expected<std::optional<safetensors::SafetensorsFile>>
openInput(const Options &o) {
  std::optional<safetensors::SafetensorsFile> input;
  if (!o.input.empty()) {
    QTENSOR_ASSIGN_OR_RETURN(safetensors::SafetensorsFile f,
                             safetensors::SafetensorsFile::open(o.input));
    input.emplace(std::move(f));
  }
  return input;
}

/// An op's activations: --input's (`fromInput`) or generated rows, within
/// --check's size limit (checked before T rows are generated, and on the
/// rows --input has). `stage` names the step that failed, for fail().
Expected<HostTensor>
activationsFor(const Options &o, bool haveInput,
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

/// An op's output for --outputs, as F32.
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

int runGroup(const Options &o, RankExchange *exchange);

/// --rank all: every rank in this process, outputs joined by the host
/// stand-in for the collectives; --rank mpi: one rank per process, joined
/// through MPI (Runtime/TensorParallel.h).
int runAllRanks(const Options &o) {
  if (!o.mpiRanks)
    return runGroup(o, nullptr);
#ifdef QTENSOR_QTC_MPI
  auto opened = openMpiExchange();
  if (!opened)
    return fail(o, "mpi", opened.message());
  std::unique_ptr<RankExchange> exchange = opened.take();
  try {
    return runGroup(o, exchange.get());
  } catch (const std::exception &e) {
    // Unwinding would finalize MPI, which waits for ranks that wait for
    // this one: end them all instead.
    std::cerr << "qtc run: error: rank " << exchange->rank() << ": " << e.what()
              << "\n";
    exchange->abort(1);
  }
#else
  return fail(o, "mpi",
              "--rank mpi: this qtc was built without MPI (install "
              "libopenmpi-dev and rebuild)");
#endif
}

int runGroup(const Options &o, RankExchange *exchange) {
  // One process speaks for the group.
  const bool speaks = !exchange || exchange->rank() == 0;
  auto loaded =
      exchange
          ? TensorParallelGroup::loadRank(o.dir, loadOptionsOf(o), *exchange)
          : TensorParallelGroup::load(o.dir, loadOptionsOf(o));
  if (!loaded)
    return speaks ? fail(o, "load", loaded.message()) : 1;
  TensorParallelGroup &group = **loaded;
  // A failure this process met outside a collective, while the other
  // ranks may be entering the next one: agreed through the group, so every
  // rank fails there together (RankExchange.h).
  auto failHere = [&](const char *stage, const std::string &message) -> int {
    Status agreed = group.agree(Status(makeError(message)));
    return speaks ? fail(o, stage, agreed.message()) : 1;
  };
  const LoadedModel &first = group.rank(group.firstLocalRank());
  if (speaks)
    warnOnBackendFallback(o, first);
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
      return speaks ? fail(o, "run", out.message()) : 1;
    const GroupCall &call = group.calls().back();
    if (!o.outputs.empty() && speaks && outputsOk) {
      outputsOk = addOutput(outputs, op.op, out->y);
    }
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
        return speaks ? fail(o, "check", c.message()) : 1;
      bool ok = c->within();
      const char *bound = op.collective == Collective::AllReduceSum
                              ? "all-reduce bound"
                              : "kernel bound";
      entry["check"] = {{"ok", ok},
                        {"reference", "whole weight"},
                        {"bound", bound},
                        {"finite", c->finite},
                        {"max_abs_error", c->maxAbsError},
                        {"worst_error_over_bound", c->worstRatio}};
      if (!c->finite)
        std::snprintf(line, sizeof(line),
                      "    check: FAILED, non-finite output or reference at "
                      "[%zu, %zu] (whole weight)\n",
                      c->nonFiniteIndex / size_t(op.n),
                      c->nonFiniteIndex % size_t(op.n));
      else
        std::snprintf(line, sizeof(line),
                      "    check: %s, max |y - y_ref| %.3g, worst error / "
                      "%s %.3g (whole weight)\n",
                      ok ? "ok" : "FAILED", c->maxAbsError, bound,
                      c->worstRatio);
      text += line;
      allOk &= ok;
    }
    ops.push_back(std::move(entry));
  }

  if (!outputsOk)
    return fail(o, "outputs", outputsOk.message());
  if (!o.outputs.empty() && speaks)
    if (auto written = outputs.writeFile(o.outputs); !written)
      return fail(o, "outputs", written.message());
  if (!speaks)
    return allOk ? 0 : 1;
  // This process's ranks: every rank, or (MPI) rank 0.
  const int64_t from = group.firstLocalRank(), to = from + group.localRanks();
  size_t fallbacks = 0;
  for (int64_t r = from; r < to; ++r)
    fallbacks += group.rank(r).plan().fallbacks();
  std::vector<std::string> notes = group.notes();
  for (int64_t r = from; r < to; ++r)
    for (const std::string &n : group.rank(r).notes())
      notes.push_back("rank " + std::to_string(r) + ": " + n);
  const std::string collectives =
      exchange ? group.transport() +
                     ": every rank's output all-gathered, joined in rank "
                     "order as --rank all joins it"
               : "in process, on the host (a stand-in for NCCL, not NCCL)";
  if (o.json) {
    json out;
    out["ok"] = allOk;
    out["artifact"] = o.dir;
    out["backend"] = first.backend();
    out["backend_fallback"] = backendFallbackJson(first);
    out["rank"] = exchange ? "mpi" : "all";
    out["tp"] = group.tp();
    out["collectives"] = collectives;
    out["fallback_policy"] = {
        {"policy", kernels::toString(first.plan().policy)},
        {"source", first.plan().policySource}};
    out["fallbacks"] = fallbacks;
    out["schema"] = first.schema().summary;
    out["notes"] = notes;
    out["ops"] = std::move(ops);
    out["collective_trace"] = group.callsToJson();
    out["group_mapped_bytes"] = group.mappedBytes();
    json ranks = json::array();
    for (int64_t r = from; r < to; ++r) {
      const LoadedModel &m = group.rank(r);
      ranks.push_back({{"rank", r},
                       {"backend", m.backend()},
                       {"trace", m.trace().toJson()},
                       {"timeline", m.timeline().toJson()},
                       {"ledger", m.ledger().toJson(/*withItems=*/true)},
                       {"read", readJson(m)}});
    }
    out["ranks"] = std::move(ranks);
    std::cout << out.dump(2) << "\n";
    return allOk ? 0 : 1;
  }
  std::cout << "loaded " << o.dir << " on " << first.backend() << " ("
            << (exchange ? "rank 0 of " : "all ") << group.tp()
            << (group.tp() == 1 ? " rank" : " ranks")
            << (exchange ? ", one process each, " : " in this process, ")
            << group.ops().size() << " ops, " << fallbacks
            << " full-dequant fallbacks, fallback="
            << kernels::toString(first.plan().policy) << " from "
            << first.plan().policySource << ")\n";
  std::cout << "  collectives: " << collectives << "\n";
  std::cout << "  schema: " << first.schema().summary << "\n";
  for (const std::string &n : notes)
    std::cout << "  note: " << n << "\n";
  std::cout << "outputs (joined over " << group.tp()
            << (group.tp() == 1 ? " rank" : " ranks") << "):\n"
            << text;
  std::cout << "collective trace:\n" << group.callsToText();
  for (int64_t r = from; r < to; ++r)
    printLoadReport(group.rank(r), "rank " + std::to_string(r) + " ");
  return allOk ? 0 : 1;
}

} // namespace

int runRun(const std::vector<std::string> &args) {
  Options o;
  if (std::optional<int> status = parse(args, o))
    return *status;
  if (o.allRanks)
    return runAllRanks(o);
  if (o.prompt || o.promptIds) {
    GenerateArgs g;
    g.dir = o.dir;
    g.prompt = o.prompt;
    g.ids = o.promptIds;
    g.maxTokens = o.maxTokens;
    g.temperature = o.temperature;
    g.seed = o.seedGiven ? o.seed : 0; // the activation seed is per-op mode's
    g.context = o.context;
    g.logitsOut = o.logitsOut;
    g.json = o.json;
    g.load = loadOptionsOf(o);
    g.load.rank = o.rank;
    return runGenerate(g);
  }

  LoadOptions lo = loadOptionsOf(o);
  lo.rank = o.rank;
  auto loaded = loadModel(o.dir, lo);
  if (!loaded)
    return fail(o, "load", loaded.message());
  LoadedModel &model = **loaded;
  warnOnBackendFallback(o, model);

  auto input = openInput(o);
  if (!input)
    return fail(o, "input", input.message());

  json ops = json::array();
  bool allOk = true;
  std::string text;
  safetensors::SafetensorsWriter outputs;
  for (const OpPlan &op : model.plan().ops) {
    const char *stage = "";
    Expected<HostTensor> x = activationsFor(
        o, input->has_value(), [&] { return activationsFromFile(**input, op); },
        op.activation, op.n(), op.k(), op.tensor, stage);
    if (!x)
      return fail(o, stage, x.message());
    auto y = model.run(op.tensor, *x);
    if (!y)
      return fail(o, "run", y.message());
    const DispatchRecord &call = model.trace().all().back();
    bool partial = op.signature.topology == kernels::Topology::Row;
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
        return fail(o, "outputs", s.message());
    }
    if (partial)
      entry["partial_sum"] = "row-parallel rank " + std::to_string(o.rank) +
                             " of " + std::to_string(model.plan().tp) +
                             ": run --rank all for the all-reduce and the "
                             "bias";
    if (partial)
      text += "    (" + entry["partial_sum"].get<std::string>() + ")\n";
    if (o.check) {
      auto c = checkOutput(model, op, *x, *y);
      if (!c)
        return fail(o, "check", c.message());
      bool ok = c->within();
      entry["check"] = {{"ok", ok},
                        {"finite", c->finite},
                        {"max_abs_error", c->maxAbsError},
                        {"worst_error_over_bound", c->worstRatio}};
      if (!c->finite)
        std::snprintf(line, sizeof(line),
                      "    check: FAILED, non-finite output or reference at "
                      "[%zu, %zu]\n",
                      c->nonFiniteIndex / size_t(op.n()),
                      c->nonFiniteIndex % size_t(op.n()));
      else
        std::snprintf(line, sizeof(line),
                      "    check: %s, max |y - y_ref| %.3g, worst error / "
                      "bound %.3g\n",
                      ok ? "ok" : "FAILED", c->maxAbsError, c->worstRatio);
      text += line;
      allOk &= ok;
    }
    ops.push_back(std::move(entry));
  }

  if (!o.outputs.empty())
    if (auto written = outputs.writeFile(o.outputs); !written)
      return fail(o, "outputs", written.message());
  const RunPlan &plan = model.plan();
  if (o.json) {
    json out;
    out["ok"] = allOk;
    out["artifact"] = o.dir;
    out["backend"] = model.backend();
    out["backend_fallback"] = backendFallbackJson(model);
    out["rank"] = plan.rank;
    out["tp"] = plan.tp;
    out["fallback_policy"] = {{"policy", kernels::toString(plan.policy)},
                              {"source", plan.policySource}};
    out["fallbacks"] = plan.fallbacks();
    out["schema"] = model.schema().summary;
    out["notes"] = model.notes();
    out["ops"] = std::move(ops);
    out["trace"] = model.trace().toJson();
    out["timeline"] = model.timeline().toJson();
    out["ledger"] = model.ledger().toJson(/*withItems=*/true);
    out["read"] = readJson(model);
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "loaded " << o.dir << " on " << model.backend() << " (rank "
              << plan.rank << " of " << plan.tp << ", " << plan.ops.size()
              << " ops, " << plan.fallbacks()
              << " full-dequant fallbacks, fallback="
              << kernels::toString(plan.policy) << " from " << plan.policySource
              << ")\n";
    std::cout << "  schema: " << model.schema().summary << "\n";
    for (const std::string &n : model.notes())
      std::cout << "  note: " << n << "\n";
    std::cout << "outputs:\n" << text;
    printLoadReport(model, "");
  }
  return allOk ? 0 : 1;
}

} // namespace qtensor::qtc
