//===- MetadataTest.cpp - Op bindings and kernel records -----------------===//
//
// The manifest's records are untrusted: each test feeds one malformed field
// and expects the error to name it.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestArtifact.h"

#include "qtensor/Runtime/ArtifactMetadata.h"
#include "qtensor/Runtime/KernelInstance.h"

#include <gtest/gtest.h>

using namespace qtensor;
using namespace qtensor::runtime;
using namespace rttest;

namespace {

template <typename T> std::string errorOf(const Expected<T> &e) {
  return e ? "" : e.message();
}

json rowBinding() {
  TestLinear l;
  json b = bindingOf(l, "affine_gemv_decode_host", false, "forbid");
  b["topology"] = "row";
  b["k"] = 256;
  b["ranks"] = {{{"n_offset", 0}, {"n", 6}, {"k_offset", 0}, {"k", 128}},
                {{"n_offset", 0}, {"n", 6}, {"k_offset", 128}, {"k", 128}}};
  return b;
}

Expected<artifact::OpBinding> readBinding(const json &b) {
  return artifact::opBindingFromJson(b, "manifest.bindings[0]");
}

/// kernelEntryFromJson(record) as the manifest reads manifest.kernels[0].
Expected<artifact::KernelEntry> readRecord(const json &record) {
  return artifact::kernelEntryFromJson(record, "manifest.kernels[0]");
}

json gpuRecord() {
  json c = kernelRecordOf(TestLinear{}, 0, "affine_gemv_decode_sm80");
  c["file"] = "k.ptx";
  c["target"] = "sm_80";
  c["format"] = "ptx";
  c.erase("cpu"); // a CPU level is a host kernel's
  c["entries"] = {{{"symbol", "qt_decode"}, {"tokens", {1, 16}}}};
  c["launch"] = {
      {"grid", {2, 1, 1}}, {"block", {128, 1, 1}}, {"shared_bytes", 0}};
  return c;
}

} // namespace

TEST(BoundedJson, RejectsWhatTheDomWouldHide) {
  EXPECT_EQ(errorOf(parseBoundedJson("{\"a\": 1, \"a\": 2}", "t.json")),
            "t.json: duplicate key \"a\" in one JSON object");
  std::string deep(40, '[');
  deep += std::string(40, ']');
  EXPECT_EQ(errorOf(parseBoundedJson(deep, "t.json")),
            "t.json: JSON nesting deeper than 32 levels");
  EXPECT_EQ(errorOf(parseBoundedJson(std::string("[1]\0[2]", 7), "t.json")),
            "t.json: NUL byte at offset 3");
  EXPECT_EQ(errorOf(parseBoundedJson("[1, 2]", "t.json", 4)),
            "t.json: 6 bytes exceed the limit of 4");
  EXPECT_NE(errorOf(parseBoundedJson("[1,", "t.json")).find("not valid JSON"),
            std::string::npos);
}

TEST(OpBinding, RowSlicesMustTileK) {
  json b = rowBinding();
  auto ok = readBinding(b);
  ASSERT_TRUE(bool(ok)) << ok.message();
  ASSERT_EQ(ok->ranks.size(), 2u);
  EXPECT_EQ(ok->ranks[1].kOffset, 128);
  EXPECT_TRUE(ok->sliced());
  EXPECT_EQ(ok->tensorOf(1), "layer.a.weight@rank1");

  b["ranks"][1]["k_offset"] = 120;
  EXPECT_EQ(errorOf(readBinding(b)),
            "manifest.bindings[0].ranks[1]: row slice [n_offset 0, n 6, "
            "k_offset 120, k 128] does not continue at K = 128 with the "
            "whole N = 6");
  b["ranks"][1]["k_offset"] = 128;
  b["k"] = 300;
  EXPECT_EQ(errorOf(readBinding(b)),
            "manifest.bindings[0].ranks: row slices cover K = 256 of 300");
}

