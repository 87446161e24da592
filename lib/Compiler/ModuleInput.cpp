//===- ModuleInput.cpp - An MLIR module as qtc compile's input ------------===//

#include "ModuleInput.h"

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"
#include "qtensor/Runtime/Plan.h"
#include "qtensor/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/Quant/IR/QuantTypes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <sys/stat.h>

namespace qtensor::compiler {

std::string locationText(mlir::Location loc) {
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
    loc = name.getChildLoc();
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc))
    os << file.getFilename().strref() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    loc.print(os);
  return s;
}

namespace {

constexpr uint64_t kMaxModuleBytes = uint64_t(1) << 30;

std::string text(mlir::Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

/// The safetensors spelling of a float element type ("" for others).
std::string dtypeOf(mlir::Type element) {
  if (element.isF16())
    return "F16";
  if (element.isBF16())
    return "BF16";
  if (element.isF32())
    return "F32";
  if (element.isF64())
    return "F64";
  if (llvm::isa<mlir::Float8E5M2Type>(element))
    return "F8_E5M2";
  if (llvm::isa<mlir::Float8E4M3FNType>(element))
    return "F8_E4M3";
  return "";
}

/// An op that maps one tensor to another element by element or by moving
/// data (transpose, broadcast, copy, a cast in a linalg.generic): what may
/// stand between a weight and the contraction that reads it.
mlir::Value passedThrough(mlir::OpOperand &use) {
  auto op = llvm::dyn_cast<mlir::linalg::LinalgOp>(use.getOwner());
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || !op.isDpsInput(&use) ||
      op.getNumLoops() != op.getNumParallelLoops())
    return {};
  return op->getResult(0);
}

/// The contraction that reads `value` as an input, directly or through
/// passedThrough ops; null if none. This over-approximates what
/// qtensor-fuse-linear fuses on purpose: a weight found here is quantized,
/// and one fuse-linear then cannot fuse is an error, never a weight
/// silently left in float.
mlir::Operation *contractionReading(mlir::Value value, unsigned depth = 0) {
  if (depth > 8)
    return nullptr;
  for (mlir::OpOperand &use : value.getUses()) {
    auto linalgOp = llvm::dyn_cast<mlir::linalg::LinalgOp>(use.getOwner());
    if (linalgOp && linalgOp.isDpsInput(&use) &&
        mlir::linalg::isaContractionOpInterface(linalgOp))
      return linalgOp;
    if (mlir::Value next = passedThrough(use))
      if (mlir::Operation *found = contractionReading(next, depth + 1))
        return found;
  }
  return nullptr;
}

/// The value of the weights-file tensor `name` as the module types it: a
/// `qtensor.weight` of that type, or for a quantized type
/// (`!quant.uniform`), the codes as a `qtensor.weight` of its storage type
/// through a `quant.scast` (which qtensor-import then assembles).
mlir::Value weightReference(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::RankedTensorType type, llvm::StringRef name) {
  auto quantized =
      llvm::dyn_cast<mlir::quant::QuantizedType>(type.getElementType());
  if (!quantized)
    return mlir::qt::WeightOp::create(b, loc, type, name);
  auto storage =
      mlir::RankedTensorType::get(type.getShape(), quantized.getStorageType());
  mlir::Value codes = mlir::qt::WeightOp::create(b, loc, storage, name);
  return mlir::quant::StorageCastOp::create(b, loc, type, codes);
}

/// `ml_program.global private @w(#ml_program.extern : T) : T` read by
/// `ml_program.global_load_const @w` becomes `qtensor.weight "w" : T`
/// (weightReference).
Status rewriteExternGlobals(mlir::ModuleOp module, const std::string &path) {
  mlir::SymbolTable symbols(module);
  llvm::SmallVector<mlir::ml_program::GlobalLoadConstOp> loads;
  module.walk(
      [&](mlir::ml_program::GlobalLoadConstOp op) { loads.push_back(op); });
  std::set<mlir::Operation *> globals;
  for (mlir::ml_program::GlobalLoadConstOp load : loads) {
    auto global = symbols.lookup<mlir::ml_program::GlobalOp>(
        load.getGlobal().getRootReference());
    if (!global || !global.getValue() ||
        !llvm::isa<mlir::ml_program::ExternAttr>(*global.getValue()))
      continue; // an inline constant is part of the module, not a weight
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(global.getType());
    if (!type || !type.hasStaticShape())
      return makeError(locationText(global.getLoc()), ": external global @",
                       global.getSymName().str(),
                       " must be a statically shaped tensor, not ",
                       text(global.getType()));
    mlir::OpBuilder b(load);
    load.getResult().replaceAllUsesWith(
        weightReference(b, load.getLoc(), type, global.getSymName()));
    load.erase();
    globals.insert(global);
  }
  for (mlir::Operation *global : globals)
    if (mlir::SymbolTable::symbolKnownUseEmpty(global, module))
      global->erase();
  // An external global read any other way would reach the artifact with no
  // data behind it.
  std::string error;
  module.walk([&](mlir::ml_program::GlobalOp global) {
    if (error.empty() && global.getValue() &&
        llvm::isa<mlir::ml_program::ExternAttr>(*global.getValue()))
      error = locationText(global.getLoc()) + ": external global @" +
              global.getSymName().str() +
              " is read other than by ml_program.global_load_const; qtc "
              "takes an external weight through global_load_const (or "
              "qtensor.weight)";
  });
  if (!error.empty())
    return makeError(error);
  return Status::ok();
}

/// A function argument of a quantized type is a weight: it must name its
/// weights-file tensor (`{qtensor.weight = "NAME"}`), and becomes that
/// reference (weightReference); the argument goes from the signature.
Status rewriteQuantizedArguments(mlir::ModuleOp module) {
  std::string error;
  module.walk([&](mlir::func::FuncOp fn) {
    if (!error.empty() || fn.isExternal())
      return;
    llvm::BitVector erased(fn.getNumArguments());
    mlir::OpBuilder b = mlir::OpBuilder::atBlockBegin(&fn.front());
    for (mlir::BlockArgument arg : fn.getArguments()) {
      auto type = llvm::dyn_cast<mlir::RankedTensorType>(arg.getType());
      if (!type ||
          !llvm::isa<mlir::quant::QuantizedType>(type.getElementType()))
        continue;
      std::string where = locationText(fn.getLoc()) + ": argument #" +
                          std::to_string(arg.getArgNumber()) + " of @" +
                          fn.getSymName().str();
      auto name = fn.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(),
                                                        "qtensor.weight");
      if (!name) {
        error = where + " is a quantized tensor (" + text(type) +
                ") but names no weight: give it {qtensor.weight = \"NAME\"}, "
                "NAME the tensor of --weights that holds its codes";
        return;
      }
      if (!type.hasStaticShape()) {
        error = where + " is a weight, so its shape must be static, not " +
                text(type);
        return;
      }
      if (!mlir::SymbolTable::symbolKnownUseEmpty(fn, module)) {
        error = where + " is a weight (" + name.getValue().str() + "), but @" +
                fn.getSymName().str() +
                " is called: a weight argument is removed from the function, "
                "so its callers would not match";
        return;
      }
      arg.replaceAllUsesWith(
          weightReference(b, arg.getLoc(), type, name.getValue()));
      erased.set(arg.getArgNumber());
    }
    if (erased.any() && mlir::failed(fn.eraseArguments(erased)))
      error = locationText(fn.getLoc()) +
              ": cannot remove the weight "
              "arguments of @" +
              fn.getSymName().str();
  });
  if (!error.empty())
    return makeError(error);
  return Status::ok();
}

