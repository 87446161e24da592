//===- DispatchPlanTest.cpp - Selection, layouts, repacks and the trace ---===//

#include "qtensor/Kernels/Admission.h"
#include "qtensor/Kernels/DispatchTrace.h"
#include "qtensor/Kernels/Registry.h"

#include <gtest/gtest.h>

using namespace qtensor;
using namespace qtensor::kernels;
using json = nlohmann::json;

namespace {
const KernelRegistry &builtin() { return builtinRegistry(); }

const LayoutId kGemvLayout{"decode_gemv", 1, "offset_binary"};
const LayoutId kMmaLayout{"prefill_mma", 1, "offset_binary"};
const LayoutId kLogical{"logical", 1, "lsb_first"};

OpSignature w4(int64_t groupSize = 128, int64_t n = 4096, int64_t k = 4096) {
  OpSignature sig;
  sig.descriptor.code = {4, true};
  sig.descriptor.granularity = Granularity::Group;
  sig.descriptor.axis = 1;
  sig.descriptor.groupSize = groupSize;
  sig.n = n;
  sig.k = k;
  sig.ranks = {{0, n, 0, k}};
  return sig;
}

DispatchQuery query(const std::string &device, std::vector<Phase> phases,
                    FallbackPolicy policy = FallbackPolicy::Forbid,
                    LayoutMode mode = LayoutMode::Shared) {
  DispatchQuery q{*parseTarget(device), policy, mode, {}};
  for (Phase p : phases)
    q.phases.push_back({p, phaseTokens(p)});
  return q;
}

std::string selected(const PhaseSelection &sel) {
  return sel.selected ? sel.selected->id : "none";
}

const Candidate &candidate(const PhaseSelection &sel, const std::string &id) {
  for (const Candidate &c : sel.candidates)
    if (c.kernel == id)
      return c;
  ADD_FAILURE() << "no candidate " << id;
  return sel.candidates.front();
}
} // namespace

TEST(DispatchPlan, DecodeAloneTakesTheGemv) {
  DispatchPlan plan =
      planDispatch(builtin(), w4(), query("sm_90", {Phase::Decode}));
  ASSERT_EQ(plan.phases.size(), 1u);
  EXPECT_EQ(selected(plan.phases[0]), "affine_gemv_decode_sm80");
  EXPECT_FALSE(plan.phases[0].fallback);
  EXPECT_EQ(plan.layout, kGemvLayout);
  EXPECT_EQ(candidate(plan.phases[0], "affine_mma_prefill_sm80").reason,
            "admitted; lower priority than affine_gemv_decode_sm80 (90 < 100)");
  EXPECT_EQ(candidate(plan.phases[0], "full_dequant_linear").reason,
            "full-dequant fallback forbidden by fallback=forbid");
}

TEST(DispatchPlan, SharedLayoutServesBothPhasesWithTheMma) {
  // One packed copy: the mma layout is the only one both phases can read.
  DispatchPlan plan = planDispatch(
      builtin(), w4(), query("sm_90", {Phase::Decode, Phase::Prefill}));
  ASSERT_EQ(plan.phases.size(), 2u);
  EXPECT_EQ(selected(plan.phases[0]), "affine_mma_prefill_sm80");
  EXPECT_EQ(selected(plan.phases[1]), "affine_mma_prefill_sm80");
  EXPECT_EQ(plan.layout, kMmaLayout);
  EXPECT_FALSE(plan.secondaryLayout);
  EXPECT_EQ(plan.resolution, "one layout serves decode and prefill");
  const Candidate &gemv = candidate(plan.phases[0], "affine_gemv_decode_sm80");
  EXPECT_TRUE(gemv.accepted);
  EXPECT_EQ(gemv.reason, "admitted; reads (decode_gemv, 1, offset_binary) but "
                         "the weight's one layout is (prefill_mma, 1, "
                         "offset_binary) (layouts=shared)");
}

