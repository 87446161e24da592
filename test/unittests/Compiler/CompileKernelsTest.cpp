//===- CompileKernelsTest.cpp - qtc's kernel stage, both targets ----------===//
//
// A small block (q and k identical, an up projection with a bias) through
// --qtensor-compile and compileKernels:
//   - host: one kernels-host.so; the test writes it out, dlopens it and calls
//     an entry point through the C interface with codes packed by the
//     artifact's packer (packStoredCodes), checking y against the reference
//     reconstruction (Reconstruct.h): the ABI docs/kernel-abi.md promises the
//     runtime;
//   - sm_90: one PTX (and cubin where ptxas exists) per instance, entries
//     with launch geometry; the tensor-core GEMM selected for both phases
//     gives two entries sharing one file;
//   - the full-dequant fallback: an entry without a file;
//   - errors: a dispatch for another target, a disagreeing dispatch result.
//
//===----------------------------------------------------------------------===//

#include "CompileKernels.h"

#include "TestTempDir.h"
#include "qtensor/Support/Progress.h"

#include "qtensor/Conversion/KernelInstances.h"
#include "qtensor/Descriptor/Reconstruct.h"
#include "qtensor/Formats/QuantizedStorage.h"
#include "qtensor/InitAll.h"
#include "qtensor/Numerics/FloatFormats.h"
#include "qtensor/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <iostream>
#include <random>
#include <string>

using namespace qtensor;
using namespace qtensor::compiler;
using json = nlohmann::json;

namespace {

constexpr const char *kBlock = R"mlir(
#W4 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>
func.func @forward(%x: tensor<?x256xf16>, %b: tensor<512xf16>) -> (tensor<?x256xf16>, tensor<?x256xf16>, tensor<?x512xf16>) {
  %wq = qtensor.weight "model.layers.0.self_attn.q_proj.weight" : !qtensor.tensor<256x256xf16, #W4>
  %q = qtensor.linear %x, %wq accumulate(f32) : tensor<?x256xf16>, !qtensor.tensor<256x256xf16, #W4> -> tensor<?x256xf16>
  %wk = qtensor.weight "model.layers.0.self_attn.k_proj.weight" : !qtensor.tensor<256x256xf16, #W4>
  %k = qtensor.linear %x, %wk accumulate(f32) : tensor<?x256xf16>, !qtensor.tensor<256x256xf16, #W4> -> tensor<?x256xf16>
  %wu = qtensor.weight "model.layers.0.mlp.up_proj.weight" : !qtensor.tensor<512x256xf16, #W4>
  %u = qtensor.linear %x, %wu, %b accumulate(f32) : tensor<?x256xf16>, !qtensor.tensor<512x256xf16, #W4>, tensor<512xf16> -> tensor<?x512xf16>
  return %q, %k, %u : tensor<?x256xf16>, tensor<?x256xf16>, tensor<?x512xf16>
}
)mlir";

constexpr const char *kGroup96 = R"mlir(
#G96 = #qtensor.affine<code = si4, scheme = symmetric, granularity = group, axis = 1, group_size = 96, scale = f16>
func.func @forward(%x: tensor<?x768xf16>) -> tensor<?x64xf16> {
  %w = qtensor.weight "model.layers.0.mlp.gate_proj.weight" : !qtensor.tensor<64x768xf16, #G96>
  %y = qtensor.linear %x, %w accumulate(f32) : tensor<?x768xf16>, !qtensor.tensor<64x768xf16, #G96> -> tensor<?x64xf16>
  return %y : tensor<?x64xf16>
}
)mlir";

class CompileKernelsTest : public ::testing::Test {
protected:
  CompileKernelsTest() {
    mlir::DialectRegistry registry;
    registerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `text` and runs --qtensor-compile on it, by default with the
  /// kernel instances generated into the module as qtc compile has them.
  mlir::OwningOpRef<mlir::ModuleOp>
  compile(const char *text, const std::string &target, const std::string &phase,
          const std::string &fallback = "forbid", bool instantiate = true) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    EXPECT_TRUE(module);
    if (!module)
      return module;
    CompileOptions options;
    options.target = target;
    options.phase = *kernels::parsePhaseChoice(phase);
    options.fallback = *kernels::parseFallbackPolicy(fallback);
    // The float-activation host GEMM, whose T = 3 call is checked below
    // against float64 (the int8 one: HostGemmHostTest, TrustedCodeTest).
    options.int8Activations = false;
    if (instantiate) {
      options.lower = mlir::qt::KernelLowering::None;
      options.hostTwins = target != "host";
    }
    mlir::PassManager pm(&context);
    buildCompilePipeline(pm, options);
    EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
    return module;
  }

