//===- HFQuantTest.cpp - GPTQ, AWQ and compressed-tensors linears ---------===//
//
// Each format's packing checked against words written out by hand from its
// published convention, then the act-order permutation, the zero-point
// conventions, and the refusals of what is malformed or not implemented.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Formats/HFQuantized.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <deque>

using namespace qtensor;
using namespace qtensor::hfquant;
using safetensors::DType;
using safetensors::TensorView;

namespace {

/// Tensors over owned buffers.
struct Tensors {
  std::deque<std::vector<uint8_t>> buffers;
  std::deque<TensorView> views;

  template <typename T>
  const TensorView *add(DType dtype, std::vector<int64_t> shape,
                        const std::vector<T> &values) {
    std::vector<uint8_t> &b = buffers.emplace_back(values.size() * sizeof(T));
    std::memcpy(b.data(), values.data(), b.size());
    TensorView &v = views.emplace_back();
    v.dtype = dtype;
    v.shape = std::move(shape);
    v.begin = 0;
    v.end = b.size();
    v.data = b.data();
    return &v;
  }
  /// F16 scales, all 1.0 (0x3C00).
  const TensorView *ones(std::vector<int64_t> shape) {
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    return add(DType::F16, std::move(shape),
               std::vector<uint16_t>(size_t(count), 0x3C00));
  }
};

WeightScheme gptq(int64_t group, bool sym = false, bool v1 = true) {
  WeightScheme s;
  s.method = Method::GPTQ;
  s.storage = Storage::PackedAlongK;
  s.bits = 4;
  s.groupSize = group;
  s.symmetric = sym;
  s.zeroMinusOne = v1;
  return s;
}

template <typename T> std::string errorOf(const Expected<T> &e) {
  return e ? "" : e.message();
}

Expected<QuantizationConfig> parse(const char *text) {
  return parseQuantizationConfig(nlohmann::json::parse(text), "config.json");
}

} // namespace

TEST(HFQuant, GPTQPacksAlongKAndStoresZeroMinusOne) {
  // N = 8, K = 8, one group: word (0, n) holds codes k = 0..7 of column n.
  // Column n's codes are (n + k) % 16; stored zeros are n + 3 (zero n + 4).
  Tensors t;
  std::vector<uint32_t> qweight(8), qzeros(1);
  for (uint32_t n = 0; n < 8; ++n) {
    for (uint32_t k = 0; k < 8; ++k)
      qweight[n] |= ((n + k) % 16) << (4 * k);
    qzeros[0] |= (n + 3) << (4 * n);
  }
  EXPECT_EQ(qweight[0], 0x76543210u);
  PackedTensors p;
  p.codes = t.add(DType::I32, {1, 8}, qweight);
  p.zeros = t.add(DType::I32, {1, 1}, qzeros);
  p.scales = t.ones({1, 8});
  WeightScheme s = gptq(8);
  auto d = describe(s, p, 8, 8, "m");
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d->descriptor.code, (CodeType{4, false}));
  EXPECT_EQ(d->descriptor.zeroPoint, ZeroPointKind::Integer);
  EXPECT_EQ(d->descriptor.groupSize, 8);
  EXPECT_FALSE(d->descriptor.permutation);
  auto parts = unpack(s, p, *d, "m");
  ASSERT_TRUE(parts) << parts.message();
  for (int n = 0; n < 8; ++n) {
    for (int k = 0; k < 8; ++k)
      EXPECT_EQ(parts->codes[size_t(n * 8 + k)], (n + k) % 16);
    EXPECT_EQ(parts->zeros[size_t(n)], n + 4); // v1: the stored zero + 1
  }
  // gptq_v2 stores the zero itself.
  s.zeroMinusOne = false;
  auto v2 = unpack(s, p, *d, "m");
  ASSERT_TRUE(v2);
  EXPECT_EQ(v2->zeros[0], 3);
}

