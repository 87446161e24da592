//===- DecoderGraph.cpp - The whole decoder as the graph ------------------===//

#include "DecoderGraph.h"

#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

#include <map>

namespace qtensor::compiler {
namespace {

using artifact::DecoderProgram;
using artifact::ProgramLayer;
using artifact::ProgramLinear;
using nlohmann::json;

constexpr llvm::StringLiteral kCInterface = "_mlir_ciface_";

/// The config as an attribute: objects, arrays, strings, integers and
/// floats of the JSON spelling, so one parser reads both.
mlir::Attribute toAttr(mlir::Builder &b, const json &j) {
  if (j.is_object()) {
    llvm::SmallVector<mlir::NamedAttribute> entries;
    for (const auto &[key, value] : j.items())
      entries.push_back(b.getNamedAttr(key, toAttr(b, value)));
    return b.getDictionaryAttr(entries);
  }
  if (j.is_array()) {
    llvm::SmallVector<mlir::Attribute> values;
    for (const json &v : j)
      values.push_back(toAttr(b, v));
    return b.getArrayAttr(values);
  }
  if (j.is_string())
    return b.getStringAttr(j.get<std::string>());
  if (j.is_boolean())
    return b.getBoolAttr(j.get<bool>());
  if (j.is_number_integer())
    return b.getI64IntegerAttr(j.get<int64_t>());
  return b.getF64FloatAttr(j.get<double>());
}

Expected<json> toJson(mlir::Attribute a, const std::string &where) {
  if (auto dict = llvm::dyn_cast<mlir::DictionaryAttr>(a)) {
    json j = json::object();
    for (mlir::NamedAttribute e : dict) {
      QTENSOR_ASSIGN_OR_RETURN(
          json v, toJson(e.getValue(), where + "." + e.getName().str()));
      j[e.getName().str()] = std::move(v);
    }
    return j;
  }
  if (auto array = llvm::dyn_cast<mlir::ArrayAttr>(a)) {
    json j = json::array();
    for (mlir::Attribute e : array) {
      QTENSOR_ASSIGN_OR_RETURN(json v, toJson(e, where));
      j.push_back(std::move(v));
    }
    return j;
  }
  if (auto s = llvm::dyn_cast<mlir::StringAttr>(a))
    return json(s.str());
  if (auto flag = llvm::dyn_cast<mlir::BoolAttr>(a))
    return json(flag.getValue());
  if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(a))
    return json(i.getInt());
  if (auto f = llvm::dyn_cast<mlir::FloatAttr>(a))
    return json(f.getValueAsDouble());
  return makeError(where, ": expected a dictionary, array, string, bool, "
                          "integer or float attribute");
}

/// The private declaration of a model kernel, with its spec.
mlir::func::FuncOp declare(mlir::OpBuilder &b, mlir::Location loc,
                           const ModelKernelSpec &spec,
                           mlir::FunctionType type) {
  auto fn = mlir::func::FuncOp::create(b, loc, spec.name(), type);
  fn.setPrivate();
  fn->setAttr(kModelKernelAttr, toAttr(b, toJson(spec)));
  return fn;
}

/// Emits the ops of the decoder, in the schedule's order.
class Builder {
public:
  Builder(mlir::MLIRContext &context, const Checkpoint &checkpoint,
          const DecoderProgram &program,
          const std::vector<ModelKernelSpec> &kernels,
          const std::vector<GraphLinear> &linears)
      : b(&context), checkpoint(checkpoint), program(program) {
    for (const ModelKernelSpec &k : kernels)
      specs.emplace(k.symbol(), k);
    for (const GraphLinear &l : linears)
      if (l.logical || l.mixed)
        quantized[l.source->name] = &l;
  }