/// The qtensor.assemble that reads `weight` as its codes (through the
/// trunci / bitcast qtensor-import puts between them), or null.
mlir::qt::AssembleOp assembledCodes(mlir::qt::WeightOp weight) {
  mlir::Value v = weight.getResult();
  while (v.hasOneUse()) {
    mlir::Operation *user = *v.getUsers().begin();
    if (auto assemble = llvm::dyn_cast<mlir::qt::AssembleOp>(user))
      return assemble.getCodes() == v ? assemble : mlir::qt::AssembleOp();
    if (!llvm::isa<mlir::arith::TruncIOp, mlir::tensor::BitcastOp>(user))
      break;
    v = user->getResult(0);
  }
  return {};
}

/// The descriptor and constant qparams of a weight the module quantizes.
Expected<ModuleReference::Codes> codesOf(mlir::qt::WeightOp weight,
                                         mlir::qt::AssembleOp assemble) {
  std::string where = locationText(weight.getLoc()) + ": qtensor.weight \"" +
                      weight.getName().str() + "\"";
  ModuleReference::Codes codes;
  auto described = mlir::qt::toDescriptor(assemble.getType());
  if (!described)
    return makeError(where, ": ", described.message());
  codes.descriptor = described.take();
  if (codes.descriptor.descriptor.nested)
    return makeError(where, ": nested qparams (#qtensor.nested) come only "
                            "from GGUF K-quants in this version; a module's "
                            "constant scales carry no second level to store");
  if (codes.descriptor.descriptor.codebook != Codebook::None)
    return makeError(where, ": codebook ",
                     toString(codes.descriptor.descriptor.codebook),
                     " codes come only from GGUF IQ4_NL tensors in this "
                     "version; quantizing a module's float weight to the "
                     "nearest table entry is not implemented");
  mlir::DenseElementsAttr scales, zeros;
  if (!mlir::matchPattern(assemble.getScales(), mlir::m_Constant(&scales)))
    return makeError(where, ": its scales are computed in the graph; the "
                            "artifact stores a quantized weight's qparams, "
                            "which must be constants");
  for (llvm::APFloat v : scales.getValues<llvm::APFloat>()) {
    bool lost = false;
    v.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    codes.scales.push_back(v.convertToFloat());
  }
  if (mlir::Value z = assemble.getZeroPoints()) {
    if (!mlir::matchPattern(z, mlir::m_Constant(&zeros)))
      return makeError(where, ": its zero-points are computed in the graph; "
                              "they must be constants");
    bool isSigned = codes.descriptor.descriptor.code.isSigned;
    for (const llvm::APInt &v : zeros.getValues<llvm::APInt>())
      codes.zeros.push_back(
          int32_t(isSigned ? v.getSExtValue() : int64_t(v.getZExtValue())));
  }
  return codes;
}

} // namespace

