//===- GraphBuilder.cpp - The model graph qtc compiles --------------------===//

#include "GraphBuilder.h"

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

#include <map>

namespace qtensor::qtc {

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildModelGraph(mlir::MLIRContext &context, const ModelConfig &config,
                const std::vector<GraphLinear> &linears,
                FloatType elementType) {
  context.loadDialect<mlir::qt::QTensorDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect>();
  mlir::OpBuilder b(&context);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);

  mlir::Type element = elementType == FloatType::BF16 ? b.getBF16Type()
                       : elementType == FloatType::F32
                           ? mlir::Type(b.getF32Type())
                           : mlir::Type(b.getF16Type());
  auto act = [&](int64_t width) {
    return mlir::RankedTensorType::get({mlir::ShapedType::kDynamic, width},
                                       element);
  };
  // Results: the last hidden state, then each layer's new K and V rows
  // (what a decoder writes to its KV cache), so no projection is dead.
  llvm::SmallVector<mlir::Type> results = {act(config.hidden)};
  for (int64_t layer = 0; layer < config.layers; ++layer)
    results.append({act(config.kvWidth()), act(config.kvWidth())});
  auto fnType = b.getFunctionType({act(config.hidden)}, results);
  b.setInsertionPointToEnd(module->getBody());
  auto fn = mlir::func::FuncOp::create(b, loc, "forward", fnType);
  b.setInsertionPointToStart(fn.addEntryBlock());

  // Each linear by (layer, role).
  std::map<std::pair<int64_t, std::string>, const GraphLinear *> byRole;
  for (const GraphLinear &l : linears)
    byRole[{l.source->layer, l.source->role}] = &l;

  auto linear = [&](int64_t layer, const char *role,
                    mlir::Value x) -> Expected<mlir::Value> {
    auto it = byRole.find({layer, role});
    if (it == byRole.end())
      return makeError("layer ", layer, " has no ", role);
    const GraphLinear &l = *it->second;
    auto wtype = mlir::qt::toType(&context, l.logical);
    if (!wtype)
      return makeError("tensor ", l.source->name, ": ", wtype.message());
    // Weight ops are named by the checkpoint; `loc` carries the name too so
    // diagnostics of later passes point at the tensor.
    mlir::Location wloc = mlir::NameLoc::get(b.getStringAttr(l.source->name));
    mlir::Value w =
        mlir::qt::WeightOp::create(b, wloc, *wtype, l.source->name);
    mlir::Value bias;
    if (l.hasBias)
      bias = mlir::qt::WeightOp::create(
          b, wloc,
          mlir::RankedTensorType::get({l.logical.shape[0]}, element),
          l.source->bias->name);
    return mlir::qt::LinearOp::create(b, wloc, act(l.logical.shape[0]), x, w,
                                      bias, b.getF32Type())
        .getResult();
  };

  mlir::Value cur = fn.getArgument(0);
  llvm::SmallVector<mlir::Value> cacheRows;
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value q, linear(layer, "q_proj", cur));
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value k, linear(layer, "k_proj", cur));
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value v, linear(layer, "v_proj", cur));
    // Attention stand-in: its output has q's width (k and v go to the
    // cache results).
    mlir::Value attn = q;
    cacheRows.append({k, v});
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value o, linear(layer, "o_proj", attn));
    mlir::Value res = mlir::arith::AddFOp::create(b, loc, cur, o);
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value g, linear(layer, "gate_proj", res));
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value u, linear(layer, "up_proj", res));
    mlir::Value gu = mlir::arith::MulFOp::create(b, loc, g, u);
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value d, linear(layer, "down_proj", gu));
    cur = mlir::arith::AddFOp::create(b, loc, res, d);
  }
  llvm::SmallVector<mlir::Value> returned = {cur};
  returned.append(cacheRows);
  mlir::func::ReturnOp::create(b, loc, returned);
  if (mlir::failed(mlir::verify(*module)))
    return makeError("the generated graph does not verify (a qtc bug)");
  return module;
}

} // namespace qtensor::qtc
