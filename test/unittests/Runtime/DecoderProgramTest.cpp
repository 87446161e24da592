//===- DecoderProgramTest.cpp - program.json and the KV cache API ---------===//
//
// The decoder program round-trips through its JSON form and its parser
// rejects what the runtime must not size buffers from (bad dimensions,
// unknown fields, a layer count that disagrees); the KV cache's append,
// truncate and fork keep their positions and refuse what does not fit
// (seed M8.9 0x09E). The whole-model run is tested end to end in lit
// (qtc-run-prompt.test) against llama.cpp's tokens and logits.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/DecoderProgram.h"
#include "qtensor/Formats/ModelKernelSpec.h"
#include "qtensor/Runtime/Decoder.h"

#include <gtest/gtest.h>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

artifact::DecoderProgram sampleProgram() {
  artifact::DecoderProgram p;
  artifact::DecoderConfig &c = p.config;
  c.architecture = "llama";
  c.hidden = 256;
  c.intermediate = 512;
  c.layers = 1;
  c.heads = 4;
  c.kvHeads = 2;
  c.headDim = 64;
  c.vocab = 384;
  c.context = 128;
  c.ropeDim = 64;
  p.kernelFile = "kernels-host.so";
  p.kernels.embed = "_mlir_ciface_e";
  p.kernels.norm = "_mlir_ciface_n";
  p.kernels.finalNorm = "_mlir_ciface_n";
  p.kernels.storeV = "_mlir_ciface_v";
  p.kernels.gateMul = "_mlir_ciface_s";
  p.kernels.residualAdd = "_mlir_ciface_r";
  p.kernels.argmax = "_mlir_ciface_m";
  p.embed = "token_embd.weight";
  p.finalNorm = "output_norm.weight";
  p.head = {"output.weight", std::string("_mlir_ciface_h"), std::nullopt};
  artifact::ProgramLayer l;
  l.attnNorm = "blk.0.attn_norm.weight";
  l.ffnNorm = "blk.0.ffn_norm.weight";
  l.q = {"blk.0.attn_q.weight", std::nullopt, std::nullopt};
  l.k = {"blk.0.attn_k.weight", std::nullopt, std::nullopt};
  l.v = {"blk.0.attn_v.weight", std::nullopt, std::nullopt};
  l.o = {"blk.0.attn_output.weight", std::nullopt, std::nullopt};
  l.gate = {"blk.0.ffn_gate.weight", std::nullopt, std::nullopt};
  l.up = {"blk.0.ffn_up.weight", std::nullopt, std::nullopt};
  l.down = {"blk.0.ffn_down.weight", std::nullopt, std::nullopt};
  l.ropeQ = "_mlir_ciface_q";
  l.ropeK = "_mlir_ciface_k";
  l.attention = "_mlir_ciface_a";
  p.layers.push_back(l);
  p.tokenizerFile = "tokenizer.gguf";
  return p;
}

