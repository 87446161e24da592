//===- DecoderGraphTest.cpp - The decoder as the graph, and back ----------===//
//
// buildDecoderGraph then exportDecoderProgram gives back the planned
// program; the tied head's codes replace the embedding in the graph; a
// graph missing a part, or giving one two values, is refused by name.
//
//===----------------------------------------------------------------------===//

#include "DecoderGraph.h"
#include "Quantize.h"
#include "Selection.h"

#include "qtensor/Dialect/QTensor/IR/QTensorOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace qtensor;
using namespace qtensor::compiler;

namespace {

const std::string kTinyLlama =
    std::string(QTENSOR_CORPUS_DIR) + "/gguf/tiny_llama/tiny-llama-F32.gguf";

class DecoderGraphTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto selection = WeightSelection::create({}, {});
    ASSERT_TRUE(bool(selection)) << selection.message();
    selection_ = std::make_unique<WeightSelection>(selection.take());
    auto cp = Checkpoint::open(kTinyLlama, *selection_);
    ASSERT_TRUE(bool(cp)) << cp.message();
    checkpoint = std::make_unique<Checkpoint>(cp.take());
    auto spec = parseQuantSpec("w4a16:g128");
    ASSERT_TRUE(bool(spec)) << spec.message();
    for (const SourceLinear &l : checkpoint->linears()) {
      auto d = describeLinear(l, *spec, FloatType::F16);
      ASSERT_TRUE(bool(d)) << d.message();
      logical.push_back(d.take());
    }
    for (size_t i = 0; i < logical.size(); ++i)
      linears.push_back({&checkpoint->linears()[i], logical[i], false});
    std::string gap;
    auto planned =
        planDecoder(*checkpoint, FloatType::F16, FloatType::F16, gap);
    ASSERT_TRUE(bool(planned)) << planned.message();
    ASSERT_TRUE(planned->has_value()) << gap;
    plan = std::move(**planned);
  }

  mlir::OwningOpRef<mlir::ModuleOp> graph() {
    auto built = buildDecoderGraph(context, *checkpoint, plan.program,
                                   plan.kernels, linears);
    EXPECT_TRUE(bool(built)) << built.message();
    return built ? built.take() : mlir::OwningOpRef<mlir::ModuleOp>();
  }

  /// The first op of `part` (in `layer`, -1: outside the layers).
  static mlir::Operation *find(mlir::ModuleOp module, llvm::StringRef part,
                               int64_t layer) {
    mlir::Operation *found = nullptr;
    module.walk([&](mlir::Operation *op) {
      auto p = op->getAttrOfType<mlir::StringAttr>(kPartAttr);
      auto l = op->getAttrOfType<mlir::IntegerAttr>(kLayerAttr);
      if (!found && p && p.getValue() == part && (l ? l.getInt() : -1) == layer)
        found = op;
    });
    return found;
  }

  mlir::MLIRContext context;
  std::unique_ptr<WeightSelection> selection_;
  std::unique_ptr<Checkpoint> checkpoint;
  std::vector<QuantizedTensorDescriptor> logical;
  std::vector<GraphLinear> linears;
  DecoderPlan plan;
};

TEST_F(DecoderGraphTest, TheGraphGivesBackThePlannedProgram) {
  auto module = graph();
  ASSERT_TRUE(module);
  auto program = exportDecoderProgram(*module);
  ASSERT_TRUE(bool(program)) << program.message();
  EXPECT_EQ(toJson(*program), toJson(plan.program));
  EXPECT_TRUE(*program == plan.program);
  // Every model kernel the program names is declared once, privately.
  for (const std::string &symbol : plan.program.modelKernelSymbols()) {
    auto fn = module->lookupSymbol<mlir::func::FuncOp>(
        symbol.substr(std::string("_mlir_ciface_").size()));
    ASSERT_TRUE(fn) << symbol;
    EXPECT_TRUE(fn.isPrivate());
  }
}

