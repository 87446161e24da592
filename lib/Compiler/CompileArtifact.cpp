//===- CompileArtifact.cpp - compileArtifact: checkpoint to artifact ------===//
//
// checkpoint -> quantize -> graph -> --qtensor-compile (place shards, select
// kernels and layouts) -> kernels -> export -> reopen and run the parity
// ladder -> publish the report with the ladder's results. Each stage is its
// own file; this one runs them in order and times them.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Compiler/Compile.h"

#include "Checkpoint.h"
#include "CompileKernels.h"
#include "CompilerSupport.h"

#include "DecoderGraph.h"
#include "DecoderPlan.h"
#include "Dispatch.h"
#include "EmbeddingTable.h"
#include "Export.h"
#include "GraphBuilder.h"
#include "ModuleInput.h"
#include "Quantize.h"
#include "qtensor/Compiler/TrustedCode.h"

#include "qtensor/Formats/GGUFWriter.h"
#include "qtensor/InitAll.h"
#include "qtensor/Pipelines/Pipelines.h"
#include "qtensor/Support/ExitCleanup.h"
#include "qtensor/Support/MappedFile.h"
#include "qtensor/Support/Sha256.h"
#include "qtensor/Tokenizer/HuggingFace.h"
#include "qtensor/Tokenizer/Tokenizer.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include "QTensorRevision.h" // generated: QTENSOR_SOURCE_REVISION

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

namespace qtensor::compiler {
namespace {

Expected<std::vector<uint8_t>> readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError("cannot read ", path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

/// Peak resident set size of this process (ru_maxrss is in KiB on Linux).
uint64_t peakResidentBytes() {
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

/// Forwards stage events to the caller's sink and records how long each
/// stage took (the report's `timings`).
struct StageClock {
  ProgressSink &sink;
  std::vector<StageTiming> timings;
  std::chrono::steady_clock::time_point started;
  bool running = false;
  static constexpr int kStages = 6;

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         started)
        .count();
  }
  void stage(const std::string &key, const std::string &title) {
    timings.push_back({key, 0.0});
    started = std::chrono::steady_clock::now();
    running = true;
    sink.stage(key, title, static_cast<int>(timings.size()), kStages);
  }
  void finish(const std::string &summary = "") {
    timings.back().seconds = elapsed();
    running = false;
    sink.finish(summary);
  }
  /// Every stage's seconds; the one still running counts up to now (the
  /// report is published again at the end of "verify", after the ladder).
  nlohmann::ordered_json toJson() const {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (size_t i = 0; i < timings.size(); ++i)
      j[timings[i].key + "_seconds"] =
          running && i + 1 == timings.size() ? elapsed() : timings[i].seconds;
    return j;
  }
};

/// The tokenizer the model was trained with, for the manifest's
/// tokenizer_sha256 (the Tokenizer's canonical digest) and the artifact's
/// tokenizer file (`file`: its tokenizer.ggml.* metadata as a vocab-only
/// GGUF file): a GGUF file's metadata, or the tokenizer.json beside a
/// Hugging Face checkpoint translated into the same metadata
/// (Tokenizer/HuggingFace.h). The report says which, or why there is none;
/// a tokenizer that cannot be read is reported, not an error (the linears
/// compile without it, and the model runs from token ids).
Expected<nlohmann::ordered_json>
describeTokenizer(const Checkpoint &checkpoint, const std::string &input,
                  const std::string &weights,
                  std::optional<std::string> &digest,
                  std::optional<std::vector<uint8_t>> &file) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  std::string source;
  Expected<std::vector<uint8_t>> bytes = makeError("no tokenizer");
  if (const GGUFFile *gguf = checkpoint.gguf()) {
    source = weights.empty() ? input : weights;
    if (!gguf->findMetadata("tokenizer.ggml.model")) {
      j["none"] = source + " has no tokenizer.ggml.model metadata";
      return j;
    }
    bytes = writeMetadataOnlyGGUF(*gguf, "tokenizer.");
  } else {
    source = input + "/tokenizer.json";
    if (checkpoint.format() != "safetensors" ||
        !std::filesystem::is_regular_file(source)) {
      j["none"] = "no tokenizer.json beside the checkpoint";
      return j;
    }
    bytes = ggufFromHuggingFaceFiles(input);
  }
  if (!bytes) {
    j["error"] = bytes.message();
    return j;
  }
  auto gguf = GGUFFile::fromBuffer(bytes->data(), bytes->size(), source);
  auto tokenizer = gguf ? Tokenizer::fromGGUF(*gguf, source)
                        : Expected<Tokenizer>(gguf.error());
  if (!tokenizer) {
    j["error"] = tokenizer.message();
    return j;
  }
  digest = tokenizer->sha256();
  j["source"] = source;
  j["model"] = std::string(tokenizerModelName(tokenizer->model()));
  if (!tokenizer->preName().empty())
    j["pre"] = tokenizer->preName();
  j["vocab_size"] = tokenizer->vocabSize();
  j["sha256"] = *digest;
  file = bytes.take();
  return j;
}

} // namespace