TEST(OpBinding, PhasesAndFieldsAreWellFormed) {
  json b = bindingOf(TestLinear{}, "affine_gemv_decode_host", false, "warn");
  json twice = b;
  twice["phases"].push_back(b["phases"][0]);
  EXPECT_EQ(errorOf(readBinding(twice)),
            "manifest.bindings[0].phases[1].phase: decode after decode (each "
            "phase once, decode first)");
  json bad = b;
  bad["phases"][0]["phase"] = "both";
  EXPECT_EQ(errorOf(readBinding(bad)),
            "manifest.bindings[0].phases[0].phase: unknown value \"both\"");
  bad = b;
  bad["phases"][0]["kernel"] = "";
  EXPECT_EQ(errorOf(readBinding(bad)),
            "manifest.bindings[0].phases[0].kernel: empty registry kernel id");
  bad = b;
  bad["fallback_policy"] = "maybe";
  EXPECT_EQ(errorOf(readBinding(bad)),
            "manifest.bindings[0].fallback_policy: unknown value \"maybe\"");
  bad = b;
  bad["bias_after_reduce"] = true;
  EXPECT_EQ(errorOf(readBinding(bad)),
            "manifest.bindings[0].ranks: bias_after_reduce, but only a "
            "row-parallel op over 2 or more ranks adds its bias after an "
            "all-reduce");
  bad = b;
  bad["ranks"].push_back(b["ranks"][0]);
  EXPECT_EQ(errorOf(readBinding(bad)),
            "manifest.bindings[0].ranks: a single-rank op lists 2 ranks");
  bad = b;
  bad["selected"] = "affine_gemv_decode_host";
  EXPECT_EQ(errorOf(readBinding(bad)),
            "manifest.bindings[0]: unknown field \"selected\"");
}

// One writer and one reader: what toJson writes reads back as the binding.
TEST(OpBinding, RoundTripsThroughItsJson) {
  json row = rowBinding();
  row["epilogue"] = "bias";
  row["bias_after_reduce"] = true;
  row["phases"].push_back({{"phase", "prefill"},
                           {"kernel", "full_dequant_linear"},
                           {"fallback", true}});
  for (const json &j :
       {bindingOf(TestLinear{}, "affine_gemv_decode_host", false, "allow"),
        row}) {
    auto b = readBinding(j);
    ASSERT_TRUE(bool(b)) << b.message();
    EXPECT_EQ(toJson(*b), j);
    auto again = readBinding(toJson(*b));
    ASSERT_TRUE(bool(again)) << again.message();
    EXPECT_EQ(*again, *b);
  }
}

TEST(KernelEntry, GpuLaunchAndTokenBuckets) {
  json c = gpuRecord();
  c["entries"] = {{{"symbol", "qt_t1"}, {"tokens", {1, 1}}},
                  {{"symbol", "qt_t2"}, {"tokens", {2, 2}}},
                  {{"symbol", "qt_t4"}, {"tokens", {3, 4}}},
                  {{"symbol", "qt_t16"}, {"tokens", {5, 16}}}};
  auto k = readRecord(c);
  ASSERT_TRUE(bool(k)) << k.message();
  EXPECT_EQ(k->entries.size(), 4u);
  EXPECT_EQ(k->entryFor(3)->symbol, "qt_t4");
  EXPECT_EQ(k->entryFor(16)->symbol, "qt_t16");
  EXPECT_EQ(k->entryFor(17), nullptr);
  EXPECT_EQ(k->tokens.min, 1);
  EXPECT_EQ(*k->tokens.max, 16);
  ASSERT_TRUE(k->launch.has_value());
  EXPECT_EQ(k->launch->gridFor(5)[0], 2); // no token axis: fixed

  // A gap between buckets leaves some T without a kernel.
  c["entries"][2]["tokens"] = {4, 4};
  EXPECT_EQ(errorOf(readRecord(c)),
            "manifest.kernels[0].entries[2].tokens: starts at T = "
            "4, expected 3 (entries ascend without gaps or overlaps)");
}

TEST(KernelEntry, OneGemmEntryServesEitherPhase) {
  // The tensor-core GEMM has one entry point for any T; its decode entry
  // narrows it to [1, 16] and its prefill entry to [17, inf).
  json c = gpuRecord();
  c["entries"] = {{{"symbol", "qt_mma"}, {"tokens", {1, nullptr}}}};
  auto k = readRecord(c);
  ASSERT_TRUE(bool(k)) << k.message();
  EXPECT_EQ(k->entryFor(16)->symbol, "qt_mma");
  EXPECT_EQ(k->entryFor(17), nullptr); // prefill is another manifest entry
}

TEST(KernelEntry, TokenAxisGrid) {
  json c = gpuRecord();
  c["phase"] = "prefill";
  c["tokens"] = {17, nullptr};
  c["entries"] = {{{"symbol", "qt_mma"}, {"tokens", {1, nullptr}}}};
  c["registry_id"] = "affine_mma_prefill_sm80";
  c["launch"] = {{"grid", {1, 3, 1}},
                 {"block", {128, 1, 1}},
                 {"shared_bytes", 9216},
                 {"token_axis", 0},
                 {"tokens_per_block", 32}};
  auto k = readRecord(c);
  ASSERT_TRUE(bool(k)) << k.message();
  EXPECT_EQ(*k->tokens.max, kMaxDimension);
  auto g = k->launch->gridFor(65);
  EXPECT_EQ(g[0], 3); // ceil(65 / 32)
  EXPECT_EQ(g[1], 3);
  c["launch"]["grid"] = {2, 3, 1};
  EXPECT_EQ(errorOf(readRecord(c)),
            "manifest.kernels[0].launch.grid[0]: the token axis is "
            "computed from T; the stored extent must be 1, got 2");
}

