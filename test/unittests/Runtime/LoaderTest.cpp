//===- LoaderTest.cpp - The load order, host kernels and its failures -----===//
//
// Artifacts written by RuntimeTestArtifact.h (with real host kernels built
// from TestHostKernels.c) loaded through loadModel: the host backend's
// results against the float64 reference, the ledgers and the timeline of a
// load, and each failure mode of seed M8.9 0x05D named by file and field.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestArtifact.h"
#include "TestAssertions.h"

#include "qtensor/Runtime/Loader.h"
#include "qtensor/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

using namespace qtensor;
using namespace qtensor::runtime;
using namespace rttest;
using qtensor::test::contains;

namespace {

/// max |y - reference| / bound over every output; <= 1 for a correct kernel.
double worstErrorRatio(LoadedModel &model, const std::string &op,
                       const HostTensor &x, const HostTensor &y) {
  const OpPlan *plan = model.plan().find(op);
  EXPECT_NE(plan, nullptr);
  auto w = model.referenceWeight(*plan);
  auto b = model.referenceBias(*plan);
  EXPECT_TRUE(bool(w) && bool(b));
  KernelError e =
      measureKernelError(x.toDoubles(), *w, *b, y.toDoubles(), x.rows,
                         plan->n(), plan->k(), plan->output);
  EXPECT_TRUE(e.finite);
  return e.worstRatio;
}

} // namespace

TEST(Loader, RunsHostKernelAgainstTheReference) {
  TempDir dir;
  auto model = loadSpec(dir, {});
  ASSERT_TRUE(bool(model)) << model.message();
  LoadedModel &m = **model;
  EXPECT_EQ(m.backend(), "host");
  ASSERT_EQ(m.plan().ops.size(), 1u);
  EXPECT_EQ(m.plan().fallbacks(), 0u);
  for (int64_t t : {1, 5, 16}) {
    HostTensor x = activations(t, 256, uint32_t(t));
    auto y = m.run("layer.a.weight", x);
    ASSERT_TRUE(bool(y)) << y.message();
    EXPECT_EQ(y->rows, t);
    EXPECT_EQ(y->cols, 6);
    EXPECT_EQ(y->dtype, FloatType::F16);
    EXPECT_LE(worstErrorRatio(m, "layer.a.weight", x, *y), 1.0) << "T = " << t;
  }
  // The execution trace: a warmup per entry point (T = 1, 2, 3, 5, 9),
  // then the three calls.
  const auto &calls = m.trace().all();
  ASSERT_EQ(calls.size(), 8u);
  EXPECT_TRUE(calls[0].warmup);
  EXPECT_EQ(calls[4].tokens, 9);
  EXPECT_FALSE(calls[5].warmup);
  EXPECT_EQ(calls[5].kernel, "test_gemv_0");
  EXPECT_EQ(calls[5].backend, "host");
  EXPECT_EQ(calls[5].tokens, 1);
  EXPECT_EQ(calls[6].tokens, 5);
  EXPECT_EQ(calls[7].phase, kernels::Phase::Decode);
  EXPECT_FALSE(calls[7].fallback);
  EXPECT_EQ(m.trace().fallbacks(), 0u);
}

TEST(Loader, AWrongKernelExceedsTheErrorBound) {
  // The bound is not vacuous: a kernel off by 0.5 is caught.
  TempDir dir;
  TestArtifactSpec spec;
  spec.linears[0].symbol = "_mlir_ciface_test_gemv_w4s_g32_f16_wrong";
  auto model = loadSpec(dir, spec);
  ASSERT_TRUE(bool(model)) << model.message();
  HostTensor x = activations(3, 256, 3);
  auto y = (*model)->run("layer.a.weight", x);
  ASSERT_TRUE(bool(y)) << y.message();
  EXPECT_GT(worstErrorRatio(**model, "layer.a.weight", x, *y), 10.0);
}