TEST(HFQuant, AWQInterleavesColumns) {
  // AutoAWQ's gemm packing: nibble i of a word holds column 8c + order[i],
  // order = 0 2 4 6 1 3 5 7. Codes equal to the column give 0x75316420.
  Tensors t;
  PackedTensors p;
  p.codes = t.add(DType::I32, {1, 1}, std::vector<uint32_t>{0x75316420u});
  p.zeros = t.add(DType::I32, {1, 1}, std::vector<uint32_t>{0x75316420u});
  p.scales = t.ones({1, 8});
  WeightScheme s;
  s.method = Method::AWQ;
  s.storage = Storage::PackedAlongN;
  s.groupSize = 0; // K = 1: one group
  auto d = describe(s, p, 8, 1, "m");
  ASSERT_TRUE(d) << d.message();
  auto parts = unpack(s, p, *d, "m");
  ASSERT_TRUE(parts) << parts.message();
  for (int n = 0; n < 8; ++n) {
    EXPECT_EQ(parts->codes[size_t(n)], n);
    EXPECT_EQ(parts->zeros[size_t(n)], n);
  }
}

TEST(HFQuant, CompressedTensorsOffsetCodes) {
  // pack-quantized stores q + 8 along K; symmetric: the signed q is read
  // as offset binary. Asymmetric zero-points pack along N the same way.
  Tensors t;
  PackedTensors p;
  p.codes = t.add(DType::I32, {1, 1}, std::vector<uint32_t>{0xF7654310u});
  p.scales = t.add(DType::BF16, {1, 1}, std::vector<uint16_t>{0x3F80});
  p.shape = t.add(DType::I32, {2}, std::vector<int32_t>{1, 8});
  WeightScheme s;
  s.method = Method::CompressedTensors;
  s.storage = Storage::PackedOffsetK;
  s.groupSize = 8;
  s.symmetric = true;
  auto d = describe(s, p, 1, 8, "m");
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d->descriptor.code, (CodeType{4, true}));
  EXPECT_EQ(d->descriptor.encoding, SignedEncoding::OffsetBinary);
  EXPECT_EQ(d->descriptor.scaleType, FloatType::BF16);
  auto parts = unpack(s, p, *d, "m");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->codes,
            (std::vector<int32_t>{-8, -7, -5, -4, -3, -2, -1, 7}));
  EXPECT_TRUE(parts->zeros.empty());

  // A recorded shape that disagrees with the config is refused.
  p.shape = t.add(DType::I32, {2}, std::vector<int32_t>{1, 9});
  EXPECT_EQ(errorOf(describe(s, p, 1, 8, "m")),
            "m.weight_shape: records [1, 9], the model's config says [1, 8]");
}

TEST(HFQuant, ActOrderBecomesThePermutation) {
  // K = 8 in groups of 4; g_idx sends columns 1 2 5 7 to group 0.
  Tensors t;
  PackedTensors p;
  p.codes = t.add(DType::I32, {1, 8}, std::vector<uint32_t>(8, 0x88888888u));
  p.zeros = t.add(DType::I32, {2, 1}, std::vector<uint32_t>(2, 0x77777777u));
  p.scales = t.ones({2, 8});
  p.groupIndex =
      t.add(DType::I32, {8}, std::vector<int32_t>{1, 0, 0, 1, 1, 0, 1, 0});
  auto d = describe(gptq(4, /*sym=*/true), p, 8, 8, "m");
  ASSERT_TRUE(d) << d.message();
  ASSERT_TRUE(d->descriptor.permutation);
  EXPECT_EQ(*d->descriptor.permutation,
            (std::vector<int64_t>{1, 2, 5, 7, 0, 3, 4, 6}));
  auto parts = unpack(gptq(4, true), p, *d, "m");
  ASSERT_TRUE(parts) << parts.message();
  EXPECT_EQ(parts->codes[0], 0); // stored 8, zero 8 (v1: 7 + 1)

  // k / G is no act-order.
  p.groupIndex =
      t.add(DType::I32, {8}, std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1, 1});
  d = describe(gptq(4, true), p, 8, 8, "m");
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->descriptor.permutation);

  // Groups of unequal size cannot be contiguous in any order.
  p.groupIndex =
      t.add(DType::I32, {8}, std::vector<int32_t>{0, 0, 0, 1, 1, 1, 1, 1});
  EXPECT_EQ(errorOf(describe(gptq(4, true), p, 8, 8, "m")),
            "m.g_idx: group 0 has 3 input columns, expected 4 (act-order "
            "groups are contiguous in group order)");
  p.groupIndex =
      t.add(DType::I32, {8}, std::vector<int32_t>{0, 0, 0, 2, 1, 1, 1, 1});
  EXPECT_EQ(errorOf(describe(gptq(4, true), p, 8, 8, "m")),
            "m.g_idx[3] = 2: a group index must be in [0, 2)");
}