TEST(DispatchPlan, PerPhaseLayoutsPickDifferentKernels) {
  DispatchPlan plan =
      planDispatch(builtin(), w4(),
                   query("sm_80", {Phase::Decode, Phase::Prefill},
                         FallbackPolicy::Forbid, LayoutMode::PerPhase));
  EXPECT_EQ(selected(plan.phases[0]), "affine_gemv_decode_sm80");
  EXPECT_EQ(selected(plan.phases[1]), "affine_mma_prefill_sm80");
  EXPECT_EQ(plan.layout, kGemvLayout);
  EXPECT_EQ(plan.secondaryLayout, kMmaLayout);
  EXPECT_EQ(plan.secondaryPhase, Phase::Prefill);
  EXPECT_EQ(plan.resolution,
            "secondary layout (prefill_mma, 1, offset_binary) for prefill: "
            "both packings are stored (layouts=per-phase)");
}

TEST(DispatchPlan, HostTargetTakesTheHostKernels) {
  // The CPU's own GEMM serves both phases from the GEMV's layout, above the
  // host twins of the GPU kernels (which stay admitted, as parity oracles).
  for (LayoutMode mode : {LayoutMode::PerPhase, LayoutMode::Shared}) {
    DispatchPlan plan =
        planDispatch(builtin(), w4(),
                     query("host", {Phase::Decode, Phase::Prefill},
                           FallbackPolicy::Forbid, mode));
    // Signed codes: the int8-activation GEMM, above the float one.
    EXPECT_EQ(selected(plan.phases[0]), "affine_gemm_host_xq8");
    EXPECT_EQ(selected(plan.phases[1]), "affine_gemm_host_xq8");
    EXPECT_EQ(plan.layout, kGemvLayout);
    EXPECT_FALSE(plan.secondaryLayout.has_value());
    EXPECT_EQ(candidate(plan.phases[0], "affine_gemv_decode_sm80").reason,
              "needs sm_80, target is host");
    EXPECT_EQ(candidate(plan.phases[0], "affine_gemm_host").reason,
              "admitted; lower priority than affine_gemm_host_xq8 (110 < "
              "120)");
    // Activations kept float: the float-activation GEMM.
    DispatchQuery floats = query("host", {Phase::Decode, Phase::Prefill},
                                 FallbackPolicy::Forbid, mode);
    floats.int8Activations = false;
    plan = planDispatch(builtin(), w4(), floats);
    EXPECT_EQ(selected(plan.phases[0]), "affine_gemm_host");
    EXPECT_EQ(selected(plan.phases[1]), "affine_gemm_host");
    EXPECT_EQ(candidate(plan.phases[0], "affine_gemm_host_xq8").reason,
              "quantizes its activations to int8, and the compile keeps "
              "them float (int8-activations=false)");
    EXPECT_EQ(candidate(plan.phases[0], "affine_gemv_decode_host").reason,
              "admitted; lower priority than affine_gemm_host (100 < 110)");
  }
}