bool isModulePath(const std::string &path) {
  llvm::StringRef p(path);
  return (p.ends_with(".mlir") && p.size() > 5) ||
         (p.ends_with(".mlirbc") && p.size() > 7);
}

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
parseModelModule(mlir::MLIRContext &context, const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return makeError(path, ": not a readable file");
  if (uint64_t(st.st_size) > kMaxModuleBytes)
    return makeError(path, ": ", st.st_size, " bytes is above the ",
                     kMaxModuleBytes,
                     " a model module may have (weights "
                     "belong in --weights)");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/true);
  if (!buffer)
    return makeError(path, ": ", buffer.getError().message());
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(sources, &context, os);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sources,
                                            mlir::ParserConfig(&context));
  if (!module)
    return makeError("cannot parse ", path, ":\n", diagnostics);
  QTENSOR_TRY(rewriteExternGlobals(*module, path));
  QTENSOR_TRY(rewriteQuantizedArguments(*module));
  // Weights the module quantizes (!quant.uniform) become qtensor.assemble
  // of their codes; collectReferences reads their qparams from there.
  mlir::PassManager pm(&context);
  pm.addPass(mlir::qt::createQTensorImportPass());
  if (mlir::failed(pm.run(*module)))
    return makeError("qtensor-import failed on ", path, ":\n", diagnostics);
  return module;
}