  Expected<mlir::OwningOpRef<mlir::ModuleOp>> build() {
    loadGraphDialects(*b.getContext());
    const artifact::DecoderConfig &c = program.config;
    mlir::Location loc = b.getUnknownLoc();
    module = mlir::ModuleOp::create(loc);
    act = activationType(b, program.activation);
    auto ids = mlir::RankedTensorType::get({mlir::ShapedType::kDynamic},
                                           b.getI32Type());
    cacheType = rowsOf(c.kvWidth(), activationType(b, program.kvCache));
    llvm::SmallVector<mlir::Type> inputs = {ids, ids}, results;
    for (int64_t l = 0; l < c.layers; ++l)
      inputs.append({cacheType, cacheType});
    results.push_back(
        mlir::RankedTensorType::get({1}, b.getI32Type())); // next token
    results.push_back(rowsOf(c.vocab, b.getF32Type()));    // logits
    results.append(inputs.begin() + 2, inputs.end());
    // LongRoPE: whether this forward rotates with the long divisors (the
    // runtime decides by its positions, DecoderConfig::usesLongRope).
    const bool longRope = !c.ropeFreqFactorsLong.empty();
    if (longRope)
      inputs.push_back(b.getI1Type());
    b.setInsertionPointToEnd(module->getBody());
    auto fn = mlir::func::FuncOp::create(b, loc, "forward",
                                         b.getFunctionType(inputs, results));
    fn->setAttr(
        kDecoderAttr,
        b.getDictionaryAttr(
            {b.getNamedAttr("config",
                            toAttr(b, artifact::decoderConfigToJson(c))),
             b.getNamedAttr("activation",
                            b.getStringAttr(toString(program.activation))),
             b.getNamedAttr("kv_cache",
                            b.getStringAttr(toString(program.kvCache)))}));
    body = fn;
    b.setInsertionPointToStart(fn.addEntryBlock());
    mlir::Value pos = fn.getArgument(1);

    QTENSOR_ASSIGN_OR_RETURN(mlir::Value table, plainWeight(program.embed));
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value h,
                             call(program.kernels.embed, "embed", -1,
                                  {fn.getArgument(0), table},
                                  rowsOf(c.hidden, b.getF32Type())));
    llvm::SmallVector<mlir::Value> caches;
    for (int64_t l = 0; l < c.layers; ++l) {
      const ProgramLayer &layer = program.layers[size_t(l)];
      mlir::Value kCache = fn.getArgument(unsigned(2 + 2 * l));
      mlir::Value vCache = fn.getArgument(unsigned(3 + 2 * l));
      QTENSOR_ASSIGN_OR_RETURN(
          mlir::Value x,
          norm(program.kernels.norm, "attn_norm", l, h, layer.attnNorm, act));
      QTENSOR_ASSIGN_OR_RETURN(mlir::Value q,
                               linear(layer.q, "q", l, x, c.qWidth(), act));
      QTENSOR_ASSIGN_OR_RETURN(mlir::Value k,
                               linear(layer.k, "k", l, x, c.kvWidth(), act));
      QTENSOR_ASSIGN_OR_RETURN(mlir::Value v,
                               linear(layer.v, "v", l, x, c.kvWidth(), act));
      if (layer.qNorm) {
        QTENSOR_ASSIGN_OR_RETURN(q, headNorm("q_norm", l, q, *layer.qNorm));
        QTENSOR_ASSIGN_OR_RETURN(k, headNorm("k_norm", l, k, *layer.kNorm));
      }
      QTENSOR_ASSIGN_OR_RETURN(mlir::Value qr,
                               call(layer.ropeQ, "rope_q", l, {q, pos},
                                    rowsOf(c.qWidth(), b.getF32Type())));
      const mlir::Value kIn = kCache;
      QTENSOR_ASSIGN_OR_RETURN(
          kCache, call(layer.ropeK, "rope_k", l, {k, pos, kIn}, cacheType));
      if (longRope) {
        if (!layer.ropeQLong || !layer.ropeKLong)
          return makeError("layer ", l,
                           " has no long RoPE kernels (a qtc "
                           "bug)");
        mlir::Value isLong = fn.getArgument(unsigned(2 + 2 * c.layers));
        QTENSOR_ASSIGN_OR_RETURN(mlir::Value qLong,
                                 call(*layer.ropeQLong, "rope_q_long", l,
                                      {q, pos},
                                      rowsOf(c.qWidth(), b.getF32Type())));
        QTENSOR_ASSIGN_OR_RETURN(
            mlir::Value kLong,
            call(*layer.ropeKLong, "rope_k_long", l, {k, pos, kIn}, cacheType));
        qr = mlir::arith::SelectOp::create(b, loc, isLong, qLong, qr);
        kCache = mlir::arith::SelectOp::create(b, loc, isLong, kLong, kCache);
      }
      QTENSOR_ASSIGN_OR_RETURN(vCache, call(program.kernels.storeV, "store_v",
                                            l, {v, pos, vCache}, cacheType));
      caches.append({kCache, vCache});
      QTENSOR_ASSIGN_OR_RETURN(mlir::Value a, call(layer.attention, "attention",
                                                   l, {qr, kCache, vCache, pos},
                                                   rowsOf(c.qWidth(), act)));
      QTENSOR_ASSIGN_OR_RETURN(mlir::Value o,
                               linear(layer.o, "o", l, a, c.hidden, act));
      if (layer.postAttnNorm) {
        QTENSOR_ASSIGN_OR_RETURN(o, norm(*program.kernels.outputNorm,
                                         "post_attention_norm", l, o,
                                         *layer.postAttnNorm, act));
      }
      QTENSOR_ASSIGN_OR_RETURN(h, call(program.kernels.residualAdd,
                                       "residual_add", l, {h, o},
                                       rowsOf(c.hidden, b.getF32Type())));
      QTENSOR_ASSIGN_OR_RETURN(
          x, norm(program.kernels.norm, "ffn_norm", l, h, layer.ffnNorm, act));
      QTENSOR_ASSIGN_OR_RETURN(
          mlir::Value g, linear(layer.gate, "gate", l, x, c.intermediate, act));
      QTENSOR_ASSIGN_OR_RETURN(
          mlir::Value u, linear(layer.up, "up", l, x, c.intermediate, act));
      QTENSOR_ASSIGN_OR_RETURN(mlir::Value m,
                               call(program.kernels.gateMul, "gate_mul", l,
                                    {g, u}, rowsOf(c.intermediate, act)));
      QTENSOR_ASSIGN_OR_RETURN(mlir::Value d,
                               linear(layer.down, "down", l, m, c.hidden, act));
      if (layer.postFfnNorm) {
        QTENSOR_ASSIGN_OR_RETURN(d, norm(*program.kernels.outputNorm,
                                         "post_ffn_norm", l, d,
                                         *layer.postFfnNorm, act));
      }
      QTENSOR_ASSIGN_OR_RETURN(h, call(program.kernels.residualAdd,
                                       "residual_add", l, {h, d},
                                       rowsOf(c.hidden, b.getF32Type())));
    }
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value x,
                             norm(program.kernels.finalNorm, "final_norm", -1,
                                  h, program.finalNorm, act));
    QTENSOR_ASSIGN_OR_RETURN(
        mlir::Value logits,
        linear(program.head, "head", -1, x, c.vocab, b.getF32Type()));
    if (program.kernels.finalSoftcap) {
      QTENSOR_ASSIGN_OR_RETURN(logits, call(*program.kernels.finalSoftcap,
                                            "final_softcap", -1, {logits},
                                            logits.getType()));
    }
    if (program.kernels.logitScale) {
      QTENSOR_ASSIGN_OR_RETURN(logits,
                               call(*program.kernels.logitScale, "logit_scale",
                                    -1, {logits}, logits.getType()));
    }
    QTENSOR_ASSIGN_OR_RETURN(
        mlir::Value next,
        call(program.kernels.argmax, "argmax", -1, {logits}, results[0]));
    llvm::SmallVector<mlir::Value> returned = {next, logits};
    returned.append(caches);
    mlir::func::ReturnOp::create(b, loc, returned);
    if (mlir::failed(mlir::verify(*module)))
      return makeError("the generated decoder graph does not verify (a qtc "
                       "bug)");
    return std::move(module);
  }