TEST(KernelEntry, RejectsInconsistentCapabilities) {
  auto errorWith = [](const std::function<void(json &)> &edit) {
    json c = gpuRecord();
    edit(c);
    return errorOf(readRecord(c));
  };
  EXPECT_EQ(errorWith([](json &c) { c["format"] = "host_so"; }),
            "manifest.kernels[0].format: format host_so does not "
            "run on target sm_80");
  EXPECT_EQ(errorWith([](json &c) { c.erase("launch"); }),
            "manifest.kernels[0].launch: required field is missing (a GPU "
            "kernel has a launch configuration)");
  EXPECT_EQ(errorWith([](json &c) { c["launch"]["block"] = {64, 32, 1}; }),
            "manifest.kernels[0].launch.block: 2048 threads exceed "
            "1024 per block");
  EXPECT_EQ(errorWith([](json &c) { c["entries"][0]["symbol"] = "bad name"; }),
            "manifest.kernels[0].entries[0].symbol: \"bad name\" "
            "is not a symbol name");
  EXPECT_EQ(errorWith([](json &c) { c["entries"][0]["tokens"] = {1, 8}; }),
            "manifest.kernels[0].entries[0].tokens: ends at T = 8, "
            "so T = 9 of \"tokens\" has no entry point");
  EXPECT_EQ(errorWith([](json &c) { c["args"][2]["dtype"] = "bf16"; }),
            "manifest.kernels[0].args: s is bf16, but \"scale\" is "
            "f16");
  EXPECT_EQ(errorWith([](json &c) { c["code"]["signed"] = false; }),
            "manifest.kernels[0].args: argument \"z\" is missing");
  EXPECT_EQ(errorWith([](json &c) { c["group_size"] = "per_row"; }),
            "manifest.kernels[0].group_size: \"per_row\", expected "
            "an integer or \"per_channel\"");
  EXPECT_EQ(errorWith([](json &c) { c["args"][0]["shape"] = {-1, 100}; }),
            "manifest.kernels[0].args: x has shape [-1, 100], "
            "expected [-1, 256] (dynamic T, K = 256)");
  EXPECT_EQ(errorWith([](json &c) { c["args"][1]["shape"] = {-1, 32}; }),
            "manifest.kernels[0].args[1].shape[0]: -1 must be in "
            "[1, 2^31] (only the T of x and y may be dynamic)");
  EXPECT_EQ(errorWith([](json &c) { c["args"].erase(2); }),
            "manifest.kernels[0].args: argument \"s\" is missing");
  EXPECT_EQ(errorWith([](json &c) { c["args"][2]["name"] = "x"; }),
            "manifest.kernels[0].args[2]: argument \"x\" appears "
            "twice");
  EXPECT_EQ(errorWith([](json &c) { std::swap(c["args"][1], c["args"][2]); }),
            "manifest.kernels[0].args[2]: argument \"w\" out of "
            "order (x, w, s, s2, z, z2, b, y)");
  EXPECT_EQ(errorWith([](json &c) { c["split_k"] = 4; }),
            "manifest.kernels[0].zero_output: split_k = 4 "
            "accumulates partial sums into y, which must then be zeroed "
            "before the call");
  EXPECT_EQ(errorWith([](json &c) { c["target"] = "sm_75"; }),
            "manifest.kernels[0].target: unknown target \"sm_75\"");
  EXPECT_EQ(errorWith([](json &c) { c["bias"] = true; }),
            "manifest.kernels[0].args: argument \"b\" is missing");
  EXPECT_EQ(errorWith([](json &c) { c.erase("file"); }),
            "manifest.kernels[0].file: required field is missing (a compiled "
            "kernel has a code file)");
}

