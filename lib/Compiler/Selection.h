//===- Selection.h - Which weights qtc compile quantizes --------*- C++ -*-===//
//
// `--exclude GLOB` and `--include GLOB`. By default every linear of the
// model is quantized and the embeddings, the norms and the output head are
// kept as stored (seed M8.1 0x07: the ledger must say which tensors it
// excludes). `--exclude` keeps matching linears in float; `--include` lifts
// a default exclusion. Only a linear can be quantized: an included
// embedding or norm is an error, not a silent no-op, and so is a pattern
// that matches no tensor (a typo would otherwise quantize everything).
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_SELECTION_H
#define QTENSOR_LIB_COMPILER_SELECTION_H

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Formats/GGMLTypes.h"
#include "qtensor/Kernels/Capability.h"
#include "qtensor/Support/Expected.h"

#include <string>
#include <vector>

namespace qtensor::compiler {

/// What a tensor is to the model, as the input's naming or graph says.
enum class TensorKind {
  Linear,    ///< a block linear, or any contraction weight of a module
  Head,      ///< the output head (lm_head / output): a linear
  Embedding, ///< a row lookup table
  Norm,      ///< a norm's scale (1-D)
  Other,     ///< anything else (kept as stored)
};

const char *tensorKindName(TensorKind kind);

/// The decision for one tensor, with the reason the report prints.
struct SelectionDecision {
  bool quantize = false;
  std::string reason; ///< "default: output head", "--exclude '*.down_proj*'"
  bool byDefault = false; ///< no --exclude or --include pattern decided it
};

class WeightSelection {
public:
  /// Patterns are fnmatch(3) globs over the whole tensor name (`*` crosses
  /// dots). Empty patterns are refused.
  static Expected<WeightSelection> create(std::vector<std::string> excludes,
                                          std::vector<std::string> includes);

  /// Decides for `name`. Errors: a pattern in both lists matches it, or an
  /// --include asks for a tensor that is not a linear.
  Expected<SelectionDecision> decide(const std::string &name, TensorKind kind);

  /// A bias stored with its linear: it follows the linear's decision. A
  /// pattern that selects biases only is refused by checkAllPatternsUsed.
  void noteBias(const std::string &name);

  /// After every tensor was decided: errors name each pattern that matched
  /// nothing (or only biases), with the input it was applied to.
  Status checkAllPatternsUsed(const std::string &input) const;

  /// `--quant keep`: a linear stored as a float (F32, F16, BF16) has no
  /// codes to keep and stays float (decideStored), so a float checkpoint
  /// compiles unquantized.
  void keepFloatWeights() { keepFloat = true; }
  /// `--quant keep --fallback allow`: a linear stored in a ggml type whose
  /// codes no kernel of the target reads (IQ types, Q2_K, Q3_K; on a GPU
  /// also the K-quants and Q5_x) is decoded and kept float, reported as
  /// such (decideStored).
  void decodeTypesWithoutKernels() { decodeNoKernel = true; }
  /// The compile's target (default host): which kept codes a kernel reads.
  Status setTarget(const std::string &target);

private:
  /// Whether a native kernel of the target reads `type`'s kept codes.
  bool targetReads(GGMLType type) const;
  /// Whether a native kernel of the target reads codes described so.
  bool targetReads(const AffineDescriptor &codes) const;

public:
  /// decide, then for a tensor stored as `dtype`: kept float under
  /// keepFloatWeights when it is a float; under keepFloatWeights an output
  /// head stored as codes a kernel reads (Q4_0, Q4_1, Q8_0) keeps them
  /// unless a pattern says otherwise: `keep` means as stored, and a GGUF
  /// head is read as stored by llama.cpp too.
  /// `storedCodes` describes the codes of a tensor that is not a ggml type
  /// (a GPTQ, AWQ or compressed-tensors linear).
  Expected<SelectionDecision>
  decideStored(const std::string &name, TensorKind kind,
               const std::string &dtype,
               const AffineDescriptor *storedCodes = nullptr);
  const std::vector<std::string> &excludes() const { return exclude; }
  const std::vector<std::string> &includes() const { return include; }

private:
  std::vector<std::string> exclude, include;
  bool keepFloat = false, decodeNoKernel = false;
  kernels::Target target{"host", kernels::Backend::Host, 0};
  std::vector<bool> excludeUsed, includeUsed;
  std::vector<std::string> excludeBias, includeBias; ///< a bias it matched
};

/// The default kind of a checkpoint tensor from its name alone (Hugging
/// Face and GGUF llama names): embeddings, norms and the head. Block
/// linears are found by the checkpoint reader, not here.
TensorKind kindFromName(const std::string &name);

/// The embedding tables of the common checkpoint namings, exactly
/// (`model.embed_tokens.weight`, GGUF `token_embd.weight`, GPT-2 `wte`):
/// a module's contraction weight with such a name is a tied head's table.
bool isEmbeddingName(const std::string &name);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_SELECTION_H