TEST(Loader, AsymmetricWithBiasAndF32Output) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.linears[0].asymmetric = true;
  spec.linears[0].n = 10;
  auto model = loadSpec(dir, spec);
  ASSERT_TRUE(bool(model)) << model.message();
  const OpPlan *op = (*model)->plan().find("layer.a.weight");
  ASSERT_NE(op, nullptr);
  ASSERT_TRUE(op->bias.has_value());
  EXPECT_EQ(*op->bias, "layer.a.bias");
  HostTensor x = activations(4, 256, 11);
  auto y = (*model)->run("layer.a.weight", x);
  ASSERT_TRUE(bool(y)) << y.message();
  EXPECT_EQ(y->dtype, FloatType::F32);
  EXPECT_LE(worstErrorRatio(**model, "layer.a.weight", x, *y), 1.0);
}

TEST(Loader, RepacksALogicalWeightAtLoadTime) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.linears[0].storedLogical = true;
  auto model = loadSpec(dir, spec);
  ASSERT_TRUE(bool(model)) << model.message();
  const LoadedModel &m = **model;
  EXPECT_TRUE(m.plan().ops[0].phases[0].loadTimeRepack);
  EXPECT_GT(m.timeline().total(Stage::Repack), 0.0);
  // 6 rows x 256 codes x 4 bits, now held by the runtime.
  EXPECT_EQ(m.ledger().held(MemoryCategory::ResidentHost,
                            "repacked layer.a.weight.codes (decode_gemv)"),
            768u);
  HostTensor x = activations(2, 256, 5);
  auto y = (*model)->run("layer.a.weight", x);
  ASSERT_TRUE(bool(y)) << y.message();
  EXPECT_LE(worstErrorRatio(**model, "layer.a.weight", x, *y), 1.0);
}

TEST(Loader, LedgersAndTimelineOfALoad) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.linears.push_back({"layer.b.weight", 4, 128, false, false, ""});
  auto model = loadSpec(dir, spec);
  ASSERT_TRUE(bool(model)) << model.message();
  const LoadedModel &m = **model;
  uint64_t disk = 0;
  for (const auto &f : m.manifest().files)
    disk += f.bytes;
  const MemoryLedger &l = m.ledger();
  EXPECT_EQ(l.current(MemoryCategory::Disk), disk);
  // Mapped: the shard and the kernels, not the trace/report/graph (read,
  // hashed and released during parse).
  uint64_t shardBytes = 0, soBytes = 0;
  std::string soName;
  for (const auto &f : m.manifest().files) {
    if (f.role == artifact::FileRole::Shard)
      shardBytes += f.bytes;
    if (f.role == artifact::FileRole::Kernel) {
      soBytes += f.bytes;
      soName = f.path;
    }
  }
  EXPECT_EQ(l.current(MemoryCategory::Mapped), shardBytes + soBytes);
  EXPECT_EQ(m.mappedBytes(), shardBytes + soBytes);
  // Codes in place: 6x256 and 4x128 W4 codes; scales 6x8 and 4x4 f16.
  EXPECT_EQ(l.current(MemoryCategory::DeviceCodes), 768u + 256u);
  EXPECT_EQ(l.current(MemoryCategory::QParams), 96u + 32u);
  EXPECT_EQ(m.referencedBytes(), 768u + 256u + 96u + 32u);
  EXPECT_EQ(l.current(MemoryCategory::Fallback), 0u);
  // Workspace is per call: released after, its peak kept. The largest
  // warmup is the first op's last bucket, T = 9: x [9, 256] + y [9, 6] f16.
  EXPECT_EQ(l.current(MemoryCategory::Workspace), 0u);
  EXPECT_EQ(l.peak(MemoryCategory::Workspace), 2u * 9 * 256 + 2u * 9 * 6);
  // The kernel code copy is host memory the process holds.
  EXPECT_EQ(l.held(MemoryCategory::ResidentHost, "kernel code " + soName),
            soBytes);
  for (Stage s : {Stage::Discover, Stage::Parse, Stage::Verify, Stage::Read,
                  Stage::Engine, Stage::Warmup})
    EXPECT_GT(m.timeline().total(s), 0.0) << toString(s);
  EXPECT_EQ(m.timeline().total(Stage::Transfer), 0.0);
}