TEST(DecoderProgram, RoundTripsThroughJson) {
  artifact::DecoderProgram p = sampleProgram();
  std::string text = artifact::toJson(p).dump();
  auto back = artifact::parseProgram(text, "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);
  // The gemma3 fields too.
  p.config.architecture = "gemma3";
  p.config.embedScale = 16.0;
  p.config.attentionScale = 0.0625;
  p.config.gate = artifact::GateActivation::GeluTanh;
  p.config.slidingWindow = 512;
  p.config.slidingPattern = 6;
  p.layers[0].qNorm = "blk.0.attn_q_norm.weight";
  p.layers[0].kNorm = "blk.0.attn_k_norm.weight";
  p.kernels.headNorm = "_mlir_ciface_hn";
  back = artifact::parseProgram(artifact::toJson(p).dump(), "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);
  // A float linear's bias (qwen2 kept float), absent when none.
  EXPECT_FALSE(artifact::toJson(p)["layers"][0]["q"].contains("bias"));
  p.layers[0].q = {"blk.0.attn_q.weight", std::string("_mlir_ciface_lb"),
                   std::string("blk.0.attn_q.bias")};
  EXPECT_EQ(artifact::toJson(p)["layers"][0]["q"]["bias"], "blk.0.attn_q.bias");
  back = artifact::parseProgram(artifact::toJson(p).dump(), "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);
  EXPECT_EQ(back->tensors().size(), sampleProgram().tensors().size() + 3);
  // RoPE frequency divisors (rope_dim / 2 of them), absent when none.
  EXPECT_FALSE(artifact::toJson(p)["config"].contains("rope_freq_factors"));
  p.config.ropeFreqFactors.assign(size_t(p.config.ropeDim / 2), 8.0);
  p.config.ropeFreqFactors[0] = 1.0;
  back = artifact::parseProgram(artifact::toJson(p).dump(), "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);
}

/// The KV cache's dtype: in the program, and in the kernels that write
/// and read the cache (their names differ, so an artifact's symbols pin
/// it).
TEST(DecoderProgram, KvCacheDtypeRoundTripsAndGoesIntoTheCacheKernels) {
  artifact::DecoderProgram p = sampleProgram();
  p.kvCache = FloatType::F16;
  nlohmann::json j = artifact::toJson(p);
  EXPECT_EQ(j["kv_cache"], "f16");
  auto back = artifact::parseProgram(j.dump(), "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->kvCache, FloatType::F16);
  j.erase("kv_cache");
  EXPECT_FALSE(artifact::parseProgram(j.dump(), "program.json"));

  LayerKernelSet f32 = layerKernels(p.config, 0, FloatType::F16);
  LayerKernelSet f16 =
      layerKernels(p.config, 0, FloatType::F16, FloatType::F16);
  EXPECT_EQ(f16.ropeK.output, FloatType::F16);
  EXPECT_EQ(f16.attention.weight, FloatType::F16);
  EXPECT_EQ(f16.ropeQ.name(), f32.ropeQ.name()); // q stays f32
  EXPECT_NE(f16.ropeK.name(), f32.ropeK.name());
  EXPECT_NE(f16.attention.name(), f32.attention.name());
  EXPECT_EQ(decoderKernels(p.config, FloatType::F16, FloatType::F32,
                           FloatType::F32, FloatType::F16)
                .storeV.output,
            FloatType::F16);
}

/// gemma2's soft caps: in the config (absent when none, 0 never written),
/// with the logits' kernel exactly when the config caps them, and in the
/// attention kernel's spec and name.
TEST(DecoderProgram, SoftCapsRoundTripAndGoWithTheirKernel) {
  artifact::DecoderProgram p = sampleProgram();
  EXPECT_FALSE(
      artifact::toJson(p)["config"].contains("attn_logit_softcapping"));
  p.config.attnSoftcap = 50.0;
  p.config.finalSoftcap = 30.0;
  p.kernels.finalSoftcap = "_mlir_ciface_sc";
  nlohmann::json j = artifact::toJson(p);
  EXPECT_EQ(j["config"]["attn_logit_softcapping"], 50.0);
  EXPECT_EQ(j["kernels"]["final_softcap"], "_mlir_ciface_sc");
  auto back = artifact::parseProgram(j.dump(), "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);
  j["config"]["final_logit_softcapping"] = 0;
  EXPECT_NE(
      artifact::parseProgram(j.dump(), "program.json")
          .message()
          .find("final_logit_softcapping: 0 is spelled by leaving it out"),
      std::string::npos);
  j["config"]["final_logit_softcapping"] = -1;
  EXPECT_NE(artifact::parseProgram(j.dump(), "program.json")
                .message()
                .find("final_logit_softcapping: must be in [0, 1e6]"),
            std::string::npos);

  LayerKernelSet capped = layerKernels(p.config, 0, FloatType::F16);
  EXPECT_EQ(capped.attention.softcap, 50.0);
  EXPECT_NE(capped.attention.name().find("_sc4049000000000000_"),
            std::string::npos)
      << capped.attention.name();
  auto spec = modelKernelSpecFromJson(toJson(capped.attention), "spec");
  ASSERT_TRUE(spec) << spec.message();
  EXPECT_EQ(spec->name(), capped.attention.name());
  artifact::DecoderConfig none = p.config;
  none.attnSoftcap = 0;
  EXPECT_EQ(layerKernels(none, 0, FloatType::F16).attention.name().find("_sc"),
            std::string::npos);
  DecoderKernelSet k =
      decoderKernels(p.config, FloatType::F16, FloatType::F32, FloatType::F32);
  EXPECT_EQ(k.finalSoftcap.op, ModelOp::Softcap);
  EXPECT_EQ(k.finalSoftcap.name(), "qt_model_softcap_w" +
                                       std::to_string(p.config.vocab) +
                                       "_sc403e000000000000_f32_f32_f32");
}

/// granite: the residual and logit scales round-trip (absent when 1), go
/// into the residual_add kernel and a scale kernel after the head, and the
/// logit kernel is present exactly when its scale is.
TEST(DecoderProgram, GraniteScalesRoundTripAndGoIntoTheirKernels) {
  artifact::DecoderProgram p = sampleProgram();
  nlohmann::json plain = artifact::toJson(p);
  EXPECT_FALSE(plain["config"].contains("residual_scale"));
  EXPECT_FALSE(plain["config"].contains("logit_scale"));
  DecoderKernelSet unscaled =
      decoderKernels(p.config, FloatType::F16, FloatType::F32, FloatType::F32);
  EXPECT_EQ(unscaled.residualAdd.name().find("_s"), std::string::npos)
      << unscaled.residualAdd.name();

  p.config.residualScale = 0.22;
  p.config.logitScale = 8.0;
  p.kernels.logitScale = "_mlir_ciface_ls";
  nlohmann::json j = artifact::toJson(p);
  EXPECT_EQ(j["config"]["residual_scale"], 0.22);
  EXPECT_EQ(j["config"]["logit_scale"], 8.0);
  EXPECT_EQ(j["kernels"]["logit_scale"], "_mlir_ciface_ls");
  auto back = artifact::parseProgram(j.dump(), "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);

  auto bad = [&](auto edit) {
    nlohmann::json copy = j;
    edit(copy);
    auto r = artifact::parseProgram(copy.dump(), "program.json");
    return r ? std::string("accepted") : r.message();
  };
  EXPECT_NE(bad([](nlohmann::json &c) {
              c["config"]["logit_scale"] = 1;
            }).find("logit_scale: 1 is spelled by leaving it out"),
            std::string::npos);
  EXPECT_NE(bad([](nlohmann::json &c) {
              c["config"]["residual_scale"] = -2;
            }).find("residual_scale: must be in (0, 1e6]"),
            std::string::npos);

  DecoderKernelSet k =
      decoderKernels(p.config, FloatType::F16, FloatType::F32, FloatType::F32);
  EXPECT_EQ(k.residualAdd.scale, 0.22);
  EXPECT_NE(k.residualAdd.name().find("_s3fcc28f5c28f5c29_"), std::string::npos)
      << k.residualAdd.name();
  EXPECT_EQ(k.logitScale.op, ModelOp::Scale);
  EXPECT_EQ(k.logitScale.scale, double(1.0f / 8.0f));
  for (const ModelKernelSpec *spec : {&k.residualAdd, &k.logitScale}) {
    auto parsed = modelKernelSpecFromJson(toJson(*spec), "spec");
    ASSERT_TRUE(parsed) << parsed.message();
    EXPECT_EQ(parsed->name(), spec->name());
  }
}

/// gemma3 scales only its global layers' RoPE: the windowed ones keep no
/// divisors, their kernels say so, and the flag round-trips (absent when
/// true).
TEST(DecoderProgram, RopeScalingOfTheWindowedLayers) {
  artifact::DecoderProgram p = sampleProgram();
  artifact::DecoderConfig &c = p.config;
  c.slidingWindow = 512;
  c.slidingPattern = 6;
  c.ropeFreqFactors.assign(size_t(c.ropeDim / 2), 8.0);
  EXPECT_FALSE(artifact::toJson(p)["config"].contains("rope_scales_local"));
  EXPECT_EQ(c.ropeFreqFactorsOf(0).size(), c.ropeFreqFactors.size());
  c.ropeScalesLocal = false;
  EXPECT_TRUE(c.ropeFreqFactorsOf(0).empty()); // windowed
  EXPECT_EQ(c.ropeFreqFactorsOf(5).size(), c.ropeFreqFactors.size());
  EXPECT_EQ(layerKernels(c, 0, FloatType::F16).ropeQ.name().find("_ff"),
            std::string::npos);
  EXPECT_NE(layerKernels(c, 5, FloatType::F16).ropeQ.name().find("_ff"),
            std::string::npos);
  nlohmann::json j = artifact::toJson(p);
  EXPECT_EQ(j["config"]["rope_scales_local"], false);
  auto back = artifact::parseProgram(j.dump(), "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);
  j["config"]["rope_scales_local"] = true;
  EXPECT_NE(artifact::parseProgram(j.dump(), "program.json")
                .message()
                .find("rope_scales_local: false, or absent"),
            std::string::npos);
}

/// A Hugging Face gemma's norms multiply by 1 + w: the offset round-trips
/// (absent when 0), is 0 or 1 only, and goes into every norm kernel's spec
/// and name.
TEST(DecoderProgram, NormWeightOffsetGoesIntoTheNormKernels) {
  artifact::DecoderProgram p = sampleProgram();
  EXPECT_FALSE(artifact::toJson(p)["config"].contains("norm_weight_offset"));
  DecoderKernelSet plain =
      decoderKernels(p.config, FloatType::F16, FloatType::F32, FloatType::F32);
  EXPECT_EQ(plain.norm.name().find("_wo"), std::string::npos);
  p.config.normWeightOffset = 1.0;
  nlohmann::json j = artifact::toJson(p);
  EXPECT_EQ(j["config"]["norm_weight_offset"], 1.0);
  auto back = artifact::parseProgram(j.dump(), "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);
  j["config"]["norm_weight_offset"] = 0.5;
  EXPECT_NE(artifact::parseProgram(j.dump(), "program.json")
                .message()
                .find("norm_weight_offset: must be 0 or 1"),
            std::string::npos);
  DecoderKernelSet k =
      decoderKernels(p.config, FloatType::F16, FloatType::F32, FloatType::F32);
  for (const ModelKernelSpec *norm : {&k.norm, &k.headNorm, &k.outputNorm}) {
    EXPECT_EQ(norm->weightOffset, 1.0);
    EXPECT_NE(norm->name().find("_wo3ff0000000000000_"), std::string::npos)
        << norm->name();
    auto spec = modelKernelSpecFromJson(toJson(*norm), "spec");
    ASSERT_TRUE(spec) << spec.message();
    EXPECT_EQ(spec->name(), norm->name());
  }
}

/// LongRoPE: the long divisors and where they start round-trip (absent
/// when none), come with the short ones, and give each layer a second pair
/// of RoPE kernels; the factor on cos and sin goes into every RoPE kernel.
TEST(DecoderProgram, LongRopeHasItsOwnKernelsAndSwitchPoint) {
  artifact::DecoderProgram p = sampleProgram();
  artifact::DecoderConfig &c = p.config;
  EXPECT_FALSE(layerKernels(c, 0, FloatType::F16).ropeQLong);
  c.ropeFreqFactors.assign(size_t(c.ropeDim / 2), 1.5);
  c.ropeFreqFactorsLong.assign(size_t(c.ropeDim / 2), 20.0);
  c.ropeLongFrom = 4096;
  c.ropeMscale = 1.19;
  EXPECT_FALSE(c.usesLongRope(4096));
  EXPECT_TRUE(c.usesLongRope(4097));
  LayerKernelSet k = layerKernels(c, 0, FloatType::F16);
  ASSERT_TRUE(k.ropeQLong && k.ropeKLong);
  EXPECT_EQ(k.ropeQLong->ropeFreqFactors, c.ropeFreqFactorsLong);
  EXPECT_NE(k.ropeQLong->name(), k.ropeQ.name());
  EXPECT_EQ(k.ropeQ.scale, 1.19);
  EXPECT_NE(k.ropeQ.name().find("_s"), std::string::npos) << k.ropeQ.name();
  for (artifact::ProgramLayer &l : p.layers) {
    l.ropeQLong = "_mlir_ciface_ql";
    l.ropeKLong = "_mlir_ciface_kl";
  }
  nlohmann::json j = artifact::toJson(p);
  EXPECT_EQ(j["config"]["rope_long_from"], 4096);
  EXPECT_EQ(j["config"]["rope_mscale"], 1.19);
  EXPECT_EQ(j["layers"][0]["rope_q_long"], "_mlir_ciface_ql");
  auto back = artifact::parseProgram(j.dump(), "program.json");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, p);
  j["config"].erase("rope_long_from");
  EXPECT_NE(artifact::parseProgram(j.dump(), "program.json")
                .message()
                .find("rope_freq_factors_long: comes with rope_long_from"),
            std::string::npos);
}

TEST(DecoderProgram, SlidingWindowLayers) {
  artifact::DecoderConfig c = sampleProgram().config;
  c.slidingWindow = 512;
  c.slidingPattern = 6;
  c.ropeBase = 1e6;
  c.ropeBaseLocal = 1e4;
  // Five local layers, then a global one (llama.cpp's gemma3 pattern).
  for (int64_t l = 0; l < 12; ++l) {
    bool global = l == 5 || l == 11;
    EXPECT_EQ(c.windowOf(l), global ? 0 : 512) << l;
    EXPECT_EQ(c.ropeBaseOf(l), global ? 1e6 : 1e4) << l;
  }
  EXPECT_DOUBLE_EQ(c.qkScale(), 1.0 / 8.0); // head dim 64
  // Pattern 0: every layer windowed, with the local base (mistral's
  // config sets it to the global one).
  c.slidingPattern = 0;
  for (int64_t l = 0; l < 12; ++l) {
    EXPECT_EQ(c.windowOf(l), 512) << l;
    EXPECT_EQ(c.ropeBaseOf(l), 1e4) << l;
  }
  // qwen2/qwen3's max_window_layers: only the layers from slidingFrom on.
  c.slidingFrom = 4;
  EXPECT_EQ(c.windowOf(3), 0);
  EXPECT_EQ(c.windowOf(4), 512);
  c.slidingFrom = 0;
  c.slidingWindow = 0; // none
  EXPECT_EQ(c.windowOf(3), 0);
  EXPECT_EQ(c.ropeBaseOf(3), 1e6);
}

TEST(DecoderProgram, RejectsWhatTheRuntimeMustNotSizeFrom) {
  auto bad = [](auto edit) {
    nlohmann::json j = artifact::toJson(sampleProgram());
    edit(j);
    auto r = artifact::parseProgram(j.dump(), "program.json");
    return r ? std::string("accepted") : r.message();
  };
  EXPECT_EQ(bad([](nlohmann::json &j) { j["config"]["hidden"] = -1; }),
            "program.json.config.hidden: -1 is outside [1, 16777216]");
  EXPECT_NE(bad([](nlohmann::json &j) {
              j["config"]["kv_heads"] = 3;
            }).find("must be a multiple of kv_heads"),
            std::string::npos);
  EXPECT_NE(bad([](nlohmann::json &j) {
              j["config"]["rope_dim"] = 65;
            }).find("rope_dim: 65 must be even"),
            std::string::npos);
  EXPECT_NE(bad([](nlohmann::json &j) {
              j["config"]["layers"] = 2;
            }).find("1 layers, the config says 2"),
            std::string::npos);
  EXPECT_NE(bad([](nlohmann::json &j) { j["extra"] = 1; }).find("extra"),
            std::string::npos);
  EXPECT_NE(bad([](nlohmann::json &j) {
              j["config"]["rope_style"] = "x";
            }).find("unknown value \"x\""),
            std::string::npos);
  EXPECT_NE(bad([](nlohmann::json &j) {
              j["config"]["architecture"] = "gpt2";
            }).find("\"gpt2\" is not a decoder this runtime runs"),
            std::string::npos);
  EXPECT_NE(bad([](nlohmann::json &j) {
              j["config"]["rope_freq_factors"] = {1.0, 2.0};
            }).find("rope_freq_factors: 2 factors, rope_dim / 2 is"),
            std::string::npos);
  EXPECT_NE(bad([](nlohmann::json &j) {
              int64_t half = j["config"]["rope_dim"].get<int64_t>() / 2;
              j["config"]["rope_freq_factors"] =
                  std::vector<double>(size_t(half), 0.0);
            }).find("rope_freq_factors[0]: must be in [1e-3, 1e6]"),
            std::string::npos);
  EXPECT_NE(bad([](nlohmann::json &j) {
              j["config"]["vocab"] = 1 << 24;
              j["config"]["hidden"] = 1 << 24;
            }).find("exceeds"),
            std::string::npos);
}

/// A float linear's bias is part of its spec and its name, so a program
/// naming a kernel built without it is refused; the spelling is strict.
TEST(ModelKernelSpec, AFloatLinearsBiasIsInItsSpecAndName) {
  ModelKernelSpec plain = floatLinearKernel(256, 128, FloatType::F16,
                                            FloatType::BF16, FloatType::F16);
  ModelKernelSpec biased =
      floatLinearKernel(256, 128, FloatType::F16, FloatType::BF16,
                        FloatType::F16, FloatType::F32);
  EXPECT_EQ(plain.name(), "qt_model_linear_rs_w128_r256_f16_bf16_f16");
  EXPECT_EQ(biased.name(), "qt_model_linear_rs_w128_r256_biasf32_f16_bf16_f16");
  for (const ModelKernelSpec &s : {plain, biased}) {
    auto back = modelKernelSpecFromJson(toJson(s), "spec");
    ASSERT_TRUE(back) << back.message();
    EXPECT_EQ(back->name(), s.name());
    EXPECT_EQ(back->bias, s.bias);
  }
  EXPECT_EQ(toJson(plain)["bias"], "none");
  nlohmann::json j = toJson(biased);
  j["bias"] = "f64";
  EXPECT_EQ(modelKernelSpecFromJson(j, "spec").message(),
            "spec.bias: expected none, f32, f16 or bf16, got \"f64\"");
  j = toJson(biased);
  j["op"] = "rmsnorm";
  EXPECT_EQ(modelKernelSpecFromJson(j, "spec").message(),
            "spec.bias: only a float linear takes a bias");
  j = toJson(biased);
  j.erase("bias");
  EXPECT_FALSE(modelKernelSpecFromJson(j, "spec"));
}

TEST(Decoder, TopLogitsBreakTiesByTheLowerId) {
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f, 1.0f};
  using Top = std::vector<std::pair<int32_t, float>>;
  EXPECT_EQ(topLogits(logits, 3), (Top{{1, 2.0f}, {3, 2.0f}, {4, 1.0f}}));
  EXPECT_EQ(topLogits(logits, 9).size(), 5u);
  EXPECT_EQ(topLogits(logits, 9).back(), (std::pair<int32_t, float>{2, -1.0f}));
  EXPECT_TRUE(topLogits({}, 5).empty());
  EXPECT_TRUE(topLogits(logits, 0).empty());
}

/// An f32 cache's rows as floats.
float *keysOf(KVCache &c, int64_t layer) {
  return reinterpret_cast<float *>(c.keys(layer));
}
float *valuesOf(KVCache &c, int64_t layer) {
  return reinterpret_cast<float *>(c.values(layer));
}

TEST(KVCache, AppendTruncateFork) {
  auto cache = KVCache::create(2, 8, 4);
  ASSERT_TRUE(cache) << cache.message();
  EXPECT_EQ(cache->size(), 0);
  ASSERT_TRUE(cache->append(3));
  for (int64_t l = 0; l < 2; ++l)
    for (int i = 0; i < 3 * 4; ++i) {
      keysOf(*cache, l)[i] = float(100 * l + i);
      valuesOf(*cache, l)[i] = float(-100 * l - i);
    }
  // Prefix reuse: a fork of the first two positions, then both continue.
  auto fork = cache->fork(2);
  ASSERT_TRUE(fork) << fork.message();
  EXPECT_EQ(fork->size(), 2);
  EXPECT_EQ(fork->capacity(), 8);
  EXPECT_EQ(keysOf(*fork, 1)[7], 107.0f);
  EXPECT_EQ(valuesOf(*fork, 1)[7], -107.0f);
  ASSERT_TRUE(cache->truncate(1));
  EXPECT_EQ(cache->size(), 1);
  EXPECT_EQ(fork->size(), 2); // independent
  ASSERT_TRUE(fork->append(1));
  keysOf(*fork, 1)[8] = -1.0f; // its own position 2
  EXPECT_EQ(keysOf(*cache, 1)[8], 108.0f);
  // Page boundary of the contiguous cache: exactly full, then refused.
  ASSERT_TRUE(cache->append(7));
  EXPECT_EQ(cache->size(), 8);
  Status over = cache->append(1);
  EXPECT_FALSE(over);
  EXPECT_EQ(over.message(),
            "KV cache: 8 + 1 positions exceed its capacity of 8");
  EXPECT_FALSE(cache->truncate(9));
  EXPECT_FALSE(cache->fork(9));
  EXPECT_FALSE(KVCache::create(0, 8, 4));
  EXPECT_FALSE(KVCache::create(1, int64_t(1) << 40, 4));
}

// Beam search: each beam continues one parent's cache; a parent chosen by
// two beams is copied, one chosen by none is dropped.
TEST(KVCache, ReorderBeams) {
  std::vector<KVCache> beams;
  for (int b = 0; b < 3; ++b) {
    auto c = KVCache::create(2, 8, 4);
    ASSERT_TRUE(c) << c.message();
    ASSERT_TRUE(c->append(b + 1));
    for (int64_t l = 0; l < 2; ++l)
      for (int i = 0; i < (b + 1) * 4; ++i) {
        keysOf(*c, l)[i] = float(1000 * b + 100 * l + i);
        valuesOf(*c, l)[i] = -float(1000 * b + 100 * l + i);
      }
    beams.push_back(c.take());
  }
  Status s = KVCache::reorder(beams, {2, 0, 0});
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(beams[0].size(), 3);
  EXPECT_EQ(keysOf(beams[0], 1)[11], 2111.0f);
  for (int b : {1, 2}) {
    EXPECT_EQ(beams[size_t(b)].size(), 1);
    EXPECT_EQ(keysOf(beams[size_t(b)], 1)[3], 103.0f);
    EXPECT_EQ(valuesOf(beams[size_t(b)], 0)[2], -2.0f);
  }
  // The copies are independent.
  keysOf(beams[1], 0)[0] = 7.0f;
  EXPECT_EQ(keysOf(beams[2], 0)[0], 0.0f);

  // Refused, and nothing changes: a parent out of range, a count mismatch,
  // caches of another shape.
  EXPECT_EQ(KVCache::reorder(beams, {0, 3, 1}).message(),
            "KV cache reorder: beam 1 continues beam 3, but there are 3");
  EXPECT_FALSE(KVCache::reorder(beams, {0, 1}));
  EXPECT_EQ(beams[0].size(), 3);
  EXPECT_EQ(keysOf(beams[1], 0)[0], 7.0f);
  beams.push_back(KVCache::create(2, 4, 4).take());
  EXPECT_EQ(KVCache::reorder(beams, {3, 0, 1, 2}).message(),
            "KV cache reorder: the beams' caches differ in shape");
}

// An f16 cache holds two bytes a value: half the memory, and fork and
// reorder copy the halves whole.
TEST(KVCache, HalfPrecisionRows) {
  auto f32 = KVCache::create(2, 8, 4);
  auto f16 = KVCache::create(2, 8, 4, FloatType::F16);
  ASSERT_TRUE(f32 && f16);
  EXPECT_EQ(f16->dtype(), FloatType::F16);
  EXPECT_EQ(f32->bytesPerPosition(), 2u * 2 * 4 * 4);
  EXPECT_EQ(f16->bytesPerPosition(), 2u * 2 * 4 * 2);
  ASSERT_TRUE(f16->append(2));
  auto *k = reinterpret_cast<uint16_t *>(f16->keys(1));
  for (int i = 0; i < 2 * 4; ++i)
    k[i] = uint16_t(0x3C00 + i); // 1.0, 1.0 + 2^-10, ...
  auto fork = f16->fork(2);
  ASSERT_TRUE(fork) << fork.message();
  auto *forked = reinterpret_cast<uint16_t *>(fork->keys(1));
  for (int i = 0; i < 2 * 4; ++i)
    EXPECT_EQ(forked[i], uint16_t(0x3C00 + i)) << i;
  // Caches of another dtype are another shape to reorder.
  std::vector<KVCache> beams;
  beams.push_back(f32.take());
  beams.push_back(f16.take());
  EXPECT_EQ(KVCache::reorder(beams, {1, 0}).message(),
            "KV cache reorder: the beams' caches differ in shape");
  EXPECT_EQ(KVCache::create(1, 8, 4, FloatType::BF16).message(),
            "KV cache: values are f32 or f16, not bf16");
}

} // namespace