Expected<std::vector<ModuleReference>>
collectReferences(mlir::ModuleOp module, const std::string &path) {
  std::vector<ModuleReference> refs;
  std::map<std::string, size_t> byName;
  std::string error;
  module.walk([&](mlir::qt::WeightOp op) {
    if (!error.empty())
      return;
    std::string name = op.getName().str();
    if (name.find("@rank") != std::string::npos) {
      error = locationText(op.getLoc()) + ": qtensor.weight \"" + name +
              "\": \"@rank\" is reserved for the artifact's per-rank slices";
      return;
    }
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(op.getType());
    if (!type) {
      error = locationText(op.getLoc()) + ": qtensor.weight \"" + name +
              "\" is already quantized (" + text(op.getType()) +
              "); qtc compile quantizes the float weights of --weights";
      return;
    }
    ModuleReference ref;
    ref.name = name;
    ref.shape.assign(type.getShape().begin(), type.getShape().end());
    ref.dtype = dtypeOf(type.getElementType());
    if (llvm::isa<mlir::IntegerType>(type.getElementType())) {
      mlir::qt::AssembleOp assemble = assembledCodes(op);
      if (!assemble) {
        error = locationText(op.getLoc()) + ": qtensor.weight \"" + name +
                "\" has element type " + text(type.getElementType()) +
                " but is not the codes of a quantized tensor (a "
                "!quant.uniform weight or a qtensor.assemble)";
        return;
      }
      if (type.getElementTypeBitWidth() != 8) {
        error = locationText(op.getLoc()) + ": qtensor.weight \"" + name +
                "\": codes stored as " + text(type.getElementType()) +
                "; a weights file holds them in 8-bit storage (I8 or U8)";
        return;
      }
      auto codes = codesOf(op, assemble);
      if (!codes) {
        error = codes.message();
        return;
      }
      ref.dtype = codes->descriptor.descriptor.code.isSigned ? "I8" : "U8";
      for (mlir::Operation *user : assemble.getResult().getUsers())
        if (llvm::isa<mlir::qt::DequantizeOp>(user))
          ref.contraction |= contractionReading(user->getResult(0)) != nullptr;
      ref.codes = codes.take();
      auto [it, added] = byName.try_emplace(name, refs.size());
      if (!added) {
        error = locationText(op.getLoc()) + ": quantized weight \"" + name +
                "\" is referenced more than once";
        return;
      }
      refs.push_back(std::move(ref));
      return;
    }
    if (ref.dtype.empty()) {
      error = locationText(op.getLoc()) + ": qtensor.weight \"" + name +
              "\" has " + "element type " + text(type.getElementType()) +
              ", not a float type a weights file stores";
      return;
    }
    ref.contraction = contractionReading(op.getResult()) != nullptr;
    auto [it, added] = byName.try_emplace(name, refs.size());
    if (added) {
      refs.push_back(std::move(ref));
      return;
    }
    ModuleReference &first = refs[it->second];
    if (first.shape != ref.shape || first.dtype != ref.dtype) {
      error = locationText(op.getLoc()) + ": qtensor.weight \"" + name +
              "\" is " + text(type) + " here but has another type elsewhere";
      return;
    }
    first.contraction |= ref.contraction;
  });
  if (!error.empty())
    return makeError(error);
  if (refs.empty())
    return makeError(path, ": the module references no weights (expected "
                           "qtensor.weight ops or external ml_program "
                           "globals)");
  return refs;
}

