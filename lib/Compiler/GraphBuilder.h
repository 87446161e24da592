//===- GraphBuilder.h - The model graph qtc compiles ------------*- C++ -*-===//
//
// The graph of a checkpoint without a decoder program (DecoderGraph.h builds
// the whole decoder when there is one), and the pieces both share. Builds
// the graph contract (DESIGN.md) of a llama-family checkpoint: one
// `func.func @forward(%x: tensor<?xHxE>)` whose blocks hold the seven
// linears on `qtensor.weight` references, in the data flow of a decoder
// block, then the output head. A quantized linear is a `qtensor.linear`; a
// linear kept in float (excluded; the head by default) is a `linalg.matmul`
// on the plain weight as stored. The parts of a block that are not linears
// (attention, RMSNorm, SiLU) are stood in for by elementwise arith ops with
// the same operands, so placement and layout selection see the real shapes
// and dependencies; qtc runs and verifies the linears, not a full forward.
// The results are the logits and each layer's k and v projections (the
// rows a decoder appends to its KV cache), so nothing is dead code.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_GRAPHBUILDER_H
#define QTENSOR_LIB_COMPILER_GRAPHBUILDER_H

#include "Checkpoint.h"

#include "qtensor/Descriptor/Descriptor.h"
#include "qtensor/Descriptor/Mixed2416.h"
#include "qtensor/Support/Expected.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace qtensor::compiler {

/// One linear as the graph needs it.
struct GraphLinear {
  const SourceLinear *source = nullptr;
  /// The quantized weight's type; none: the linear is kept in float.
  std::optional<QuantizedTensorDescriptor> logical;
  bool hasBias = false;
  /// A mixed_2416 linear's descriptor (instead of `logical`).
  std::optional<Mixed2416Descriptor> mixed;
};

/// `linears`: every block linear (7 per layer, roles as Checkpoint names
/// them) and the head (role lm_head), quantized or not. Errors name the
/// linear whose descriptor has no IR spelling.
Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildModelGraph(mlir::MLIRContext &context, const ModelConfig &config,
                const std::vector<GraphLinear> &linears, FloatType elementType);

/// The dialects the graphs are built with.
void loadGraphDialects(mlir::MLIRContext &context);

/// The MLIR element type of activations in `t` (f16, bf16 or f32).
mlir::Type activationType(mlir::Builder &b, FloatType t);

/// The element type a plain tensor is stored with (Checkpoint's rule).
mlir::Type storedElementType(mlir::Builder &b, const SourceTensor &t);

/// One linear on the activations `x`: a `qtensor.linear` on the quantized
/// weight, or a `linalg.matmul` (and the bias, broadcast) on the plain one;
/// `element` is the activation type, `resultType` the [T, N] result.
Expected<mlir::Value> emitLinear(mlir::OpBuilder &b, const GraphLinear &l,
                                 mlir::Value x,
                                 mlir::RankedTensorType resultType,
                                 mlir::Type element);

/// A graph of independent linears (an ONNX model's quantized linears):
/// `func.func @forward` takes one [T, K] activation per linear and returns
/// each one's [T, N] result, in the order given.
Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildLinearsGraph(mlir::MLIRContext &context,
                  const std::vector<GraphLinear> &linears,
                  FloatType elementType);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_GRAPHBUILDER_H