TEST(Loader, OnlyTheNamedOpIsPlanned) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.linears.push_back({"layer.b.weight", 4, 128, false, false, ""});
  writeTestArtifact(dir.str(), spec);
  LoadOptions o = hostOptions();
  o.ops = {"layer.b.weight"};
  auto model = loadModel(dir.str(), o);
  ASSERT_TRUE(bool(model)) << model.message();
  ASSERT_EQ((*model)->plan().ops.size(), 1u);
  EXPECT_EQ((*model)->plan().ops[0].tensor, "layer.b.weight");
  EXPECT_EQ((*model)->ledger().current(MemoryCategory::DeviceCodes), 256u);
  o.ops = {"layer.c.weight"};
  auto missing = loadModel(dir.str(), o);
  ASSERT_FALSE(bool(missing));
  EXPECT_TRUE(contains(missing.message(), "--op \"layer.c.weight\""));
}

//===----------------------------------------------------------------------===//
// Failure modes
//===----------------------------------------------------------------------===//

TEST(LoaderErrors, HashMismatchNamesTheFile) {
  TempDir dir;
  writeTestArtifact(dir.str(), {});
  fs::path shard = publishedFile(dir, "weights");
  corrupt(shard, size_t(fs::file_size(shard)) - 1);
  auto model = loadModel(dir.str(), hostOptions());
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), shard.filename().string()));
  EXPECT_TRUE(contains(model.message(), "SHA-256 mismatch"));
}

TEST(LoaderErrors, KernelCodeIsVerifiedBeforeItIsLoaded) {
  TempDir dir;
  writeTestArtifact(dir.str(), {});
  fs::path so = publishedFile(dir, "kernels-host");
  corrupt(so, size_t(fs::file_size(so)) / 2);
  auto model = loadModel(dir.str(), hostOptions());
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), so.filename().string()));
  EXPECT_TRUE(contains(model.message(), "SHA-256 mismatch"));
}

TEST(LoaderErrors, MissingCapabilityField) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) { c.erase("n"); };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(),
                       "manifest.kernels[0].n: required field is "
                       "missing"));
}

TEST(LoaderErrors, CapabilityFieldOfTheWrongType) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) { c["tokens"] = {"1", 16}; };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "manifest.kernels[0].tokens[0]"));
}

TEST(LoaderErrors, CapabilityOutOfRange) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) { c["tokens"] = {1, 64}; };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "manifest.kernels[0].tokens"));
  EXPECT_TRUE(contains(model.message(), "decode phase's T range"));
}

TEST(LoaderErrors, CapabilityZeroPointIsMinOrInteger) {
  for (const char *value : {"bogus", "min"}) {
    TempDir dir;
    TestArtifactSpec spec;
    spec.editKernelRecord = [&](json &c, size_t) {
      c["code"]["zero_point"] = value;
    };
    auto model = loadSpec(dir, spec);
    ASSERT_FALSE(bool(model)) << value;
    EXPECT_TRUE(
        contains(model.message(), "manifest.kernels[0].code.zero_point"))
        << model.message();
    // The test artifact's codes are signed: no min for them.
    EXPECT_TRUE(
        contains(model.message(), std::string(value) == "min"
                                      ? "a min zero-point needs unsigned codes"
                                      : "expected \"min\" or \"integer\""))
        << model.message();
  }
}

TEST(LoaderErrors, CapabilityLiesAboutN) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) {
    c["n"] = 7;
    c["args"].back()["shape"] = {-1, 7};
  };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "n = 7, k = 256, but (tensor "
                                        "\"layer.a.weight\") holds [6, 256]"));
}