TEST_F(DecoderGraphTest, TheEmbeddingCanReadAnotherTensor) {
  auto module = graph();
  ASSERT_TRUE(module);
  // Retarget the embedding at the head's weight with another kernel (the
  // embedding kernel of another row scale): the graph, the exported
  // program and the kernels to build follow.
  const std::string head = plan.program.head.tensor;
  auto embed = std::find_if(
      plan.kernels.begin(), plan.kernels.end(),
      [](const ModelKernelSpec &k) { return k.op == ModelOp::Embed; });
  ASSERT_NE(embed, plan.kernels.end());
  ModelKernelSpec other = *embed;
  other.scale = 2.0;
  ASSERT_TRUE(bool(gatherEmbeddingFrom(*module, head, other)));
  // The head's weight, defined after the embedding, moved before it.
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
  auto program = exportDecoderProgram(*module);
  ASSERT_TRUE(bool(program)) << program.message();
  EXPECT_EQ(program->embed, head);
  EXPECT_EQ(program->kernels.embed, other.symbol());
  auto kernels = graphModelKernels(*module);
  ASSERT_TRUE(bool(kernels)) << kernels.message();
  EXPECT_EQ(kernels->size(), plan.kernels.size());
  size_t embeds = 0;
  for (const ModelKernelSpec &k : *kernels)
    if (k.op == ModelOp::Embed) {
      ++embeds;
      EXPECT_EQ(k.name(), other.name());
    }
  EXPECT_EQ(embeds, 1u);
  // The plain table and its kernel are gone from the graph.
  bool table = false;
  module->walk([&](mlir::qt::WeightOp w) {
    table |= w.getName() == plan.program.embed;
  });
  EXPECT_FALSE(table);
  EXPECT_FALSE(module->lookupSymbol(
      plan.program.kernels.embed.substr(std::string("_mlir_ciface_").size())));
  Status missing = gatherEmbeddingFrom(*module, "no.such.tensor", other);
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(missing.message(),
            "the decoder graph has no qtensor.weight no.such.tensor");
}

TEST_F(DecoderGraphTest, TheKernelsToBuildAreTheGraphsDeclarations) {
  auto module = graph();
  ASSERT_TRUE(module);
  auto kernels = graphModelKernels(*module);
  ASSERT_TRUE(bool(kernels)) << kernels.message();
  std::set<std::string> declared, planned;
  for (const ModelKernelSpec &k : *kernels)
    declared.insert(k.name());
  for (const ModelKernelSpec &k : plan.kernels)
    planned.insert(k.name());
  EXPECT_EQ(declared, planned);

  // A declaration carrying another kernel's spec is refused by name.
  const std::string prefix = "_mlir_ciface_";
  const std::string norm = plan.program.kernels.norm.substr(prefix.size());
  const std::string argmax = plan.program.kernels.argmax.substr(prefix.size());
  auto decl = module->lookupSymbol<mlir::func::FuncOp>(norm);
  ASSERT_TRUE(decl);
  decl->setAttr(kModelKernelAttr,
                module->lookupSymbol(argmax)->getAttr(kModelKernelAttr));
  auto tampered = graphModelKernels(*module);
  ASSERT_FALSE(bool(tampered));
  EXPECT_EQ(tampered.message(),
            "@" + norm + " qtensor.model_kernel: the spec is of " + argmax);
  // A spec missing a field names the declaration.
  decl->setAttr(kModelKernelAttr, mlir::DictionaryAttr::get(&context, {}));
  auto empty = graphModelKernels(*module);
  ASSERT_FALSE(bool(empty));
  EXPECT_NE(empty.message().find("@" + norm + " qtensor.model_kernel"),
            std::string::npos)
      << empty.message();
}

TEST_F(DecoderGraphTest, AMissingOrDoubledPartIsRefusedByName) {
  {
    auto module = graph();
    ASSERT_TRUE(module);
    mlir::Operation *k = find(*module, "k", 1);
    ASSERT_NE(k, nullptr);
    k->removeAttr(kPartAttr);
    auto program = exportDecoderProgram(*module);
    ASSERT_FALSE(bool(program));
    EXPECT_EQ(program.message(),
              "the decoder graph has no k linear in layer 1");
  }
  {
    // Layer 0's ffn_norm op claims layer 1's attn_norm: two weights.
    auto module = graph();
    ASSERT_TRUE(module);
    mlir::Operation *norm = find(*module, "ffn_norm", 0);
    ASSERT_NE(norm, nullptr);
    norm->setAttr(kPartAttr, mlir::StringAttr::get(&context, "attn_norm"));
    norm->setAttr(kLayerAttr, mlir::IntegerAttr::get(
                                  mlir::IntegerType::get(&context, 64), 1));
    auto program = exportDecoderProgram(*module);
    ASSERT_FALSE(bool(program));
    EXPECT_NE(program.message().find("the decoder graph's attn_norm of layer "
                                     "1 is both blk.0.ffn_norm.weight and "
                                     "blk.1.attn_norm.weight"),
              std::string::npos)
        << program.message();
  }
  {
    auto module = graph();
    ASSERT_TRUE(module);
    find(*module, "rope_q", 0)
        ->setAttr(kLayerAttr, mlir::IntegerAttr::get(
                                  mlir::IntegerType::get(&context, 64), 9));
    auto program = exportDecoderProgram(*module);
    ASSERT_FALSE(bool(program));
    EXPECT_EQ(program.message(),
              "the decoder graph's rope_q of layer 9: layer out of range");
  }
  {
    auto module = graph();
    ASSERT_TRUE(module);
    module->lookupSymbol<mlir::func::FuncOp>("forward")->removeAttr(
        kDecoderAttr);
    auto program = exportDecoderProgram(*module);
    ASSERT_FALSE(bool(program));
    EXPECT_EQ(program.message(),
              "the graph has no @forward with a 'qtensor.decoder' dictionary");
  }
}

} // namespace
