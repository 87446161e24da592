//===- GraphBuilder.cpp - The model graph qtc compiles --------------------===//

#include "GraphBuilder.h"

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

#include <map>

namespace qtensor::compiler {

mlir::Type storedElementType(mlir::Builder &b, const SourceTensor &t) {
  switch (Checkpoint::storedPlainDType(t)) {
  case safetensors::DType::F16:
    return b.getF16Type();
  case safetensors::DType::BF16:
    return b.getBF16Type();
  case safetensors::DType::F64:
    return b.getF64Type();
  case safetensors::DType::F8_E5M2:
    return b.getType<mlir::Float8E5M2Type>();
  case safetensors::DType::F8_E4M3:
    return b.getType<mlir::Float8E4M3FNType>();
  default:
    return b.getF32Type();
  }
}

namespace {

/// y = x w^T as upstream linalg: a zero-filled [T, N] init and a matmul whose
/// B map reads the [N, K] weight as stored; it accumulates in the activation
/// type, as the framework's float linear does.
mlir::Value floatMatmul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                        mlir::Value w, mlir::RankedTensorType resultType) {
  mlir::Value rows = mlir::tensor::DimOp::create(b, loc, x, 0);
  mlir::Value empty = mlir::tensor::EmptyOp::create(
      b, loc, resultType.getShape(), resultType.getElementType(),
      mlir::ValueRange{rows});
  mlir::Value zero = mlir::arith::ConstantOp::create(
      b, loc, b.getFloatAttr(resultType.getElementType(), 0.0));
  mlir::Value init =
      mlir::linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  auto matmul = mlir::linalg::MatmulOp::create(
      b, loc, mlir::TypeRange{resultType}, mlir::ValueRange{x, w},
      mlir::ValueRange{init});
  mlir::AffineExpr m, n, k;
  mlir::bindDims(b.getContext(), m, n, k);
  auto map = [&](llvm::ArrayRef<mlir::AffineExpr> e) {
    return mlir::AffineMapAttr::get(
        mlir::AffineMap::get(3, 0, e, b.getContext()));
  };
  // The default maps are (m, k), (k, n), (m, n); B is [N, K] here.
  matmul->setAttr("indexing_maps",
                  b.getArrayAttr({map({m, k}), map({n, k}), map({m, n})}));
  return matmul.getResult(0);
}

} // namespace

mlir::Type activationType(mlir::Builder &b, FloatType t) {
  return t == FloatType::BF16  ? b.getBF16Type()
         : t == FloatType::F32 ? mlir::Type(b.getF32Type())
                               : mlir::Type(b.getF16Type());
}

void loadGraphDialects(mlir::MLIRContext &context) {
  context.loadDialect<mlir::qt::QTensorDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect, mlir::linalg::LinalgDialect,
                      mlir::tensor::TensorDialect>();
}

