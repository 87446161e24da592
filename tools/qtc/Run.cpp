//===- Run.cpp - `qtc run`: load an artifact and run its linears ----------===//
//
// A thin driver over the runtime: options -> LoadOptions, activations from
// --input or the deterministic generator (Runtime/Activations.h), one call
// per op, then the report. --check compares each output with the float64
// reference of the reference-dequantized weight, against the error bound of
// Runtime/Reference.h. No MLIR: qtc run works in a QTENSOR_ENABLE_MLIR=OFF
// build too.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Runtime/Activations.h"
#include "qtensor/Runtime/Loader.h"
#include "qtensor/Runtime/Reference.h"
#include "qtensor/Support/Sha256.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

namespace qtensor::qtc {
namespace {

using json = nlohmann::ordered_json;
using namespace qtensor::runtime;

const char *kRunUsage =
    "usage: qtc run DIR [--op NAME] [--input FILE.safetensors] [--tokens T]\n"
    "               [--rank R] [--backend host|cuda|auto]\n"
    "               [--fallback forbid|warn|allow] [--seed S] [--check]\n"
    "               [--no-warmup] [--json]\n"
    "  load the artifact in DIR (verified, admitted, materialized: seed\n"
    "  M8.9 0x05D) and run its quantized linears, or the one named\n"
    "  --op NAME     a manifest tensor or trace op name (default: every op\n"
    "                of this rank)\n"
    "  --input FILE  activations: the tensor named after the op, else \"x\";\n"
    "                [T, K] or [K] (T = 1), any float dtype, rounded to the\n"
    "                op's activation dtype; a row-parallel rank takes its K\n"
    "                slice of a [T, K_global] input\n"
    "  --tokens T    rows of generated activations (default 1; seeded by\n"
    "                --seed, default 0x5EED, and the op name: "
    "docs/runtime.md)\n"
    "  --rank R      tensor-parallel rank to load (default 0)\n"
    "  --backend     host, cuda, or auto (default: the GPU when the artifact\n"
    "                has GPU kernels and a GPU is present)\n"
    "  --fallback    override the report's full-dequant fallback policy\n"
    "  --check       compare each output with the float64 reference and its\n"
    "                error bound; exit 1 if any output exceeds it\n"
    "  --no-warmup   skip the load-time warmup calls\n"
    "  --json        print one JSON object\n"
    "exit status: 0 ran (and checked), 1 load, run or check failure, 2 usage\n";

struct Options {
  std::string dir, op, input;
  std::optional<int64_t> tokens;
  int64_t rank = 0;
  uint64_t seed = kDefaultActivationSeed;
  BackendChoice backend = BackendChoice::Auto;
  std::optional<kernels::FallbackPolicy> fallback;
  bool check = false, warmup = true, json = false;
};

int usage(const std::string &message) {
  std::cerr << "qtc run: " << message << "\n" << kRunUsage;
  return 2;
}

std::optional<int64_t> parseInt(const std::string &s, int64_t min,
                                int64_t max) {
  if (s.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno || *end != '\0' || v < min || v > max)
    return std::nullopt;
  return v;
}

/// 0 when `o` is complete, -1 for --help, else the exit status.
int parse(const std::vector<std::string> &args, Options &o) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= args.size())
        return false;
      out = args[++i];
      return true;
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      std::cout << kRunUsage;
      return -1;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--no-warmup") {
      o.warmup = false;
    } else if (a == "--op" || a == "--input" || a == "--tokens" ||
               a == "--rank" || a == "--backend" || a == "--fallback" ||
               a == "--seed") {
      if (!value(v))
        return usage(a + " needs a value");
      if (a == "--op") {
        o.op = v;
      } else if (a == "--input") {
        o.input = v;
      } else if (a == "--tokens") {
        auto t = parseInt(v, 1, 1 << 20);
        if (!t)
          return usage("--tokens " + v + ": expected an integer in [1, 2^20]");
        o.tokens = *t;
      } else if (a == "--rank") {
        auto r = parseInt(v, 0, 65535);
        if (!r)
          return usage("--rank " + v + ": expected an integer in [0, 65535]");
        o.rank = *r;
      } else if (a == "--seed") {
        auto s = parseInt(v, 0, INT64_MAX);
        if (!s)
          return usage("--seed " + v + ": expected a non-negative integer");
        o.seed = uint64_t(*s);
      } else if (a == "--backend") {
        auto b = parseBackendChoice(v);
        if (!b)
          return usage("--backend " + v + ": expected host, cuda or auto");
        o.backend = *b;
      } else {
        auto p = kernels::parseFallbackPolicy(v);
        if (!p)
          return usage("--fallback " + v + ": expected forbid, warn or allow");
        o.fallback = *p;
      }
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option " + a);
    } else if (o.dir.empty()) {
      o.dir = a;
    } else {
      return usage("unexpected argument " + a);
    }
  }
  if (o.dir.empty())
    return usage("missing DIR");
  if (!o.input.empty() && o.tokens)
    return usage("--tokens applies to generated activations, not --input");
  return 0;
}