// A codebook kernel (IQ4_NL on the host GEMM): unsigned codes that index
// the named table, so no z argument; the record round-trips and refuses a
// codebook that contradicts its code or a z it does not read.
TEST(KernelEntry, CodebookCodesTakeNoZeroPoint) {
  json c = kernelRecordOf(TestLinear{}, 0, "affine_gemm_host");
  c["code"] = {{"bits", 4}, {"signed", false}, {"codebook", "iq4_nl"}};
  auto e = readRecord(c);
  ASSERT_TRUE(bool(e)) << e.message();
  EXPECT_EQ(e->codebook, Codebook::IQ4NL);
  EXPECT_FALSE(e->takesZeroPoints());
  EXPECT_EQ(toJson(*e), c);
  auto errorWith = [&](const std::function<void(json &)> &edit) {
    json bad = c;
    edit(bad);
    return errorOf(readRecord(bad));
  };
  EXPECT_EQ(errorWith([](json &r) { r["code"]["signed"] = true; }),
            "manifest.kernels[0].code.codebook: codebook iq4_nl codes are "
            "unsigned indices with no zero-point");
  EXPECT_EQ(errorWith([](json &r) { r["code"]["bits"] = 8; }),
            "manifest.kernels[0].code.codebook: iq4_nl has 16 entries, not "
            "one per 8-bit code");
  EXPECT_EQ(errorWith([](json &r) { r["code"]["codebook"] = "none"; }),
            "manifest.kernels[0].code.codebook: \"none\" is spelled by "
            "leaving codebook out");
  EXPECT_EQ(errorWith([](json &r) { r["code"]["codebook"] = "nf5"; }),
            "manifest.kernels[0].code.codebook: unknown value \"nf5\"");
  EXPECT_EQ(errorWith([](json &r) {
              json z = {{"name", "z"}, {"dtype", "u8"}, {"shape", {6, 8}}};
              r["args"].insert(r["args"].begin() + 3, z);
            }),
            "manifest.kernels[0].args: argument \"z\" is not expected (the "
            "codes index a codebook)");
}

// Nested scales read as stored (a Q4_K linear on the host GEMM): s and z
// are one-byte codes, s2 and z2 the second levels; the record round-trips
// and refuses levels that contradict it.
TEST(KernelEntry, NestedScalesTakeTheirCodesAndSecondLevels) {
  json c = kernelRecordOf(TestLinear{}, 0, "affine_gemm_host");
  c["code"] = {{"bits", 4}, {"signed", false}, {"zero_point", "min"}};
  c["group_size"] = 32;
  c["scale"] = "f32";
  c["nested"] = {{"super_group_size", 256}, {"super_type", "f16"}};
  const int64_t n = c["n"], k = c["k"];
  json x = c["args"][0], w = c["args"][1], y = c["args"].back();
  auto arg = [](const char *name, const char *dtype, int64_t rows,
                int64_t cols) {
    return json{{"name", name}, {"dtype", dtype}, {"shape", {rows, cols}}};
  };
  c["args"] = {x,
               w,
               arg("s", "u8", n, k / 32),
               arg("s2", "f16", n, k / 256),
               arg("z", "u8", n, k / 32),
               arg("z2", "f16", n, k / 256),
               y};
  auto e = readRecord(c);
  ASSERT_TRUE(bool(e)) << e.message();
  ASSERT_TRUE(e->nested.has_value());
  EXPECT_EQ(e->nested->superGroupSize, 256);
  EXPECT_EQ(e->nested->superType, FloatType::F16);
  EXPECT_NE(e->arg(ArgRole::S2), nullptr);
  EXPECT_NE(e->arg(ArgRole::Z2), nullptr);
  EXPECT_EQ(toJson(*e), c);
  auto errorWith = [&](const std::function<void(json &)> &edit) {
    json bad = c;
    edit(bad);
    return errorOf(readRecord(bad));
  };
  EXPECT_EQ(errorWith([](json &r) { r["args"].erase(5); }),
            "manifest.kernels[0].args: argument \"z2\" is missing");
  EXPECT_EQ(errorWith([](json &r) { r["args"][2]["dtype"] = "f32"; }),
            "manifest.kernels[0].args: s is f32, expected i8 or u8 nested "
            "scale codes");
  EXPECT_EQ(errorWith([](json &r) { r["args"][3]["dtype"] = "bf16"; }),
            "manifest.kernels[0].args: s2 is bf16, but \"nested.super_type\" "
            "is f16");
  EXPECT_EQ(errorWith([](json &r) { r["args"][4]["dtype"] = "i8"; }),
            "manifest.kernels[0].args: z is i8, expected u8 nested min codes");
  EXPECT_EQ(errorWith([](json &r) { r["scale"] = "f16"; }),
            "manifest.kernels[0].scale: nested scales decode to f32, not f16");
  EXPECT_EQ(errorWith([](json &r) { r["nested"]["super_group_size"] = 48; }),
            "manifest.kernels[0].nested.super_group_size: 48 is not a "
            "multiple of group_size 32 dividing K = 256");
  EXPECT_EQ(errorWith([](json &r) { r["nested"]["super_type"] = "f32"; }),
            "manifest.kernels[0].nested.super_type: f16 or bf16 expected (the "
            "products with a code are exact in f32)");
  EXPECT_EQ(errorWith([](json &r) { r["nested"]["extra"] = 1; }),
            "manifest.kernels[0].nested: unknown field \"extra\"");
  EXPECT_EQ(errorWith([](json &r) { r.erase("nested"); }),
            "manifest.kernels[0].args: argument \"s2\" is not expected (the "
            "scales are not nested)");
}

