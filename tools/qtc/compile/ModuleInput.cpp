//===- ModuleInput.cpp - An MLIR module as qtc compile's input ------------===//

#include "ModuleInput.h"

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"
#include "qtensor/Runtime/Plan.h"
#include "qtensor/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <sys/stat.h>

namespace qtensor::qtc {
namespace {

constexpr uint64_t kMaxModuleBytes = uint64_t(1) << 30;

/// "file:line:col" where the location has one (through a NameLoc).
std::string text(mlir::Location loc) {
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

/// Whether `value` reaches a contraction as one of its inputs, directly or
/// through the views fuse-linear looks through (transpose, broadcast).
bool readByContraction(mlir::Value value, unsigned depth = 0) {
  if (depth > 4)
    return false;
  for (mlir::OpOperand &use : value.getUses()) {
    mlir::Operation *user = use.getOwner();
    if (llvm::isa<mlir::linalg::TransposeOp, mlir::linalg::BroadcastOp>(
            user)) {
      auto view = llvm::cast<mlir::linalg::LinalgOp>(user);
      if (view.isDpsInput(&use) &&
          readByContraction(user->getResult(0), depth + 1))
        return true;
      continue;
    }
    if (auto linalgOp = llvm::dyn_cast<mlir::linalg::LinalgOp>(user))
      if (linalgOp.isDpsInput(&use) &&
          mlir::linalg::isaContractionOpInterface(linalgOp))
        return true;
  }
  return false;
}

/// `ml_program.global private @w(#ml_program.extern : T) : T` read by
/// `ml_program.global_load_const @w` becomes `qtensor.weight "w" : T`.
Status rewriteExternGlobals(mlir::ModuleOp module, const std::string &path) {
  mlir::SymbolTable symbols(module);
  llvm::SmallVector<mlir::ml_program::GlobalLoadConstOp> loads;
  module.walk([&](mlir::ml_program::GlobalLoadConstOp op) {
    loads.push_back(op);
  });
  std::set<mlir::Operation *> globals;
  for (mlir::ml_program::GlobalLoadConstOp load : loads) {
    auto global = symbols.lookup<mlir::ml_program::GlobalOp>(
        load.getGlobal().getRootReference());
    if (!global || !global.getValue() ||
        !llvm::isa<mlir::ml_program::ExternAttr>(*global.getValue()))
      continue; // an inline constant is part of the module, not a weight
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(global.getType());
    if (!type || !type.hasStaticShape())
      return makeError(path, ": ", text(global.getLoc()),
                       ": external global @", global.getSymName().str(),
                       " must be a statically shaped tensor, not ",
                       text(global.getType()));
    mlir::OpBuilder b(load);
    auto weight = mlir::qt::WeightOp::create(b, load.getLoc(), type,
                                             global.getSymName());
    load.getResult().replaceAllUsesWith(weight.getResult());
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
      error = text(global.getLoc()) + ": external global @" +
              global.getSymName().str() +
              " is read other than by ml_program.global_load_const; qtc "
              "takes an external weight through global_load_const (or "
              "qtensor.weight)";
  });
  if (!error.empty())
    return makeError(path, ": ", error);
  return Status::ok();
}

} // namespace

bool isModulePath(const std::string &path) {
  auto ends = [&](const char *suffix) {
    std::string s(suffix);
    return path.size() > s.size() &&
           path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".mlir") || ends(".mlirbc");
}

Expected<mlir::OwningOpRef<mlir::ModuleOp>>
parseModelModule(mlir::MLIRContext &context, const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return makeError(path, ": not a readable file");
  if (uint64_t(st.st_size) > kMaxModuleBytes)
    return makeError(path, ": ", st.st_size, " bytes is above the ",
                     kMaxModuleBytes, " a model module may have (weights "
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
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(op.getType());
    if (!type) {
      error = text(op.getLoc()) + ": qtensor.weight \"" + name +
              "\" is already quantized (" + text(op.getType()) +
              "); qtc compile quantizes the float weights of --weights";
      return;
    }
    ModuleReference ref;
    ref.name = name;
    ref.shape.assign(type.getShape().begin(), type.getShape().end());
    ref.dtype = dtypeOf(type.getElementType());
    if (ref.dtype.empty()) {
      error = text(op.getLoc()) + ": qtensor.weight \"" + name + "\" has " +
              "element type " + text(type.getElementType()) +
              ", not a float type a weights file stores";
      return;
    }
    ref.contraction = readByContraction(op.getResult());
    auto [it, added] = byName.try_emplace(name, refs.size());
    if (added) {
      refs.push_back(std::move(ref));
      return;
    }
    ModuleReference &first = refs[it->second];
    if (first.shape != ref.shape || first.dtype != ref.dtype) {
      error = text(op.getLoc()) + ": qtensor.weight \"" + name + "\" is " +
              text(type) + " here but has another type elsewhere";
      return;
    }
    first.contraction |= ref.contraction;
  });
  if (!error.empty())
    return makeError(path, ": ", error);
  if (refs.empty())
    return makeError(path, ": the module references no weights (expected "
                           "qtensor.weight ops or external ml_program "
                           "globals)");
  return refs;
}

