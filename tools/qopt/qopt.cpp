//===- qopt.cpp - The qtensor optimizer driver ----------------------------===//
//
// mlir-opt with the qtensor dialect, its pipelines and a curated upstream
// list (qtensor::registerDialects / registerPasses).
//
//===----------------------------------------------------------------------===//

#include "ToolLLVMErrors.h"
#include "ToolMemory.h"

#include "qtensor/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  // A memory or stack limit, or a fatal LLVM error, is one line and exit
  // status 1 rather than an abort with a stack dump (tools/common).
  qtensor::tools::setToolName("qopt");
  if (!qtensor::tools::prepareToolMemory())
    return 1;
  qtensor::tools::installLLVMErrorHandlers();
  mlir::DialectRegistry registry;
  qtensor::registerDialects(registry);
  qtensor::registerPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "qtensor optimizer driver\n", registry));
}