// The decode GEMV and the tensor-core GEMM read nested levels as stored on
// the GPU too; other GPU layouts do not.
TEST(KernelEntry, GpuNestedScalesOnlyForTheAffineKernels) {
  json c = gpuRecord();
  c["code"] = {{"bits", 6}, {"signed", true}};
  c["group_size"] = 16;
  c["scale"] = "f32";
  c["nested"] = {{"super_group_size", 256}, {"super_type", "f16"}};
  const int64_t n = c["n"], k = c["k"];
  json x = c["args"][0], w = c["args"][1], y = c["args"].back();
  c["args"] = {x,
               w,
               {{"name", "s"}, {"dtype", "i8"}, {"shape", {n, k / 16}}},
               {{"name", "s2"}, {"dtype", "f16"}, {"shape", {n, k / 256}}},
               y};
  auto e = readRecord(c);
  ASSERT_TRUE(bool(e)) << e.message();
  ASSERT_TRUE(e->nested.has_value());
  EXPECT_NE(e->arg(ArgRole::S2), nullptr);
  EXPECT_EQ(toJson(*e), c);
  c["layout"] = "prefill_mma";
  EXPECT_TRUE(bool(readRecord(c))) << errorOf(readRecord(c));
  c["layout"] = "mixed2416";
  EXPECT_EQ(errorOf(readRecord(c)),
            "manifest.kernels[0].scale: GPU kernels other than the decode "
            "GEMV and the tensor-core GEMM read f16 or bf16 scales");
  c["scale"] = "f16";
  EXPECT_EQ(errorOf(readRecord(c)),
            "manifest.kernels[0].nested: only the host GEMM, the decode GEMV "
            "and the tensor-core GEMM read nested scales as stored, not a GPU "
            "kernel of layout \"mixed2416\"");
}

TEST(KernelEntry, ReferenceFallbackEntry) {
  json c = {{"id", "k0"},
            {"registry_id", "full_dequant_linear"},
            {"target", "host"},
            {"format", "reference"},
            {"phase", "decode"},
            {"tokens", {1, 16}},
            {"n", 6},
            {"k", 256},
            {"activation", "f16"},
            {"output", "f16"},
            {"bias", false},
            {"layout", nullptr},
            {"args",
             {{{"name", "x"}, {"dtype", "f16"}, {"shape", {-1, 256}}},
              {{"name", "y"}, {"dtype", "f16"}, {"shape", {-1, 6}}}}},
            {"ops", {"layer.a.weight"}}};
  auto k = readRecord(c);
  ASSERT_TRUE(bool(k)) << k.message();
  EXPECT_TRUE(k->isReference());
  EXPECT_TRUE(k->entries.empty());
  EXPECT_EQ(toJson(*k), c);
  c["file"] = "k.ptx";
  EXPECT_EQ(errorOf(readRecord(c)),
            "manifest.kernels[0].file: a reference (full-dequant) entry has no "
            "code file");
}

// One writer and one reader: a record read back from what toJson writes is
// the record, for every format; and the JSON of a record read from the
// compiler's spelling is that spelling.
TEST(KernelEntry, RoundTripsThroughItsJson) {
  json host = kernelRecordOf(TestLinear{}, 0, "affine_gemv_decode_host");
  TestLinear asym;
  asym.asymmetric = true;
  json hostAsym = kernelRecordOf(asym, 1, "affine_gemv_decode_host");
  hostAsym["row_split"] = true;
  json gpu = gpuRecord();
  gpu["launch"] = {{"grid", {1, 3, 1}},
                   {"block", {128, 1, 1}},
                   {"shared_bytes", 9216},
                   {"token_axis", 0},
                   {"tokens_per_block", 32}};
  for (const json &j : {host, hostAsym, gpu}) {
    auto e = readRecord(j);
    ASSERT_TRUE(bool(e)) << e.message();
    EXPECT_EQ(toJson(*e), j) << j.dump();
    auto again = readRecord(toJson(*e));
    ASSERT_TRUE(bool(again)) << again.message();
    EXPECT_EQ(*again, *e);
  }
}

