//===- ModelSchema.h - The tensors an architecture requires -----*- C++ -*-===//
//
// Seed M8.9 0x05C: after the container is admissible, the loader checks the
// required tensor inventory, logical shapes and their consistency against
// the model schema of the declared architecture. For the llama family
// (llama, mistral, qwen2) that is, for layers 0..L-1, the seven block
// linears with consistent hidden (H), kv (KV) and intermediate (I) widths,
// the two norms per layer, the embedding and the final norm; the head may
// be tied (absent), plain, or quantized (a traced linear [vocab, H]). gemma3
// adds four norms per layer: post-attention and post-MLP [H], and per-head
// q and k norms [D], one head width D dividing both the q and kv widths.
//
// An artifact keeps its checkpoint's names: Hugging Face
// (model.layers.L.self_attn.q_proj.weight, model.embed_tokens.weight, ...)
// or GGUF (blk.L.attn_q.weight, token_embd.weight, ...), both from the one
// table in Models/TensorNames.h; which families have a schema is
// Models/Architecture.h's. The convention is
// decided from the names present; a mix of both is an error. Each block
// linear is either a traced quantized op or, when the compile excluded it
// from quantization, a plain 2-D float tensor [N, K] under its checkpoint
// name. A model with every linear kept in float is a valid schema (there
// is nothing to dispatch; the load plans 0 ops).
//
// An architecture without a schema here is checked generically (every
// quantized tensor a traced 2-D linear, done by the planner) and the result
// says so.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_MODELSCHEMA_H
#define QTENSOR_RUNTIME_MODELSCHEMA_H

#include "qtensor/Formats/Manifest.h"
#include "qtensor/Runtime/ArtifactMetadata.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qtensor::runtime {

enum class TensorNaming : uint8_t { HuggingFace, GGUF };
enum class HeadKind : uint8_t { Tied, Plain, Quantized };

struct SchemaCheck {
  bool known = false; ///< the architecture has a schema here
  /// "llama: 2 layers, H 64, KV 32, I 128, vocab 384" plus what differs
  /// from a fully quantized, untied Hugging Face checkpoint (", tied head",
  /// ", head quantized", ", 3 linears kept in float", ", gguf names").
  std::string summary;
  // The rest is set only when `known`.
  TensorNaming naming = TensorNaming::HuggingFace;
  int64_t layers = 0, hidden = 0, kv = 0, intermediate = 0, vocab = 0;
  HeadKind head = HeadKind::Tied;
  int64_t floatLinears = 0; ///< block linears stored plain (not quantized)
};

/// Checks the manifest and its op bindings (which hold each linear's whole
/// [N, K], also for sharded weights) against the architecture's schema.
Expected<SchemaCheck> checkModelSchema(const artifact::Manifest &m);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_MODELSCHEMA_H