private:
  mlir::RankedTensorType rowsOf(int64_t width, mlir::Type element) {
    return mlir::RankedTensorType::get({mlir::ShapedType::kDynamic, width},
                                       element);
  }

  void mark(mlir::Operation *op, const char *part, int64_t layer) {
    op->setAttr(kPartAttr, b.getStringAttr(part));
    if (layer >= 0)
      op->setAttr(kLayerAttr, b.getI64IntegerAttr(layer));
  }

  Expected<mlir::Value> plainWeight(const std::string &name) {
    for (const SourceTensor &t : checkpoint.others())
      if (t.name == name)
        return mlir::qt::WeightOp::create(
                   b, mlir::NameLoc::get(b.getStringAttr(name)),
                   mlir::RankedTensorType::get(t.shape,
                                               storedElementType(b, t)),
                   name)
            .getResult();
    return makeError("the decoder reads ", name,
                     ", which is not a plain tensor of the checkpoint");
  }

  /// A call of the model kernel `symbol`, declared on first use with this
  /// call's types; a later call with other types is a qtc bug.
  Expected<mlir::Value> call(const std::string &symbol, const char *part,
                             int64_t layer, llvm::ArrayRef<mlir::Value> args,
                             mlir::Type result) {
    auto spec = specs.find(symbol);
    if (spec == specs.end())
      return makeError("model kernel ", symbol, " has no spec (a qtc bug)");
    const std::string name = spec->second.name();
    llvm::SmallVector<mlir::Type> argTypes;
    for (mlir::Value v : args)
      argTypes.push_back(v.getType());
    auto type = b.getFunctionType(argTypes, result);
    auto callee = module->lookupSymbol<mlir::func::FuncOp>(name);
    if (!callee) {
      mlir::OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(body);
      callee = declare(b, b.getUnknownLoc(), spec->second, type);
    } else if (callee.getFunctionType() != type) {
      return makeError("model kernel ", name,
                       " is called with two signatures "
                       "(a qtc bug)");
    }
    auto op = mlir::func::CallOp::create(b, b.getUnknownLoc(), callee, args);
    mark(op, part, layer);
    return op.getResult(0);
  }

  Expected<mlir::Value> norm(const std::string &symbol, const char *part,
                             int64_t layer, mlir::Value x,
                             const std::string &weight, mlir::Type out) {
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value w, plainWeight(weight));
    auto width = mlir::cast<mlir::RankedTensorType>(x.getType()).getDimSize(1);
    return call(symbol, part, layer, {x, w}, rowsOf(width, out));
  }

  /// The per-head norm runs on q's and k's rows of heads alike: its
  /// declaration takes any width.
  Expected<mlir::Value> headNorm(const char *part, int64_t layer, mlir::Value x,
                                 const std::string &weight) {
    QTENSOR_ASSIGN_OR_RETURN(mlir::Value w, plainWeight(weight));
    auto type = mlir::cast<mlir::RankedTensorType>(x.getType());
    auto anyWidth = mlir::RankedTensorType::get(
        {mlir::ShapedType::kDynamic, mlir::ShapedType::kDynamic}, act);
    mlir::Value in =
        mlir::tensor::CastOp::create(b, b.getUnknownLoc(), anyWidth, x);
    QTENSOR_ASSIGN_OR_RETURN(
        mlir::Value y,
        call(*program.kernels.headNorm, part, layer, {in, w}, anyWidth));
    return mlir::tensor::CastOp::create(b, b.getUnknownLoc(), type, y)
        .getResult();
  }

  /// A quantized linear (the graph's qtensor.linear) or a float one (a
  /// call of its kernel on the plain weight).
  Expected<mlir::Value> linear(const ProgramLinear &l, const char *part,
                               int64_t layer, mlir::Value x, int64_t n,
                               mlir::Type out) {
    if (l.kernel) {
      QTENSOR_ASSIGN_OR_RETURN(mlir::Value w, plainWeight(l.tensor));
      llvm::SmallVector<mlir::Value, 3> args = {x, w};
      if (l.bias) {
        QTENSOR_ASSIGN_OR_RETURN(mlir::Value bias, plainWeight(*l.bias));
        args.push_back(bias);
      }
      return call(*l.kernel, part, layer, args, rowsOf(n, out));
    }
    auto it = quantized.find(l.tensor);
    if (it == quantized.end())
      return makeError("the decoder's ", part, " linear ", l.tensor,
                       " is not a quantized linear of the graph");
    if (it->second->source->n() != n)
      return makeError("the decoder's ", part, " linear ", l.tensor, " has ",
                       it->second->source->n(), " rows, the config implies ",
                       n);
    QTENSOR_ASSIGN_OR_RETURN(
        mlir::Value y, emitLinear(b, *it->second, x, rowsOf(n, out), act));
    mark(y.getDefiningOp(), part, layer);
    return y;
  }

  mlir::OpBuilder b;
  const Checkpoint &checkpoint;
  const DecoderProgram &program;
  std::map<std::string, const GraphLinear *> quantized;
  std::map<std::string, ModelKernelSpec> specs; ///< by symbol()
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp body;
  mlir::Type act;
  mlir::RankedTensorType cacheType;
};