TEST(HFQuant, RefusesMalformedTensors) {
  Tensors t;
  PackedTensors p;
  p.codes = t.add(DType::I32, {1, 8}, std::vector<uint32_t>(8));
  p.zeros = t.add(DType::I32, {1, 1}, std::vector<uint32_t>(1, 0x77777777u));
  p.scales = t.ones({1, 8});
  EXPECT_EQ(errorOf(describe(gptq(8), p, 8, 16, "m")),
            "m.qweight: expected I32 [2, 8], got I32 [1, 8]");
  EXPECT_EQ(errorOf(describe(gptq(8), p, 8, 12, "m")),
            "m: K = 12 is not a multiple of the 8 codes of an int32 word");
  PackedTensors noScales = p;
  noScales.scales = nullptr;
  EXPECT_EQ(errorOf(describe(gptq(8), noScales, 8, 8, "m")),
            "m.scales: missing (the checkpoint's quantization_config says m "
            "is quantized)");
  PackedTensors intScales = p;
  intScales.scales = t.add(DType::I32, {1, 8}, std::vector<int32_t>(8));
  EXPECT_EQ(errorOf(describe(gptq(8), intScales, 8, 8, "m")),
            "m.scales: expected F16 or BF16 or F32 [1, 8], got I32 [1, 8]");
  // A scheme declared symmetric whose stored zero-points are not 8.
  p.zeros = t.add(DType::I32, {1, 1}, std::vector<uint32_t>(1, 0x77777775u));
  auto d = describe(gptq(8, /*sym=*/true), p, 8, 8, "m");
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(errorOf(unpack(gptq(8, true), p, *d, "m")),
            "m.qzeros: row 0, group 0 has zero-point 6, but the scheme is "
            "symmetric (zero-point 8)");
  // Non-finite scales.
  p.zeros = t.add(DType::I32, {1, 1}, std::vector<uint32_t>(1, 0x77777777u));
  std::vector<uint16_t> scales(8, 0x3C00);
  scales[3] = 0x7C00;
  p.scales = t.add(DType::F16, {1, 8}, scales);
  d = describe(gptq(8, true), p, 8, 8, "m");
  ASSERT_TRUE(d);
  EXPECT_EQ(errorOf(unpack(gptq(8, true), p, *d, "m")),
            "m.scales: the scale of row 3, group 0 is not finite");
  // I8 codes outside the declared width.
  WeightScheme int4;
  int4.method = Method::CompressedTensors;
  int4.storage = Storage::Int8;
  int4.bits = 4;
  int4.symmetric = true;
  PackedTensors i8;
  i8.codes = t.add(DType::I8, {1, 2}, std::vector<int8_t>{7, 8});
  i8.scales = t.add(DType::F16, {1, 1}, std::vector<uint16_t>{0x3C00});
  d = describe(int4, i8, 1, 2, "m");
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(errorOf(unpack(int4, i8, *d, "m")),
            "m.weight[0, 1] = 8 is outside the 4-bit range [-8, 7]");
}

TEST(HFQuant, ParsesTheThreeMethods) {
  auto g = parse(R"({"quant_method": "gptq", "bits": 4, "group_size": 128,
      "desc_act": true, "sym": false, "damp_percent": 0.01})");
  ASSERT_TRUE(g) << g.message();
  EXPECT_EQ(g->text, "gptq 4-bit g128 asym desc_act gptq");
  ASSERT_EQ(g->groups.size(), 1u);
  EXPECT_TRUE(g->groups[0].scheme.zeroMinusOne);
  auto a = parse(R"({"quant_method": "awq", "bits": 4, "group_size": 64,
      "zero_point": true, "version": "GEMM",
      "modules_to_not_convert": ["mlp.gate"]})");
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a->text, "awq 4-bit g64 gemm");
  auto ct = parse(R"({"quant_method": "compressed-tensors",
      "format": "pack-quantized", "ignore": ["lm_head", "re:.*down_proj$"],
      "config_groups": {"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 4, "type": "int", "symmetric": true,
                    "strategy": "group", "group_size": 128,
                    "actorder": "group"}}}})");
  ASSERT_TRUE(ct) << ct.message();
  EXPECT_EQ(ct->text, "compressed-tensors pack-quantized 4-bit g128 sym");
  auto q = ct->schemeFor("model.layers.0.self_attn.q_proj");
  ASSERT_TRUE(q);
  ASSERT_TRUE(*q);
  EXPECT_EQ((*q)->storage, Storage::PackedOffsetK);
  for (const char *ignored : {"lm_head", "model.layers.3.mlp.down_proj"}) {
    auto none = ct->schemeFor(ignored);
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none) << ignored;
  }
}

