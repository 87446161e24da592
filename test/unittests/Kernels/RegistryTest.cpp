//===- RegistryTest.cpp - Registry invariants and its JSON listing --------===//

#include "qtensor/Kernels/Registry.h"
#include "qtensor/Kernels/Admission.h"
#include "qtensor/Numerics/KernelLayout.h"

#include <gtest/gtest.h>

#include <set>

using namespace qtensor;
using namespace qtensor::kernels;
using json = nlohmann::json;

namespace {
const KernelRegistry &builtin() { return builtinRegistry(); }

std::string failure(const KernelRegistry &r) {
  Status s = verifyRegistry(r);
  return s ? std::string("ok") : s.message();
}
} // namespace

TEST(Registry, BuiltinHoldsItsInvariants) {
  EXPECT_EQ(failure(builtin()), "ok");
  std::set<std::string> ids;
  for (const KernelCapability &k : builtin().kernels)
    EXPECT_TRUE(ids.insert(k.id).second) << k.id;
  // The planned kernels of docs/kernels.md, by their stable ids.
  EXPECT_EQ(ids, (std::set<std::string>{
                     "affine_gemv_decode_sm80", "affine_mma_prefill_sm80",
                     "affine_gemv_decode_host", "affine_gemm_prefill_host",
                     "affine_gemm_host", "affine_gemm_host_xq8",
                     "full_dequant_linear", "w8a8_gemv_decode_sm80",
                     "w8a8_gemv_decode_host"}));
}

TEST(Registry, ActivationBlockIsTheOneTheChecksKnow) {
  KernelRegistry r = builtin();
  for (KernelCapability &k : r.kernels)
    if (k.id == "affine_gemm_host_xq8")
      k.activationBlock = 64;
  EXPECT_NE(failure(r).find("activation_block 64 must be 0 or 32"),
            std::string::npos)
      << failure(r);
}

TEST(Registry, ExactlyOneFullDequantKernelWithLowestPriority) {
  int fallbacks = 0;
  for (const KernelCapability &k : builtin().kernels) {
    if (!k.fullDequant)
      continue;
    ++fallbacks;
    for (const KernelCapability &other : builtin().kernels)
      if (!other.fullDequant)
        EXPECT_LT(k.priority, other.priority) << other.id;
  }
  EXPECT_EQ(fallbacks, 1);
}

TEST(Registry, EveryGpuKernelHasItsHostTwin) {
  // A GPU artifact carries the twins so it runs (and L3 checks it) where no
  // GPU is; the runtime accepts the twin for the kernel the trace selected.
  auto twin = [](const char *id) -> std::string {
    const KernelCapability *k = builtin().findKernel(id);
    const KernelCapability *t = k ? builtin().hostTwin(*k) : nullptr;
    return t ? t->id : "none";
  };
  EXPECT_EQ(twin("affine_gemv_decode_sm80"), "affine_gemv_decode_host");
  EXPECT_EQ(twin("affine_mma_prefill_sm80"), "affine_gemm_prefill_host");
  EXPECT_EQ(twin("affine_gemv_decode_host"), "affine_gemv_decode_host");
  EXPECT_EQ(twin("full_dequant_linear"), "none");
  for (const KernelCapability &k : builtin().kernels) {
    const KernelCapability *t = builtin().hostTwin(k);
    if (!t)
      continue;
    EXPECT_EQ(t->layout, k.layout) << k.id;
    EXPECT_EQ(t->phases, k.phases) << k.id;
  }
}

TEST(Registry, LayoutIdsAreThePackersOwn) {
  // The kernel layouts are the ones Numerics/KernelLayout.h packs, and
  // their tiles are exactly what the packer rounds a shape up to.
  for (KernelLayoutKind kind :
       {KernelLayoutKind::DecodeGemv, KernelLayoutKind::PrefillMma}) {
    KernelLayoutId packer = kernelLayoutId(kind);
    LayoutId id{std::string(packer.family), packer.version,
                std::string(packer.encoding)};
    const KernelLayout *layout = builtin().findLayout(id);
    ASSERT_NE(layout, nullptr) << toString(id);
    for (unsigned bits : {4u, 8u}) {
      std::vector<int64_t> tile = layout->tileFor(bits);
      ASSERT_EQ(tile.size(), 2u);
      auto exact = kernelLayoutGeometry({kind, bits, true}, tile[0], tile[1]);
      ASSERT_TRUE(exact) << exact.message();
      EXPECT_EQ(exact->paddedRows, tile[0]) << toString(id) << " " << bits;
      EXPECT_EQ(exact->paddedCols, tile[1]) << toString(id) << " " << bits;
      // One element fewer than a tile is padded up to the tile.
      auto padded = kernelLayoutGeometry(
          {kind, bits, true}, tile[0] == 1 ? 1 : tile[0] - 1, tile[1] - 1);
      ASSERT_TRUE(padded) << padded.message();
      EXPECT_EQ(padded->paddedRows, tile[0]);
      EXPECT_EQ(padded->paddedCols, tile[1]);
    }
  }
}