/// The name of the qtensor.weight behind `v` (through a load-time repack).
std::optional<std::string> weightName(mlir::Value v) {
  if (auto repack = v.getDefiningOp<mlir::qt::RepackOp>())
    v = repack.getInput();
  if (auto w = v.getDefiningOp<mlir::qt::WeightOp>())
    return w.getName().str();
  return std::nullopt;
}

/// Reads the program back, one op at a time.
class Exporter {
public:
  Expected<DecoderProgram> run(mlir::ModuleOp module) {
    auto fn = module.lookupSymbol<mlir::func::FuncOp>("forward");
    auto decoder = fn ? fn->getAttrOfType<mlir::DictionaryAttr>(kDecoderAttr)
                      : mlir::DictionaryAttr();
    if (!decoder)
      return makeError("the graph has no @forward with a '", kDecoderAttr,
                       "' dictionary");
    QTENSOR_ASSIGN_OR_RETURN(json j, toJson(decoder, kDecoderAttr));
    if (!j.contains("config"))
      return makeError(kDecoderAttr, ": expected 'config'");
    QTENSOR_ASSIGN_OR_RETURN(
        p.config, artifact::decoderConfigFromJson(
                      j["config"], std::string(kDecoderAttr) + ".config"));
    for (auto [key, out] : {std::pair{"activation", &p.activation},
                            std::pair{"kv_cache", &p.kvCache}}) {
      std::optional<FloatType> type;
      if (j.contains(key) && j[key].is_string())
        type = parseFloatType(j[key].get<std::string>());
      if (!type)
        return makeError(kDecoderAttr, ".", key, ": expected f32, f16 or bf16",
                         j.contains(key) ? ", got " + j[key].dump() : "");
      *out = *type;
    }
    p.layers.resize(size_t(p.config.layers));
    for (mlir::Operation &op : fn.getBody().front())
      if (op.hasAttr(kPartAttr))
        QTENSOR_TRY(visit(op));
    return finish();
  }

private:
  /// Sets `slot` once, or checks it has the same value.
  Status set(std::string &slot, const std::string &value,
             const std::string &what) {
    if (!slot.empty() && slot != value)
      return makeError("the decoder graph's ", what, " is both ", slot, " and ",
                       value);
    slot = value;
    return Status::ok();
  }
  Status set(std::optional<std::string> &slot, const std::string &value,
             const std::string &what) {
    std::string s = slot.value_or("");
    QTENSOR_TRY(set(s, value, what));
    slot = s;
    return Status::ok();
  }