Expected<FormedLinears>
formLinears(mlir::ModuleOp module, const std::string &path,
            const std::vector<SourceLinear> &linears,
            const std::vector<QuantizedWeight> &weights) {
  mlir::MLIRContext *context = module.getContext();
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < linears.size(); ++i)
    index[linears[i].name] = i;

  // Each selected weight: its quantized type, dequantized where it was read.
  llvm::SmallVector<mlir::qt::WeightOp> selected;
  module.walk([&](mlir::qt::WeightOp op) {
    if (index.count(op.getName().str()))
      selected.push_back(op);
  });
  for (mlir::qt::WeightOp op : selected) {
    const QuantizedWeight &w = weights[index.at(op.getName().str())];
    auto qtype = mlir::qt::toType(context, w.logical);
    if (!qtype)
      return makeError(path, ": ", op.getName().str(), ": ", qtype.message());
    mlir::OpBuilder b(op);
    // Later diagnostics print the weight's name first (Compile.cpp).
    mlir::Location loc = mlir::NameLoc::get(op.getNameAttr(), op.getLoc());
    auto q = mlir::qt::WeightOp::create(b, loc, *qtype, op.getName());
    auto dq = mlir::qt::DequantizeOp::create(b, loc, op.getType(), q);
    op.getResult().replaceAllUsesWith(dq.getResult());
    op.erase();
  }

  std::string diagnostics;
  {
    llvm::raw_string_ostream os(diagnostics);
    mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic &d) {
      if (d.getSeverity() != mlir::DiagnosticSeverity::Remark)
        os << text(d.getLocation()) << ": " << d << "\n";
      return mlir::success();
    });
    mlir::PassManager pm(context);
    pm.addPass(mlir::qt::createQTensorFuseLinear());
    pm.addPass(mlir::createCanonicalizerPass());
    if (mlir::failed(pm.run(module)))
      return makeError(path, ": qtensor-fuse-linear failed:\n", diagnostics);
  }

  // Every selected weight must now be read by linears only.
  std::string error;
  module.walk([&](mlir::qt::WeightOp op) {
    if (!error.empty() || !index.count(op.getName().str()))
      return;
    for (mlir::OpOperand &use : op.getResult().getUses()) {
      auto linear = llvm::dyn_cast<mlir::qt::LinearOp>(use.getOwner());
      if (linear && use.get() == linear.getWeight())
        continue;
      mlir::Operation *reader = use.getOwner();
      if (llvm::isa<mlir::qt::DequantizeOp>(reader) &&
          !reader->getResult(0).use_empty())
        reader = *reader->getResult(0).getUsers().begin();
      error = op.getName().str() + " is selected for quantization, but " +
              reader->getName().getStringRef().str() + " at " +
              text(reader->getLoc()) +
              " reads it in a form qtensor-fuse-linear does not turn into "
              "a qtensor.linear (`qopt --qtensor-fuse-linear=remarks=true` "
              "says why); keep it in float with --exclude '" +
              op.getName().str() + "'";
      return;
    }
  });
  if (!error.empty())
    return makeError(path, ": ", error);

  // The bias each linear adds, which must be a weight of the file; the
  // accumulator widened to f32.
  FormedLinears formed;
  std::map<std::string, std::string> &biases = formed.biases;
  mlir::FloatType f32 = mlir::Float32Type::get(context);
  module.walk([&](mlir::qt::LinearOp op) {
    if (!error.empty())
      return;
    auto weight = op.getWeight().getDefiningOp<mlir::qt::WeightOp>();
    if (!weight)
      return;
    std::string name = weight.getName().str();
    if (op.getAccumulator() != f32) {
      op.setAccumulator(f32);
      formed.widenedAccumulators.push_back(name);
    }
    std::string bias;
    if (mlir::Value b = op.getBias()) {
      auto biasWeight = b.getDefiningOp<mlir::qt::WeightOp>();
      if (!biasWeight) {
        error = "the bias of the linear on " + name + " at " +
                text(op.getLoc()) +
                " is computed in the graph; the artifact stores a linear's "
                "bias from the weights file only (read it with "
                "qtensor.weight)";
        return;
      }
      bias = biasWeight.getName().str();
    }
    auto [it, added] = biases.try_emplace(name, bias);
    if (!added && it->second != bias)
      error = name + " feeds linears with different biases (\"" +
              it->second + "\" and \"" + bias + "\")";
  });
  if (!error.empty())
    return makeError(path, ": ", error);
  for (auto it = biases.begin(); it != biases.end();)
    it = it->second.empty() ? biases.erase(it) : std::next(it);

  // The runtime finds a linear's bias by name (runtime::biasTensorName:
  // "fc1.weight" -> "fc1.bias"); a bias the module names otherwise is
  // renamed in the graph, and stored, under that name.
  std::set<std::string> referenced;
  module.walk([&](mlir::qt::WeightOp op) {
    referenced.insert(op.getName().str());
  });
  std::map<std::string, std::string> renames;
  for (const auto &[linear, bias] : biases) {
    std::string stored = runtime::biasTensorName(linear, 0, false);
    if (stored == bias)
      continue;
    if (referenced.count(stored))
      return makeError(path, ": ", bias, " is the bias of ", linear,
                       " and is stored as ", stored,
                       " (the name the runtime looks it up by), but the "
                       "module also references a weight of that name");
    renames[bias] = stored;
    formed.storedBiasNames[linear] = stored;
  }
  module.walk([&](mlir::qt::WeightOp op) {
    auto it = renames.find(op.getName().str());
    if (it != renames.end())
      op.setName(it->second);
  });
  return formed;
}

} // namespace qtensor::qtc