TEST(HFQuant, RefusesWhatItDoesNotRead) {
  auto refused = [](const char *text) { return errorOf(parse(text)); };
  EXPECT_EQ(refused(R"({"quant_method": "gptq", "bits": 3})"),
            "config.json: quantization_config.bits: 3-bit gptq packs codes "
            "across int32 words, which this reader does not implement (2, 4 "
            "and 8 are read)");
  EXPECT_EQ(refused(R"({"quant_method": "gptq", "bits": 4,
                        "checkpoint_format": "marlin"})"),
            "config.json: quantization_config: the marlin checkpoint format "
            "repacks codes for one kernel; only gptq and gptq_v2 are read");
  EXPECT_EQ(refused(R"({"quant_method": "awq", "bits": 4,
                        "version": "gemv"})"),
            "config.json: quantization_config.version: \"gemv\" packs codes "
            "for one kernel; only the gemm packing is read");
  EXPECT_EQ(refused(R"({"quant_method": "bitsandbytes"})"),
            "config.json: quantization_config.quant_method: \"bitsandbytes\" "
            "is not read (gptq, awq, compressed-tensors, fp8)");
  // FP8: E4M3 (8 float bits), symmetric, per channel, per tensor or per
  // block (with its shape).
  EXPECT_EQ(refused(R"({"quant_method": "compressed-tensors",
      "format": "float-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "weights": {"num_bits": 4, "type": "float",
      "strategy": "channel"}}}})"),
            "config.json: quantization_config.config_groups.g.weights."
            "num_bits: 4 float bits are not read (8: FP8 E4M3)");
  EXPECT_EQ(refused(R"({"quant_method": "compressed-tensors",
      "format": "float-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "weights": {"num_bits": 8, "type": "float",
      "strategy": "block"}}}})"),
            "config.json: quantization_config.config_groups.g.weights: "
            "missing block shape \"block_structure\"");
  EXPECT_EQ(refused(R"({"quant_method": "compressed-tensors",
      "format": "float-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "weights": {"num_bits": 8, "type": "float",
      "strategy": "group", "group_size": 128}}}})"),
            "config.json: quantization_config.config_groups.g.weights."
            "strategy: \"group\" is not read for FP8 weights (channel, "
            "tensor, block)");
  EXPECT_EQ(refused(R"({"quant_method": "compressed-tensors",
      "format": "pack-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "weights": {"num_bits": 4, "strategy": "block",
      "block_structure": [128, 128]}}}})"),
            "config.json: quantization_config.config_groups.g.weights."
            "strategy: block scales are read for FP8 weights only");
  EXPECT_EQ(refused(R"({"quant_method": "compressed-tensors",
      "format": "float-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "weights": {"num_bits": 8, "type": "int",
      "strategy": "channel"}}}})"),
            "config.json: quantization_config.config_groups.g.weights.type: "
            "\"int\" weights are not read in float-quantized (float is)");
  // Activations: only an FP8 checkpoint's dynamic FP8 ones, run in 16
  // bits; static (calibrated) or integer ones are refused.
  EXPECT_EQ(refused(R"({"quant_method": "compressed-tensors",
      "format": "int-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "input_activations": {"num_bits": 8}, "weights":
      {"num_bits": 8, "strategy": "channel"}}}})"),
            "config.json: quantization_config.config_groups.g."
            "input_activations: activation quantization is not supported "
            "(weights only; dynamic FP8 activations of an FP8 checkpoint and "
            "FP4 activations of an NVFP4 one are run in 16 bits)");
  EXPECT_NE(refused(R"({"quant_method": "compressed-tensors",
      "format": "float-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "input_activations": {"num_bits": 8, "type": "float",
      "dynamic": false, "strategy": "tensor"}, "weights": {"num_bits": 8,
      "type": "float", "strategy": "tensor"}}}})")
                .find("activation quantization is not supported"),
            std::string::npos);
  auto fp8 = parse(R"({"quant_method": "compressed-tensors",
      "format": "float-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "input_activations": {"num_bits": 8, "type": "float",
      "dynamic": true, "strategy": "token"}, "weights": {"num_bits": 8,
      "type": "float", "strategy": "channel"}}}})");
  ASSERT_TRUE(fp8) << fp8.message();
  EXPECT_EQ(fp8->text, "compressed-tensors float-quantized 8-bit per-channel "
                       "sym; its dynamic FP8 activations run in 16 bits");
  EXPECT_EQ(fp8->groups[0].scheme.storage, Storage::Float8E4M3);
  EXPECT_EQ(storedTypeName(fp8->groups[0].scheme), "CT_FP8_E4M3");
  auto twice = parse(R"({"quant_method": "compressed-tensors",
      "format": "pack-quantized", "config_groups": {
        "a": {"targets": ["Linear"], "weights": {"num_bits": 4,
              "strategy": "channel"}},
        "b": {"targets": ["re:.*q_proj"], "weights": {"num_bits": 8,
              "strategy": "channel"}}}})");
  ASSERT_TRUE(twice) << twice.message();
  EXPECT_EQ(errorOf(twice->schemeFor("model.layers.0.self_attn.q_proj")),
            "module model.layers.0.self_attn.q_proj is targeted by two "
            "quantization groups");
}