TEST(LoaderErrors, CapabilityLiesAboutPackedWords) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) {
    c["args"][1]["shape"] = {6, 64}; // twice the words decode_gemv packs
  };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "w has shape [6, 64] (384 words)"));
  EXPECT_TRUE(contains(model.message(), "into 192 32-bit words"));
}

TEST(LoaderErrors, CapabilityLiesAboutScaleShape) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) {
    c["args"][2]["shape"] = {6, 4};
  };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "s has shape [6, 4]"));
}

TEST(LoaderErrors, CapabilityOpIsNotATensor) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) { c["ops"] = {"nope.weight"}; };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(),
                       "manifest.kernels[0].ops[0]: \"nope.weight\" "
                       "is not a manifest tensor"));
}

TEST(LoaderErrors, HostSymbolMissingFromTheLibrary) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.linears[0].symbol = "_mlir_ciface_no_such_kernel";
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(),
                       "symbol _mlir_ciface_no_such_kernel is not exported"));
}

TEST(LoaderErrors, AdmissionRejectsAndFallbackIsForbidden) {
  // The artifact claims a CUDA kernel in host code: this build's registry
  // rejects it on the host, and the report forbids the fallback.
  TempDir dir;
  TestArtifactSpec spec;
  spec.registryId = "affine_gemv_decode_sm80";
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "op \"layer.a.weight\" decode"));
  EXPECT_TRUE(contains(model.message(), "needs sm_80, target is host"));
  EXPECT_TRUE(contains(model.message(), "fallback=forbid (artifact)"));
}

TEST(LoaderErrors, AdmissionRejectsAnOutputTheKernelLacks) {
  // The registry's GEMV writes f16, bf16 or f32; the kernel entry agrees
  // with the op, but this build's registry has the last word.
  TempDir dir;
  TestArtifactSpec spec;
  spec.registryId = "affine_gemm_prefill_host";
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(),
                       "registry kernel affine_gemm_prefill_host reads "
                       "(prefill_mma, 1, offset_binary)"));
}

TEST(Loader, TheEntryPointIsChosenByT) {
  // Buckets [1] and [2, 16] call different symbols: the second is wrong by
  // 0.5, so only T = 1 matches the reference.
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) {
    c["entries"] = {
        {{"symbol", "_mlir_ciface_test_gemv_w4s_g32_f16"}, {"tokens", {1, 1}}},
        {{"symbol", "_mlir_ciface_test_gemv_w4s_g32_f16_wrong"},
         {"tokens", {2, 16}}}};
  };
  auto model = loadSpec(dir, spec);
  ASSERT_TRUE(bool(model)) << model.message();
  HostTensor x1 = activations(1, 256, 21), x2 = activations(2, 256, 22);
  auto y1 = (*model)->run("layer.a.weight", x1);
  auto y2 = (*model)->run("layer.a.weight", x2);
  ASSERT_TRUE(y1 && y2);
  EXPECT_LE(worstErrorRatio(**model, "layer.a.weight", x1, *y1), 1.0);
  EXPECT_GT(worstErrorRatio(**model, "layer.a.weight", x2, *y2), 10.0);
}

TEST(LoaderErrors, CapabilityDisagreesWithTheCodes) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) { c["group_size"] = 64; };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), ".group_size: 64, but "
                                        "(tensor \"layer.a.weight\") has "
                                        "groups of 32"));
}

// row_split makes the runtime call a kernel on ranges of rows: claimed for
// a kernel whose registry entry computes whole outputs only, it would make
// that kernel read and write past the range, so it is refused; a CPU level
// the record does not know is refused by name.
TEST(LoaderErrors, RowSplitOnlyWhereTheRegistrySaysSo) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editKernelRecord = [](json &c, size_t) { c["row_split"] = true; };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(),
                       ".row_split: true, but registry kernel "
                       "affine_gemv_decode_host computes whole outputs only"))
      << model.message();
  TempDir other;
  TestArtifactSpec cpu;
  cpu.editKernelRecord = [](json &c, size_t) { c["cpu"] = "pentium"; };
  auto bad = loadSpec(other, cpu);
  ASSERT_FALSE(bool(bad));
  EXPECT_TRUE(contains(bad.message(), ".cpu: unknown value "
                                      "\"pentium\""))
      << bad.message();
}