Expected<mlir::Value> emitLinear(mlir::OpBuilder &b, const GraphLinear &l,
                                 mlir::Value x,
                                 mlir::RankedTensorType resultType,
                                 mlir::Type element) {
  mlir::MLIRContext &context = *b.getContext();
  // Weight ops are named by the checkpoint; `loc` carries the name too so
  // diagnostics of later passes point at the tensor.
  mlir::Location wloc = mlir::NameLoc::get(b.getStringAttr(l.source->name));
  if (!l.logical && !l.mixed) {
    const SourceTensor &t = l.source->weight;
    mlir::Value w = mlir::qt::WeightOp::create(
        b, wloc, mlir::RankedTensorType::get(t.shape, storedElementType(b, t)),
        l.source->name);
    mlir::Value y = floatMatmul(b, wloc, x, w, resultType);
    if (l.hasBias) {
      // The bias broadcast over the rows, as the framework adds it.
      const SourceTensor &bt = *l.source->bias;
      mlir::Type stored = storedElementType(b, bt);
      mlir::Value bias = mlir::qt::WeightOp::create(
          b, wloc, mlir::RankedTensorType::get(bt.shape, stored), bt.name);
      // Added in the activation type, as the framework's float linear
      // does (an F32 bias of an f16 model is rounded here, in the graph).
      auto biasType = mlir::RankedTensorType::get(bt.shape, element);
      unsigned from = stored.getIntOrFloatBitWidth(),
               to = element.getIntOrFloatBitWidth();
      if (stored != element && from > to)
        bias = mlir::arith::TruncFOp::create(b, wloc, biasType, bias);
      else if (stored != element && from < to)
        bias = mlir::arith::ExtFOp::create(b, wloc, biasType, bias);
      else if (stored != element) // bf16 <-> f16: through f32
        bias = mlir::arith::TruncFOp::create(
            b, wloc, biasType,
            mlir::arith::ExtFOp::create(
                b, wloc, mlir::RankedTensorType::get(bt.shape, b.getF32Type()),
                bias));
      mlir::Value rows = mlir::tensor::DimOp::create(b, wloc, x, 0);
      mlir::Value empty = mlir::tensor::EmptyOp::create(
          b, wloc, resultType.getShape(), element, mlir::ValueRange{rows});
      mlir::Value wide = mlir::linalg::BroadcastOp::create(
                             b, wloc, bias, empty, llvm::ArrayRef<int64_t>{0})
                             ->getResult(0);
      y = mlir::arith::AddFOp::create(b, wloc, y, wide);
    }
    return y;
  }
  auto wtype = l.mixed ? mlir::qt::toType(&context, *l.mixed)
                       : mlir::qt::toType(&context, *l.logical);
  if (!wtype)
    return makeError("tensor ", l.source->name, ": ", wtype.message());
  mlir::Value w = mlir::qt::WeightOp::create(b, wloc, *wtype, l.source->name);
  mlir::Value bias;
  if (l.hasBias)
    bias = mlir::qt::WeightOp::create(
        b, wloc, mlir::RankedTensorType::get({l.source->n()}, element),
        l.source->bias->name);
  return mlir::qt::LinearOp::create(b, wloc, resultType, x, w, bias,
                                    b.getF32Type())
      .getResult();
}

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildModelGraph(mlir::MLIRContext &context, const ModelConfig &config,
                const std::vector<GraphLinear> &linears,
                FloatType elementType) {
  loadGraphDialects(context);
  mlir::OpBuilder b(&context);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);

  mlir::Type element = activationType(b, elementType);
  auto act = [&](int64_t width) {
    return mlir::RankedTensorType::get({mlir::ShapedType::kDynamic, width},
                                       element);
  };
  // The head's rows: its weight's N (GGUF files may not state the vocab).
  int64_t vocab = config.vocab;
  for (const GraphLinear &l : linears)
    if (l.source->role == "lm_head")
      vocab = l.source->n();
  // The head writes f32 logits, whatever the activations (the decoder keeps
  // the residual stream, the cache and the logits in f32).
  auto logitsType = mlir::RankedTensorType::get(
      {mlir::ShapedType::kDynamic, vocab}, b.getF32Type());
  // Results: the logits, then each layer's new K and V rows (what a decoder
  // writes to its KV cache), so no projection is dead.
  llvm::SmallVector<mlir::Type> results = {logitsType};
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
    return emitLinear(
        b, l, x, l.source->role == "lm_head" ? logitsType : act(l.source->n()),
        element);
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
  // The final norm's stand-in is the identity; the head gives the logits.
  QTENSOR_ASSIGN_OR_RETURN(mlir::Value logits, linear(-1, "lm_head", cur));
  llvm::SmallVector<mlir::Value> returned = {logits};
  returned.append(cacheRows);
  mlir::func::ReturnOp::create(b, loc, returned);
  if (mlir::failed(mlir::verify(*module)))
    return makeError("the generated graph does not verify (a qtc bug)");
  return module;
}

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildLinearsGraph(mlir::MLIRContext &context,
                  const std::vector<GraphLinear> &linears,
                  FloatType elementType) {
  loadGraphDialects(context);
  mlir::OpBuilder b(&context);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  mlir::Type element = activationType(b, elementType);
  auto act = [&](int64_t width) {
    return mlir::RankedTensorType::get({mlir::ShapedType::kDynamic, width},
                                       element);
  };
  llvm::SmallVector<mlir::Type> inputs, results;
  for (const GraphLinear &l : linears) {
    inputs.push_back(act(l.source->k()));
    results.push_back(act(l.source->n()));
  }
  b.setInsertionPointToEnd(module->getBody());
  auto fn = mlir::func::FuncOp::create(b, loc, "forward",
                                       b.getFunctionType(inputs, results));
  b.setInsertionPointToStart(fn.addEntryBlock());
  llvm::SmallVector<mlir::Value> returned;
  for (size_t i = 0; i < linears.size(); ++i) {
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value y,
                             emitLinear(b, linears[i], fn.getArgument(i),
                                        act(linears[i].source->n()), element));
    returned.push_back(y);
  }
  mlir::func::ReturnOp::create(b, loc, returned);
  if (mlir::failed(mlir::verify(*module)))
    return makeError("the generated graph does not verify (a qtc bug)");
  return module;
}

} // namespace qtensor::compiler