TEST(HFQuant, FineGrainedFP8Config) {
  auto refused = [](const char *text) { return errorOf(parse(text)); };
  // DeepSeek-V3's quantization_config, and transformers' default block.
  for (const char *text : {R"({"quant_method": "fp8", "fmt": "e4m3",
            "activation_scheme": "dynamic", "weight_block_size": [128, 128]})",
                           R"({"quant_method": "fp8"})"}) {
    auto c = parse(text);
    ASSERT_TRUE(c) << c.message();
    EXPECT_EQ(c->text, "fp8 e4m3 128x128 blocks (each block's scale stored "
                       "per row); its dynamic FP8 activations run in 16 bits");
    ASSERT_EQ(c->groups.size(), 1u);
    const WeightScheme &s = c->groups[0].scheme;
    EXPECT_EQ(s.storage, Storage::Float8E4M3);
    EXPECT_EQ(s.blockRows, 128);
    EXPECT_EQ(s.groupSize, 128);
    EXPECT_EQ(storedTypeName(s), "FP8_E4M3");
    EXPECT_EQ(componentNames(s).scales, "weight_scale_inv");
  }
  auto skip = parse(R"({"quant_method": "fp8", "weight_block_size": [64, 32],
      "modules_to_not_convert": ["lm_head"]})");
  ASSERT_TRUE(skip) << skip.message();
  EXPECT_EQ(skip->groups[0].scheme.blockRows, 64);
  EXPECT_EQ(skip->groups[0].scheme.groupSize, 32);
  auto head = skip->schemeFor("lm_head");
  ASSERT_TRUE(head);
  EXPECT_FALSE(*head);
  // compressed-tensors' block strategy, its shape as a list or "RxC".
  for (const char *shape : {"[96, 64]", "\"96x64\""}) {
    std::string text = std::string(R"({"quant_method": "compressed-tensors",
        "format": "float-quantized", "config_groups": {"g": {"targets":
        ["Linear"], "weights": {"num_bits": 8, "type": "float",
        "strategy": "block", "block_structure": )") +
                       shape + "}}}}";
    auto ct = parseQuantizationConfig(nlohmann::json::parse(text), "c.json");
    ASSERT_TRUE(ct) << shape << ": " << ct.message();
    EXPECT_EQ(ct->text, "compressed-tensors float-quantized 8-bit 96x64 "
                        "blocks sym (each block's scale stored per row)");
    EXPECT_EQ(ct->groups[0].scheme.blockRows, 96);
    EXPECT_EQ(ct->groups[0].scheme.groupSize, 64);
  }

  EXPECT_EQ(refused(R"({"quant_method": "fp8", "fmt": "e5m2"})"),
            "config.json: quantization_config.fmt: \"e5m2\" weights are not "
            "read (e4m3 is)");
  EXPECT_EQ(refused(R"({"quant_method": "fp8", "activation_scheme":
                        "static"})"),
            "config.json: quantization_config.activation_scheme: \"static\" "
            "activations carry calibrated scales, which are not read "
            "(dynamic is: run in 16 bits)");
  EXPECT_EQ(refused(R"({"quant_method": "fp8", "weight_block_size": null})"),
            "config.json: quantization_config.weight_block_size: null (one "
            "scale per tensor) is not read; expected [rows, columns]");
  for (const char *bad : {"[128]", "[0, 128]", "[128, 128, 1]", "[128, -1]",
                          "\"128x\"", "\"1x2x3\"", "7"})
    EXPECT_EQ(refused((std::string(R"({"quant_method": "fp8",
                          "weight_block_size": )") +
                       bad + "}")
                          .c_str()),
              std::string("config.json: quantization_config."
                          "weight_block_size: expected [rows, columns], two "
                          "integers in [1, 2^20], got ") +
                  nlohmann::json::parse(bad).dump())
        << bad;
}

TEST(HFQuant, FP8BlockScalesBecomeRowGroups) {
  // [5, 6] weights in blocks of 2 rows x 4 columns: scales [3, 2], the
  // last row block and the last column block partial. Every element's
  // scale is its block's; codes stay the E4M3 bytes.
  Tensors t;
  PackedTensors p;
  std::vector<uint8_t> codes(30);
  for (size_t i = 0; i < codes.size(); ++i)
    codes[i] = uint8_t(0x30 + i);
  p.codes = t.add(DType::F8_E4M3, {5, 6}, codes);
  const std::vector<float> blocks = {1, 2, 3, 4, 5, 6};
  p.scales = t.add(DType::F32, {3, 2}, blocks);
  WeightScheme s;
  s.method = Method::FineGrainedFP8;
  s.storage = Storage::Float8E4M3;
  s.bits = 8;
  s.symmetric = true;
  s.blockRows = 2;
  s.groupSize = 4;
  auto d = describe(s, p, 5, 6, "m");
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d->descriptor.codebook, Codebook::E4M3);
  EXPECT_EQ(d->descriptor.granularity, Granularity::Group);
  EXPECT_EQ(d->descriptor.groupSize, 4);
  EXPECT_EQ(d->descriptor.scaleType, FloatType::F32);
  auto parts = unpack(s, p, *d, "m");
  ASSERT_TRUE(parts) << parts.message();
  EXPECT_EQ(parts->scales, (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4, 5, 6}));
  EXPECT_EQ(parts->codes[29], 0x30 + 29);
  EXPECT_TRUE(parts->zeros.empty());

  // The stored grid must be [ceil(N / rows), ceil(K / columns)].
  p.scales = t.add(DType::F32, {2, 2}, std::vector<float>{1, 2, 3, 4});
  EXPECT_EQ(errorOf(describe(s, p, 5, 6, "m")),
            "m.weight_scale_inv: expected F16 or BF16 or F32 [3, 2], got F32 "
            "[2, 2]");
}

