//===- CompileCommand.cpp - `qtc compile` ---------------------------------===//
//
// Flag parsing, progress and printing around qtensor::compiler's
// compileArtifact (include/qtensor/Compiler/Compile.h), which does the work.
//
//===----------------------------------------------------------------------===//

#include "CompileCommand.h"

#include "CommandLine.h"
#include "Progress.h"

#include "qtensor/Compiler/Compile.h"

#include <nlohmann/json.hpp>

#include <iostream>

namespace qtensor::qtc {
namespace {

const char *kUsage =
    "usage: qtc compile INPUT --target sm_80|sm_90|host -o DIR\n"
    "           [--quant w4a16:gG[:sym|:asym] | w8a16[:gG][:sym|:asym] | "
    "w8a8[:gG|:gch][:sym|:asym][:a8sym|:a8asym] |\n"
    "            mxfp4 | nvfp4 | fp8 | mixed2416[:budget=B] | keep]\n"
    "           [--tp N] [--phase decode|prefill|both]\n"
    "           [--fallback forbid|warn|allow] [--group-policy error|align]\n"
    "           [--exclude GLOB[,GLOB...]] [--include GLOB[,GLOB...]]\n"
    "           [--weights FILE] [--host-cpu LEVEL] [--kv-cache auto|f16|f32]\n"
    "           [--host-activations int8|float]\n"
    "           [--exhaustive] [--quiet] [--json]\n"
    "  INPUT  a Hugging Face style directory (config.json + safetensors;\n"
    "         GPTQ, AWQ and compressed-tensors codes kept with --quant keep),\n"
    "         a GGUF file (ggml codes kept with --quant keep), an ONNX model\n"
    "         (.onnx: its MatMulNBits and DequantizeLinear->MatMul linears,\n"
    "         codes kept), or an MLIR module (.mlir) whose weights are\n"
    "         qtensor.weight references or external ml_program globals, with\n"
    "         --weights FILE\n"
    "  --weights     the module's weights: a .safetensors file, a\n"
    "                .safetensors.index.json, or a .gguf file\n"
    "  -o     the artifact directory (written transactionally: manifest last)\n"
    "  --quant       default w4a16:g128 (symmetric); mxfp4: E2M1 codes under\n"
    "                an e8m0 scale per 32; nvfp4: under an unsigned e4m3\n"
    "                scale per 16; fp8: E4M3 codes under a scale per output\n"
    "                channel; mixed2416: 2- and 4-bit groups of 64, 16-bit\n"
    "                outliers, two qparam levels, B bits per weight in all\n"
    "                (default 3; float linears only, tp 1); w8a8: w8a16's\n"
    "                weights (G may be 16), activations int8 per token at\n"
    "                run time (a8asym: u8 with a zero-point; tp 1)\n"
    "  --tp          tensor-parallel ranks (default 1)\n"
    "  --phase       which phases need a kernel (default both)\n"
    "  --fallback    full-dequant fallback policy (default forbid)\n"
    "  --exclude     keep the linears whose names match in float (fnmatch\n"
    "                globs over the whole name; repeatable)\n"
    "  --include     quantize what is excluded by default: the output head\n"
    "                (lm_head.weight, GGUF output.weight); embeddings and\n"
    "                norms are never quantized\n"
    "  --host-cpu    CPU level of the host kernels: generic, x86-64-v2,\n"
    "                x86-64-v3 (default on x86-64: AVX2, FMA), x86-64-v4\n"
    "                (AVX-512), x86-64-v4-vnni (and AVX-512 VNNI) or\n"
    "                x86-64-v4-amx (and AMX: int8 linears' prefill on tiles),\n"
    "                or native (the highest this machine runs, recorded as\n"
    "                that level); a CPU below it refuses the artifact\n"
    "  --kv-cache    the decoder's KV cache values (default auto: f16 when\n"
    "                the activations are f16, as llama.cpp's cache; else f32)\n"
    "  --host-activations  int8 (default): host linears with signed codes\n"
    "                quantize a single token's activations to int8 per 32\n"
    "                and multiply in integers, as llama.cpp's CPU backend;\n"
    "                float keeps them in the activation dtype\n"
    "  --exhaustive  verification runs every T on every op (L3 samples ops\n"
    "                of 2^22 weights or more by default; see qtc verify)\n"
    "  --json        print the result as one JSON object; progress as JSON\n"
    "                lines on stderr\n";

/// One of `allowed` into `out`, or what was expected.
CommandLine::Setter oneOf(std::string &out, std::vector<std::string> allowed,
                          std::string expected) {
  return [&out, allowed,
          expected](const std::string &v) -> std::optional<std::string> {
    for (const std::string &a : allowed)
      if (v == a) {
        out = v;
        return std::nullopt;
      }
    return expected;
  };
}

/// Parses argv into `request`; none when the compile should run, else the
/// exit status (usage printed).
std::optional<int> parse(const std::vector<std::string> &args,
                         compiler::CompileRequest &request, bool &quiet,
                         bool &json) {
  CommandLine cl("qtc compile", kUsage);
  auto list = [](std::vector<std::string> &out) {
    return [&out](const std::string &v) {
      appendCommaList(out, v);
      return std::optional<std::string>();
    };
  };
  cl.flag({"--quiet"}, quiet)
      .flag({"--json"}, json)
      .flag({"--exhaustive"}, request.verification.exhaustive)
      .option({"-o", "--output"}, "a directory", request.outputDir)
      .option({"--weights"}, "a file", request.weights)
      .option({"--quant"}, "a value", request.quant)
      .option({"--target"}, "a value",
              oneOf(request.target, {"sm_80", "sm_90", "host"},
                    "expected sm_80, sm_90 or host"))
      .option({"--phase"}, "a value",
              parsedInto(request.phase, &kernels::parsePhaseChoice,
                         "expected decode, prefill or both"))
      .option({"--fallback"}, "a value",
              parsedInto(request.fallback, &kernels::parseFallbackPolicy,
                         "expected forbid, warn or allow"))
      .option({"--group-policy"}, "a value",
              parsedInto(request.groupPolicy, &compiler::parseGroupPolicyChoice,
                         "the exporter supports error and align (replicate-"
                         "boundary and repack change what a rank stores; qopt "
                         "shows their placement)"))
      .option({"--tp"}, "a value",
              parsedInto(
                  request.tp,
                  [](const std::string &v) { return parseInteger(v, 1, 64); },
                  "expected an integer in [1, 64]"))
      .option(
          {"--host-cpu"}, "a value",
          parsedInto(
              request.hostCpu,
              [](const std::string &v) -> std::optional<HostCpuLevel> {
                // `native`: this machine's highest level, recorded as
                // that level (an artifact never says "native").
                if (v == "native")
                  return nativeHostCpuLevel();
                return parseHostCpuLevel(v);
              },
              std::string("expected native or one of ") + knownHostCpuLevels()))
      .option({"--kv-cache"}, "a value",
              oneOf(request.kvCache, {"auto", "f16", "f32"},
                    "expected auto, f16 or f32"))
      .option({"--host-activations"}, "a value",
              oneOf(request.hostActivations, {"int8", "float"},
                    "expected int8 or float"))
      .option({"--exclude"}, "a pattern", list(request.excludes))
      .option({"--include"}, "a pattern", list(request.includes))
      .positional(request.input, "missing INPUT");
  if (std::optional<int> status = cl.parse(args))
    return status;
  if (request.outputDir.empty())
    return cl.usageError("missing -o DIR");
  if (Status valid = compiler::validateCompileRequest(request); !valid)
    return cl.usageError(valid.message());
  return std::nullopt;
}

void printResult(const compiler::CompileRequest &request,
                 const compiler::CompileResult &result, bool json) {
  if (json) {
    nlohmann::ordered_json j;
    j["ok"] = result.verified;
    j["artifact"] = result.artifactDir;
    j["linears"] = result.linears;
    j["ledger"] = result.report["ledger"];
    if (result.report.contains("embedding"))
      j["embedding"] = result.report["embedding"];
    j["fallbacks"] = result.fallbacks;
    j["parity"] = result.ladder.toJson();
    nlohmann::ordered_json stages = nlohmann::ordered_json::object();
    for (const compiler::StageTiming &t : result.stages)
      stages[t.key] = t.seconds;
    j["stage_seconds"] = std::move(stages);
    j["peak_rss_bytes"] = result.peakRssBytes;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "compiled " << request.input << " -> " << result.artifactDir
            << "\n"
            << "  " << result.linears << " linears, "
            << result.report["ledger"]["bits_per_weight"].get<double>()
            << " bits per weight (codes + qparams), " << result.fallbacks
            << " fallbacks\n";
  // How the decoder program's embedding is stored, and why when in plain.
  const nlohmann::ordered_json &embedding =
      result.report.value("embedding", nlohmann::ordered_json::object());
  if (embedding.is_object() && embedding.contains("stored")) {
    const std::string stored = embedding.value("stored", "");
    std::cout << "  embedding " << embedding.value("tensor", "") << ": ";
    if (stored == "codes")
      std::cout << "its own codes, "
                << result.report["ledger"]["embedding_table"].value(
                       "bits_per_weight", 0.0)
                << " bits per weight\n";
    else if (stored == "head codes")
      std::cout << "the tied head's codes\n";
    else
      std::cout << "plain (" << embedding.value("reason", "") << ")\n";
  }
  for (const verify::LevelResult &l : result.ladder.levels)
    std::cout << "  " << l.toText() << "\n";
}

} // namespace

int runCompile(const std::vector<std::string> &args) {
  compiler::CompileRequest request;
  bool quiet = false, json = false;
  if (std::optional<int> status = parse(args, request, quiet, json))
    return *status;
  Progress progress(quiet  ? Progress::Mode::Quiet
                    : json ? Progress::Mode::Json
                           : Progress::Mode::Text);
  auto result = compiler::compileArtifact(request, &progress);
  if (!result)
    return reportFailure("qtc compile", json, progress.currentStage().c_str(),
                         result.message());
  if (!result->diagnostics.empty() && !quiet && !json)
    std::cerr << result->diagnostics;
  printResult(request, *result, json);
  if (!result->verified) {
    if (!json)
      std::cerr << "qtc compile: error: the artifact failed its parity "
                   "ladder; its manifest was withdrawn to "
                << result->artifactDir << "/manifest.rejected.json\n";
    return 1;
  }
  return 0;
}

} // namespace qtensor::qtc
