//===- ModelSchema.h - The tensors an architecture requires -----*- C++ -*-===//
//
// Seed M8.9 0x05C: after the container is admissible, the loader checks the
// required tensor inventory, logical shapes and their consistency against
// the model schema of the declared architecture. For the llama family
// (llama, mistral, qwen2: one naming) that is, for layers 0..L-1, the seven
// quantized linears with consistent hidden (H), kv (KV) and intermediate
// (I) widths, the two norms per layer, the embedding and the final norm
// (the head may be tied). An architecture without a schema here is checked
// generically (every quantized tensor a traced 2-D linear, done by the
// planner) and the result says so.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_RUNTIME_MODELSCHEMA_H
#define QTENSOR_RUNTIME_MODELSCHEMA_H

#include "qtensor/Formats/Manifest.h"
#include "qtensor/Runtime/ArtifactMetadata.h"

#include <string>
#include <vector>

namespace qtensor::runtime {

struct SchemaCheck {
  bool known = false;  ///< the architecture has a schema here
  std::string summary; ///< "llama: 2 layers, H 64, KV 32, I 128"
};

/// Checks the manifest and the trace (which holds each linear's whole
/// [N, K], also for sharded weights) against the architecture's schema.
Expected<SchemaCheck> checkModelSchema(const artifact::Manifest &m,
                                       const std::vector<TraceEntry> &trace);

} // namespace qtensor::runtime

#endif // QTENSOR_RUNTIME_MODELSCHEMA_H