TEST(HFQuant, NVFP4Config) {
  auto refused = [](const char *text) { return errorOf(parse(text)); };
  // llm-compressor's NVFP4 (W4A4): FP4 activations run in 16 bits.
  auto c = parse(R"({"quant_method": "compressed-tensors",
      "format": "nvfp4-pack-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "input_activations": {"num_bits": 4, "type": "float",
      "strategy": "tensor_group", "group_size": 16, "dynamic": "local"},
      "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group",
      "group_size": 16, "symmetric": true, "dynamic": false}}}})");
  ASSERT_TRUE(c) << c.message();
  EXPECT_EQ(c->text, "compressed-tensors nvfp4-pack-quantized 4-bit g16 sym "
                     "(each group's scale e4m3 / global stored as f32); its "
                     "FP4 activations (input_global_scale) run in 16 bits");
  const WeightScheme &s = c->groups[0].scheme;
  EXPECT_EQ(s.storage, Storage::NVFP4Packed);
  EXPECT_EQ(storedTypeName(s), "CT_NVFP4");
  EXPECT_EQ(componentNames(s).globalScale, "weight_global_scale");
  EXPECT_EQ(componentNames(s).unused, "input_global_scale");
  const char *prefix = R"({"quant_method": "compressed-tensors",
      "format": "nvfp4-pack-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "weights": )";
  auto weights = [&](const char *w) {
    return refused((std::string(prefix) + w + "}}}").c_str());
  };
  EXPECT_EQ(weights(R"({"num_bits": 4, "type": "float", "strategy":
      "tensor_group", "group_size": 32})"),
            "config.json: quantization_config.config_groups.g.weights."
            "group_size: NVFP4 scales groups of 16, got 32");
  EXPECT_EQ(weights(R"({"num_bits": 4, "type": "float", "strategy":
      "group", "group_size": 16})"),
            "config.json: quantization_config.config_groups.g.weights."
            "strategy: \"group\" is not read for NVFP4 (tensor_group)");
  EXPECT_EQ(weights(R"({"num_bits": 4, "type": "int", "strategy":
      "tensor_group", "group_size": 16})"),
            "config.json: quantization_config.config_groups.g.weights: "
            "nvfp4-pack-quantized holds 4-bit float weights, got 4-bit int");
  // Integer activations stay refused in an NVFP4 checkpoint.
  EXPECT_NE(refused(R"({"quant_method": "compressed-tensors",
      "format": "nvfp4-pack-quantized", "config_groups": {"g": {"targets":
      ["Linear"], "input_activations": {"num_bits": 8, "type": "int",
      "dynamic": true}, "weights": {"num_bits": 4, "type": "float",
      "strategy": "tensor_group", "group_size": 16}}}})")
                .find("activation quantization is not supported"),
            std::string::npos);
}