const char *toString(GroupPolicyChoice p) {
  return p == GroupPolicyChoice::Align ? "align" : "error";
}

std::optional<GroupPolicyChoice> parseGroupPolicyChoice(const std::string &s) {
  if (s == "error")
    return GroupPolicyChoice::Error;
  if (s == "align")
    return GroupPolicyChoice::Align;
  return std::nullopt;
}

Status validateCompileRequest(const CompileRequest &request) {
  // The messages are the ones qtc prints for the same flags.
  auto oneOf = [](const char *option, const std::string &value,
                  std::initializer_list<const char *> allowed,
                  const char *expected) -> Status {
    for (const char *a : allowed)
      if (value == a)
        return Status::ok();
    return makeError(option, " ", value, ": ", expected);
  };
  if (request.input.empty())
    return makeError("missing INPUT (a checkpoint directory, a GGUF file or "
                     "an MLIR module)");
  if (request.outputDir.empty())
    return makeError("missing -o DIR");
  if (request.target.empty())
    return makeError("--target (missing): expected sm_80, sm_90 or host");
  QTENSOR_TRY(oneOf("--target", request.target, {"sm_80", "sm_90", "host"},
                    "expected sm_80, sm_90 or host"));
  if (request.tp < 1 || request.tp > 64)
    return makeError("--tp ", request.tp, ": expected an integer in [1, 64]");
  QTENSOR_TRY(oneOf("--kv-cache", request.kvCache, {"auto", "f16", "f32"},
                    "expected auto, f16 or f32"));
  QTENSOR_TRY(oneOf("--host-activations", request.hostActivations,
                    {"int8", "float"}, "expected int8 or float"));
  if (isModulePath(request.input) && request.weights.empty())
    return makeError("an MLIR module INPUT needs --weights FILE");
  if (!isModulePath(request.input) && !request.weights.empty())
    return makeError("--weights is for an MLIR module INPUT (.mlir); ",
                     request.input, " holds its own weights");
  auto spec = parseQuantSpec(request.quant);
  if (!spec)
    return spec.error();
  // The W8A8 kernels run a linear whole (topology single).
  if (spec->activationQuant != kernels::ActivationQuant::None && request.tp > 1)
    return makeError("--quant ", spec->text, " runs every linear whole on ",
                     "one rank (the W8A8 kernels take topology single); --tp ",
                     request.tp, " would slice them (use --tp 1)");
  if (auto selection =
          WeightSelection::create(request.excludes, request.includes);
      !selection)
    return selection.error();
  return Status::ok();
}