  Expected<KernelBuild> kernels(mlir::ModuleOp module,
                                const std::string &target,
                                std::set<std::string> kernelIds) {
    DispatchResult dispatch;
    dispatch.kernelIds = std::move(kernelIds);
    NullProgress progress;
    return compileKernels(context, module, dispatch, target, {}, scratch.str(),
                          qtensor::defaultHostCpuLevel(), progress);
  }

  mlir::MLIRContext context;
  qtensor::test::TempDir scratch{"qtc-kernels-test"};
};

const artifact::KernelEntry *findEntry(const KernelBuild &build,
                                       const std::string &id) {
  for (const artifact::KernelEntry &e : build.entries)
    if (e.id == id)
      return &e;
  return nullptr;
}

const ExportFile *findFile(const KernelBuild &build, const std::string &name) {
  for (const ExportFile &f : build.files)
    if (f.name == name)
      return &f;
  return nullptr;
}

constexpr const char *kQK =
    "qt_decode_gemv_w4sym_g128_f16_tdyn_n256_k256_s1_of16";
constexpr const char *kUp =
    "qt_decode_gemv_w4sym_g128_f16_tdyn_n512_k256_s1_of16_bias";
// The host target's own kernel for the same linears.
constexpr const char *kHostQK =
    "qt_host_gemm_w4sym_g128_f16_tdyn_n256_k256_s1_of16";
constexpr const char *kHostUp =
    "qt_host_gemm_w4sym_g128_f16_tdyn_n512_k256_s1_of16_bias";

/// A row-major memref descriptor over a vector.
template <typename T, int R> struct Memref {
  std::vector<T> data;
  StridedMemRefType<T, R> desc;
  Memref(std::vector<int64_t> shape, std::vector<T> values)
      : data(std::move(values)) {
    desc.basePtr = desc.data = data.data();
    desc.offset = 0;
    int64_t stride = 1;
    for (int d = R - 1; d >= 0; --d) {
      desc.sizes[d] = shape[d];
      desc.strides[d] = stride;
      stride *= shape[d];
    }
  }
};

} // namespace