Expected<FormedLinears>
formLinears(mlir::ModuleOp module, const std::string &path,
            const std::vector<SourceLinear> &linears,
            const std::vector<QuantizedTensorDescriptor> &planned) {
  mlir::MLIRContext *context = module.getContext();
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < linears.size(); ++i)
    index[linears[i].name] = i;

  // Each selected weight: its quantized type, dequantized where it was read.
  // A weight the module quantized already is the codes of an assemble: the
  // assemble becomes the quantized weight (the artifact stores its codes
  // and qparams).
  llvm::SmallVector<mlir::qt::WeightOp> selected;
  module.walk([&](mlir::qt::WeightOp op) {
    if (index.count(op.getName().str()))
      selected.push_back(op);
  });
  for (mlir::qt::WeightOp op : selected) {
    const QuantizedTensorDescriptor &logical =
        planned[index.at(op.getName().str())];
    auto qtype = mlir::qt::toType(context, logical);
    if (!qtype)
      return makeError(path, ": ", op.getName().str(), ": ", qtype.message());
    // Later diagnostics print the weight's name first (Compile.cpp).
    mlir::Location loc = mlir::NameLoc::get(op.getNameAttr(), op.getLoc());
    if (mlir::qt::AssembleOp assemble = assembledCodes(op)) {
      mlir::OpBuilder b(assemble);
      auto q = mlir::qt::WeightOp::create(b, loc, *qtype, op.getName());
      if (q.getType() != assemble.getType())
        return makeError(path, ": ", op.getName().str(), ": planned as ",
                         text(q.getType()), " but the module quantizes it as ",
                         text(assemble.getType()), " (a qtc bug)");
      assemble.getResult().replaceAllUsesWith(q.getResult());
      // The codes' chain (trunci, bitcast) up to the old reference.
      llvm::SmallVector<mlir::Operation *> chain = {assemble};
      for (mlir::Value v = assemble.getCodes(); v.getDefiningOp() != op;
           v = v.getDefiningOp()->getOperand(0))
        chain.push_back(v.getDefiningOp());
      chain.push_back(op);
      for (mlir::Operation *dead : chain)
        dead->erase();
      continue;
    }
    mlir::OpBuilder b(op);
    auto q = mlir::qt::WeightOp::create(b, loc, *qtype, op.getName());
    auto dq = mlir::qt::DequantizeOp::create(b, loc, op.getType(), q);
    op.getResult().replaceAllUsesWith(dq.getResult());
    op.erase();
  }

  // fuse-linear explains each contraction it leaves alone (remarks); an
  // error below quotes the ones at the op it is about.
  std::string diagnostics;
  std::vector<std::pair<mlir::Location, std::string>> remarks;
  {
    llvm::raw_string_ostream os(diagnostics);
    mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic &d) {
      if (d.getSeverity() == mlir::DiagnosticSeverity::Remark)
        remarks.emplace_back(d.getLocation(), d.str());
      else
        os << locationText(d.getLocation()) << ": " << d << "\n";
      return mlir::success();
    });
    mlir::PassManager pm(context);
    mlir::qt::QTensorFuseLinearPassOptions fuse;
    fuse.remarks = true;
    pm.addPass(mlir::qt::createQTensorFuseLinearPass(fuse));
    pm.addPass(mlir::createCanonicalizerPass());
    if (mlir::failed(pm.run(module)))
      return makeError(path, ": qtensor-fuse-linear failed:\n", diagnostics);
  }
  auto remarksAt = [&](mlir::Operation *op) {
    std::string why;
    for (const auto &[loc, message] : remarks)
      if (op && loc == op->getLoc())
        why += (why.empty() ? "" : "; ") + message;
    return why;
  };

  // Every selected weight must now be read by exactly one linear, as its
  // weight, and by nothing else (an artifact holds one op per weight).
  std::string error;
  std::map<std::string, llvm::SmallVector<mlir::qt::LinearOp>> readers;
  module.walk([&](mlir::qt::WeightOp op) {
    if (!error.empty() || !index.count(op.getName().str()))
      return;
    for (mlir::OpOperand &use : op.getResult().getUses()) {
      auto linear = llvm::dyn_cast<mlir::qt::LinearOp>(use.getOwner());
      if (linear && use.get() == linear.getWeight()) {
        readers[op.getName().str()].push_back(linear);
        continue;
      }
      mlir::Operation *reader = use.getOwner();
      mlir::Operation *contraction = nullptr;
      if (llvm::isa<mlir::qt::DequantizeOp>(reader)) {
        contraction = contractionReading(reader->getResult(0));
        if (!reader->getResult(0).use_empty())
          reader = *reader->getResult(0).getUsers().begin();
      }
      std::string why = remarksAt(contraction ? contraction : reader);
      error = op.getName().str() + " is selected for quantization, but " +
              reader->getName().getStringRef().str() + " at " +
              locationText(reader->getLoc()) +
              " reads it in a form qtensor-fuse-linear does not turn into "
              "a qtensor.linear" +
              (why.empty() ? std::string() : " (" + why + ")") +
              "; keep it in float with --exclude '" + op.getName().str() + "'";
      return;
    }
  });
  if (!error.empty())
    return makeError(path, ": ", error);
  for (const SourceLinear &l : linears) {
    auto it = readers.find(l.name);
    if (it == readers.end())
      return makeError(path, ": ", l.name,
                       " is selected for quantization, but no linear reads "
                       "it after fusion (its contraction computes nothing "
                       "the module uses, and was removed as dead code)");
    if (it->second.size() > 1)
      return makeError(path, ": ", l.name, " is the weight of ",
                       it->second.size(), " linears (",
                       locationText(it->second[0]->getLoc()), ", ",
                       locationText(it->second[1]->getLoc()),
                       "); an artifact holds one op per weight: keep it in "
                       "float with --exclude '",
                       l.name, "'");
  }

  // The bias each linear adds, which must be a weight of the file; the
  // accumulator widened to f32.
  FormedLinears formed;
  mlir::FloatType f32 = mlir::Float32Type::get(context);
  std::map<std::string, std::string> biasOwner; // bias -> its linear
  for (const auto &[name, ops] : readers) {
    mlir::qt::LinearOp op = ops.front();
    if (op.getAccumulator() != f32) {
      op.setAccumulator(f32);
      formed.widenedAccumulators.push_back(name);
    }
    mlir::Value b = op.getBias();
    if (!b)
      continue;
    auto biasWeight = b.getDefiningOp<mlir::qt::WeightOp>();
    if (!biasWeight)
      return makeError(path, ": the bias of the linear on ", name, " at ",
                       locationText(op.getLoc()),
                       " is computed in the graph; the artifact stores a "
                       "linear's bias from the weights file only (read it "
                       "with qtensor.weight)");
    std::string bias = biasWeight.getName().str();
    mlir::Type biasElement =
        mlir::cast<mlir::ShapedType>(b.getType()).getElementType();
    mlir::Type activation =
        mlir::cast<mlir::ShapedType>(op.getInput().getType()).getElementType();
    if (biasElement != activation)
      return makeError(path, ": ", bias, ", the bias of ", name, ", is ",
                       text(biasElement),
                       "; the kernels add a bias in the "
                       "activation type (",
                       text(activation), "): declare it ", text(activation));
    auto [owner, added] = biasOwner.try_emplace(bias, name);
    if (!added)
      return makeError(path, ": ", bias, " is the bias of both ", owner->second,
                       " and ", name, "; a bias is stored with one linear");
    formed.biases[name] = bias;
  }

  // The runtime links a linear to its bias by name (runtime::biasTensorName:
  // "fc1.weight" -> "fc1.bias"), so that name must mean exactly that: a bias
  // the module names otherwise is renamed in the graph and stored under it,
  // and no other weight may hold it.
  std::map<std::string, std::string> referenced; // name -> the weight itself
  module.walk([&](mlir::qt::WeightOp op) {
    referenced.emplace(op.getName().str(), op.getName().str());
  });
  std::map<std::string, std::string> renames, storedFor;
  for (const auto &[name, ops] : readers) {
    std::string stored = runtime::biasTensorName(name, 0, false);
    auto bias = formed.biases.find(name);
    if (auto [other, added] = storedFor.try_emplace(stored, name); !added)
      return makeError(path, ": linears ", other->second, " and ", name,
                       " would both store their bias as ", stored);
    if (bias == formed.biases.end()) {
      if (referenced.count(stored) && !biasOwner.count(stored))
        return makeError(path, ": ", stored, " is named as the bias of ", name,
                         " (the runtime links <name>.weight to "
                         "<name>.bias), but that linear adds no "
                         "bias: rename the weight");
      continue;
    }
    if (stored == bias->second)
      continue;
    if (referenced.count(stored))
      return makeError(path, ": ", bias->second, " is the bias of ", name,
                       " and is stored as ", stored,
                       " (the name the runtime looks it up by), but the "
                       "module also references a weight of that name");
    renames[bias->second] = stored;
    formed.storedBiasNames[name] = stored;
  }
  module.walk([&](mlir::qt::WeightOp op) {
    auto it = renames.find(op.getName().str());
    if (it != renames.end())
      op.setName(it->second);
  });
  return formed;
}

} // namespace qtensor::compiler