/// The op's activations from --input (see the usage text).
Expected<HostTensor> inputFor(const safetensors::SafetensorsFile &file,
                              const OpPlan &op) {
  const safetensors::TensorView *v = nullptr;
  for (const std::string &name : {op.tensor, op.op, std::string("x")})
    if ((v = file.find(name)))
      break;
  if (!v)
    return makeError(file.path(), ": no tensor named \"", op.tensor, "\", \"",
                     op.op, "\" or \"x\"");
  if (!safetensors::isFloatDType(v->dtype))
    return makeError(file.path(), ": tensor \"", v->name, "\" is ",
                     safetensors::dtypeName(v->dtype),
                     ", expected a float dtype");
  int64_t rows = 1, cols = 0;
  if (v->shape.size() == 1) {
    cols = v->shape[0];
  } else if (v->shape.size() == 2) {
    rows = v->shape[0];
    cols = v->shape[1];
  } else {
    return makeError(file.path(), ": tensor \"", v->name, "\" has shape ",
                     shapeToString(v->shape), ", expected [T, K] or [K]");
  }
  if (rows < 1)
    return makeError(file.path(), ": tensor \"", v->name, "\" has no rows");
  // A row-parallel rank reads its slice of the whole K.
  int64_t from = 0;
  if (cols != op.k()) {
    if (op.signature.topology == kernels::Topology::Row &&
        cols == op.signature.k) {
      from = op.slice.kOffset;
    } else {
      return makeError(file.path(), ": tensor \"", v->name, "\" has K = ", cols,
                       ", op \"", op.tensor, "\" needs ", op.k());
    }
  }
  QTENSOR_ASSIGN_OR_RETURN(std::vector<double> all, safetensors::toFloat64(*v));
  std::vector<double> x;
  x.reserve(size_t(rows) * size_t(op.k()));
  for (int64_t r = 0; r < rows; ++r)
    x.insert(x.end(), all.begin() + r * cols + from,
             all.begin() + r * cols + from + op.k());
  return HostTensor::fromDoubles(op.activation, rows, op.k(), x);
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

} // namespace