  Status visit(mlir::Operation &op) {
    auto part = op.getAttrOfType<mlir::StringAttr>(kPartAttr);
    if (!part)
      return makeError("a '", kPartAttr, "' that is not a string");
    const std::string name = part.str();
    int64_t layer = -1;
    if (auto l = op.getAttrOfType<mlir::IntegerAttr>(kLayerAttr))
      layer = l.getInt();
    const std::string what =
        name + (layer >= 0 ? " of layer " + std::to_string(layer) : "");
    if (layer < -1 || layer >= p.config.layers)
      return makeError("the decoder graph's ", what, ": layer out of range");
    // A quantized linear: its weight is the program's tensor.
    if (auto linear = llvm::dyn_cast<mlir::qt::LinearOp>(op)) {
      std::optional<std::string> w = weightName(linear.getWeight());
      if (!w)
        return makeError("the decoder graph's ", what,
                         " linear reads no qtensor.weight");
      ProgramLinear *slot = linearSlot(name, layer);
      if (!slot)
        return makeError("the decoder graph has a linear of unknown part ",
                         what);
      QTENSOR_TRY(set(slot->tensor, *w, what + " linear"));
      return Status::ok();
    }
    auto call = llvm::dyn_cast<mlir::func::CallOp>(op);
    if (!call)
      return makeError("the decoder graph's ", what, " is a ",
                       op.getName().getStringRef().str(),
                       ", expected a func.call or a qtensor.linear");
    const std::string symbol = kCInterface.str() + call.getCallee().str();
    auto weightOf = [&](unsigned i) -> Expected<std::string> {
      std::optional<std::string> w;
      if (i < call.getNumOperands())
        w = weightName(call.getOperand(i));
      if (!w)
        return makeError("the decoder graph's ", what, " (", symbol,
                         ") reads no qtensor.weight as operand ", i);
      return *w;
    };
    artifact::ModelKernelSymbols &k = p.kernels;
    ProgramLayer *l = layer >= 0 ? &p.layers[size_t(layer)] : nullptr;
    if (ProgramLinear *slot = linearSlot(name, layer)) {
      QTENSOR_ASSIGN_OR_RETURN(std::string w, weightOf(1));
      QTENSOR_TRY(set(slot->tensor, w, what + " linear"));
      if (call.getNumOperands() > 2) { // x, w, bias
        QTENSOR_ASSIGN_OR_RETURN(std::string bias, weightOf(2));
        QTENSOR_TRY(set(slot->bias, bias, what + " linear's bias"));
      }
      return set(slot->kernel, symbol, what + " linear's kernel");
    }
    struct Norm {
      const char *part;
      std::string *weight;
      std::optional<std::string> *optionalWeight;
      std::string *kernel;
      std::optional<std::string> *optionalKernel;
      bool inLayer;
    };
    const Norm norms[] = {
        {"embed", &p.embed, nullptr, &k.embed, nullptr, false},
        {"final_norm", &p.finalNorm, nullptr, &k.finalNorm, nullptr, false},
        {"attn_norm", l ? &l->attnNorm : nullptr, nullptr, &k.norm, nullptr,
         true},
        {"ffn_norm", l ? &l->ffnNorm : nullptr, nullptr, &k.norm, nullptr,
         true},
        {"q_norm", nullptr, l ? &l->qNorm : nullptr, nullptr, &k.headNorm,
         true},
        {"k_norm", nullptr, l ? &l->kNorm : nullptr, nullptr, &k.headNorm,
         true},
        {"post_attention_norm", nullptr, l ? &l->postAttnNorm : nullptr,
         nullptr, &k.outputNorm, true},
        {"post_ffn_norm", nullptr, l ? &l->postFfnNorm : nullptr, nullptr,
         &k.outputNorm, true}};
    for (const Norm &n : norms) {
      if (name != n.part)
        continue;
      if (n.inLayer != (l != nullptr))
        return makeError("the decoder graph's ", what,
                         n.inLayer ? " has no layer" : " is inside a layer");
      QTENSOR_ASSIGN_OR_RETURN(std::string w, weightOf(1));
      QTENSOR_TRY(n.weight ? set(*n.weight, w, what)
                           : set(*n.optionalWeight, w, what));
      return n.kernel ? set(*n.kernel, symbol, what + "'s kernel")
                      : set(*n.optionalKernel, symbol, what + "'s kernel");
    }
    struct Kernel {
      const char *part;
      std::string *symbol;
      bool inLayer;
    };
    const Kernel kernels[] = {{"rope_q", l ? &l->ropeQ : nullptr, true},
                              {"rope_k", l ? &l->ropeK : nullptr, true},
                              {"attention", l ? &l->attention : nullptr, true},
                              {"store_v", &k.storeV, true},
                              {"gate_mul", &k.gateMul, true},
                              {"residual_add", &k.residualAdd, true},
                              {"argmax", &k.argmax, false}};
    if (name == "rope_q_long" || name == "rope_k_long") {
      if (!l)
        return makeError("the decoder graph's ", what, " has no layer");
      return set(name == "rope_q_long" ? l->ropeQLong : l->ropeKLong, symbol,
                 what + "'s kernel");
    }
    if (name == "final_softcap") {
      if (l)
        return makeError("the decoder graph's ", what, " is inside a layer");
      return set(k.finalSoftcap, symbol, what + "'s kernel");
    }
    if (name == "logit_scale") {
      if (l)
        return makeError("the decoder graph's ", what, " is inside a layer");
      return set(k.logitScale, symbol, what + "'s kernel");
    }
    for (const Kernel &kernel : kernels) {
      if (name != kernel.part)
        continue;
      if (kernel.inLayer != (l != nullptr))
        return makeError("the decoder graph's ", what,
                         kernel.inLayer ? " has no layer"
                                        : " is inside a layer");
      return set(*kernel.symbol, symbol, what + "'s kernel");
    }
    return makeError("the decoder graph has an op of unknown part ", what);
  }