TEST(Registry, DuplicateIdIsRejected) {
  KernelRegistry r = builtin();
  r.kernels.push_back(r.kernels.front());
  EXPECT_EQ(failure(r), "kernel id 'affine_gemv_decode_sm80' appears twice");
}

TEST(Registry, EmptyContractIsRejected) {
  KernelRegistry r = builtin();
  r.kernels.front().codes.clear();
  EXPECT_EQ(failure(r),
            "kernel 'affine_gemv_decode_sm80': codes must not be empty");
}

TEST(Registry, EveryCodeNeedsAZeroPointKind) {
  KernelRegistry r = builtin();
  r.kernels.front().unsignedZeroPoints.clear();
  EXPECT_EQ(failure(r), "kernel 'affine_gemv_decode_sm80': admits ui4 but no "
                        "zero-point kind for unsigned codes");
}

TEST(Registry, PhasesMustMatchTheTokenRange) {
  KernelRegistry r = builtin();
  r.kernels.front().phases = {Phase::Decode, Phase::Prefill};
  EXPECT_EQ(failure(r),
            "kernel 'affine_gemv_decode_sm80': phases must list prefill "
            "exactly when the token range T in [1, 16] reaches it");
}

TEST(Registry, WildcardsOnlyOnTheFallback) {
  KernelRegistry r = builtin();
  r.kernels.front().anyGroupSize = true;
  EXPECT_EQ(failure(r), "kernel 'affine_gemv_decode_sm80': only a "
                        "full-dequant kernel may read any layout or any "
                        "group size");
}

TEST(Registry, KernelLayoutMustHoldItsCodes) {
  KernelRegistry r = builtin();
  r.kernels[1].codes.push_back({7, false});
  EXPECT_EQ(failure(r), "kernel 'affine_mma_prefill_sm80': admits ui7 but "
                        "layout (prefill_mma, 1, offset_binary) cannot hold "
                        "7-bit codes");
}

TEST(Registry, RepackPathsEndInKernelLayouts) {
  KernelRegistry r = builtin();
  r.repackPaths.push_back(
      {{"logical", 1, "lsb_first"}, {"ggml_block", 1, "q4_0"}, true});
  EXPECT_EQ(failure(r), "repack path (logical, 1, lsb_first) -> (ggml_block, "
                        "1, q4_0) ends outside the registry's layouts");
}

TEST(Registry, JsonRoundTrip) {
  json j = registryToJson(builtin());
  auto back = registryFromJson(j);
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(*back == builtin());
  EXPECT_EQ(registryToJson(*back), j);
  // Through text too, as `qtc kernels --json` prints it.
  auto reparsed = registryFromJson(json::parse(j.dump(2)));
  ASSERT_TRUE(reparsed) << reparsed.message();
  EXPECT_TRUE(*reparsed == builtin());
}

TEST(Registry, JsonSpelledAsDocumented) {
  json j = registryToJson(builtin());
  EXPECT_EQ(j["schema"], "qtensor.kernels");
  EXPECT_EQ(j["version"], 1);
  const json &gemv = j["kernels"][0];
  EXPECT_EQ(gemv["id"], "affine_gemv_decode_sm80");
  EXPECT_EQ(gemv["layout"], json::parse(R"({"family": "decode_gemv",
      "version": 1, "encoding": "offset_binary"})"));
  EXPECT_EQ(gemv["qparams"]["group_sizes"], json::parse("[16, 32, 64, 128]"));
  EXPECT_EQ(
      gemv["qparams"]["zero_points"],
      json::parse(R"({"signed": ["none"], "unsigned": ["integer", "min"]})"));
  EXPECT_EQ(gemv["tokens"], json::parse(R"({"min": 1, "max": 16})"));
  EXPECT_EQ(gemv["min_capability"], 80);
  EXPECT_EQ(gemv["activation_quants"], json::parse(R"(["none"])"));
  EXPECT_EQ(gemv["chunk_rows"], 0);
  auto byId = [&](const std::string &id) -> const json & {
    for (const json &k : j["kernels"])
      if (k["id"] == id)
        return k;
    ADD_FAILURE() << id;
    return j;
  };
  const json &fallback = byId("full_dequant_linear");
  EXPECT_EQ(fallback["layout"], nullptr);
  EXPECT_EQ(fallback["qparams"]["group_sizes"], "any");
  EXPECT_EQ(fallback["full_dequant"], true);
  const json &w8a8 = byId("w8a8_gemv_decode_sm80");
  EXPECT_EQ(w8a8["activation_quants"],
            json::parse(R"(["per_token_sym", "per_token_asym"])"));
  EXPECT_EQ(w8a8["chunk_rows"], 16);
  EXPECT_EQ(w8a8["tile"], json::parse(R"({"n": 1, "k": 16})"));
}

