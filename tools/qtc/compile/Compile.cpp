//===- Compile.cpp - `qtc compile` ----------------------------------------===//
//
// checkpoint -> quantize -> graph -> --qtensor-compile (place shards, select
// kernels and layouts) -> kernels -> export -> reopen and run the parity
// ladder -> publish the report with the ladder's results. Each stage is its
// own file; this one parses the command line and runs them in order.
//
//===----------------------------------------------------------------------===//

#include "Compile.h"

#include "Checkpoint.h"
#include "CompileKernels.h"
#include "Dispatch.h"
#include "Export.h"
#include "GraphBuilder.h"
#include "ModuleInput.h"
#include "Quantize.h"

#include "../CommandLine.h"
#include "../Progress.h"
#include "../verify/Ladder.h"

#include "qtensor/InitAll.h"
#include "qtensor/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace qtensor::qtc {
namespace {

const char *kUsage =
    "usage: qtc compile INPUT --target sm_80|sm_90|host -o DIR\n"
    "           [--quant w4a16:gG[:sym|:asym] | w8a16[:gG][:sym|:asym] | keep]\n"
    "           [--tp N] [--phase decode|prefill|both]\n"
    "           [--fallback forbid|warn|allow] [--group-policy error|align]\n"
    "           [--exclude GLOB[,GLOB...]] [--include GLOB[,GLOB...]]\n"
    "           [--weights FILE] [--quiet] [--json]\n"
    "  INPUT  a Hugging Face style directory (config.json + safetensors), a\n"
    "         GGUF file (Q4_0/Q4_1/Q8_0 codes are kept as stored), or an MLIR\n"
    "         module (.mlir) whose weights are qtensor.weight references or\n"
    "         external ml_program globals, with --weights FILE\n"
    "  --weights     the module's weights: a .safetensors file, a\n"
    "                .safetensors.index.json, or a .gguf file\n"
    "  -o     the artifact directory (written transactionally: manifest last)\n"
    "  --quant       default w4a16:g128 (symmetric)\n"
    "  --tp          tensor-parallel ranks (default 1)\n"
    "  --phase       which phases need a kernel (default both)\n"
    "  --fallback    full-dequant fallback policy (default forbid)\n"
    "  --exclude     keep the linears whose names match in float (fnmatch\n"
    "                globs over the whole name; repeatable)\n"
    "  --include     quantize what is excluded by default: the output head\n"
    "                (lm_head.weight, GGUF output.weight); embeddings and\n"
    "                norms are never quantized\n"
    "  --json        print the result as one JSON object; progress as JSON\n"
    "                lines on stderr\n";

struct Options {
  std::string input, output, weights, target, quant = "w4a16:g128", phase = "both",
                                     fallback = "forbid",
                                     groupPolicy = "error";
  std::vector<std::string> excludes, includes;
  int64_t tp = 1;
  bool quiet = false, json = false;
};

/// One of `allowed` into `out`, or what was expected.
CommandLine::Setter oneOf(std::string &out, std::vector<std::string> allowed,
                          std::string expected) {
  return [&out, allowed, expected](const std::string &v)
             -> std::optional<std::string> {
    for (const std::string &a : allowed)
      if (v == a) {
        out = v;
        return std::nullopt;
      }
    return expected;
  };
}

/// Parses argv into `o`; none when the compile should run, else the exit
/// status (usage printed).
std::optional<int> parse(const std::vector<std::string> &args, Options &o) {
  CommandLine cl("qtc compile", kUsage);
  auto list = [](std::vector<std::string> &out) {
    return [&out](const std::string &v) {
      appendCommaList(out, v);
      return std::optional<std::string>();
    };
  };
  cl.flag({"--quiet"}, o.quiet)
      .flag({"--json"}, o.json)
      .option({"-o", "--output"}, "a directory", o.output)
      .option({"--weights"}, "a file", o.weights)
      .option({"--quant"}, "a value", o.quant)
      .option({"--target"}, "a value",
              oneOf(o.target, {"sm_80", "sm_90", "host"},
                    "expected sm_80, sm_90 or host"))
      .option({"--phase"}, "a value",
              oneOf(o.phase, {"decode", "prefill", "both"},
                    "expected decode, prefill or both"))
      .option({"--fallback"}, "a value",
              oneOf(o.fallback, {"forbid", "warn", "allow"},
                    "expected forbid, warn or allow"))
      .option({"--group-policy"}, "a value",
              oneOf(o.groupPolicy, {"error", "align"},
                    "the exporter supports error and align (replicate-"
                    "boundary and repack change what a rank stores; qopt "
                    "shows their placement)"))
      .option({"--tp"}, "a value",
              [&o](const std::string &v) -> std::optional<std::string> {
                char *end = nullptr;
                long long n = std::strtoll(v.c_str(), &end, 10);
                if (v.empty() || *end != '\0' || n < 1 || n > 64)
                  return "expected an integer in [1, 64]";
                o.tp = n;
                return std::nullopt;
              })
      .option({"--exclude"}, "a pattern", list(o.excludes))
      .option({"--include"}, "a pattern", list(o.includes))
      .positional(o.input, "missing INPUT");
  if (std::optional<int> status = cl.parse(args))
    return status;
  if (o.output.empty())
    return cl.usageError("missing -o DIR");
  if (o.target.empty())
    return cl.usageError("--target (missing): expected sm_80, sm_90 or host");
  if (isModulePath(o.input) && o.weights.empty())
    return cl.usageError("an MLIR module INPUT needs --weights FILE");
  if (!isModulePath(o.input) && !o.weights.empty())
    return cl.usageError("--weights is for an MLIR module INPUT (.mlir); " +
                         o.input + " holds its own weights");
  if (auto spec = parseQuantSpec(o.quant); !spec)
    return cl.usageError(spec.message());
  if (auto selection = WeightSelection::create(o.excludes, o.includes);
      !selection)
    return cl.usageError(selection.message());
  return std::nullopt;
}

/// A scratch directory removed when the compile ends.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/qtc-compile-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()))
      path = buf.data();
  }
  ~ScratchDir() {
    std::error_code ignored; // a leftover temp folder is not worth failing
    if (!path.empty())
      std::filesystem::remove_all(path, ignored);
  }
};