TEST(Loader, FallbackAllowedRunsTheReferenceAndIsCounted) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.registryId = "affine_gemv_decode_sm80";
  writeTestArtifact(dir.str(), spec);
  LoadOptions o = hostOptions();
  o.fallback = kernels::FallbackPolicy::Allow;
  auto model = loadModel(dir.str(), o);
  ASSERT_TRUE(bool(model)) << model.message();
  LoadedModel &m = **model;
  EXPECT_EQ(m.plan().policySource, "override");
  EXPECT_EQ(m.plan().fallbacks(), 1u);
  EXPECT_TRUE(contains(m.plan().ops[0].phases[0].reason,
                       "needs sm_80, target is host"));
  // The whole weight as f32, counted; nothing in the native ledgers.
  EXPECT_EQ(m.ledger().current(MemoryCategory::Fallback), 6u * 256 * 4);
  EXPECT_EQ(m.ledger().current(MemoryCategory::DeviceCodes), 0u);
  HostTensor x = activations(2, 256, 9);
  auto y = m.run("layer.a.weight", x);
  ASSERT_TRUE(bool(y)) << y.message();
  EXPECT_LE(worstErrorRatio(m, "layer.a.weight", x, *y), 1.0);
  const DispatchRecord &last = m.trace().all().back();
  EXPECT_TRUE(last.fallback);
  EXPECT_EQ(last.kernel, "full_dequant_linear");
  EXPECT_EQ(last.backend, "host (full-dequant fallback)");
  EXPECT_TRUE(m.notes().empty()); // allow: counted, not warned
}

TEST(Loader, FallbackWarnLeavesANote) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.registryId = "affine_gemv_decode_sm80";
  spec.fallbackPolicy = "warn";
  auto model = loadSpec(dir, spec);
  ASSERT_TRUE(bool(model)) << model.message();
  EXPECT_EQ((*model)->plan().policySource, "artifact");
  ASSERT_EQ((*model)->notes().size(), 1u);
  EXPECT_TRUE(contains((*model)->notes()[0], "runs the full-dequant fallback"));
}

TEST(LoaderErrors, CompileTimeFallbackForbiddenAtLoad) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.compiledFallback = true;
  spec.fallbackPolicy = "allow";
  writeTestArtifact(dir.str(), spec);
  LoadOptions o = hostOptions();
  o.fallback = kernels::FallbackPolicy::Forbid;
  auto model = loadModel(dir.str(), o);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "selected at compile time"));
  EXPECT_TRUE(contains(model.message(), "fallback=forbid (override)"));
  // The binding's own policy admits it.
  auto allowed = loadModel(dir.str(), hostOptions());
  ASSERT_TRUE(bool(allowed)) << allowed.message();
  EXPECT_EQ((*allowed)->plan().fallbacks(), 1u);
}

TEST(LoaderErrors, BindingAndKernelRecordDisagreeOnTheKernel) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editBindings = [](json &b) {
    b[0]["phases"][0]["kernel"] = "affine_gemm_prefill_host";
  };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(),
                       "manifest.kernels[0] (test_gemv_0)."
                       "registry_id: \"affine_gemv_decode_host\", but the "
                       "op's binding selects \"affine_gemm_prefill_host\""));
}

TEST(LoaderErrors, BindingFieldOfTheWrongType) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editBindings = [](json &b) { b[0]["n"] = "six"; };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "manifest.bindings[0].n: expected an "
                                        "integer, got string"));
}