  ProgramLinear *linearSlot(const std::string &name, int64_t layer) {
    if (name == "head")
      return layer < 0 ? &p.head : nullptr;
    if (layer < 0)
      return nullptr;
    ProgramLayer &l = p.layers[size_t(layer)];
    const std::pair<const char *, ProgramLinear *> slots[] = {
        {"q", &l.q},       {"k", &l.k},   {"v", &l.v},      {"o", &l.o},
        {"gate", &l.gate}, {"up", &l.up}, {"down", &l.down}};
    for (const auto &[part, slot] : slots)
      if (name == part)
        return slot;
    return nullptr;
  }

  /// Every part the runtime needs is there.
  Expected<DecoderProgram> finish() {
    auto need = [](const std::string &value,
                   const std::string &what) -> Status {
      if (value.empty())
        return makeError("the decoder graph has no ", what);
      return Status::ok();
    };
    const artifact::ModelKernelSymbols &k = p.kernels;
    for (auto [value, what] :
         {std::pair<const std::string *, const char *>{&p.embed, "embed"},
          {&p.finalNorm, "final_norm"},
          {&p.head.tensor, "head"},
          {&k.storeV, "store_v"},
          {&k.gateMul, "gate_mul"},
          {&k.residualAdd, "residual_add"},
          {&k.argmax, "argmax"},
          {&k.norm, "attn_norm"},
          {&k.embed, "embed kernel"},
          {&k.finalNorm, "final_norm kernel"}})
      QTENSOR_TRY(need(*value, what));
    for (size_t i = 0; i < p.layers.size(); ++i) {
      const ProgramLayer &l = p.layers[i];
      const std::string of = " in layer " + std::to_string(i);
      for (auto [value, what] : {std::pair<const std::string *, const char *>{
                                     &l.attnNorm, "attn_norm"},
                                 {&l.ffnNorm, "ffn_norm"},
                                 {&l.q.tensor, "q linear"},
                                 {&l.k.tensor, "k linear"},
                                 {&l.v.tensor, "v linear"},
                                 {&l.o.tensor, "o linear"},
                                 {&l.gate.tensor, "gate linear"},
                                 {&l.up.tensor, "up linear"},
                                 {&l.down.tensor, "down linear"},
                                 {&l.ropeQ, "rope_q"},
                                 {&l.ropeK, "rope_k"},
                                 {&l.attention, "attention"}})
        QTENSOR_TRY(need(*value, what + of));
      // The per-head norms come as a pair (qwen3, gemma3), the output
      // norms too (gemma3), or not at all.
      if (l.qNorm.has_value() != l.kNorm.has_value())
        return makeError("the decoder graph has one of the q and k head "
                         "norms",
                         of);
      if (l.postAttnNorm.has_value() != l.postFfnNorm.has_value())
        return makeError("the decoder graph has one of the two output "
                         "norms",
                         of);
      if (l.ropeQLong.has_value() != l.ropeKLong.has_value() ||
          l.ropeQLong.has_value() != !p.config.ropeFreqFactorsLong.empty())
        return makeError("the decoder graph's long RoPE kernels do not "
                         "match its config",
                         of);
    }
    return std::move(p);
  }