Expected<std::vector<uint8_t>> readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError("cannot read ", path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

int fail(const Options &o, const std::string &stage,
         const std::string &message) {
  if (o.json)
    std::cout << nlohmann::json{{"ok", false},
                                {"stage", stage},
                                {"error", message}}
                     .dump(2)
              << "\n";
  std::cerr << "qtc compile: error: " << message << "\n";
  return 1;
}

} // namespace

int runCompile(const std::vector<std::string> &args) {
  Options o;
  if (std::optional<int> status = parse(args, o))
    return *status;
  Progress progress(o.quiet  ? Progress::Mode::Quiet
                    : o.json ? Progress::Mode::Json
                             : Progress::Mode::Text,
                    6);

  progress.stage("read " + o.input);
  // Both were checked by parse().
  auto spec = parseQuantSpec(o.quant);
  auto selection = WeightSelection::create(o.excludes, o.includes);
  mlir::DialectRegistry registry;
  registerDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false); // messages name the tensor instead
  context.loadAllAvailableDialects();
  // An MLIR module brings its own graph; a checkpoint gets one built.
  mlir::OwningOpRef<mlir::ModuleOp> userModule;
  Expected<Checkpoint> checkpoint = makeError("no input read");
  if (isModulePath(o.input)) {
    auto parsed = parseModelModule(context, o.input);
    if (!parsed)
      return fail(o, "read", parsed.message());
    userModule = parsed.take();
    auto references = collectReferences(*userModule, o.input);
    if (!references)
      return fail(o, "read", references.message());
    checkpoint = Checkpoint::openForModule(o.input, o.weights, *references,
                                           *selection);
  } else {
    checkpoint = Checkpoint::open(o.input, *selection);
  }
  if (!checkpoint)
    return fail(o, "read", checkpoint.message());
  const ModelConfig &config = checkpoint->config();
  if (checkpoint->linears().empty())
    return fail(o, "read",
                userModule
                    ? "nothing to quantize: no weight of " + o.input +
                          " is selected (a linear is a 2-D weight a "
                          "contraction reads; " +
                          std::to_string(checkpoint->kept().size()) +
                          " weights kept as stored)"
                    : "nothing to quantize: every linear of " + o.input +
                          " is excluded");
  std::string unreferenced =
      checkpoint->unreferenced().empty()
          ? std::string()
          : ", " + std::to_string(checkpoint->unreferenced().size()) +
                " tensors of " + o.weights + " unreferenced";
  if (userModule)
    progress.finish("MLIR module: " +
                    std::to_string(checkpoint->linears().size()) +
                    " linears to quantize, " +
                    std::to_string(checkpoint->kept().size()) +
                    " other weights (biases, tensors kept as stored)" +
                    unreferenced);
  else
    progress.finish(checkpoint->format() + ", " + config.architecture + ", " +
                    std::to_string(config.layers) + " layers, " +
                    std::to_string(checkpoint->linears().size()) +
                    " linears to quantize, " +
                    std::to_string(checkpoint->floatLinears().size()) +
                    " kept in float");

  // Activations (and reconstruction) in bf16 for a bf16 checkpoint, else
  // f16; a module declares its own.
  FloatType element = FloatType::F16;
  if (checkpoint->linears()[0].weight.dtype == "BF16")
    element = FloatType::BF16;

  progress.stage("quantize (" + spec->text + ")");
  std::vector<QuantizedWeight> weights;
  weights.reserve(checkpoint->linears().size());
  for (const SourceLinear &l : checkpoint->linears()) {
    auto w = quantizeLinear(*checkpoint, l, *spec,
                            l.elementType.value_or(element));
    if (!w)
      return fail(o, "quantize", w.message());
    weights.push_back(w.take());
    progress.advance(weights.size(), checkpoint->linears().size(), "linears");
  }
  progress.finish();

  progress.stage("graph and --qtensor-compile (target " + o.target +
                 ", tp " + std::to_string(o.tp) + ", phase " + o.phase +
                 ", fallback " + o.fallback + ")");
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<std::string> widened; // f16 accumulators compiled as f32
  if (userModule) {
    auto formed = formLinears(*userModule, o.input, checkpoint->linears(),
                              weights);
    if (!formed)
      return fail(o, "graph", formed.message());
    widened = formed->widenedAccumulators;
    for (const auto &[linear, bias] : formed->biases) {
      auto renamed = formed->storedBiasNames.find(linear);
      if (Status st = checkpoint->attachBias(
              linear, bias,
              renamed == formed->storedBiasNames.end() ? bias
                                                       : renamed->second);
          !st)
        return fail(o, "graph", st.message());
      for (size_t i = 0; i < weights.size(); ++i) {
        const SourceLinear &l = checkpoint->linears()[i];
        if (l.name != linear)
          continue;
        auto bits = readBias(*checkpoint, l, weights[i].logical.elementType);
        if (!bits)
          return fail(o, "graph", bits.message());
        weights[i].bias = bits.take();
      }
    }
    module = std::move(userModule);
  } else {
    std::vector<GraphLinear> graphLinears;
    for (size_t i = 0; i < weights.size(); ++i)
      graphLinears.push_back({&checkpoint->linears()[i], weights[i].logical,
                              checkpoint->linears()[i].bias.has_value()});
    for (const SourceLinear &l : checkpoint->floatLinears())
      graphLinears.push_back({&l, std::nullopt, l.bias.has_value()});
    auto built = buildModelGraph(context, config, graphLinears, element);
    if (!built)
      return fail(o, "graph", built.message());
    module = built.take();
  }

  ScratchDir scratch;
  if (scratch.path.empty())
    return fail(o, "graph", "cannot create a scratch directory");
  CompileOptions pipeline;
  pipeline.target = o.target;
  pipeline.tp = o.tp;
  pipeline.phase = o.phase;
  pipeline.fallback = o.fallback;
  pipeline.groupPolicy = o.groupPolicy;
  pipeline.traceFile = scratch.path + "/dispatch-trace.json";
  std::string diagnostics;
  {
    llvm::raw_string_ostream os(diagnostics);
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      if (d.getSeverity() == mlir::DiagnosticSeverity::Remark)
        return mlir::success(); // the trace file has the details
      // Weight ops are located by their tensor's name (GraphBuilder); a
      // module's ops by file:line:col.
      if (auto name = llvm::dyn_cast<mlir::NameLoc>(d.getLocation()))
        os << name.getName().strref() << ": ";
      else
        os << locationText(d.getLocation()) << ": ";
      os << d << "\n";
      for (const mlir::Diagnostic &note : d.getNotes())
        os << "  note: " << note << "\n";
      return mlir::success();
    });
    mlir::PassManager pm(&context);
    buildCompilePipeline(pm, pipeline);
    if (mlir::failed(pm.run(*module)))
      return fail(o, "pipeline", "--qtensor-compile failed:\n" + diagnostics);
  }
  if (!diagnostics.empty() && !o.quiet && !o.json)
    std::cerr << diagnostics;
  auto dispatch = readDispatch(*module, weights, checkpoint->linears());
  if (!dispatch)
    return fail(o, "pipeline", dispatch.message());
  progress.finish(std::to_string(dispatch->fallbacks) + " fallbacks" +
                  (widened.empty()
                       ? std::string()
                       : ", " + std::to_string(widened.size()) +
                             " f16/bf16 accumulators compiled as f32"));

  progress.stage("kernels");
  auto kernels = compileKernels(context, *module, *dispatch, o.target,
                                scratch.path, progress);
  if (!kernels)
    return fail(o, "kernels", kernels.message());
  progress.finish(std::to_string(kernels->files.size()) + " kernel files");

  // The graph as compiled: placement and dispatch decisions included.
  std::string graph;
  {
    llvm::raw_string_ostream os(graph);
    module->print(os);
  }

  ExportInput input;
  input.checkpoint = &*checkpoint;
  input.tp = o.tp;
  for (size_t i = 0; i < weights.size(); ++i)
    input.linears.push_back({&checkpoint->linears()[i], &weights[i],
                             dispatch->linears[i].placement,
                             dispatch->linears[i].layout});
  input.files.push_back({"graph.mlir", artifact::FileRole::Graph,
                         std::vector<uint8_t>(graph.begin(), graph.end())});
  auto trace = readAll(pipeline.traceFile);
  if (!trace)
    return fail(o, "pipeline",
                "the pipeline wrote no dispatch trace: " + trace.message());
  input.files.push_back(
      {"dispatch-trace.json", artifact::FileRole::Trace, trace.take()});
  for (ExportFile &f : kernels->files)
    input.files.push_back(std::move(f));
  input.kernels = kernels->entries;
  input.model.architecture = config.architecture;
  input.model.name = config.name.empty() ? "model" : config.name;
  // Kept GGUF codes are whatever the file had, not what --quant says.
  size_t keptCodes = 0;
  for (const QuantizedWeight &w : weights)
    keptCodes += w.keptStoredCodes;
  input.quantization.family =
      keptCodes == weights.size() && keptCodes
          ? "kept"
          : (keptCodes ? "mixed"
                       : "affine_w" + std::to_string(spec->bits) + "a16");
  input.quantization.config = {{"quant", spec->text},
                               {"target", o.target},
                               {"phase", o.phase},
                               {"fallback", o.fallback},
                               {"group_policy", o.groupPolicy},
                               {"activation", element == FloatType::BF16
                                                  ? "bf16"
                                                  : "f16"}};
  input.provenance.sourceCheckpointSha256 = checkpoint->sha256();
  input.provenance.converterName = "qtc";
  input.provenance.converterRevision = QTENSOR_VERSION_STRING;
  input.provenance.createdBy = "qtc compile";
  input.report["report_version"] = 1;
  input.report["source"] = {{"path", o.input},
                            {"format", checkpoint->format()},
                            {"sha256", checkpoint->sha256()}};
  if (!o.weights.empty()) {
    input.report["source"]["weights"] = o.weights;
    input.report["source"]["unreferenced"] = checkpoint->unreferenced();
    input.report["widened_accumulators"] = widened;
  }
  input.report["options"] = input.quantization.config;
  input.report["options"]["tp"] = o.tp;
  input.report["options"]["exclude"] = o.excludes;
  input.report["options"]["include"] = o.includes;
  // Every stored tensor that is not quantized, and why (seed M8.1 0x07).
  nlohmann::ordered_json kept = nlohmann::ordered_json::array();
  for (const KeptTensor &t : checkpoint->kept())
    kept.push_back({{"name", t.name},
                    {"kind", tensorKindName(t.kind)},
                    {"reason", t.reason}});
  input.report["not_quantized"] = std::move(kept);
  input.report["fallbacks"] = dispatch->fallbacks;

  progress.stage("export to " + o.output);
  auto written = exportArtifact(input, o.output, progress);
  if (!written)
    return fail(o, "export", written.message());
  progress.finish(std::to_string(written->manifest.files.size()) + " files");

  // The parity ladder on the reopened artifact; its result goes into the
  // report, which is published again (the shards keep their names: they
  // are content-addressed and unchanged).
  progress.stage("verify the reopened artifact");
  // A model that fails its own parity ladder (or whose ladder could not
  // finish) must not stay loadable: the manifest, the root of reachability,
  // is moved aside, with the report that says why still listed in it.
  auto withdraw = [&]() -> std::string {
    std::string manifest = o.output + "/manifest.json";
    std::string rejected = o.output + "/manifest.rejected.json";
    if (std::rename(manifest.c_str(), rejected.c_str()) != 0)
      return manifest + " could not be withdrawn: " + std::strerror(errno);
    return "";
  };
  LadderResult ladder;
  ExportInput again = input;
  Expected<artifact::WriteResult> republished =
      makeError("the ladder did not finish");
  try {
    ladder = runLadder(o.output);
    // Its result goes into the report, published again (the shards keep
    // their content-addressed names).
    input.report["parity"] = ladder.toJson();
    again = input;
    Progress silent(Progress::Mode::Quiet, 1);
    republished = exportArtifact(again, o.output, silent);
  } catch (const std::exception &e) {
    ladder.ok = false;
    republished = makeError("verifying the artifact: ", e.what());
  }
  if (!ladder.ok || !republished) {
    std::string why = withdraw();
    if (!republished)
      return fail(o, "verify",
                  republished.message() +
                      (why.empty() ? "; the artifact was withdrawn" : "; " + why));
    if (!why.empty())
      return fail(o, "verify", "the artifact failed verification and " + why);
  }
  progress.finish(ladder.ok ? "every level passed" : "FAILED");

  nlohmann::ordered_json result;
  result["ok"] = ladder.ok;
  result["artifact"] = o.output;
  result["linears"] = weights.size();
  result["ledger"] = again.report["ledger"];
  result["fallbacks"] = dispatch->fallbacks;
  result["parity"] = ladder.toJson();
  if (o.json) {
    std::cout << result.dump(2) << "\n";
  } else {
    std::cout << "compiled " << o.input << " -> " << o.output << "\n"
              << "  " << weights.size() << " linears, "
              << again.report["ledger"]["bits_per_weight"].get<double>()
              << " bits per weight (codes + qparams), "
              << dispatch->fallbacks << " fallbacks\n";
    for (const LevelResult &l : ladder.levels)
      std::cout << "  " << l.level << " " << l.name << ": "
                << (l.ok ? "ok" : "FAILED") << " - " << l.detail << "\n";
  }
  if (!ladder.ok && !o.json)
    std::cerr << "qtc compile: error: the artifact failed its parity ladder; "
                 "its manifest was withdrawn to "
              << o.output << "/manifest.rejected.json\n";
  return ladder.ok ? 0 : 1;
}

} // namespace qtensor::qtc
