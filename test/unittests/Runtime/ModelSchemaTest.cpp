//===- ModelSchemaTest.cpp - The llama schema on constructed manifests ----===//
//
// checkModelSchema on manifests and op bindings built in memory: both
// checkpoint namings (Hugging Face, GGUF), block linears excluded from
// quantization (plain [N, K] tensors, not bound), the head tied, plain or
// quantized, and each error naming the tensor and the shape it should have
// in the artifact's own naming. The last test loads a whole artifact whose
// every linear is kept in float through loadModel: a clean 0-op load.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestArtifact.h"
#include "TestAssertions.h"

#include "qtensor/Runtime/Loader.h"
#include "qtensor/Runtime/ModelSchema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace qtensor;
using namespace qtensor::runtime;
using qtensor::test::contains;

namespace {

// The checkpoint names, written out here independently of the runtime's
// tables: q, k, v, o, gate, up, down; the two layer norms; embedding, final
// norm, head.
struct Names {
  std::string layer; ///< "model.layers." or "blk."
  std::vector<std::string> linears, norms;
  std::string embed, norm, head;
  /// gemma's per-head q and k norms and its attention and MLP output norms.
  std::vector<std::string> sandwich;
};
const Names kHF = {"model.layers.",
                   {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                    "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj",
                    "mlp.down_proj"},
                   {"input_layernorm", "post_attention_layernorm"},
                   "model.embed_tokens.weight",
                   "model.norm.weight",
                   "lm_head.weight"};
const Names kGGUF = {
    "blk.",
    {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
     "ffn_down"},
    {"attn_norm", "ffn_norm"},
    "token_embd.weight",
    "output_norm.weight",
    "output.weight",
    {"attn_q_norm", "attn_k_norm", "post_attention_norm", "post_ffw_norm"}};
/// Hugging Face's gemma: its post_attention_layernorm is attention's output
/// norm, not the norm before the MLP.
const Names kHFGemma = {"model.layers.",
                        kHF.linears,
                        {"input_layernorm", "pre_feedforward_layernorm"},
                        kHF.embed,
                        kHF.norm,
                        kHF.head,
                        {"self_attn.q_norm", "self_attn.k_norm",
                         "post_attention_layernorm",
                         "post_feedforward_layernorm"}};

enum class Head { Tied, Plain, Quantized };

/// A llama checkpoint as an artifact: every block linear quantized and
/// bound unless listed in `plain` (stored as a plain f16 [N, K]).
struct Llama {
  const Names *names = &kHF;
  std::string architecture = "llama";
  int64_t layers = 2, h = 64, kv = 32, inter = 128, vocab = 96;
  Head head = Head::Plain;
  std::set<std::string> plain; ///< linears kept in float
  /// The manifest names quantized weights with this suffix ("@rank0"): a
  /// tensor-parallel artifact's slices; the binding keeps the whole name.
  std::string quantizedSuffix;
  /// gemma3's four extra norms per layer (names->sandwich), with per-head
  /// q/k norms of this width; 0: none.
  int64_t sandwichHeadDim = 0;

  std::string linear(int64_t l, size_t role) const {
    return names->layer + std::to_string(l) + "." + names->linears[role] +
           ".weight";
  }
  std::pair<int64_t, int64_t> nk(size_t role) const {
    std::pair<int64_t, int64_t> want[] = {
        {h, h}, {kv, h}, {kv, h}, {h, h}, {inter, h}, {inter, h}, {h, inter}};
    return want[role];
  }
};

struct Built {
  artifact::Manifest manifest;