TEST(HFQuant, NVFP4CodesAndScales) {
  // [2, 16]: byte j holds columns 2j (low nibble) and 2j + 1 (high); each
  // row one group, its E4M3 scale code 0x38 (1.0) and 0x48 (4.0), the
  // global divisor 2: scales 0.5 and 2 (f32 divisions).
  Tensors t;
  PackedTensors p;
  std::vector<uint8_t> codes(16);
  for (size_t i = 0; i < codes.size(); ++i)
    codes[i] = uint8_t((i % 16) | ((15 - i % 16) << 4));
  p.codes = t.add(DType::U8, {2, 8}, codes);
  p.scales = t.add(DType::F8_E4M3, {2, 1}, std::vector<uint8_t>{0x38, 0x48});
  p.globalScale = t.add(DType::F32, {1}, std::vector<float>{2.0f});
  WeightScheme s;
  s.method = Method::CompressedTensors;
  s.storage = Storage::NVFP4Packed;
  s.bits = 4;
  s.groupSize = 16;
  s.symmetric = true;
  auto d = describe(s, p, 2, 16, "m");
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d->descriptor.codebook, Codebook::E2M1);
  EXPECT_EQ(d->descriptor.groupSize, 16);
  EXPECT_EQ(d->descriptor.scaleType, FloatType::F32);
  auto parts = unpack(s, p, *d, "m");
  ASSERT_TRUE(parts) << parts.message();
  EXPECT_EQ(parts->codes[0], 0);
  EXPECT_EQ(parts->codes[1], 15);
  EXPECT_EQ(parts->codes[2], 1);
  EXPECT_EQ(parts->codes[3], 14);
  EXPECT_EQ(parts->scales, (std::vector<float>{0.5f, 2.0f}));

  // A NaN scale code, a divisor that is not finite and positive, and a
  // K that is not whole groups are refused by name.
  p.scales = t.add(DType::F8_E4M3, {2, 1}, std::vector<uint8_t>{0x38, 0x7F});
  EXPECT_EQ(errorOf(unpack(s, p, *d, "m")),
            "m.weight_scale[1, 0] is NaN in E4M3; expected a finite scale");
  for (float g : {0.0f, -1.0f, INFINITY}) {
    p.globalScale = t.add(DType::F32, {1}, std::vector<float>{g});
    EXPECT_NE(
        errorOf(describe(s, p, 2, 16, "m")).find("m.weight_global_scale = "),
        std::string::npos)
        << g;
  }
  EXPECT_EQ(errorOf(describe(s, p, 2, 24, "m")),
            "m: K = 24 is not a multiple of NVFP4's groups of 16");
}