TEST(DispatchPlan, Int8ActivationsTakeSignedOrMinCodesInWholeTilesUpToItsK) {
  auto reasonFor = [](const OpSignature &sig) {
    DispatchPlan plan =
        planDispatch(builtin(), sig, query("host", {Phase::Decode}));
    return candidate(plan.phases[0], "affine_gemm_host_xq8").reason;
  };
  // Unsigned codes with float zero-points keep the float-activation
  // GEMM; with integer ones (GPTQ, `asym`) or a min (ggml Q4_K, Q4_1)
  // they take the int8 one.
  OpSignature unsignedCodes = w4(32);
  unsignedCodes.descriptor.code = {4, false};
  unsignedCodes.descriptor.zeroPoint = ZeroPointKind::Float;
  EXPECT_NE(reasonFor(unsignedCodes)
                .find("zero-point float with unsigned codes not in "
                      "{integer, min}"),
            std::string::npos)
      << reasonFor(unsignedCodes);
  for (ZeroPointKind kind : {ZeroPointKind::Integer, ZeroPointKind::Min}) {
    unsignedCodes.descriptor.zeroPoint = kind;
    EXPECT_EQ(selected(planDispatch(builtin(), unsignedCodes,
                                    query("host", {Phase::Decode}))
                           .phases[0]),
              "affine_gemm_host_xq8")
        << reasonFor(unsignedCodes);
  }
  // An act-order permutation: the kernel would quantize the gathered X.
  OpSignature permuted = w4(32, 64, 64);
  std::vector<int64_t> order;
  for (int64_t i = 63; i >= 0; --i)
    order.push_back(i);
  permuted.descriptor.permutation = order;
  EXPECT_NE(reasonFor(permuted).find("act-order permutation of K: int8 "
                                     "activations would be quantized per 32 "
                                     "in the gathered order"),
            std::string::npos)
      << reasonFor(permuted);
  EXPECT_EQ(
      selected(planDispatch(builtin(), permuted, query("host", {Phase::Decode}))
                   .phases[0]),
      "affine_gemm_host");
  // Groups of 16 within a 32-code W4 tile, and a K above its stack row.
  EXPECT_NE(reasonFor(w4(16)).find("groups of 16 within a 32-code K tile: "
                                   "int8 activations scale a tile's "
                                   "integer sum once"),
            std::string::npos)
      << reasonFor(w4(16));
  EXPECT_NE(reasonFor(w4(128, 64, 32896))
                .find("K 32896 above the kernel's "
                      "32768"),
            std::string::npos)
      << reasonFor(w4(128, 64, 32896));
  // Within them it is selected.
  DispatchPlan plan = planDispatch(builtin(), w4(32, 64, 32768),
                                   query("host", {Phase::Decode}));
  EXPECT_EQ(selected(plan.phases[0]), "affine_gemm_host_xq8");
}

TEST(DispatchPlan, NoKernelUnderForbidSelectsNothing) {
  DispatchPlan plan =
      planDispatch(builtin(), w4(96), query("sm_90", {Phase::Decode}));
  EXPECT_EQ(selected(plan.phases[0]), "none");
  EXPECT_FALSE(plan.phases[0].fallback);
  EXPECT_FALSE(plan.layout);
  for (const Candidate &c : plan.phases[0].candidates) {
    EXPECT_FALSE(c.accepted) << c.kernel;
    EXPECT_FALSE(c.reason.empty()) << c.kernel;
  }
  EXPECT_EQ(plan.resolution,
            "no kernel-native layout admitted; the stored layout stays");
}

TEST(DispatchPlan, AllowTakesTheFallback) {
  DispatchPlan plan =
      planDispatch(builtin(), w4(96),
                   query("sm_90", {Phase::Decode}, FallbackPolicy::Allow));
  EXPECT_EQ(selected(plan.phases[0]), "full_dequant_linear");
  EXPECT_TRUE(plan.phases[0].fallback);
  EXPECT_EQ(candidate(plan.phases[0], "full_dequant_linear").reason,
            "selected: full-dequant fallback (fallback=allow)");
  EXPECT_FALSE(plan.layout);
}

TEST(DispatchPlan, SharedLayoutLeavesAPhaseToTheFallback) {
  // K = 4100: the GEMV takes any K, the mma needs K % 8 (16-byte cp.async
  // copies of X). The decode layout wins; prefill falls back.
  OpSignature sig = w4(128, 4096, 4100);
  DispatchPlan plan = planDispatch(
      builtin(), sig,
      query("sm_90", {Phase::Decode, Phase::Prefill}, FallbackPolicy::Allow));
  EXPECT_EQ(selected(plan.phases[0]), "affine_gemv_decode_sm80");
  EXPECT_EQ(selected(plan.phases[1]), "full_dequant_linear");
  EXPECT_TRUE(plan.phases[1].fallback);
  EXPECT_EQ(plan.layout, kGemvLayout);
  EXPECT_EQ(candidate(plan.phases[1], "affine_mma_prefill_sm80").reason,
            "K 4100 not a multiple of tile 8");
  EXPECT_EQ(plan.resolution,
            "one layout; the other phase has no kernel reading it");
}