// The record is strict: a field it does not define is refused by name, and
// the free-form capability object of kernel_abi 1 is gone.
TEST(KernelEntry, RefusesFieldsItDoesNotDefine) {
  json c = gpuRecord();
  c["tile"] = {16, 8};
  EXPECT_EQ(errorOf(readRecord(c)),
            "manifest.kernels[0]: unknown field \"tile\"");
  c = gpuRecord();
  c["code"]["packing"] = "nibbles";
  EXPECT_EQ(errorOf(readRecord(c)),
            "manifest.kernels[0].code: unknown field \"packing\"");
  c = gpuRecord();
  c["launch"]["cluster"] = {1, 1, 1};
  EXPECT_EQ(errorOf(readRecord(c)),
            "manifest.kernels[0].launch: unknown field \"cluster\"");
  json old = {{"id", "k0"}, {"capability", gpuRecord()}, {"file", "k.ptx"}};
  EXPECT_EQ(errorOf(readRecord(old)),
            "manifest.kernels[0].registry_id: required field is missing");
}

namespace {

/// A host mixed 2/4/16 record: N = 32, K = 256, G1 = 64 (4 groups a row),
/// G2 = 16, T = 1..16 each its own entry point.
json mixedRecord(bool bias) {
  const int64_t n = 32, k = 256, groups = 4;
  auto arg = [](const char *name, const char *dtype,
                std::vector<int64_t> shape) {
    return json{{"name", name}, {"dtype", dtype}, {"shape", shape}};
  };
  json args = {arg("x", "f16", {-1, k}),
               arg("map", "u8", {(n * groups + 7) / 8}),
               arg("w2", "i32", {-1}),
               arg("w4", "i32", {-1}),
               arg("rw4", "i32", {n + 1}),
               arg("qs", "u8", {n, groups}),
               arg("z1", "u8", {n, groups}),
               arg("s2", "bf16", {n / 16, groups}),
               arg("z2", "bf16", {n / 16, groups}),
               arg("sv", "f16", {-1}),
               arg("sc", "i32", {-1}),
               arg("sr", "i32", {n + 1})};
  if (bias)
    args.push_back(arg("b", "f16", {n}));
  args.push_back(arg("y", "f16", {-1, n}));
  json entries = json::array();
  for (int t = 1; t <= 16; ++t)
    entries.push_back(
        {{"symbol", "_mlir_ciface_qt_mixed2416_t" + std::to_string(t)},
         {"tokens", {t, t}}});
  return {{"id", "mixed_0"},
          {"file", "kernels-host.so"},
          {"registry_id", "mixed2416_decode_gemv"},
          {"target", "host"},
          {"format", "host_so"},
          {"phase", "decode"},
          {"tokens", {1, 16}},
          {"n", n},
          {"k", k},
          {"activation", "f16"},
          {"output", "f16"},
          {"bias", bias},
          {"layout", "mixed_2416"},
          {"mixed",
           {{"first_group_size", 64},
            {"second_group_size", 16},
            {"second_type", "bf16"},
            {"sparse_type", "f16"},
            {"sparse", "replacement"}}},
          {"entries", entries},
          {"args", args},
          {"split_k", 1},
          {"zero_output", false},
          {"cpu", "generic"},
          {"ops", {"blk.0.attn_q"}}};
}

} // namespace

