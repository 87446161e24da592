//===- ModuleInput.h - An MLIR module as qtc compile's input ----*- C++ -*-===//
//
// `qtc compile MODEL.mlir --weights FILE`: a module whose weights are
// references by name, either `qtensor.weight "name" : tensor<NxKxf16>` or
// the upstream form, an external `ml_program.global` read with
// `ml_program.global_load_const` (rewritten to `qtensor.weight` on parse).
// A weight the module quantizes (`!quant.uniform`: such a global, or a
// function argument named by `{qtensor.weight = "NAME"}`) is its codes in
// the file and its qparams in the type: qtensor-import runs on parse and
// makes it a qtensor.assemble, which the compile keeps as it is.
// The linears are whatever the module computes with them: any contraction
// `qtensor-fuse-linear` recognizes (linalg.matmul with a transposed or
// transposed-map weight, batch_matmul of a broadcast weight, the equivalent
// linalg.generic). qtc gives each selected weight its quantized type behind
// a `qtensor.dequantize`, lets fuse-linear form the `qtensor.linear` ops,
// and refuses a selected weight that did not end up in one.
//
//===----------------------------------------------------------------------===//
#ifndef QTENSOR_LIB_COMPILER_MODULEINPUT_H
#define QTENSOR_LIB_COMPILER_MODULEINPUT_H

#include "Checkpoint.h"
#include "Quantize.h"

#include "qtensor/Support/Expected.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace qtensor::compiler {

/// "file:line:col" where the location has one (through a NameLoc), else
/// the location as MLIR prints it.
std::string locationText(mlir::Location loc);

/// True for a path qtc compile reads as an MLIR module (.mlir, .mlirbc).
bool isModulePath(const std::string &path);

/// Parses and verifies `path` (at most 1 GiB), rewrites external
/// ml_program globals to qtensor.weight, and returns the module with one
/// reference per weight name. Errors carry file:line:col.
Expected<mlir::OwningOpRef<mlir::ModuleOp>>
parseModelModule(mlir::MLIRContext &context, const std::string &path);

/// The weights `module` references, one per name; the types of all
/// references to one name must agree.
Expected<std::vector<ModuleReference>>
collectReferences(mlir::ModuleOp module, const std::string &path);

/// What forming the linears found.
struct FormedLinears {
  /// Per linear name, the weight its linear adds as bias (absent: none).
  std::map<std::string, std::string> biases;
  /// Per linear name, the name its bias is stored (and now referenced in
  /// the graph) under when the module's name differs from the one the
  /// runtime looks up (runtime::biasTensorName).
  std::map<std::string, std::string> storedBiasNames;
  /// Linears declared with an f16/bf16 accumulator (a matmul into an f16
  /// init, as frameworks export it) that qtc compiles with f32
  /// accumulation, the only one its kernels have: more accurate, never
  /// less. Reported, not hidden.
  std::vector<std::string> widenedAccumulators;
};

/// Gives each weight of `linears` its quantized type behind a
/// qtensor.dequantize, runs qtensor-fuse-linear, and checks that every one
/// of them now feeds only qtensor.linear ops.
Expected<FormedLinears>
formLinears(mlir::ModuleOp module, const std::string &path,
            const std::vector<SourceLinear> &linears,
            const std::vector<QuantizedTensorDescriptor> &planned);

} // namespace qtensor::compiler

#endif // QTENSOR_LIB_COMPILER_MODULEINPUT_H