TEST(Registry, W8A8GemvHasItsHostTwin) {
  const KernelRegistry &r = builtin();
  const KernelCapability *gpu = r.findKernel("w8a8_gemv_decode_sm80");
  ASSERT_TRUE(gpu);
  const KernelCapability *twin = r.hostTwin(*gpu);
  ASSERT_TRUE(twin);
  EXPECT_EQ(twin->id, "w8a8_gemv_decode_host");
  for (const KernelCapability &k : r.kernels)
    if (k.backends == gpu->backends && &k != gpu)
      EXPECT_LT(k.priority, gpu->priority) << k.id;
}

TEST(Registry, ChunkRowsMustBeTheTokenMaximum) {
  KernelRegistry r = builtin();
  for (KernelCapability &k : r.kernels)
    if (k.id == "w8a8_gemv_decode_host")
      k.chunkRows = 8;
  EXPECT_EQ(failure(r), "kernel 'w8a8_gemv_decode_host': chunk_rows 8 must "
                        "be 0 or the token range's maximum, from T = 1");
  for (KernelCapability &k : r.kernels)
    if (k.id == "w8a8_gemv_decode_host") {
      k.chunkRows = 16;
      k.activationQuants.clear();
    }
  EXPECT_EQ(failure(r), "kernel 'w8a8_gemv_decode_host': activation_quants "
                        "must not be empty");
}

TEST(Registry, JsonReadsActivationQuantsStrictly) {
  json j = registryToJson(builtin());
  j["kernels"][0]["activation_quants"] = json::parse(R"(["per_row"])");
  auto a = registryFromJson(j);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.message(),
            "registry.kernels[0].activation_quants[0]: unknown value "
            "\"per_row\"");
  j = registryToJson(builtin());
  j["kernels"][0].erase("chunk_rows");
  auto b = registryFromJson(j);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.message(),
            "registry.kernels[0].chunk_rows: required field is missing");
}

TEST(Registry, JsonIsStrict) {
  json j = registryToJson(builtin());
  json unknown = j;
  unknown["kernels"][1]["speed"] = "fast";
  auto a = registryFromJson(unknown);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.message(), "registry.kernels[1]: unknown field \"speed\"");

  json badEnum = j;
  badEnum["kernels"][0]["topologies"][2] = "diagonal";
  auto b = registryFromJson(badEnum);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.message(),
            "registry.kernels[0].topologies[2]: unknown value \"diagonal\"");

  json missing = j;
  missing["kernels"][0]["qparams"].erase("scales");
  auto c = registryFromJson(missing);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.message(),
            "registry.kernels[0].qparams.scales: required field is missing");

  json duplicate = j;
  duplicate["kernels"].push_back(j["kernels"][0]);
  auto d = registryFromJson(duplicate);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.message(),
            "registry: kernel id 'affine_gemv_decode_sm80' appears twice");

  json schema = j;
  schema["schema"] = "other";
  EXPECT_FALSE(registryFromJson(schema));
}

TEST(Registry, TextListsEveryKernelAndLayout) {
  std::string text = registryToText(builtin());
  for (const KernelCapability &k : builtin().kernels)
    EXPECT_NE(text.find("\n" + k.id + "\n"), std::string::npos) << k.id;
  EXPECT_NE(text.find("(prefill_mma, 1, offset_binary)"), std::string::npos);
  EXPECT_NE(text.find("groups          16, 32, 64, 128 along K (axis 1); "
                      "per-channel along N (axis 0)"),
            std::string::npos);
  EXPECT_NE(text.find("targets         cuda sm_80+"), std::string::npos);
}

TEST(Registry, EveryRejectionHasAReason) {
  // A spread of requests; every rejected candidate must say why.
  std::vector<OpSignature> sigs;
  for (int64_t g : {32, 96, 128})
    for (unsigned bits : {2u, 4u, 8u}) {
      OpSignature sig;
      sig.descriptor.code = {bits, true};
      sig.descriptor.granularity = Granularity::Group;
      sig.descriptor.axis = 1;
      sig.descriptor.groupSize = g;
      sig.n = 4096;
      sig.k = 4096 + g;
      sig.ranks = {{0, sig.n, 0, sig.k}};
      sigs.push_back(sig);
    }
  for (const std::string &device : knownTargets())
    for (const OpSignature &sig : sigs)
      for (Phase phase : {Phase::Decode, Phase::Prefill}) {
        DispatchQuery q{*parseTarget(device),
                        FallbackPolicy::Forbid,
                        LayoutMode::Shared,
                        {{phase, phaseTokens(phase)}}};
        DispatchPlan plan = planDispatch(builtin(), sig, q);
        for (const Candidate &c : plan.phases.front().candidates)
          EXPECT_FALSE(c.reason.empty()) << c.kernel << " on " << device;
      }
}