int runRun(const std::vector<std::string> &args) {
  Options o;
  if (int status = parse(args, o))
    return status < 0 ? 0 : status;

  LoadOptions lo;
  lo.rank = o.rank;
  lo.backend = o.backend;
  lo.fallback = o.fallback;
  lo.warmup = o.warmup;
  if (!o.op.empty())
    lo.ops = {o.op};
  auto loaded = loadModel(o.dir, lo);
  if (!loaded)
    return fail(o, "load", loaded.message());
  LoadedModel &model = **loaded;

  std::optional<safetensors::SafetensorsFile> input;
  if (!o.input.empty()) {
    auto f = safetensors::SafetensorsFile::open(o.input);
    if (!f)
      return fail(o, "input", f.message());
    input.emplace(f.take());
  }

  json ops = json::array();
  bool allOk = true;
  std::string text;
  for (const OpPlan &op : model.plan().ops) {
    Expected<HostTensor> x =
        input ? inputFor(*input, op)
              : deterministicActivations(op.activation, o.tokens.value_or(1),
                                         op.k(), o.seed, op.tensor);
    if (!x)
      return fail(o, "input", x.message());
    auto y = model.run(op.tensor, *x);
    if (!y)
      return fail(o, "run", y.message());
    const DispatchRecord &call = model.trace().all().back();
    double sum = 0;
    json values = json::array();
    for (size_t i = 0; i < y->size(); ++i) {
      sum += y->at(i);
      if (i < 8)
        values.push_back(y->at(i));
    }
    bool partial = op.signature.topology == kernels::Topology::Row;
    json entry;
    entry["op"] = op.tensor;
    entry["kernel"] = call.kernel;
    entry["backend"] = call.backend;
    entry["phase"] = kernels::toString(call.phase);
    entry["fallback"] = call.fallback;
    entry["shape"] = {y->rows, y->cols};
    entry["dtype"] = qtensor::toString(y->dtype);
    entry["sha256_16"] = hexPrefix(y->bytes);
    entry["sum"] = sum;
    entry["values"] = values;
    if (partial)
      entry["partial_sum"] = "row-parallel rank " + std::to_string(o.rank) +
                             " of " + std::to_string(model.plan().tp) +
                             ": the all-reduce and the bias come after";
    char line[256];
    std::snprintf(line, sizeof(line), "  %s: [%lld, %lld] %s via %s (%s%s)\n",
                  op.tensor.c_str(), (long long)y->rows, (long long)y->cols,
                  qtensor::toString(y->dtype), call.kernel.c_str(),
                  call.backend.c_str(), call.fallback ? ", FALLBACK" : "");
    text += line;
    std::snprintf(line, sizeof(line), "    sha256 %s  sum %.9g  first",
                  entry["sha256_16"].get<std::string>().c_str(), sum);
    text += line;
    for (const auto &v : values) {
      std::snprintf(line, sizeof(line), " %.6g", v.get<double>());
      text += line;
    }
    text += "\n";
    if (partial)
      text += "    (" + entry["partial_sum"].get<std::string>() + ")\n";
    if (o.check) {
      auto c = checkOutput(model, op, *x, *y);
      if (!c)
        return fail(o, "check", c.message());
      bool ok = c->within();
      entry["check"] = {{"ok", ok},
                        {"max_abs_error", c->maxAbsError},
                        {"worst_error_over_bound", c->worstRatio}};
      std::snprintf(line, sizeof(line),
                    "    check: %s, max |y - y_ref| %.3g, worst error / "
                    "bound %.3g\n",
                    ok ? "ok" : "FAILED", c->maxAbsError, c->worstRatio);
      text += line;
      allOk &= ok;
    }
    ops.push_back(std::move(entry));
  }

  const RunPlan &plan = model.plan();
  double amplification =
      model.referencedBytes()
          ? double(model.mappedBytes()) / double(model.referencedBytes())
          : 0.0;
  if (o.json) {
    json out;
    out["ok"] = allOk;
    out["artifact"] = o.dir;
    out["backend"] = model.backend();
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
    out["read"] = {{"mapped_bytes", model.mappedBytes()},
                   {"referenced_bytes", model.referencedBytes()},
                   {"amplification", amplification}};
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
    std::cout << "dispatch trace:\n" << model.trace().toText();
    std::cout << "startup timeline:\n" << model.timeline().toText();
    std::cout << "memory ledgers:\n" << model.ledger().toText();
    char line[160];
    std::snprintf(line, sizeof(line),
                  "  read amplification: %s mapped for %s referenced "
                  "(%.2fx)\n",
                  formatBytes(model.mappedBytes()).c_str(),
                  formatBytes(model.referencedBytes()).c_str(), amplification);
    std::cout << line;
  }
  return allOk ? 0 : 1;
}

} // namespace qtensor::qtc
