//===- TensorNamesTest.cpp - Both namings' tensor names -------------------===//

#include "qtensor/Models/TensorNames.h"

#include <gtest/gtest.h>

using namespace qtensor::models;

namespace {

TEST(TensorNamesTest, BuildsEachNamingsNames) {
  EXPECT_EQ(linearWeightName(Naming::HuggingFace, 3, BlockLinear::Q),
            "model.layers.3.self_attn.q_proj.weight");
  EXPECT_EQ(linearWeightName(Naming::HuggingFace, 0, BlockLinear::Down),
            "model.layers.0.mlp.down_proj.weight");
  EXPECT_EQ(linearWeightName(Naming::GGUF, 12, BlockLinear::O),
            "blk.12.attn_output.weight");
  const Architecture &llama = *findArchitecture("llama");
  const Architecture &qwen3 = *findArchitecture("qwen3");
  const Architecture &gemma2 = *findArchitecture("gemma2");
  const Architecture &gemma3 = *findArchitecture("gemma3");
  EXPECT_EQ(normWeightName(Naming::HuggingFace, llama, 1, BlockNorm::Mlp),
            "model.layers.1.post_attention_layernorm.weight");
  EXPECT_EQ(normWeightName(Naming::GGUF, llama, 1, BlockNorm::Mlp),
            "blk.1.ffn_norm.weight");
  EXPECT_EQ(normWeightName(Naming::GGUF, gemma2, 2, BlockNorm::PostMlp),
            "blk.2.post_ffw_norm.weight");
  // qwen3's per-head norms; a llama has neither those nor output norms.
  EXPECT_EQ(normWeightName(Naming::HuggingFace, qwen3, 2, BlockNorm::QHead),
            "model.layers.2.self_attn.q_norm.weight");
  EXPECT_EQ(normWeightName(Naming::HuggingFace, llama, 2, BlockNorm::QHead),
            std::nullopt);
  EXPECT_EQ(normWeightName(Naming::HuggingFace, qwen3, 2, BlockNorm::PostMlp),
            std::nullopt);
  // Hugging Face's gemma: post_attention_layernorm is attention's output
  // norm, and the norm before the MLP is pre_feedforward_layernorm.
  EXPECT_EQ(normWeightName(Naming::HuggingFace, gemma2, 4, BlockNorm::Mlp),
            "model.layers.4.pre_feedforward_layernorm.weight");
  EXPECT_EQ(
      normWeightName(Naming::HuggingFace, gemma2, 4, BlockNorm::PostAttention),
      "model.layers.4.post_attention_layernorm.weight");
  EXPECT_EQ(normWeightName(Naming::HuggingFace, gemma3, 0, BlockNorm::PostMlp),
            "model.layers.0.post_feedforward_layernorm.weight");
  EXPECT_EQ(normWeightName(Naming::HuggingFace, gemma3, 0, BlockNorm::KHead),
            "model.layers.0.self_attn.k_norm.weight");
  EXPECT_EQ(normWeightName(Naming::HuggingFace, gemma2, 0, BlockNorm::KHead),
            std::nullopt);
  EXPECT_EQ(tensorNames(Naming::GGUF).embed, "token_embd.weight");
  EXPECT_EQ(tensorNames(Naming::HuggingFace).head, "lm_head.weight");
}

TEST(TensorNamesTest, ParsesWhatItBuilds) {
  for (Naming naming : {Naming::HuggingFace, Naming::GGUF})
    for (BlockLinear l : kBlockLinears)
      for (int64_t layer : {0, 7, 10, 9999999}) {
        std::string name = linearWeightName(naming, layer, l);
        std::optional<BlockLinearName> parsed = parseLinearWeight(naming, name);
        ASSERT_TRUE(parsed) << name;
        EXPECT_EQ(parsed->layer, layer) << name;
        EXPECT_EQ(parsed->linear, l) << name;
        EXPECT_TRUE(usesNaming(naming, name));
        Naming other =
            naming == Naming::GGUF ? Naming::HuggingFace : Naming::GGUF;
        EXPECT_FALSE(parseLinearWeight(other, name)) << name;
        EXPECT_FALSE(usesNaming(other, name)) << name;
      }
}

TEST(TensorNamesTest, RefusesWhatNamesNoLayer) {
  for (const char *name :
       {"blk.01.attn_q.weight", "blk..attn_q.weight", "blk.x.attn_q.weight",
        "blk.12345678.attn_q.weight", "blk.3.attn_q.bias", "blk.3.weight",
        "blk.3.attn_q_norm.weight", "blk.3.attn_q", "attn_q.weight", ""})
    EXPECT_FALSE(parseLinearWeight(Naming::GGUF, name)) << name;
  // A norm is a block tensor but not a linear.
  std::optional<BlockTensor> norm =
      parseBlockTensor(Naming::GGUF, "blk.4.attn_q_norm.weight");
  ASSERT_TRUE(norm);
  EXPECT_EQ(norm->layer, 4);
  EXPECT_EQ(norm->inLayer, "attn_q_norm");
}

TEST(TensorNamesTest, RolesRoundTrip) {
  for (BlockLinear l : kBlockLinears)
    EXPECT_EQ(blockLinearOfRole(roleName(l)), l);
  EXPECT_EQ(roleName(BlockLinear::Gate), "gate_proj");
  EXPECT_FALSE(blockLinearOfRole("lm_head"));
  EXPECT_FALSE(blockLinearOfRole(""));
}

TEST(TensorNamesTest, SplitsWidenByColumnNarrowByRow) {
  EXPECT_EQ(splitOf(BlockLinear::Q), Split::Column);
  EXPECT_EQ(splitOf(BlockLinear::Up), Split::Column);
  EXPECT_EQ(splitOf(BlockLinear::O), Split::Row);
  EXPECT_EQ(splitOf(BlockLinear::Down), Split::Row);
  EXPECT_EQ(defaultSplitOf("attn_v"), Split::Column);
  EXPECT_EQ(defaultSplitOf("ffn_down"), Split::Row);
  EXPECT_EQ(defaultSplitOf("c_attn"), Split::Column);
  EXPECT_EQ(defaultSplitOf("dense_4h_to_h"), Split::Row);
  EXPECT_EQ(defaultSplitOf("lm_head"), Split::Column);
  EXPECT_EQ(defaultSplitOf("embed_tokens"), std::nullopt);
  EXPECT_EQ(defaultSplitOf(""), std::nullopt);
}

} // namespace