  DecoderProgram p;
};

} // namespace

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildDecoderGraph(mlir::MLIRContext &context, const Checkpoint &checkpoint,
                  const artifact::DecoderProgram &program,
                  const std::vector<ModelKernelSpec> &kernels,
                  const std::vector<GraphLinear> &linears) {
  return Builder(context, checkpoint, program, kernels, linears).build();
}

Status gatherEmbeddingFrom(mlir::ModuleOp module, const std::string &tensor,
                           const ModelKernelSpec &kernel,
                           mlir::Type quantizedTable) {
  auto fn = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (!fn)
    return makeError("the graph has no @forward");
  mlir::func::CallOp embed;
  mlir::Value table;
  fn.walk([&](mlir::Operation *op) {
    auto part = op->getAttrOfType<mlir::StringAttr>(kPartAttr);
    if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op);
        call && part && part.getValue() == "embed")
      embed = call;
    if (auto w = llvm::dyn_cast<mlir::qt::WeightOp>(op);
        w && !table && w.getName() == tensor)
      table = w.getResult();
  });
  if (!embed)
    return makeError("the decoder graph has no embed call");
  if (!table)
    return makeError("the decoder graph has no qtensor.weight ", tensor);
  const std::string name = kernel.name();
  mlir::OpBuilder b(embed);
  if (quantizedTable) // the same tensor, as stored
    table =
        mlir::qt::WeightOp::create(b, table.getLoc(), quantizedTable, tensor)
            .getResult();
  auto type = b.getFunctionType(
      {embed.getOperand(0).getType(), table.getType()}, embed.getResultTypes());
  auto callee = module.lookupSymbol<mlir::func::FuncOp>(name);
  if (!callee) {
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(fn);
    callee = declare(b, embed.getLoc(), kernel, type);
  } else if (callee.getFunctionType() != type) {
    return makeError("model kernel ", name,
                     " is declared with another "
                     "signature");
  }
  // The head's weight is defined near the end; the embedding reads it
  // first. (A qtensor.weight has no operands: it can move up freely.)
  if (!table.getDefiningOp()->isBeforeInBlock(embed))
    table.getDefiningOp()->moveBefore(embed);
  auto call = mlir::func::CallOp::create(
      b, embed.getLoc(), callee, mlir::ValueRange{embed.getOperand(0), table});
  call->setAttrs(embed->getDiscardableAttrDictionary());
  embed.getResult(0).replaceAllUsesWith(call.getResult(0));
  auto old = module.lookupSymbol<mlir::func::FuncOp>(embed.getCallee());
  mlir::Operation *oldTable = embed.getOperand(1).getDefiningOp();
  embed.erase();
  // The plain table and its kernel go with their last use.
  if (oldTable && oldTable->use_empty())
    oldTable->erase();
  if (old && mlir::SymbolTable::symbolKnownUseEmpty(old, module))
    old.erase();
  return Status::ok();
}

