//===- EmbeddingTable.h - An untied embedding kept as its codes -*- C++ -*-===//
//
// A llama.cpp file stores the token embedding in a quantized type of its
// own (token_embd in Q4_0, Q4_K, Q6_K, ...), beside an untied head. Decoded
// to F32 it would be the largest tensor of a small model (a 128 K-token
// vocabulary at 2048 wide: 1 GiB against 147 MiB of Q4_K codes). It is kept
// instead as the file's codes, stored like a linear's weight in the
// decode_gemv layout (so the parity ladder's L1 and L2 prove them) but
// bound to no op (Manifest.h, TensorUse::Embedding), and the decoder
// program gathers its rows with the EmbedCodes kernel.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_EMBEDDINGTABLE_H
#define QTENSOR_LIB_COMPILER_EMBEDDINGTABLE_H

#include "Checkpoint.h"
#include "DecoderPlan.h"
#include "Export.h"
#include "Quantize.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace qtensor::compiler {

/// The program's embedding table as an export entry of its own codes, with
/// the plan and the graph pointed at it; none, with the reason in `why`,
/// when the table stays plain (it has no codes, tensor parallelism, a
/// format the embedding kernel does not read). `element` is the
/// activation dtype the linears use.
Expected<std::optional<ExportLinear>>
keepEmbeddingCodes(mlir::ModuleOp module, const Checkpoint &checkpoint,
                   DecoderPlan &plan, const QuantSpec &spec, FloatType element,
                   int64_t tp, std::string &why);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_EMBEDDINGTABLE_H