TEST_F(CompileKernelsTest, HostSharedObjectRunsThroughTheCInterface) {
  auto module = compile(kBlock, "host", "decode");
  ASSERT_TRUE(module);
  Expected<KernelBuild> build = kernels(*module, "host", {"affine_gemm_host"});
  ASSERT_TRUE(bool(build)) << build.message();

  // One shared object for both instances; q and k share one.
  ASSERT_EQ(build->files.size(), 1u);
  EXPECT_EQ(build->files[0].name, "kernels-host.so");
  EXPECT_EQ(build->files[0].role, artifact::FileRole::Kernel);
  ASSERT_EQ(build->entries.size(), 2u);
  const artifact::KernelEntry *qk = findEntry(*build, kHostQK);
  const artifact::KernelEntry *up = findEntry(*build, kHostUp);
  ASSERT_TRUE(qk && up);
  EXPECT_EQ(qk->file, std::optional<std::string>("kernels-host.so"));
  const json c = toJson(*up);
  EXPECT_EQ(c["registry_id"], "affine_gemm_host");
  EXPECT_EQ(c["cpu"], toString(qtensor::defaultHostCpuLevel()));
  EXPECT_EQ(c["row_split"], true);
  EXPECT_EQ(c["target"], "host");
  EXPECT_EQ(c["format"], "host_so");
  EXPECT_EQ(c["phase"], "decode");
  EXPECT_EQ(c["tokens"], json::array({1, 16}));
  EXPECT_EQ(c["n"], 512);
  EXPECT_EQ(c["k"], 256);
  EXPECT_EQ(c["layout"], "decode_gemv");
  EXPECT_EQ(c["bias"], true);
  EXPECT_EQ(c["split_k"], 1);
  EXPECT_EQ(c["zero_output"], false);
  EXPECT_FALSE(c.contains("launch"));
  EXPECT_EQ(c["ops"], json::array({"model.layers.0.mlp.up_proj.weight"}));
  EXPECT_EQ(toJson(*qk)["ops"],
            json::array({"model.layers.0.self_attn.q_proj.weight",
                         "model.layers.0.self_attn.k_proj.weight"}));
  EXPECT_EQ(c["args"],
            json::parse(R"([{"name": "x", "dtype": "f16", "shape": [-1, 256]},
                            {"name": "w", "dtype": "i32", "shape": [512, 32]},
                            {"name": "s", "dtype": "f16", "shape": [512, 2]},
                            {"name": "b", "dtype": "f16", "shape": [512]},
                            {"name": "y", "dtype": "f16", "shape": [-1, 512]}])"));
  // One entry point for every T; the decode entry serves T in [1, 16].
  ASSERT_EQ(c["entries"].size(), 1u);
  EXPECT_EQ(c["entries"][0]["symbol"], std::string("_mlir_ciface_") + kHostUp);
  EXPECT_EQ(c["entries"][0]["tokens"], json::array({1, nullptr}));

  // The runtime's path: the stored codes as the exporter packs them, the
  // .so loaded with dlopen, the entry called with T = 3 memref descriptors.
  const int64_t n = 512, k = 256, t = 3;
  QuantizedTensorDescriptor weight;
  weight.shape = {n, k};
  weight.descriptor.code = {4, true};
  weight.descriptor.granularity = Granularity::Group;
  weight.descriptor.axis = 1;
  weight.descriptor.groupSize = 128;
  weight.layout = {"decode_gemv", 1, "offset_binary", {1, 32}, {}};
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> code(-8, 7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<int32_t> codes(size_t(n * k));
  for (int32_t &q : codes)
    q = code(rng);
  std::vector<uint16_t> scaleBits, biasBits, xBits;
  std::vector<double> scales, bias, x;
  for (int64_t i = 0; i < n * 2; ++i) {
    scaleBits.push_back(floatToHalfBits(0.01f + 0.02f * std::fabs(unit(rng))));
    scales.push_back(halfBitsToFloat(scaleBits.back()));
  }
  for (int64_t i = 0; i < n; ++i) {
    biasBits.push_back(floatToHalfBits(unit(rng)));
    bias.push_back(halfBitsToFloat(biasBits.back()));
  }
  for (int64_t i = 0; i < t * k; ++i) {
    xBits.push_back(floatToHalfBits(unit(rng)));
    x.push_back(halfBitsToFloat(xBits.back()));
  }
  Expected<std::vector<uint8_t>> packed =
      artifact::packStoredCodes(weight, codes);
  ASSERT_TRUE(bool(packed)) << packed.message();
  ASSERT_EQ(packed->size(), size_t(512 * 32 * 4)); // args["w"] in bytes
  std::vector<int32_t> words(packed->size() / 4);
  std::memcpy(words.data(), packed->data(), packed->size());
  Expected<std::vector<double>> what =
      reconstructAffine(weight, codes, scales, {});
  ASSERT_TRUE(bool(what)) << what.message();

  const std::string soPath = (scratch / "kernels-host.so").string();
  {
    std::ofstream out(soPath, std::ios::binary);
    out.write(reinterpret_cast<const char *>(build->files[0].bytes.data()),
              std::streamsize(build->files[0].bytes.size()));
  }
  void *handle = ::dlopen(soPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  using Entry = void (*)(void *, void *, void *, void *, void *);
  auto entry = reinterpret_cast<Entry>(
      ::dlsym(handle, c["entries"][0]["symbol"].get<std::string>().c_str()));
  ASSERT_NE(entry, nullptr) << ::dlerror();

  Memref<uint16_t, 2> xRef({t, k}, xBits);
  Memref<int32_t, 2> wRef({n, 32}, words);
  Memref<uint16_t, 2> sRef({n, 2}, scaleBits);
  Memref<uint16_t, 1> bRef({n}, biasBits);
  Memref<uint16_t, 2> yRef({t, n}, std::vector<uint16_t>(size_t(t * n), 0));
  entry(&xRef.desc, &wRef.desc, &sRef.desc, &bRef.desc, &yRef.desc);
  ::dlclose(handle);

  for (int64_t row = 0; row < t; ++row)
    for (int64_t col = 0; col < n; ++col) {
      double ref = bias[col], absSum = std::fabs(bias[col]);
      for (int64_t i = 0; i < k; ++i) {
        ref += x[row * k + i] * (*what)[col * k + i];
        absSum += std::fabs(x[row * k + i] * (*what)[col * k + i]);
      }
      // f32 accumulation within gamma(K + 2) S (Runtime/Reference.h:
      // 258 u S here), then one rounding to f16.
      const double f32Bound = 258 * std::ldexp(1.0, -24) * absSum;
      const double bound =
          f32Bound + std::ldexp(1.0, -11) * (std::fabs(ref) + f32Bound);
      const double got = halfBitsToFloat(yRef.data[row * n + col]);
      EXPECT_LE(std::fabs(got - ref), bound)
          << "t " << row << " n " << col << ": " << got << " vs " << ref;
    }
}

TEST_F(CompileKernelsTest, GpuWritesOnePtxPerInstance) {
  auto module = compile(kBlock, "sm_90", "decode");
  ASSERT_TRUE(module);
  Expected<KernelBuild> build =
      kernels(*module, "sm_90", {"affine_gemv_decode_sm80"});
  ASSERT_TRUE(bool(build)) << build.message();
  const ExportFile *ptx = findFile(*build, std::string(kUp) + ".ptx");
  ASSERT_NE(ptx, nullptr);
  ASSERT_NE(findFile(*build, std::string(kQK) + ".ptx"), nullptr);
  const std::string text(ptx->bytes.begin(), ptx->bytes.end());
  EXPECT_NE(text.find(".target sm_90"), std::string::npos);
  const artifact::KernelEntry *up = findEntry(*build, kUp);
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->file, std::optional<std::string>(std::string(kUp) + ".ptx"));
  const json c = toJson(*up);
  std::cout << "[kernel record] " << up->id << ": " << c.dump() << "\n";
  EXPECT_EQ(c["registry_id"], "affine_gemv_decode_sm80");
  EXPECT_EQ(c["format"], "ptx");
  EXPECT_EQ(c["launch"], json::parse(R"({"grid": [128, 1, 1],
      "block": [128, 1, 1], "shared_bytes": 0})"));
  for (const json &e : c["entries"])
    EXPECT_NE(text.find(".entry " + e["symbol"].get<std::string>() + "("),
              std::string::npos)
        << e["symbol"];
  // A cubin of every PTX where ptxas exists: an entry of its own with the
  // same record but its format. Plus kernels-host.so with the host twin
  // of each instance (the registry's host kernel reading the same layout).
  const bool cubins = build->files.size() == 5;
  EXPECT_TRUE(build->files.size() == 3 || cubins) << build->files.size();
  EXPECT_EQ(build->entries.size(), cubins ? 6u : 4u);
  ASSERT_NE(findFile(*build, "kernels-host.so"), nullptr);
  const artifact::KernelEntry *twin =
      findEntry(*build, std::string(kUp) + "_host");
  ASSERT_NE(twin, nullptr);
  EXPECT_EQ(twin->file, std::optional<std::string>("kernels-host.so"));
  EXPECT_EQ(toJson(*twin)["registry_id"], "affine_gemv_decode_host");
  EXPECT_EQ(toJson(*twin)["target"], "host");
  EXPECT_EQ(toJson(*twin)["layout"], c["layout"]);
  EXPECT_EQ(toJson(*twin)["ops"], c["ops"]);
  const artifact::KernelEntry *cubin =
      findEntry(*build, std::string(kUp) + ".cubin");
  EXPECT_EQ(cubin != nullptr, cubins);
  if (cubin) {
    EXPECT_EQ(cubin->file,
              std::optional<std::string>(std::string(kUp) + ".cubin"));
    EXPECT_EQ(toJson(*cubin)["format"], "cubin");
    // The same record but its format, id and file.
    json same = toJson(*cubin);
    same["format"] = "ptx";
    same["id"] = c["id"];
    same["file"] = c["file"];
    EXPECT_EQ(same, c);
    ASSERT_NE(findFile(*build, std::string(kUp) + ".cubin"), nullptr);
  }
}

TEST_F(CompileKernelsTest, OneInstanceServingBothPhasesHasTwoEntries) {
  // With one shared layout the tensor-core GEMM serves decode and prefill.
  auto module = compile(kBlock, "sm_90", "both");
  ASSERT_TRUE(module);
  Expected<KernelBuild> build =
      kernels(*module, "sm_90", {"affine_mma_prefill_sm80"});
  ASSERT_TRUE(bool(build)) << build.message();
  const std::string name =
      "qt_prefill_mma_w4sym_g128_f16_tdyn_n512_k256_s1_of16_bias";
  const artifact::KernelEntry *decode = findEntry(*build, name + "@decode");
  const artifact::KernelEntry *prefill = findEntry(*build, name + "@prefill");
  ASSERT_TRUE(decode && prefill);
  EXPECT_EQ(decode->file, prefill->file);
  EXPECT_EQ(toJson(*decode)["tokens"], json::array({1, 16}));
  EXPECT_EQ(toJson(*prefill)["tokens"], json::array({17, nullptr}));
  EXPECT_EQ(toJson(*prefill)["launch"]["token_axis"].is_number(), true);
}

TEST_F(CompileKernelsTest, FallbackHasAnEntryWithoutAFile) {
  auto module = compile(kGroup96, "host", "decode", "allow");
  ASSERT_TRUE(module);
  Expected<KernelBuild> build =
      kernels(*module, "host", {"full_dequant_linear"});
  ASSERT_TRUE(bool(build)) << build.message();
  EXPECT_TRUE(build->files.empty());
  ASSERT_EQ(build->entries.size(), 1u);
  const artifact::KernelEntry &e = build->entries[0];
  EXPECT_EQ(e.id, "qt_full_dequant_n64_k768_f16_of16");
  EXPECT_FALSE(e.file.has_value());
  EXPECT_EQ(toJson(e)["format"], "reference");
  EXPECT_EQ(toJson(e)["registry_id"], "full_dequant_linear");
  EXPECT_EQ(toJson(e)["ops"],
            json::array({"model.layers.0.mlp.gate_proj.weight"}));
}

TEST_F(CompileKernelsTest, ErrorsNameTheLinearAndTheMismatch) {
  auto module = compile(kBlock, "host", "decode");
  ASSERT_TRUE(module);
  Expected<KernelBuild> wrongTarget =
      kernels(*module, "sm_90", {"affine_gemv_decode_host"});
  ASSERT_FALSE(bool(wrongTarget));
  EXPECT_NE(wrongTarget.message().find(
                "linear 'model.layers.0.self_attn.q_proj.weight' was "
                "dispatched for host, kernels are being generated for sm_90"),
            std::string::npos)
      << wrongTarget.message();
  Expected<KernelBuild> disagree = kernels(
      *module, "host", {"affine_gemv_decode_host", "full_dequant_linear"});
  ASSERT_FALSE(bool(disagree));
  EXPECT_NE(disagree.message().find("the kernel instances cover 1 selected "
                                    "kernels, the dispatch selected 2"),
            std::string::npos)
      << disagree.message();
}

TEST_F(CompileKernelsTest, KernelsComeFromTheModule) {
  // The files are the module's kernels: a module the instantiation did not
  // run on is refused with the instance and what is missing, and a
  // compiled one is left holding the graph alone.
  for (const std::string target : {"host", "sm_90"}) {
    auto bare = compile(kBlock, target, "decode", "forbid", false);
    ASSERT_TRUE(bare);
    const std::string kernel =
        target == "host" ? "affine_gemm_host" : "affine_gemv_decode_sm80";
    Expected<KernelBuild> missing = kernels(*bare, target, {kernel});
    ASSERT_FALSE(bool(missing)) << target;
    EXPECT_NE(missing.message().find(std::string("the module has no ") +
                                     (target == "host"
                                          ? "func.func @qt_host_gemm_"
                                          : "gpu.module @qt_decode_gemv_")),
              std::string::npos)
        << missing.message();
    EXPECT_NE(
        missing.message().find("qtensor-instantiate-kernels did not run on it"),
        std::string::npos)
        << missing.message();

    auto compiled = compile(kBlock, target, "decode");
    ASSERT_TRUE(compiled);
    Expected<KernelBuild> build = kernels(*compiled, target, {kernel});
    ASSERT_TRUE(bool(build)) << build.message();
    size_t leftover = 0;
    compiled->walk([&](mlir::Operation *op) {
      if (llvm::isa<mlir::gpu::GPUModuleOp, mlir::gpu::BinaryOp>(op) ||
          (llvm::isa<mlir::func::FuncOp>(op) &&
           llvm::cast<mlir::func::FuncOp>(op).getSymName().starts_with("qt_")))
        ++leftover;
    });
    EXPECT_EQ(leftover, 0u) << target;
    EXPECT_FALSE(compiled->lookupSymbol(qtensor::kHostTwinsModuleName));
  }
}