Expected<std::vector<ModelKernelSpec>>
graphModelKernels(mlir::ModuleOp module) {
  std::vector<ModelKernelSpec> kernels;
  for (auto fn : module.getOps<mlir::func::FuncOp>()) {
    mlir::Attribute attr = fn->getAttr(kModelKernelAttr);
    if (!attr)
      continue;
    const std::string where =
        "@" + fn.getSymName().str() + " " + kModelKernelAttr;
    QTENSOR_ASSIGN_OR_RETURN(json j, toJson(attr, where));
    QTENSOR_ASSIGN_OR_RETURN(ModelKernelSpec spec,
                             modelKernelSpecFromJson(j, where));
    if (spec.name() != fn.getSymName())
      return makeError(where, ": the spec is of ", spec.name());
    kernels.push_back(std::move(spec));
  }
  // Every model op's callee is declared with its spec.
  if (auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward")) {
    mlir::WalkResult walk = forward.walk([&](mlir::func::CallOp call) {
      auto callee = module.lookupSymbol<mlir::func::FuncOp>(call.getCallee());
      return callee && callee->hasAttr(kModelKernelAttr)
                 ? mlir::WalkResult::advance()
                 : mlir::WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return makeError("the decoder graph calls a function that is not a "
                       "model kernel declared with its '",
                       kModelKernelAttr, "'");
  }
  return kernels;
}

Expected<artifact::DecoderProgram> exportDecoderProgram(mlir::ModuleOp module) {
  // What the passes and rewrites left must still be a valid module.
  if (mlir::failed(mlir::verify(module)))
    return makeError("the final decoder graph does not verify (a qtc bug)");
  return Exporter().run(module);
}

} // namespace qtensor::compiler