TEST(DispatchPlan, SharedLayoutPrefersDecodeOnATie) {
  // A registry whose decode and prefill kernels read different layouts and
  // nothing reads both: each layout covers one phase; decode wins the tie.
  KernelRegistry r = builtin();
  r.kernels[1].tokens.min = kMaxDecodeTokens + 1;
  r.kernels[1].phases = {Phase::Prefill};
  ASSERT_TRUE(verifyRegistry(r)) << verifyRegistry(r).message();
  DispatchPlan plan =
      planDispatch(r, w4(), query("sm_90", {Phase::Decode, Phase::Prefill}));
  EXPECT_EQ(plan.layout, kGemvLayout);
  EXPECT_EQ(selected(plan.phases[0]), "affine_gemv_decode_sm80");
  EXPECT_EQ(selected(plan.phases[1]), "none");
  EXPECT_EQ(candidate(plan.phases[1], "affine_mma_prefill_sm80").reason,
            "admitted; reads (prefill_mma, 1, offset_binary) but the weight's "
            "one layout is (decode_gemv, 1, offset_binary) (layouts=shared)");
}

TEST(DispatchPlan, RepackKinds) {
  const KernelRegistry &r = builtin();
  EXPECT_EQ(repackKind(r, kMmaLayout, kMmaLayout, true), RepackKind::None);
  EXPECT_EQ(repackKind(r, kLogical, kMmaLayout, true), RepackKind::Prepacked);
  EXPECT_EQ(repackKind(r, kLogical, kMmaLayout, false), RepackKind::LoadTime);
  EXPECT_EQ(repackKind(r, {"ggml_block", 1, "q4_0"}, kGemvLayout, true),
            RepackKind::LoadTime);
  EXPECT_EQ(repackKind(r, kGemvLayout, kMmaLayout, true), RepackKind::LoadTime);
  EXPECT_FALSE(repackKind(r, {"ggml_block", 1, "q4_1"}, kGemvLayout, true));
}

TEST(DispatchPlan, StoredLayoutMustAgreeWithTheDescriptor) {
  const KernelRegistry &r = builtin();
  AffineDescriptor q4_0;
  q4_0.code = {4, true};
  q4_0.encoding = SignedEncoding::OffsetBinary;
  q4_0.granularity = Granularity::Group;
  q4_0.axis = 1;
  q4_0.groupSize = 32;
  LayoutDescriptor ggml{"ggml_block", 1, "q4_0", {1, 32}, {0, 0}};
  EXPECT_TRUE(verifyStoredLayout(r, q4_0, ggml, {64, 256}));

  AffineDescriptor si8 = q4_0;
  si8.code = {8, true};
  si8.encoding = SignedEncoding::TwosComplement;
  Status s = verifyStoredLayout(r, si8, ggml, {64, 256});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "layout (ggml_block, 1, q4_0) holds si4 "
                         "offset_binary codes, the descriptor says si8 "
                         "twos_complement");

  AffineDescriptor g64 = q4_0;
  g64.groupSize = 64;
  s = verifyStoredLayout(r, g64, ggml, {64, 256});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "layout (ggml_block, 1, q4_0) stores one scale per "
                         "32 codes along the last axis (1), the descriptor "
                         "has other granularity");

  LayoutDescriptor mma{"prefill_mma", 1, "offset_binary", {32, 16}, {}};
  s = verifyStoredLayout(r, q4_0, mma, {64, 256});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "layout (prefill_mma, 1, offset_binary) has tile "
                         "[64, 16] for 4-bit codes, got [32, 16]");

  AffineDescriptor ui7 = q4_0;
  ui7.code = {7, false};
  s = verifyStoredLayout(r, ui7, mma, {64, 256});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "layout (prefill_mma, 1, offset_binary) holds {2, "
                         "3, 4, 5, 6, 8}-bit codes, the descriptor says ui7");
  // An unknown layout is admission's business, not a contradiction.
  EXPECT_TRUE(
      verifyStoredLayout(r, q4_0, {"tiled", 2, "x", {}, {}}, {64, 256}));
}