Expected<CompileResult> compileArtifact(const CompileRequest &request,
                                        ProgressSink *progress) {
  QTENSOR_TRY(validateCompileRequest(request));
  NullProgress none;
  ProgressSink &sink = progress ? *progress : none;
  StageClock clock{sink, {}, {}};
  CompileResult result;

  clock.stage("read", "read " + request.input);
  auto spec = parseQuantSpec(request.quant);
  if (!spec)
    return spec.error();
  auto selection = WeightSelection::create(request.excludes, request.includes);
  if (!selection)
    return selection.error();
  if (spec->keep)
    selection->keepFloatWeights();
  if (spec->keep && request.fallback == kernels::FallbackPolicy::Allow)
    selection->decodeTypesWithoutKernels();
  QTENSOR_TRY(selection->setTarget(request.target));
  mlir::DialectRegistry registry;
  registerDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false); // messages name the tensor instead
  context.loadAllAvailableDialects();
  // An MLIR module brings its own graph; a checkpoint gets one built.
  mlir::OwningOpRef<mlir::ModuleOp> userModule;
  Expected<Checkpoint> checkpoint = makeError("no input read");
  if (isModulePath(request.input)) {
    auto parsed = parseModelModule(context, request.input);
    if (!parsed)
      return makeError(parsed.message());
    userModule = parsed.take();
    auto references = collectReferences(*userModule, request.input);
    if (!references)
      return makeError(references.message());
    checkpoint = Checkpoint::openForModule(request.input, request.weights,
                                           *references, *selection);
  } else if (isOnnxPath(request.input)) {
    checkpoint = Checkpoint::openOnnx(request.input, *selection);
  } else {
    checkpoint = Checkpoint::open(request.input, *selection);
  }
  if (!checkpoint)
    return makeError(checkpoint.message());
  const ModelConfig &config = checkpoint->config();
  // Every linear float (--quant keep on a float checkpoint, or all
  // excluded) is an unquantized model when the program can run it.
  const bool floatModel =
      checkpoint->linears().empty() && !userModule && checkpoint->decoder();
  if (checkpoint->linears().empty() && !floatModel)
    return makeError(
        userModule ? "nothing to quantize: no weight of " + request.input +
                         " is selected (a linear is a 2-D weight a "
                         "contraction reads; " +
                         std::to_string(checkpoint->kept().size()) +
                         " weights kept as stored)"
                   : "nothing to quantize: every linear of " + request.input +
                         " is excluded");
  std::string unreferenced =
      checkpoint->unreferenced().empty()
          ? std::string()
          : ", " + std::to_string(checkpoint->unreferenced().size()) +
                " tensors of " + request.weights + " unreferenced";
  if (userModule)
    clock.finish(
        "MLIR module: " + std::to_string(checkpoint->linears().size()) +
        " linears to quantize, " + std::to_string(checkpoint->kept().size()) +
        " other weights (biases, tensors kept as stored)" + unreferenced);
  else if (checkpoint->format() == "onnx")
    clock.finish(checkpoint->quantization() + ": " +
                 std::to_string(checkpoint->linears().size()) +
                 " quantized linears with their codes, " +
                 std::to_string(checkpoint->floatLinears().size()) +
                 " kept in float, " +
                 std::to_string(checkpoint->unreferenced().size()) +
                 " other initializers not compiled");
  else
    clock.finish(checkpoint->format() + ", " + config.architecture + ", " +
                 std::to_string(config.layers) + " layers, " +
                 std::to_string(checkpoint->linears().size()) +
                 " linears to quantize, " +
                 std::to_string(checkpoint->floatLinears().size()) +
                 " kept in float" +
                 (checkpoint->leftOut().empty()
                      ? std::string()
                      : ", the language model: " +
                            std::to_string(checkpoint->leftOut().size()) +
                            " vision tensors left out"));

  // Activations (and reconstruction) in bf16 for a bf16 checkpoint, else
  // f16; a module declares its own.
  FloatType element = FloatType::F16;
  const std::vector<SourceLinear> &anyLinears = checkpoint->linears().empty()
                                                    ? checkpoint->floatLinears()
                                                    : checkpoint->linears();
  if (!anyLinears.empty() && anyLinears[0].weight.dtype == "BF16")
    element = FloatType::BF16;
  // A packed checkpoint's activations are in its scales' dtype.
  if (!anyLinears.empty() && anyLinears[0].weight.packed &&
      anyLinears[0].weight.packed->descriptor.descriptor.scaleType ==
          FloatType::BF16)
    element = FloatType::BF16;
  // An unquantized model keeps its activations in f32 (no kernel needs
  // f16 there, and models like gemma3 overflow f16 between norms).
  if (floatModel)
    element = FloatType::F32;

  // Each linear's logical descriptor, planned without reading a value: the
  // graph and the pipeline need only these, and the weights are quantized
  // one at a time as they are exported (memory follows the largest one).
  clock.stage("plan", "plan (" + spec->text + ")");
  std::vector<QuantizedTensorDescriptor> planned;
  // Under --quant mixed2416, a float linear's mixed_2416 descriptor (its
  // `planned` entry then holds nothing).
  std::vector<std::optional<Mixed2416Descriptor>> plannedMixed;
  planned.reserve(checkpoint->linears().size());
  size_t keptCodes = 0, mixedLinears = 0; // GGUF codes: what the file had
  for (const SourceLinear &l : checkpoint->linears()) {
    const FloatType type = l.elementType.value_or(element);
    QTENSOR_ASSIGN_OR_RETURN(std::optional<Mixed2416Descriptor> mixed,
                             describeMixed2416Linear(l, *spec, type));
    if (mixed) {
      if (userModule)
        return makeError("tensor ", l.name, ": --quant mixed2416 compiles ",
                         "a checkpoint's linears; an MLIR module's are not "
                         "formed over mixed_2416 weights yet");
      // Its streams are per tensor (a CSR over rows, a map over groups):
      // slicing them over ranks is not built.
      if (request.tp > 1)
        return makeError("tensor ", l.name, ": --quant mixed2416 stores a ",
                         "mixed_2416 tensor whole, on one rank; --tp ",
                         request.tp, " would slice it (use --tp 1)");
      planned.emplace_back();
      plannedMixed.push_back(std::move(mixed));
      ++mixedLinears;
      continue;
    }
    auto d = describeLinear(l, *spec, type);
    if (!d)
      return d.error();
    planned.push_back(d.take());
    plannedMixed.emplace_back();
    keptCodes += keepsStoredCodes(l);
  }
  clock.finish(std::to_string(planned.size()) + " linears, " +
               std::to_string(keptCodes) + " keeping their stored codes" +
               (mixedLinears
                    ? ", " + std::to_string(mixedLinears) + " mixed_2416"
                    : std::string()));

  clock.stage("graph", "graph and --qtensor-compile (target " + request.target +
                           ", tp " + std::to_string(request.tp) + ", phase " +
                           kernels::toString(request.phase) + ", fallback " +
                           kernels::toString(request.fallback) + ")");
  // The whole decoder, when the checkpoint declares one (docs/model.md):
  // the graph is then the decoder, and its program is read back from the
  // final module.
  std::string programGap;
  std::optional<DecoderPlan> decoder;
  if (request.tp > 1) {
    programGap = "--tp " + std::to_string(request.tp) +
                 ": the decoder program runs one whole model per process; "
                 "running it over tensor-parallel ranks is not built yet";
  } else if (!userModule) {
    const FloatType kvCache = request.kvCache == "f16"    ? FloatType::F16
                              : request.kvCache == "f32"  ? FloatType::F32
                              : element == FloatType::F16 ? FloatType::F16
                                                          : FloatType::F32;
    auto plannedDecoder =
        planDecoder(*checkpoint, element, kvCache, programGap);
    if (!plannedDecoder)
      return makeError(plannedDecoder.message());
    decoder = plannedDecoder.take();
  } else {
    programGap = "an MLIR module brings its own graph, not a decoder program";
  }

  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<std::string> widened; // f16 accumulators compiled as f32
  if (userModule) {
    auto formed =
        formLinears(*userModule, request.input, checkpoint->linears(), planned);
    if (!formed)
      return makeError(formed.message());
    widened = formed->widenedAccumulators;
    for (const auto &[linear, bias] : formed->biases) {
      auto renamed = formed->storedBiasNames.find(linear);
      if (Status st = checkpoint->attachBias(
              linear, bias,
              renamed == formed->storedBiasNames.end() ? bias
                                                       : renamed->second);
          !st)
        return makeError(st.message());
      // The export reads the attached bias with its linear.
    }
    module = std::move(userModule);
  } else {
    std::vector<GraphLinear> graphLinears;
    for (size_t i = 0; i < planned.size(); ++i)
      graphLinears.push_back(
          {&checkpoint->linears()[i],
           plannedMixed[i]
               ? std::nullopt
               : std::optional<QuantizedTensorDescriptor>(planned[i]),
           checkpoint->linears()[i].bias.has_value(), plannedMixed[i]});
    for (const SourceLinear &l : checkpoint->floatLinears())
      graphLinears.push_back(
          {&l, std::nullopt, l.bias.has_value(), std::nullopt});
    auto built = checkpoint->format() == "onnx"
                     ? buildLinearsGraph(context, graphLinears, element)
                 : decoder
                     ? buildDecoderGraph(context, *checkpoint, decoder->program,
                                         decoder->kernels, graphLinears)
                     : buildModelGraph(context, config, graphLinears, element);
    if (!built)
      return makeError(built.message());
    module = built.take();
  }

  ScratchDir scratch;
  if (scratch.path.empty())
    return makeError("cannot create a scratch directory");
  CompileOptions pipeline;
  pipeline.target = request.target;
  pipeline.tp = request.tp;
  pipeline.phase = request.phase;
  pipeline.fallback = request.fallback;
  pipeline.int8Activations = request.hostActivations == "int8";
  pipeline.activationQuant = spec->activationQuant;
  pipeline.groupPolicy = request.groupPolicy == GroupPolicyChoice::Align
                             ? mlir::qt::GroupPolicy::Align
                             : mlir::qt::GroupPolicy::Error;
  pipeline.traceFile = scratch.path + "/dispatch-trace.json";
  // The kernels are generated into the module by the pipeline's last step
  // (qtensor-instantiate-kernels, with a GPU target's host twins), and the
  // kernel stage lowers and reads them from there.
  pipeline.lower = mlir::qt::KernelLowering::None;
  pipeline.hostTwins = request.target != "host";
  pipeline.hostCpu = toString(request.hostCpu);
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
      return makeError("--qtensor-compile failed:\n" + diagnostics);
  }
  result.diagnostics = diagnostics;
  auto dispatch =
      readDispatch(*module, checkpoint->linears(), spec->activationQuant);
  if (!dispatch)
    return makeError(dispatch.message());
  clock.finish(std::to_string(dispatch->fallbacks) + " fallbacks" +
               (widened.empty()
                    ? std::string()
                    : ", " + std::to_string(widened.size()) +
                          " f16/bf16 accumulators compiled as f32"));

  // A tied head kept as byte codes is also the embedding: its rows are
  // gathered from the codes, and the decoded table is not stored.
  std::map<std::string, std::string> notStored;
  if (decoder)
    for (size_t i = 0; i < checkpoint->linears().size(); ++i) {
      const SourceLinear &l = checkpoint->linears()[i];
      if (l.role != "lm_head" || plannedMixed[i])
        continue;
      QuantizedTensorDescriptor head = planned[i];
      head.layout = dispatch->linears[i].layout;
      std::string why;
      std::optional<std::string> table =
          embedFromHeadCodes(*decoder, l, head, why);
      if (table) {
        // The gathering kernel embedFromHeadCodes planned.
        auto gather =
            std::find_if(decoder->kernels.begin(), decoder->kernels.end(),
                         [&](const ModelKernelSpec &k) {
                           return k.symbol() == decoder->program.kernels.embed;
                         });
        if (gather == decoder->kernels.end())
          return makeError("the planned embedding kernel ",
                           decoder->program.kernels.embed,
                           " has no spec (a qtc bug)");
        QTENSOR_TRY(
            gatherEmbeddingFrom(*module, decoder->program.embed, *gather));
        notStored[*table] =
            "not stored: the decoder program reads the embedding's rows "
            "from the tied head " +
            l.name + "'s codes";
      }
    }

  // An untied embedding with codes of its own keeps them
  // (EmbeddingTable.h); the report says which way it went, and why.
  std::optional<ExportLinear> embeddingTable;
  nlohmann::ordered_json embeddingReport;
  if (decoder) {
    const std::string table = decoder->program.embed;
    embeddingReport["tensor"] = table;
    if (!notStored.empty()) { // embedFromHeadCodes took the head's codes
      embeddingReport["stored"] = "head codes";
    } else {
      std::string why;
      QTENSOR_ASSIGN_OR_RETURN(
          embeddingTable, keepEmbeddingCodes(*module, *checkpoint, *decoder,
                                             *spec, element, request.tp, why));
      embeddingReport["stored"] = embeddingTable ? "codes" : "plain";
      if (!embeddingTable)
        embeddingReport["reason"] = why;
    }
    embeddingReport["kernel"] = decoder->program.kernels.embed;
  }

  clock.stage("kernels", "kernels");
  // The model kernels are the ones the final graph declares.
  std::vector<ModelKernelSpec> modelKernels;
  if (decoder) {
    QTENSOR_ASSIGN_OR_RETURN(modelKernels, graphModelKernels(*module));
  }
  auto kernels = compileKernels(context, *module, *dispatch, request.target,
                                modelKernels, scratch.path, request.hostCpu,
                                sink, spec->activationQuant);
  if (!kernels)
    return makeError(kernels.message());
  clock.finish(
      std::to_string(kernels->files.size()) + " kernel files" +
      (decoder ? ", " + std::to_string(modelKernels.size()) + " model kernels"
               : std::string()));

  // The graph as compiled: placement, dispatch and kernel instances
  // (`qtensor.kernels`) included; the kernels themselves are files now.
  std::string graph;
  {
    llvm::raw_string_ostream os(graph);
    module->print(os);
  }

  ExportInput input;
  input.checkpoint = &*checkpoint;
  input.spec = *spec;
  input.scratchDir = scratch.path;
  input.notStored = notStored;
  input.tp = request.tp;
  for (size_t i = 0; i < planned.size(); ++i)
    input.linears.push_back({&checkpoint->linears()[i],
                             artifact::TensorUse::Linear, nullptr, planned[i],
                             dispatch->linears[i].placement,
                             dispatch->linears[i].layout, plannedMixed[i]});
  if (embeddingTable) { // stored with the weights, not as a plain tensor
    input.notStored[embeddingTable->source->name] =
        "stored as its checkpoint's codes";
    input.linears.push_back(*embeddingTable);
  }
  input.files.push_back({"graph.mlir", artifact::FileRole::Graph,
                         std::vector<uint8_t>(graph.begin(), graph.end())});
  auto trace = readAll(pipeline.traceFile);
  if (!trace)
    return makeError("the pipeline wrote no dispatch trace: " +
                     trace.message());
  input.files.push_back(
      {"dispatch-trace.json", artifact::FileRole::Trace, trace.take()});
  for (ExportFile &f : kernels->files)
    input.files.push_back(std::move(f));
  input.kernels = kernels->entries;
  for (const LinearDispatch &d : dispatch->linears) {
    input.bindings.push_back(d.binding);
    input.bindings.back().fallbackPolicy = request.fallback;
  }
  input.model.architecture = config.architecture;
  input.model.name = config.name.empty() ? "model" : config.name;
  // Kept GGUF codes are whatever the file had, not what --quant says.
  input.quantization.family =
      planned.empty()
          ? "float"
          : (keptCodes == planned.size()
                 ? "kept"
                 : (keptCodes      ? "mixed"
                    : mixedLinears ? "mixed_2416"
                                   : "affine_w" + std::to_string(spec->bits) +
                                         (spec->activationQuant !=
                                                  kernels::ActivationQuant::None
                                              ? "a8"
                                              : "a16")));
  input.quantization.config = {
      {"quant", spec->text},
      {"target", request.target},
      {"phase", kernels::toString(request.phase)},
      {"fallback", kernels::toString(request.fallback)},
      {"host_activations", request.hostActivations},
      {"group_policy", toString(request.groupPolicy)},
      {"activation", element == FloatType::BF16 ? "bf16" : "f16"}};
  // What L5 re-admits the w8a8 kernels with; absent for every other form.
  if (spec->activationQuant != kernels::ActivationQuant::None)
    input.quantization.config["activation_quant"] =
        kernels::toString(spec->activationQuant);
  // The source's digest, hashed since the checkpoint opened (beside the
  // stages above); the report below takes it from here.
  QTENSOR_ASSIGN_OR_RETURN(input.provenance.sourceCheckpointSha256,
                           checkpoint->sha256());
  input.provenance.converterName = "qtc";
  // The commit the compiler was built from ("-dirty" with local changes,
  // "unknown" outside git); the release is in createdBy.
  input.provenance.converterRevision = QTENSOR_SOURCE_REVISION;
  input.provenance.createdBy = "qtc compile " QTENSOR_VERSION_STRING;
  std::optional<std::vector<uint8_t>> tokenizerFile;
  QTENSOR_ASSIGN_OR_RETURN(
      input.report["tokenizer"],
      describeTokenizer(*checkpoint, request.input, request.weights,
                        input.model.tokenizerSha256, tokenizerFile));
  if (decoder) {
    // The program the runtime runs is the final graph's.
    QTENSOR_ASSIGN_OR_RETURN(decoder->program, exportDecoderProgram(*module));
    decoder->program.kernelFile = kernels->modelKernelFile;
    decoder->program.hostCpu = request.hostCpu;
    // The tokenizer travels as tokenizer.* metadata in a GGUF file of its
    // own, read back with the same reader (GGUFWriter.h).
    if (tokenizerFile) {
      input.files.push_back({kTokenizerFileName, artifact::FileRole::Tokenizer,
                             std::move(*tokenizerFile)});
      decoder->program.tokenizerFile = kTokenizerFileName;
    }
    input.program = decoder->program;
    input.report["program"] = {
        {"architecture", decoder->program.config.architecture},
        {"layers", decoder->program.config.layers},
        {"model_kernels", modelKernels.size()},
        {"tokenizer", decoder->program.tokenizerFile.has_value()}};
  } else {
    input.report["program"] = {{"none", programGap}};
  }
  input.report["report_version"] = 1;
  input.report["source"] = {
      {"path", request.input},
      {"format", checkpoint->format()},
      {"sha256", input.provenance.sourceCheckpointSha256}};
  if (!checkpoint->quantization().empty())
    input.report["source"]["quantization_config"] = checkpoint->quantization();
  if (!request.weights.empty()) {
    input.report["source"]["weights"] = request.weights;
    input.report["source"]["unreferenced"] = checkpoint->unreferenced();
    input.report["widened_accumulators"] = widened;
  }
  input.report["options"] = input.quantization.config;
  input.report["options"]["tp"] = request.tp;
  input.report["options"]["exclude"] = request.excludes;
  input.report["options"]["include"] = request.includes;
  // Every stored tensor that is not quantized, and why (seed M8.1 0x07).
  nlohmann::ordered_json kept = nlohmann::ordered_json::array();
  for (const KeptTensor &t : checkpoint->kept()) {
    if (embeddingTable && t.name == embeddingTable->source->name)
      continue; // quantized: its codes are kept
    auto omitted = notStored.find(t.name);
    kept.push_back({{"name", t.name},
                    {"kind", tensorKindName(t.kind)},
                    {"reason", omitted == notStored.end()
                                   ? t.reason
                                   : t.reason + "; " + omitted->second}});
  }
  input.report["not_quantized"] = std::move(kept);
  if (decoder)
    input.report["embedding"] = std::move(embeddingReport);
  input.report["fallbacks"] = dispatch->fallbacks;

  // A model that fails its own parity ladder (or whose ladder could not
  // finish) must not stay loadable: the manifest, the root of reachability,
  // is moved aside, with the report that says why still listed in it.
  const std::string manifestPath = request.outputDir + "/manifest.json";
  const std::string rejectedPath =
      request.outputDir + "/manifest.rejected.json";
  auto withdraw = [&]() -> std::string {
    if (std::rename(manifestPath.c_str(), rejectedPath.c_str()) != 0)
      return manifestPath + " could not be withdrawn: " + std::strerror(errno);
    return "";
  };
  // From just before the first publish until the ladder's verdict is
  // published, a process that dies (out of memory, a fatal LLVM error,
  // SIGINT/SIGTERM) withdraws the manifest too: an unverified artifact is
  // never left loadable behind an error. Armed by the writer right before
  // its publishing rename, so a signal that comes earlier leaves a
  // previous artifact in place.
  ExitCleanup withdrawOnAbnormalExit;
  bool published = false;
  input.beforePublish = [&] {
    withdrawOnAbnormalExit =
        ExitCleanup::renameFile(manifestPath, rejectedPath);
  };
  input.afterPublish = [&] { published = true; };

  // Each linear is read, quantized, packed, hashed and spooled before the
  // next one is read; the shards are then written from the spool.
  clock.stage("export", "quantize, pack and export to " + request.outputDir);
  auto written = exportArtifact(input, request.outputDir, sink);
  input.beforePublish = nullptr;
  input.afterPublish = nullptr;
  if (!written) {
    // Published but not durable (the only failure after the publish):
    // not an artifact to leave loadable either. A failure before it left
    // the previous artifact, which stays.
    withdrawOnAbnormalExit.release();
    if (published) {
      std::string why = withdraw();
      return makeError(written.message() + (why.empty()
                                                ? "; the artifact was withdrawn"
                                                : "; " + why));
    }
    return makeError(written.message());
  }
  clock.finish(std::to_string(written->manifest.files.size()) + " files");

  // The parity ladder on the reopened artifact; its result goes into the
  // report, which is published again (the shards keep their names: they
  // are content-addressed and unchanged).
  clock.stage("verify", "verify the reopened artifact");
  verify::LadderResult ladder;
  ExportInput again = input;
  Expected<artifact::WriteResult> republished =
      makeError("the ladder did not finish");
  try {
    // L3 and L4 run this installation's rebuild of the kernels the
    // artifact records, as `qtc verify` does, never the written files.
    verify::LadderOptions verification = request.verification;
    if (!verification.code.rebuild)
      installTrustedCodeBuilders(verification.code);
    if (!verification.progress)
      verification.progress = &sink;
    // L4's quantization error: the float weights each quantized linear was
    // made from; none where the checkpoint held codes.
    if (!verification.sourceWeights)
      verification.sourceWeights = [&](const std::string &tensor)
          -> Expected<std::optional<std::vector<float>>> {
        for (const SourceLinear &l : checkpoint->linears()) {
          if (l.name != tensor)
            continue;
          if (keepsStoredCodes(l))
            return std::optional<std::vector<float>>();
          QTENSOR_ASSIGN_OR_RETURN(std::vector<float> w,
                                   checkpoint->readFloat(l.weight));
          checkpoint->releaseSource(l.weight);
          return std::optional<std::vector<float>>(std::move(w));
        }
        return std::optional<std::vector<float>>();
      };
    ladder = verify::runLadder(request.outputDir, verification);
    // Its result goes into the report, published again (the shards keep
    // their content-addressed names).
    input.report["parity"] = ladder.toJson();
    input.report["timings"] = clock.toJson();
    input.report["peak_rss_bytes"] = peakResidentBytes();
    again = input;
    NullProgress silent;
    republished = exportArtifact(again, request.outputDir, silent);
  } catch (const std::exception &e) {
    ladder.ok = false;
    republished = makeError("verifying the artifact: ", e.what());
  }
  withdrawOnAbnormalExit.release();
  if (!ladder.ok || !republished) {
    std::string why = withdraw();
    if (!republished)
      return makeError(
          republished.message() +
          (why.empty() ? "; the artifact was withdrawn" : "; " + why));
    if (!why.empty())
      return makeError("the artifact failed verification and " + why);
  }
  clock.finish(ladder.ok ? "every level passed" : "FAILED");

  result.artifactDir = request.outputDir;
  result.verified = ladder.ok;
  result.ladder = std::move(ladder);
  result.report = std::move(again.report);
  result.linears = planned.size();
  result.fallbacks = dispatch->fallbacks;
  result.stages = clock.timings;
  result.peakRssBytes = peakResidentBytes();
  return result;
}

} // namespace qtensor::compiler