// A mixed 2/4/16 kernel's record names its streams in the kernel's call
// order, with the stream lengths the tensor decides left dynamic.
TEST(KernelEntry, MixedKernelTakesItsStreamsInOrder) {
  for (bool bias : {false, true}) {
    json c = mixedRecord(bias);
    auto e = readRecord(c);
    ASSERT_TRUE(bool(e)) << e.message();
    ASSERT_TRUE(e->mixed.has_value());
    EXPECT_EQ(e->mixed->firstGroupSize, 64);
    EXPECT_EQ(e->mixed->secondType, FloatType::BF16);
    EXPECT_EQ(e->mixed->sparse, SparseSemantics::Replacement);
    EXPECT_EQ(e->args.size(), bias ? 14u : 13u);
    EXPECT_EQ(e->entryFor(7)->symbol, "_mlir_ciface_qt_mixed2416_t7");
    EXPECT_EQ(toJson(*e), c);
    auto again = readRecord(toJson(*e));
    ASSERT_TRUE(bool(again)) << again.message();
    EXPECT_EQ(*again, *e);
  }
  auto errorWith = [](const std::function<void(json &)> &edit) {
    json bad = mixedRecord(false);
    edit(bad);
    return errorOf(readRecord(bad));
  };
  EXPECT_EQ(errorWith([](json &r) { std::swap(r["args"][7], r["args"][5]); }),
            "manifest.kernels[0].args[5]: argument \"s2\", expected \"qs\" "
            "(x, map, w2, w4, rw4, qs, z1, s2, z2, sv, sc, sr, y)");
  EXPECT_EQ(errorWith([](json &r) { r["args"].erase(11); }),
            "manifest.kernels[0].args: a mixed_2416 kernel takes 13 arguments "
            "(x, map, w2, w4, rw4, qs, z1, s2, z2, sv, sc, sr, y), got 12");
  EXPECT_EQ(errorWith([](json &r) { r["args"][7]["dtype"] = "f16"; }),
            "manifest.kernels[0].args[7]: s2 is f16, expected bf16");
  EXPECT_EQ(errorWith([](json &r) { r["args"][1]["shape"] = {4}; }),
            "manifest.kernels[0].args[1]: map has shape [4], expected [16]");
  EXPECT_EQ(errorWith([](json &r) { r["args"][4]["shape"] = {-1}; }),
            "manifest.kernels[0].args[4].shape[0]: -1 must be in [1, 2^31] "
            "(only the T of x and y may be dynamic)");
  EXPECT_EQ(errorWith([](json &r) { r["mixed"]["first_group_size"] = 96; }),
            "manifest.kernels[0].mixed.first_group_size: 96 is not a multiple "
            "of 64 dividing K = 256");
  EXPECT_EQ(errorWith([](json &r) { r["mixed"]["second_group_size"] = 5; }),
            "manifest.kernels[0].mixed.second_group_size: 5 does not divide "
            "N = 32");
  EXPECT_EQ(errorWith([](json &r) { r["mixed"]["sparse"] = "additive"; }),
            "manifest.kernels[0].mixed.sparse: unknown value \"additive\"");
  EXPECT_EQ(errorWith([](json &r) { r["mixed"]["sparse_type"] = "f32"; }),
            "manifest.kernels[0].mixed.sparse_type: f16 or bf16 expected");
  EXPECT_EQ(errorWith([](json &r) { r["code"] = {{"bits", 4}}; }),
            "manifest.kernels[0].code: a mixed_2416 kernel reads its tensor's "
            "streams; this is an affine kernel's field");
  EXPECT_EQ(errorWith([](json &r) { r["row_split"] = true; }),
            "manifest.kernels[0].row_split: a mixed_2416 kernel indexes its "
            "streams by absolute row and cannot be split by rows");
  EXPECT_EQ(errorWith([](json &r) {
              r["entries"] = {{{"symbol", "_mlir_ciface_qt_mixed2416"},
                               {"tokens", {1, 16}}}};
            }),
            "manifest.kernels[0].entries[0].tokens: a mixed_2416 entry point "
            "takes one T (the kernel's T is static)");
  EXPECT_EQ(errorWith([](json &r) {
              r["phase"] = "prefill";
              r["tokens"] = {17, nullptr};
            }),
            "manifest.kernels[0].tokens: a mixed_2416 kernel's entries take T "
            "in [1, 16] (decode); a larger T runs in chunks of them");
  // An affine record names no stream of the mixed family.
  json affine = kernelRecordOf(TestLinear{}, 0, "affine_gemv_decode_host");
  affine["args"].insert(affine["args"].end() - 1,
                        json{{"name", "sr"}, {"dtype", "i32"}, {"shape", {7}}});
  EXPECT_EQ(errorOf(readRecord(affine)),
            "manifest.kernels[0].args: argument \"sr\" is not expected (a "
            "mixed_2416 stream; the layout is not mixed_2416)");
}

namespace {

/// A host W8A8 record: N = 6, K = 256, per-channel i8 weights, T = 1..4
/// each its own GEMV and quantizer entry point.
json w8a8Record(bool symmetricActivations) {
  const int64_t n = 6, k = 256;
  auto arg = [](const char *name, const char *dtype,
                std::vector<int64_t> shape) {
    return json{{"name", name}, {"dtype", dtype}, {"shape", shape}};
  };
  json args = {arg("xq", symmetricActivations ? "i8" : "u8", {-1, k}),
               arg("sx", "f32", {-1})};
  if (!symmetricActivations)
    args.push_back(arg("zx", "i32", {-1}));
  args.push_back(arg("w", "i32", {n, k / 4}));
  args.push_back(arg("s", "f16", {n, 1}));
  args.push_back(arg("y", "f16", {-1, n}));
  json gemv = json::array(), quant = json::array();
  for (int t = 1; t <= 4; ++t) {
    gemv.push_back({{"symbol", "_mlir_ciface_qt_w8a8_t" + std::to_string(t)},
                    {"tokens", {t, t}}});
    quant.push_back(
        {{"symbol", "_mlir_ciface_qt_quantize_t" + std::to_string(t)},
         {"tokens", {t, t}}});
  }
  return {{"id", "w8a8_0"},
          {"file", "kernels-host.so"},
          {"registry_id", "w8a8_gemv_decode_host"},
          {"target", "host"},
          {"format", "host_so"},
          {"phase", "decode"},
          {"tokens", {1, 4}},
          {"n", n},
          {"k", k},
          {"activation", "f16"},
          {"output", "f16"},
          {"bias", false},
          {"layout", "decode_gemv"},
          {"code", {{"bits", 8}, {"signed", true}}},
          {"group_size", "per_channel"},
          {"scale", "f16"},
          {"entries", gemv},
          {"activation_quant",
           {{"symmetric", symmetricActivations}, {"entries", quant}}},
          {"args", args},
          {"split_k", 1},
          {"zero_output", false},
          {"cpu", "generic"},
          {"ops", {"layer.a.weight"}}};
}

} // namespace