TEST(DispatchPlan, KernelLayoutDescriptorPadsToItsTile) {
  auto exact = kernelLayoutDescriptor(builtin(), kMmaLayout, 4, {4096, 11008});
  ASSERT_TRUE(exact) << exact.message();
  EXPECT_EQ(exact->tile, (std::vector<int64_t>{64, 16}));
  EXPECT_TRUE(exact->padding.empty());
  EXPECT_TRUE(verifyLayoutForShape(*exact, {4096, 11008}));
  auto padded = kernelLayoutDescriptor(builtin(), kMmaLayout, 8, {100, 40});
  ASSERT_TRUE(padded) << padded.message();
  EXPECT_EQ(padded->tile, (std::vector<int64_t>{32, 16}));
  EXPECT_EQ(padded->padding, (std::vector<int64_t>{28, 8}));
  EXPECT_TRUE(verifyLayoutForShape(*padded, {100, 40}));
  // 2-bit codes take byte fields, in W8's tile; 7-bit codes have none.
  auto ui2 = kernelLayoutDescriptor(builtin(), kMmaLayout, 2, {64, 64});
  ASSERT_TRUE(ui2) << ui2.message();
  EXPECT_EQ(ui2->tile, (std::vector<int64_t>{32, 16}));
  EXPECT_FALSE(kernelLayoutDescriptor(builtin(), kMmaLayout, 7, {64, 64}));
}

TEST(DispatchTrace, OneObjectPerPhaseWithTheRequiredFields) {
  OpSignature sig = w4(96);
  DispatchPlan plan = planDispatch(
      builtin(), sig,
      query("sm_90", {Phase::Decode, Phase::Prefill}, FallbackPolicy::Allow));
  TraceOp op{"model.layers.0.mlp.down_proj",
             3,
             &sig,
             &plan,
             "sm_90",
             RepackKind::None,
             RepackKind::None};
  json j = json::parse(traceToJson(op).dump());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["op"], "model.layers.0.mlp.down_proj");
  EXPECT_EQ(j[0]["phase"], "decode");
  EXPECT_EQ(j[1]["phase"], "prefill");
  EXPECT_EQ(j[0]["selected"], "full_dequant_linear");
  EXPECT_EQ(j[0]["fallback"], true);
  EXPECT_EQ(j[0]["device"], "sm_90");
  EXPECT_EQ(j[0]["shape"], json::parse(R"({"N": 4096, "K": 4096, "T": null})"));
  EXPECT_EQ(j[0]["tokens"], json::parse(R"({"min": 1, "max": 16})"));
  EXPECT_EQ(j[0]["layout"]["family"], "logical");
  ASSERT_EQ(j[0]["candidates"].size(), builtin().kernels.size());
  EXPECT_EQ(j[0]["candidates"][0],
            json::parse(R"({"kernel": "affine_gemv_decode_sm80",
                            "accepted": false,
                            "reason": "group size 96 not in {16, 32, 64, 128}"})"));
  EXPECT_EQ(j[0]["signature"]["group_size"], 96);

  std::string text = traceToText(op);
  EXPECT_NE(text.find("dispatch 'model.layers.0.mlp.down_proj': requested "
                      "affine si4 twos_complement zp=none g96"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[affine_gemv_decode_sm80 -> rejected: group size 96 "
                      "not in {16, 32, 64, 128}]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("selected=full_dequant_linear (fallback)"),
            std::string::npos)
      << text;
}