  artifact::TensorEntry *find(const std::string &name) {
    for (artifact::TensorEntry &t : manifest.tensors)
      if (t.name == name)
        return &t;
    ADD_FAILURE() << "no tensor " << name;
    return nullptr;
  }
  void erase(const std::string &name) {
    auto &ts = manifest.tensors;
    size_t before = ts.size();
    ts.erase(std::remove_if(ts.begin(), ts.end(),
                            [&](const auto &t) { return t.name == name; }),
             ts.end());
    auto &bs = manifest.bindings;
    bs.erase(std::remove_if(bs.begin(), bs.end(),
                            [&](const auto &e) { return e.op == name; }),
             bs.end());
    EXPECT_LT(ts.size(), before) << "no tensor " << name;
  }
  artifact::OpBinding *op(const std::string &name) {
    for (artifact::OpBinding &e : manifest.bindings)
      if (e.op == name)
        return &e;
    ADD_FAILURE() << "no bound op " << name;
    return nullptr;
  }
  Expected<SchemaCheck> check() const { return checkModelSchema(manifest); }
};

artifact::TensorEntry
plainTensor(const std::string &name, std::vector<int64_t> shape,
            safetensors::DType dtype = safetensors::DType::F16) {
  return {name, "weights.safetensors",
          artifact::PlainTensor{dtype, std::move(shape)}};
}

Built build(const Llama &c) {
  Built b;
  b.manifest.model.architecture = c.architecture;
  auto quantized = [&](const std::string &name, int64_t n, int64_t k) {
    artifact::QuantizedTensor q;
    q.logical.shape = {n, k};
    b.manifest.tensors.push_back(
        {name + c.quantizedSuffix, "weights.safetensors", q});
    artifact::OpBinding e;
    e.op = name;
    e.n = n;
    e.k = k;
    b.manifest.bindings.push_back(e);
  };
  b.manifest.tensors.push_back(plainTensor(c.names->embed, {c.vocab, c.h}));
  b.manifest.tensors.push_back(plainTensor(c.names->norm, {c.h}));
  for (int64_t l = 0; l < c.layers; ++l) {
    for (size_t r = 0; r < 7; ++r) {
      std::string name = c.linear(l, r);
      auto [n, k] = c.nk(r);
      if (c.plain.count(name))
        b.manifest.tensors.push_back(plainTensor(name, {n, k}));
      else
        quantized(name, n, k);
    }
    for (const std::string &norm : c.names->norms)
      b.manifest.tensors.push_back(plainTensor(
          c.names->layer + std::to_string(l) + "." + norm + ".weight", {c.h}));
    const std::string block = c.names->layer + std::to_string(l) + ".";
    if (c.sandwichHeadDim && !c.names->sandwich.empty())
      for (size_t i = 0; i < 4; ++i)
        b.manifest.tensors.push_back(
            plainTensor(block + c.names->sandwich[i] + ".weight",
                        {i < 2 ? c.sandwichHeadDim : c.h}));
  }
  if (c.head == Head::Plain)
    b.manifest.tensors.push_back(plainTensor(c.names->head, {c.vocab, c.h}));
  else if (c.head == Head::Quantized)
    quantized(c.names->head, c.vocab, c.h);
  return b;
}

std::string failure(const Built &b) {
  auto r = b.check();
  EXPECT_FALSE(bool(r)) << "accepted: " << (r ? r->summary : "");
  return r ? "" : r.message();
}

// --- both namings ---------------------------------------------------------

TEST(ModelSchema, HuggingFaceNamesKeepTheDefaultSummary) {
  auto r = build({}).check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_TRUE(r->known);
  // The text `qtc run` prints and the lit tests pin.
  EXPECT_EQ(r->summary, "llama: 2 layers, H 64, KV 32, I 128, vocab 96");
  EXPECT_EQ(r->naming, TensorNaming::HuggingFace);
  EXPECT_EQ(r->layers, 2);
  EXPECT_EQ(r->hidden, 64);
  EXPECT_EQ(r->kv, 32);
  EXPECT_EQ(r->intermediate, 128);
  EXPECT_EQ(r->vocab, 96);
  EXPECT_EQ(r->head, HeadKind::Plain);
  EXPECT_EQ(r->floatLinears, 0);

  Llama tied;
  tied.head = Head::Tied;
  auto t = build(tied).check();
  ASSERT_TRUE(bool(t)) << t.message();
  EXPECT_EQ(t->summary,
            "llama: 2 layers, H 64, KV 32, I 128, vocab 96, tied head");
  EXPECT_EQ(t->head, HeadKind::Tied);
}

TEST(ModelSchema, GGUFNamesAreALlama) {
  Llama c;
  c.names = &kGGUF;
  auto r = build(c).check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_EQ(r->naming, TensorNaming::GGUF);
  EXPECT_EQ(r->summary,
            "llama: 2 layers, H 64, KV 32, I 128, vocab 96, gguf names");
  c.head = Head::Tied;
  c.layers = 3;
  r = build(c).check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_EQ(r->summary, "llama: 3 layers, H 64, KV 32, I 128, vocab 96, "
                        "tied head, gguf names");
}

TEST(ModelSchema, TheLlamaFamilySharesTheSchema) {
  for (const char *arch : {"mistral", "qwen2"}) {
    Llama c;
    c.architecture = arch;
    c.names = &kGGUF;
    auto r = build(c).check();
    ASSERT_TRUE(bool(r)) << r.message();
    EXPECT_TRUE(r->known);
    EXPECT_EQ(r->summary.rfind(std::string(arch) + ": 2 layers", 0), 0u)
        << r->summary;
  }
}

TEST(ModelSchema, RankSlicesDoNotHideTheNaming) {
  // tp > 1: the manifest holds "<op>@rank<r>", the binding the whole op.
  Llama c;
  c.names = &kGGUF;
  c.quantizedSuffix = "@rank0";
  auto r = build(c).check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_EQ(r->naming, TensorNaming::GGUF);
}

TEST(ModelSchema, GGUFLayerMissingARole) {
  Llama c;
  c.names = &kGGUF;
  Built b = build(c);
  b.erase("blk.1.ffn_gate.weight");
  EXPECT_TRUE(contains(failure(b), "model schema (llama): "
                                   "blk.1.ffn_gate.weight is missing (neither "
                                   "a bound quantized op nor a plain tensor)"));
}

TEST(ModelSchema, GGUFErrorsUseGGUFNames) {
  Llama c;
  c.names = &kGGUF;
  Built b = build(c);
  b.op("blk.1.attn_k.weight")->n = 40;
  EXPECT_TRUE(contains(failure(b), "blk.1.attn_k.weight is [40, 64], "
                                   "expected [32, 64] (H = 64, KV = 32, "
                                   "I = 128)"));

  b = build(c);
  b.erase("blk.1.ffn_norm.weight");
  EXPECT_TRUE(contains(failure(b), "required tensor "
                                   "\"blk.1.ffn_norm.weight\" is missing"));

  b = build(c);
  b.find("output_norm.weight")->data =
      artifact::PlainTensor{safetensors::DType::F16, {32}};
  EXPECT_TRUE(contains(failure(b), "tensor \"output_norm.weight\" has shape "
                                   "[32], expected [64]"));

  b = build(c);
  b.erase("token_embd.weight");
  EXPECT_TRUE(contains(failure(b), "the embedding token_embd.weight is "
                                   "missing or not a plain 2-D tensor"));

  // An op of the naming's namespace with a role the schema does not know.
  b = build(c);
  b.op("blk.0.attn_q.weight")->op = "blk.0.attn_qkv.weight";
  EXPECT_TRUE(contains(failure(b), "op \"blk.0.attn_qkv.weight\" is not a "
                                   "linear of the schema (blk.<L>.<attn_q|"));
}

TEST(ModelSchema, MixedNamingsAreRefused) {
  // A GGUF norm among Hugging Face names.
  Built b = build({});
  b.manifest.tensors.push_back(plainTensor("blk.0.attn_norm.weight", {64}));
  EXPECT_TRUE(contains(failure(b), "model schema (llama): the artifact mixes "
                                   "Hugging Face names"));
  EXPECT_TRUE(contains(failure(b), "and GGUF names (\"blk.0.attn_norm.weight"
                                   "\"); one checkpoint uses one naming"));
  // A bound GGUF op among Hugging Face tensors.
  b = build({});
  b.op("model.layers.1.mlp.up_proj.weight")->op = "blk.1.ffn_up.weight";
  EXPECT_TRUE(contains(failure(b), "the artifact mixes Hugging Face names"));
}

TEST(ModelSchema, LayersMustBeContiguous) {
  Llama c;
  c.layers = 3;
  Built b = build(c);
  for (size_t r = 0; r < 7; ++r)
    b.erase(c.linear(1, r));
  EXPECT_TRUE(contains(failure(b), "layer 1 is missing: none of its linears "
                                   "is bound or stored (layers go up to 2)"));

  // Norms of a layer past the last linear: that layer lost its linears.
  c.layers = 2;
  c.names = &kGGUF;
  b = build(c);
  b.manifest.tensors.push_back(plainTensor("blk.2.attn_norm.weight", {64}));
  EXPECT_TRUE(contains(failure(b), "layer 2 is missing"));

  // A leading zero names no layer.
  b = build(c);
  b.op("blk.0.attn_q.weight")->op = "blk.00.attn_q.weight";
  EXPECT_TRUE(contains(failure(b), "op \"blk.00.attn_q.weight\" is not a "
                                   "linear of the schema"));
}

// --- linears excluded from quantization -------------------------------------

TEST(ModelSchema, ExcludedLinearsArePlainTensors) {
  for (const Names *names : {&kHF, &kGGUF}) {
    Llama c;
    c.names = names;
    c.plain = {c.linear(0, 6), c.linear(1, 0), c.linear(1, 5)};
    auto r = build(c).check();
    ASSERT_TRUE(bool(r)) << r.message();
    EXPECT_EQ(r->floatLinears, 3);
    EXPECT_EQ(r->summary,
              std::string("llama: 2 layers, H 64, KV 32, I 128, vocab 96, 3 "
                          "linears kept in float") +
                  (names == &kGGUF ? ", gguf names" : ""));
  }
  Llama one;
  one.plain = {one.linear(1, 3)};
  auto r = build(one).check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_TRUE(contains(r->summary, ", 1 linear kept in float"));
}

TEST(ModelSchema, WidthsComeFromPlainShapesWhenLayerZeroIsNotTraced) {
  Llama c;
  c.names = &kGGUF;
  c.h = 96;
  c.kv = 48;
  c.inter = 160;
  for (size_t r = 0; r < 7; ++r)
    c.plain.insert(c.linear(0, r));
  auto r = build(c).check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_EQ(r->hidden, 96);
  EXPECT_EQ(r->kv, 48);
  EXPECT_EQ(r->intermediate, 160);
  EXPECT_EQ(r->floatLinears, 7);

  // Layer 1, bound, disagrees with the plain layer 0: layer 1 is named.
  Built b = build(c);
  b.op("blk.1.ffn_down.weight")->k = 128;
  EXPECT_TRUE(contains(failure(b), "blk.1.ffn_down.weight is [96, 128], "
                                   "expected [96, 160]"));
}

TEST(ModelSchema, WrongPlainShapeOfAnExcludedLinear) {
  Llama c;
  c.names = &kGGUF;
  c.plain = {"blk.0.ffn_down.weight"};
  Built b = build(c);
  // The bound ops of layer 0 give the widths, so the plain one is blamed.
  b.find("blk.0.ffn_down.weight")->data =
      artifact::PlainTensor{safetensors::DType::F16, {128, 64}};
  EXPECT_TRUE(contains(failure(b), "model schema (llama): "
                                   "blk.0.ffn_down.weight (kept in float) is "
                                   "[128, 64], expected [64, 128] (H = 64, "
                                   "KV = 32, I = 128)"));

  Llama hf;
  hf.plain = {hf.linear(0, 0)};
  b = build(hf);
  b.find(hf.linear(0, 0))->data =
      artifact::PlainTensor{safetensors::DType::F16, {64, 72}};
  EXPECT_TRUE(contains(failure(b), "model.layers.0.self_attn.q_proj.weight "
                                   "(kept in float) is [64, 72], expected "
                                   "[64, 64]"));
}

TEST(ModelSchema, AnExcludedLinearIsA2DFloatTensor) {
  Llama c;
  c.names = &kGGUF;
  c.plain = {"blk.1.attn_v.weight"};
  Built b = build(c);
  b.find("blk.1.attn_v.weight")->data =
      artifact::PlainTensor{safetensors::DType::F16, {32, 64, 1}};
  EXPECT_TRUE(contains(failure(b), "blk.1.attn_v.weight is stored plain as "
                                   "F16 [32, 64, 1]; a linear kept in float "
                                   "is a 2-D float tensor [N, K]"));
  b.find("blk.1.attn_v.weight")->data =
      artifact::PlainTensor{safetensors::DType::I8, {32, 64}};
  EXPECT_TRUE(contains(failure(b), "blk.1.attn_v.weight is stored plain as "
                                   "I8 [32, 64]"));
}

TEST(ModelSchema, ATracedLinearIsNotAlsoPlain) {
  Built b = build({});
  // A binding names it, the manifest stores it in float.
  b.find("model.layers.0.mlp.up_proj.weight")->data =
      artifact::PlainTensor{safetensors::DType::F16, {128, 64}};
  EXPECT_TRUE(contains(failure(b),
                       "op \"model.layers.0.mlp.up_proj.weight\" "
                       "is bound as a quantized op, but the manifest "
                       "stores it plain"));
}

TEST(ModelSchema, EveryLinearKeptInFloatIsValid) {
  Llama c;
  c.names = &kGGUF;
  c.head = Head::Tied;
  for (int64_t l = 0; l < c.layers; ++l)
    for (size_t r = 0; r < 7; ++r)
      c.plain.insert(c.linear(l, r));
  Built b = build(c);
  EXPECT_TRUE(b.manifest.bindings.empty());
  auto r = b.check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_EQ(r->floatLinears, 14);
  EXPECT_EQ(r->summary,
            "llama: 2 layers, H 64, KV 32, I 128, vocab 96, tied head, all 14 "
            "linears kept in float (nothing to dispatch), gguf names");
}

TEST(ModelSchema, NoLinearsAtAll) {
  Built b = build({});
  b.manifest.bindings.clear();
  b.manifest.tensors.clear();
  EXPECT_TRUE(contains(failure(b), "model schema (llama): no linear layers "
                                   "(none bound, none stored "
                                   "plain"));
}

// --- the head ---------------------------------------------------------------

TEST(ModelSchema, QuantizedHeadIsATracedLinear) {
  for (const Names *names : {&kHF, &kGGUF}) {
    Llama c;
    c.names = names;
    c.head = Head::Quantized;
    auto r = build(c).check();
    ASSERT_TRUE(bool(r)) << r.message();
    EXPECT_EQ(r->head, HeadKind::Quantized);
    EXPECT_EQ(r->summary,
              std::string("llama: 2 layers, H 64, KV 32, I 128, vocab 96, "
                          "head quantized") +
                  (names == &kGGUF ? ", gguf names" : ""));
  }
  // Tied in the checkpoint, quantized by the compile: the same artifact
  // shape (a quantized head copy, the embedding plain), also sliced.
  Llama sliced;
  sliced.head = Head::Quantized;
  sliced.quantizedSuffix = "@rank1";
  auto r = build(sliced).check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_EQ(r->head, HeadKind::Quantized);
}

TEST(ModelSchema, HeadWithTheWrongShape) {
  Llama c;
  c.names = &kGGUF;
  c.head = Head::Quantized;
  Built b = build(c);
  b.op("output.weight")->n = 95;
  EXPECT_TRUE(contains(failure(b), "op \"output.weight\" (the quantized "
                                   "head) is [95, 64], expected [96, 64] "
                                   "([vocab, H])"));

  c.head = Head::Plain;
  b = build(c);
  b.find("output.weight")->data =
      artifact::PlainTensor{safetensors::DType::F16, {96, 32}};
  EXPECT_TRUE(contains(failure(b), "tensor \"output.weight\" has shape "
                                   "[96, 32], expected [96, 64]"));

  // A quantized head no binding names.
  c.head = Head::Quantized;
  b = build(c);
  b.manifest.bindings.erase(std::remove_if(b.manifest.bindings.begin(),
                                           b.manifest.bindings.end(),
                                           [](const artifact::OpBinding &e) {
                                             return e.op == "output.weight";
                                           }),
                            b.manifest.bindings.end());
  EXPECT_TRUE(contains(failure(b), "the head output.weight is quantized, "
                                   "but no op binding names it"));
}

TEST(ModelSchema, TheEmbeddingIsNotALinear) {
  Built b = build({});
  artifact::OpBinding e;
  e.op = "model.embed_tokens.weight";
  e.n = 96;
  e.k = 64;
  b.manifest.bindings.push_back(e);
  EXPECT_TRUE(contains(failure(b), "op \"model.embed_tokens.weight\" is the "
                                   "embedding, a gather that stays plain"));
}

// --- gemma3 -----------------------------------------------------------------

Llama gemma3() {
  Llama c;
  c.architecture = "gemma3";
  c.names = &kGGUF;
  c.head = Head::Tied;
  c.sandwichHeadDim = 16;
  return c;
}

TEST(ModelSchema, Gemma3AddsFourNormsPerLayer) {
  auto r = build(gemma3()).check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_TRUE(r->known);
  EXPECT_EQ(r->summary, "gemma3: 2 layers, H 64, KV 32, I 128, vocab 96, "
                        "tied head, gguf names");

  Built missing = build(gemma3());
  missing.erase("blk.1.post_ffw_norm.weight");
  EXPECT_EQ(failure(missing), "model schema (gemma3): required tensor "
                              "\"blk.1.post_ffw_norm.weight\" is missing");

  Built wide = build(gemma3());
  std::get<artifact::PlainTensor>(wide.find("blk.1.attn_k_norm.weight")->data)
      .shape = {32};
  EXPECT_EQ(failure(wide),
            "model schema (gemma3): tensor \"blk.1.attn_k_norm.weight\" has "
            "shape [32], expected [16]");

  // A head width must divide both the q (64) and the kv (32) widths.
  Llama odd = gemma3();
  odd.sandwichHeadDim = 24;
  EXPECT_TRUE(contains(failure(build(odd)),
                       "blk.0.attn_q_norm.weight is [24], which is no head "
                       "width of q (64) and kv (32)"));
}

TEST(ModelSchema, Gemma3FromHuggingFaceHasItsOwnNormNames) {
  Llama c = gemma3();
  c.names = &kHFGemma;
  auto r = build(c).check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_EQ(r->summary, "gemma3: 2 layers, H 64, KV 32, I 128, vocab 96, "
                        "tied head");
  // llama's names for the norm before the MLP are not gemma's.
  c.names = &kHF;
  EXPECT_EQ(failure(build(c)),
            "model schema (gemma3): required tensor "
            "\"model.layers.0.pre_feedforward_layernorm.weight\" is missing");
}

// --- qwen3 ------------------------------------------------------------------

/// A Hugging Face qwen3: llama's tensors and each layer's per-head q and k
/// norms of width 16 (no output norms).
Built qwen3() {
  Llama c;
  c.architecture = "qwen3";
  Built b = build(c);
  for (int64_t l = 0; l < c.layers; ++l)
    for (const char *norm : {"q_norm", "k_norm"})
      b.manifest.tensors.push_back(
          plainTensor("model.layers." + std::to_string(l) + ".self_attn." +
                          norm + ".weight",
                      {16}));
  return b;
}

TEST(ModelSchema, Qwen3AddsHeadNormsOnly) {
  auto r = qwen3().check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_TRUE(r->known);

  Built missing = qwen3();
  missing.erase("model.layers.1.self_attn.k_norm.weight");
  EXPECT_EQ(failure(missing),
            "model schema (qwen3): required tensor "
            "\"model.layers.1.self_attn.k_norm.weight\" is missing");

  Built none = build([] {
    Llama c;
    c.architecture = "qwen3";
    return c;
  }());
  EXPECT_TRUE(contains(failure(none),
                       "the per-head q norm "
                       "model.layers.0.self_attn.q_norm.weight is missing"));
}

// --- other architectures ----------------------------------------------------

TEST(ModelSchema, ArchitecturesWithoutASchemaAreGeneric) {
  Built b = build({});
  b.manifest.model.architecture = "mlir";
  b.op("model.layers.0.self_attn.q_proj.weight")->op = "matmul_0.weight";
  auto r = b.check();
  ASSERT_TRUE(bool(r)) << r.message();
  EXPECT_FALSE(r->known);
  EXPECT_EQ(r->summary, "no schema for architecture \"mlir\": every "
                        "quantized tensor checked as a bound 2-D linear");
}

// --- through the loader
// -------------------------------------------------------

TEST(ModelSchema, LoaderPlansZeroOpsWhenEveryLinearIsFloat) {
  Llama c;
  c.names = &kGGUF;
  for (int64_t l = 0; l < c.layers; ++l)
    for (size_t r = 0; r < 7; ++r)
      c.plain.insert(c.linear(l, r));
  Built b = build(c);

  // Every tensor is plain: write them as f16 zeros, with no bindings.
  artifact::ArtifactWriter writer(rttest::baseManifest("llama"));
  std::vector<std::vector<uint8_t>> keep;
  keep.reserve(b.manifest.tensors.size());
  for (const artifact::TensorEntry &t : b.manifest.tensors) {
    const artifact::PlainTensor &p = *t.plain();
    int64_t count = 1;
    for (int64_t d : p.shape)
      count *= d;
    keep.emplace_back(size_t(2 * count), 0);
    ASSERT_TRUE(bool(writer.addPlainTensor(
        "weights.safetensors",
        {t.name, p.dtype, p.shape, keep.back().data(), keep.back().size()})));
  }
  auto text = [](const std::string &s) {
    return std::vector<uint8_t>(s.begin(), s.end());
  };
  ASSERT_TRUE(bool(writer.addFile("graph.mlir", artifact::FileRole::Graph,
                                  text("module {}\n"))));
  ASSERT_TRUE(bool(writer.addFile("dispatch-trace.json",
                                  artifact::FileRole::Trace, text("[]"))));
  rttest::TempDir dir;
  auto written = writer.write(dir.str());
  ASSERT_TRUE(bool(written)) << written.message();

  LoadOptions o;
  o.backend = BackendChoice::Host;
  auto model = loadModel(dir.str(), o);
  ASSERT_TRUE(bool(model)) << model.message();
  EXPECT_TRUE((*model)->plan().ops.empty());
  EXPECT_TRUE(contains((*model)->schema().summary,
                       "all 14 linears kept in float (nothing to dispatch)"));
}

} // namespace