// A W8A8 record names its quantizer's entry points beside the GEMV's and
// takes the quantized activations where an affine GEMV takes x.
TEST(KernelEntry, W8A8TakesItsQuantizedActivations) {
  for (bool symmetric : {true, false}) {
    json c = w8a8Record(symmetric);
    auto e = readRecord(c);
    ASSERT_TRUE(bool(e)) << e.message();
    ASSERT_TRUE(e->activationQuant.has_value());
    EXPECT_EQ(e->activationQuant->symmetric, symmetric);
    EXPECT_EQ(e->activationQuant->entries[2].symbol,
              "_mlir_ciface_qt_quantize_t3");
    EXPECT_EQ(e->arg(ArgRole::X), nullptr);
    EXPECT_NE(e->arg(ArgRole::XQ), nullptr);
    EXPECT_EQ(e->arg(ArgRole::ZX) != nullptr, !symmetric);
    EXPECT_EQ(toJson(*e), c);
    auto again = readRecord(toJson(*e));
    ASSERT_TRUE(bool(again)) << again.message();
    EXPECT_EQ(*again, *e);
  }
  auto errorWith = [](const std::function<void(json &)> &edit) {
    json bad = w8a8Record(true);
    edit(bad);
    return errorOf(readRecord(bad));
  };
  EXPECT_EQ(errorWith([](json &r) { r["args"][0]["dtype"] = "u8"; }),
            "manifest.kernels[0].args[0]: xq is u8, expected i8");
  EXPECT_EQ(errorWith([](json &r) { r["args"].erase(1); }),
            "manifest.kernels[0].args: a W8A8 GEMV takes 5 arguments (xq, sx, "
            "w, s, y), got 4");
  EXPECT_EQ(errorWith([](json &r) { r["args"][0]["name"] = "x"; }),
            "manifest.kernels[0].args[0]: argument \"x\", expected \"xq\" "
            "(xq, sx, w, s, y)");
  EXPECT_EQ(errorWith([](json &r) { r["code"]["bits"] = 4; }),
            "manifest.kernels[0].activation_quant: per-token activations run "
            "the W8A8 GEMV, which reads 8-bit codes in the decode_gemv layout "
            "with integer or no zero-points (no nested levels, codebook or "
            "min)");
  EXPECT_EQ(errorWith([](json &r) {
              r["activation_quant"]["entries"][1]["tokens"] = {3, 3};
            }),
            "manifest.kernels[0].activation_quant.entries[1].tokens: each "
            "quantizer entry takes the one T of the GEMV entry beside it");
  EXPECT_EQ(
      errorWith([](json &r) { r["activation_quant"]["entries"].erase(3); }),
      "manifest.kernels[0].activation_quant.entries: 3 quantizer entry "
      "points for 4 GEMV entry points");
  EXPECT_EQ(errorWith([](json &r) { r["activation_quant"]["extra"] = 1; }),
            "manifest.kernels[0].activation_quant: unknown field \"extra\"");
  // An affine record does not take quantized activations.
  json affine = kernelRecordOf(TestLinear{}, 0, "affine_gemv_decode_host");
  affine["args"][0]["name"] = "xq";
  EXPECT_EQ(errorOf(readRecord(affine)),
            "manifest.kernels[0].args: argument \"xq\" is not expected "
            "(quantized activations; the record has no activation_quant)");
}

// A binding records the op's activation form, none by leaving it out.
TEST(OpBinding, RecordsPerTokenActivations) {
  json b = bindingOf(TestLinear{}, "w8a8_gemv_decode_host", false, "forbid");
  b["activation_quant"] = "per_token_asym";
  auto read = readBinding(b);
  ASSERT_TRUE(bool(read)) << read.message();
  EXPECT_EQ(read->activationQuant, kernels::ActivationQuant::PerTokenAsym);
  EXPECT_EQ(toJson(*read), b);
  b["activation_quant"] = "none";
  EXPECT_EQ(errorOf(readBinding(b)),
            "manifest.bindings[0].activation_quant: \"none\" is spelled by "
            "leaving the field out");
  b["activation_quant"] = "int4";
  EXPECT_EQ(errorOf(readBinding(b)),
            "manifest.bindings[0].activation_quant: unknown value \"int4\"");
}
