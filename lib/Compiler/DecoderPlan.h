//===- DecoderPlan.h - The decoder program of a checkpoint ------*- C++ -*-===//
//
// From the checkpoint's decoder config and its tensors (which linears are
// quantized, which stay float, the stored dtypes of the plain ones), the
// decoder program (DecoderProgram.h) and the model kernels it calls
// (ModelKernels.h). File references are the names the export adds; the
// writer resolves them to the published names.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_DECODERPLAN_H
#define QTENSOR_LIB_COMPILER_DECODERPLAN_H

#include "Checkpoint.h"

#include "qtensor/Conversion/ModelKernels.h"
#include "qtensor/Formats/DecoderProgram.h"

#include <optional>
#include <string>
#include <vector>

namespace qtensor::compiler {

inline constexpr const char *kTokenizerFileName = "tokenizer.gguf";
inline constexpr const char *kProgramFileName = "program.json";

struct DecoderPlan {
  artifact::DecoderProgram program;
  std::vector<ModelKernelSpec> kernels;
};

/// The plan, or none with `gap` saying why the artifact will not be a
/// runnable model (a checkpoint without a decoder config, a plain tensor
/// of another dtype). `activation` is the quantized linears' activation
/// and output dtype, `kvCache` the KV cache's (f32 or f16).
Expected<std::optional<DecoderPlan>> planDecoder(const Checkpoint &checkpoint,
                                                 FloatType activation,
                                                 FloatType kvCache,
                                                 std::string &gap);

/// A tied head kept as codes the embedding kernel reads (EmbedCodes): the
/// program gathers the embedding's rows from the head's stored codes, so
/// the decoded table need not be stored. `head` is the head as stored (its
/// kernel layout). Returns the embedding tensor the program no longer reads
/// (the plain table the checkpoint holds), or none, with the reason in
/// `why`, when the head cannot serve.
std::optional<std::string>
embedFromHeadCodes(DecoderPlan &plan, const SourceLinear &headSource,
                   const QuantizedTensorDescriptor &head, std::string &why);

/// An untied embedding table that keeps its checkpoint's codes (a GGUF
/// file's token_embd in Q4_0 or Q4_K, say): the program gathers its rows
/// from those codes, stored as `table` says (a decode_gemv layout), so the
/// table is not decoded to F32. False, with the reason in `why`, when the
/// embedding kernel cannot read them; the plan is then unchanged.
bool embedFromTableCodes(DecoderPlan &plan,
                         const QuantizedTensorDescriptor &table,
                         std::string &why);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_DECODERPLAN_H
