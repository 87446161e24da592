//===- qopt.cpp - The qtensor optimizer driver ----------------------------===//
//
// mlir-opt with the qtensor dialect, its pipelines and a curated upstream
// list (qtensor::registerDialects / registerPasses).
//
//===----------------------------------------------------------------------===//

#include "qtensor/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  qtensor::registerDialects(registry);
  qtensor::registerPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "qtensor optimizer driver\n", registry));
}
