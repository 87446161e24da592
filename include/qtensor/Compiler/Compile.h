//===- Compile.h - Checkpoint to verified artifact, a library ---*- C++ -*-===//
//
// The whole ahead-of-time compile behind one call: read a checkpoint (a
// Hugging Face style directory, a GGUF file, or an MLIR module with its
// weights), quantize or keep its linears, build the graph, run
// --qtensor-compile (place shards, select kernels and layouts), generate and
// lower the kernels, export the artifact transactionally, reopen it and run
// the parity ladder. `qtc compile` is flag parsing around this call.
//
//   qtensor::compiler::CompileRequest request;
//   request.input = "model/";  request.outputDir = "out/";
//   request.target = "host";
//   auto result = qtensor::compiler::compileArtifact(request);
//   if (!result) ... result.message() names the file, tensor or option ...
//   if (!result->verified) ... the manifest was withdrawn ...
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_COMPILER_COMPILE_H
#define QTENSOR_COMPILER_COMPILE_H

#include "qtensor/Kernels/Capability.h"
#include "qtensor/Support/Expected.h"
#include "qtensor/Support/HostCpu.h"
#include "qtensor/Support/Progress.h"
#include "qtensor/Verify/Ladder.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtensor::compiler {

/// What a tensor-parallel K-slice that cuts a quantization group does, of
/// the policies the exporter stores: refuse it, or move the cut to a group
/// boundary (qopt's qtensor-place-shards also places replicate-boundary and
/// repack, which change what a rank stores).
enum class GroupPolicyChoice : uint8_t { Error, Align };
const char *toString(GroupPolicyChoice p);
std::optional<GroupPolicyChoice> parseGroupPolicyChoice(const std::string &s);

struct CompileRequest {
  /// A directory with config.json and safetensors, a .gguf file, or an MLIR
  /// module (.mlir) whose weights are in `weights`.
  std::string input;
  /// The module's weights (.safetensors, .safetensors.index.json or .gguf);
  /// only with a module input.
  std::string weights;
  /// The artifact directory (written transactionally, manifest last).
  std::string outputDir;
  std::string target; ///< sm_80 | sm_90 | host
  std::string quant =
      "w4a16:g128"; ///< w4a16:gG[:sym|:asym] | w8a16[...] | keep
  kernels::PhaseChoice phase = kernels::PhaseChoice::Both;
  kernels::FallbackPolicy fallback = kernels::FallbackPolicy::Forbid;
  GroupPolicyChoice groupPolicy = GroupPolicyChoice::Error;
  /// fnmatch globs: linears kept in float / the head quantized.
  std::vector<std::string> excludes, includes;
  int64_t tp = 1; ///< tensor-parallel ranks, 1..64
  /// The CPU level of the host kernel library (Support/HostCpu.h): every
  /// host target's kernels, and the twins and model kernels a GPU
  /// artifact carries.
  HostCpuLevel hostCpu = defaultHostCpuLevel();
  /// The decoder's KV cache dtype: "f16", "f32", or "auto" (f16 when the
  /// activations are f16, as llama.cpp's default cache; f32 for f32 and
  /// bf16 activations, whose values an f16 cache might not hold).
  std::string kvCache = "auto";
  /// How the host's T = 1 linears take their activations: "int8" (per 32,
  /// as ggml's CPU matmuls: signed codes read by affine_gemm_host_xq8) or
  /// "float" (every kernel multiplies the activation dtype).
  std::string hostActivations = "int8";
  /// How much the last stage's parity ladder runs (L3 samples large ops
  /// unless exhaustive).
  verify::LadderOptions verification;
};

/// Checks every field of `request` that can be checked without reading the
/// input; the message says which option is wrong and what it accepts.
Status validateCompileRequest(const CompileRequest &request);

/// How long one stage took.
struct StageTiming {
  std::string key;
  double seconds = 0.0;
};

struct CompileResult {
  std::string artifactDir;
  /// Every level of the parity ladder passed. When false the artifact's
  /// manifest was withdrawn to manifest.rejected.json (nothing loadable is
  /// left) and `ladder` says which level failed.
  bool verified = false;
  verify::LadderResult ladder;
  /// report.json as published (with the ladder's results).
  nlohmann::ordered_json report;
  size_t linears = 0;    ///< quantized (or kept-code) linears
  int64_t fallbacks = 0; ///< (op, phase) pairs on the full-dequant fallback
  std::vector<StageTiming> stages;
  /// Warnings and notes the pipeline emitted (remarks excluded: the
  /// dispatch trace has them), one per line; empty when there were none.
  std::string diagnostics;
  /// Peak resident set size of the process at the end of the compile.
  uint64_t peakRssBytes = 0;
};

/// Compiles `request` into `request.outputDir`. An error (unreadable input,
/// a refused option, a pipeline or export failure) names the file, tensor
/// or field; a verification failure is a result with verified = false.
/// Progress goes to `progress` (NullProgress when none is given).
Expected<CompileResult> compileArtifact(const CompileRequest &request,
                                        ProgressSink *progress = nullptr);

} // namespace qtensor::compiler

#endif // QTENSOR_COMPILER_COMPILE_H