TEST(LoaderErrors, BindingSliceDoesNotMatchTheTensor) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editBindings = [](json &b) {
    b[0]["n"] = 12;
    b[0]["ranks"][0]["n"] = 12;
  };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "manifest tensor \"layer.a.weight\" "
                                        "has shape [6, 256], but the binding"));
}

TEST(LoaderErrors, TensorWithoutABinding) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.linears.push_back({"layer.b.weight", 4, 128, false, false, ""});
  spec.editBindings = [](json &b) { b.erase(1); };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "no manifest.bindings entry binds "
                                        "op \"layer.b.weight\""));
}

TEST(LoaderErrors, BindingOfAnOpTheManifestDoesNotStore) {
  TempDir dir;
  TestArtifactSpec spec;
  spec.editBindings = [](json &b) {
    b.push_back(b[0]);
    b[1]["op"] = "layer.z.weight";
  };
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(),
                       "manifest.bindings[1]: \"layer.z.weight\" is not a "
                       "manifest tensor (the weight of rank 0)"));
}

TEST(LoaderErrors, ModelSchemaOfAKnownArchitecture) {
  // "llama" has a schema: one lone linear is not a llama.
  TempDir dir;
  TestArtifactSpec spec;
  spec.architecture = "llama";
  auto model = loadSpec(dir, spec);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "model schema (llama): op "
                                        "\"layer.a.weight\" is not a linear"));
  // A GGUF-named linear is one: the schema then asks for the rest of its
  // layer by GGUF names (ModelSchemaTest.cpp covers the schema itself).
  TempDir gguf;
  spec.linears[0].name = "blk.0.attn_q.weight";
  auto named = loadSpec(gguf, spec);
  ASSERT_FALSE(bool(named));
  EXPECT_TRUE(contains(named.message(), "model schema (llama): "
                                        "blk.0.attn_k.weight is missing"));
}

TEST(LoaderErrors, RankOutsideTheTopology) {
  TempDir dir;
  writeTestArtifact(dir.str(), {});
  LoadOptions o = hostOptions();
  o.rank = 1;
  auto model = loadModel(dir.str(), o);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "rank 1 is outside [0, 1)"));
}

TEST(LoaderErrors, NotAnArtifact) {
  TempDir dir;
  auto model = loadModel(dir.str(), hostOptions());
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "manifest.json: missing"));
}

TEST(LoaderErrors, RunRejectsBadActivations) {
  TempDir dir;
  auto model = loadSpec(dir, {});
  ASSERT_TRUE(bool(model)) << model.message();
  auto wrongK = (*model)->run("layer.a.weight", activations(1, 128, 1));
  ASSERT_FALSE(bool(wrongK));
  EXPECT_TRUE(contains(wrongK.message(), "activations have K = 128"));
  // Decode only: T = 17 is prefill, which the artifact was not compiled for.
  auto prefill = (*model)->run("layer.a.weight", activations(17, 256, 1));
  ASSERT_FALSE(bool(prefill));
  EXPECT_TRUE(contains(prefill.message(), "no kernel was planned for T = 17"));
  auto unknown = (*model)->run("layer.z.weight", activations(1, 256, 1));
  ASSERT_FALSE(bool(unknown));
}

TEST(Loader, CudaBackendWithoutAGpuSaysWhy) {
  TempDir dir;
  writeTestArtifact(dir.str(), {});
  LoadOptions o = hostOptions();
  o.backend = BackendChoice::Cuda;
  o.cudaLibrary = "libqtensor-no-such-driver.so.1";
  auto model = loadModel(dir.str(), o);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(), "--backend cuda: no CUDA driver"));
  // auto on a host artifact never needs the GPU.
  o.backend = BackendChoice::Auto;
  auto host = loadModel(dir.str(), o);
  ASSERT_TRUE(bool(host)) << host.message();
  EXPECT_EQ((*host)->backend(), "host");
}

