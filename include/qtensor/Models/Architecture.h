//===- Architecture.h - The decoder families qtensor compiles ---*- C++ -*-===//
//
// The one table of decoder families (docs/model.md): which checkpoint
// format names each one, the GGUF architecture it is written as, how
// llama.cpp's graph for that name applies RoPE, which extra norms its
// blocks carry (qwen3's and gemma3's per-head q/k norms, gemma's output
// norms) and whether it fuses its projections (phi3). The checkpoint
// readers, the decoder program's
// validation, the GGUF exporter and the runtime's model schema all ask it;
// none keeps a list of its own. Tensor names are in Models/TensorNames.h.
// MLIR-free.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_MODELS_ARCHITECTURE_H
#define QTENSOR_MODELS_ARCHITECTURE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qtensor::models {

enum class Family : uint8_t {
  Llama,
  Mistral,
  Qwen2,
  Qwen3,
  Phi3,
  Gemma,
  Gemma2,
  Gemma3,
  Granite
};

/// gemma, gemma2 and gemma3 share a block: embeddings x sqrt(hidden),
/// RMSNorm by 1 + w, GeGLU with the tanh GELU.
inline bool isGemma(Family f) {
  return f == Family::Gemma || f == Family::Gemma2 || f == Family::Gemma3;
}

/// The two checkpoint namings qtensor reads (and keeps in its artifacts).
enum class Naming : uint8_t { HuggingFace, GGUF };
const char *toString(Naming n); ///< "Hugging Face", "GGUF"

struct Architecture {
  Family family;
  /// The name a decoder program and a manifest carry: "llama".
  std::string_view name;
  /// config.json's model_type reads as this family.
  bool fromHuggingFace;
  /// GGUF's general.architecture reads as this family.
  bool fromGGUF;
  /// The GGUF architecture the exporter writes (mistral: llama, which
  /// llama.cpp runs it as).
  std::string_view ggufName;
  /// llama.cpp's graph for `ggufName` rotates the NeoX halves (qwen2,
  /// gemma3); llama's pairs dimensions (2j, 2j+1), so a Hugging Face llama's
  /// q and k rows are permuted on the way to GGUF.
  bool ggufRotatesHalves;
  /// An RMSNorm of every q and k head, after the projections and before
  /// RoPE, in every block (qwen3, gemma3).
  bool qkNorm;
  /// RMSNorms of the attention and MLP outputs before their residual adds
  /// in every block (gemma2, gemma3; Models/TensorNames.h names them in
  /// both namings).
  bool sandwichNorms;
  /// The runtime checks an artifact of this family against the decoder
  /// schema (Runtime/ModelSchema.h).
  bool hasSchema;
  /// The checkpoint stores q, k and v as one tensor ([q + 2 kv, hidden]
  /// rows in that order: GGUF `attn_qkv`, Hugging Face
  /// `self_attn.qkv_proj`) and the gate and up projections as one (gate
  /// rows first: `ffn_up`, `mlp.gate_up_proj`), as phi3's do; the reader
  /// splits them by rows (lib/Compiler/FusedSplit.cpp).
  bool fusedProjections = false;
};

/// Every family, in a fixed order.
const std::vector<Architecture> &architectures();

/// The family named `name` (a program's or manifest's architecture), or
/// null.
const Architecture *findArchitecture(std::string_view name);

/// The family a checkpoint in `naming` declares as `name` (config.json's
/// model_type, GGUF's general.architecture), or null when that format's
/// reader does not take it.
const Architecture *architectureFromCheckpoint(Naming naming,
                                               std::string_view name);

/// "llama, mistral, qwen2": the names a checkpoint in `naming` may declare,
/// for errors.
std::string checkpointArchitectureList(Naming naming);

/// The q.k scale of llama.cpp's gemma graphs: 1/sqrt(head dim), but
/// 1/sqrt(hidden / heads) for the 27B models (gemma2: 46 layers, gemma3:
/// 62), as llama.cpp decides by model type.
double ggufGemmaQueryScale(Family family, int64_t layers, int64_t hidden,
                           int64_t heads, int64_t headDim);

/// "llama, mistral, qwen2, gemma3": every family's name, for errors.
std::string architectureList();

} // namespace qtensor::models

#endif // QTENSOR_MODELS_ARCHITECTURE_H