// An artifact's own host code is not loaded by default: without a trusted
// builder the load fails, naming the file and the way out.
TEST(HostCode, TheArtifactsOwnCodeIsRefusedByDefault) {
  TempDir dir;
  writeTestArtifact(dir.str(), {});
  LoadOptions o = hostOptions();
  o.code = ArtifactCodePolicy{};
  auto model = loadModel(dir.str(), o);
  ASSERT_FALSE(bool(model));
  EXPECT_TRUE(contains(model.message(),
                       ": refusing to load host code from the artifact"));
  EXPECT_TRUE(contains(model.message(), "--trust-artifact-code"));
}

// A trusted builder is given the artifact's records, and the object it
// returns is what runs; its account is a note. The builder's failure is
// the load's, and the artifact's own object is still not loaded.
TEST(HostCode, TheBuildersObjectRunsInsteadOfTheArtifacts) {
  TempDir dir;
  writeTestArtifact(dir.str(), {});
  std::vector<uint8_t> trusted = testKernelLibrary();
  size_t calls = 0;
  LoadOptions o = hostOptions();
  o.code.trustArtifactCode = false;
  o.code.rebuild = [&](const artifact::Manifest &m,
                       const artifact::DecoderProgram *program)
      -> Expected<TrustedHostCode> {
    ++calls;
    EXPECT_EQ(program, nullptr); // no decoder requested
    EXPECT_FALSE(m.kernels.empty());
    return TrustedHostCode{trusted, "built by the test"};
  };
  auto model = loadModel(dir.str(), o);
  ASSERT_TRUE(bool(model)) << model.message();
  EXPECT_EQ(calls, 1u);
  bool noted = false;
  for (const std::string &n : (*model)->notes())
    noted |= n == "host kernels: built by the test";
  EXPECT_TRUE(noted);
  auto y = (*model)->run("layer.a.weight", activations(1, 256, 1));
  ASSERT_TRUE(bool(y)) << y.message();

  o.code.rebuild =
      [](const artifact::Manifest &,
         const artifact::DecoderProgram *) -> Expected<TrustedHostCode> {
    return makeError("no toolchain");
  };
  auto failed = loadModel(dir.str(), o);
  ASSERT_FALSE(bool(failed));
  EXPECT_TRUE(contains(failed.message(),
                       "rebuilding the artifact's host kernels from its "
                       "records (its own code is not loaded): no toolchain"));
}

// Several threads calling one loaded model get exactly what serial calls
// get; every call is traced and its workspace given back. scripts/tsan.sh
// runs this under ThreadSanitizer.
TEST(LoaderConcurrency, ThreadsRunningOneModelMatchSerialRuns) {
  TempDir dir;
  auto loaded = loadSpec(dir, {});
  ASSERT_TRUE(bool(loaded)) << loaded.message();
  LoadedModel &m = **loaded;
  const int64_t tokens[] = {1, 5, 16};
  std::vector<HostTensor> xs;
  std::vector<std::vector<uint8_t>> serial;
  for (int64_t t : tokens) {
    xs.push_back(activations(t, 256, uint32_t(t)));
    auto y = m.run("layer.a.weight", xs.back());
    ASSERT_TRUE(bool(y)) << y.message();
    serial.push_back(y->bytes);
  }
  const size_t before = m.trace().all().size();
  constexpr int kThreads = 4, kRounds = 20;
  std::atomic<int> failures{0}, mismatches{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&] {
      for (int round = 0; round < kRounds; ++round)
        for (size_t j = 0; j < xs.size(); ++j) {
          auto y = m.run("layer.a.weight", xs[j]);
          if (!y)
            ++failures;
          else if (y->bytes != serial[j])
            ++mismatches;
        }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(m.trace().all().size(),
            before + size_t(kThreads * kRounds) * xs.size());
  EXPECT_EQ(m.ledger().current(MemoryCategory::Workspace), 0u);
}
