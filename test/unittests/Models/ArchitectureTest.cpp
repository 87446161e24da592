//===- ArchitectureTest.cpp - The decoder families ------------------------===//

#include "qtensor/Models/Architecture.h"

#include <gtest/gtest.h>

using namespace qtensor::models;

namespace {

TEST(ArchitectureTest, NamesAreUniqueAndFound) {
  for (const Architecture &a : architectures()) {
    const Architecture *found = findArchitecture(a.name);
    ASSERT_NE(found, nullptr) << a.name;
    EXPECT_EQ(found, &a) << a.name << " is listed twice";
    // What the exporter writes, the GGUF reader takes back.
    const Architecture *back =
        architectureFromCheckpoint(Naming::GGUF, a.ggufName);
    ASSERT_NE(back, nullptr) << a.ggufName;
    EXPECT_EQ(back->ggufRotatesHalves, a.ggufRotatesHalves) << a.name;
  }
  EXPECT_EQ(findArchitecture("gpt2"), nullptr);
  EXPECT_EQ(findArchitecture(""), nullptr);
  EXPECT_EQ(findArchitecture("Llama"), nullptr) << "names are exact";
}

TEST(ArchitectureTest, EachFormatReadsItsFamilies) {
  EXPECT_EQ(checkpointArchitectureList(Naming::HuggingFace),
            "llama, mistral, qwen2, qwen3, phi3, gemma, gemma2, gemma3, "
            "granite");
  EXPECT_EQ(checkpointArchitectureList(Naming::GGUF),
            "llama, qwen2, qwen3, phi3, gemma, gemma2, gemma3, granite");
  EXPECT_EQ(architectureList(),
            "llama, mistral, qwen2, qwen3, phi3, gemma, gemma2, gemma3, "
            "granite");
  // llama.cpp writes mistral as llama: a GGUF "mistral" is not one it made.
  EXPECT_EQ(architectureFromCheckpoint(Naming::GGUF, "mistral"), nullptr);
  EXPECT_EQ(architectureFromCheckpoint(Naming::HuggingFace, "gemma3_text"),
            nullptr); // the reader maps it to gemma3 first
  const Architecture *mistral =
      architectureFromCheckpoint(Naming::HuggingFace, "mistral");
  ASSERT_NE(mistral, nullptr);
  EXPECT_EQ(mistral->family, Family::Mistral);
  EXPECT_EQ(mistral->ggufName, "llama");
}

TEST(ArchitectureTest, RopeAndNormsFollowLlamaCpp) {
  // llama pairs (2j, 2j+1); qwen2, qwen3 and gemma3 rotate the NeoX halves.
  for (const char *name : {"llama", "granite"})
    EXPECT_FALSE(findArchitecture(name)->ggufRotatesHalves) << name;
  for (const char *name : {"qwen2", "qwen3", "gemma3"})
    EXPECT_TRUE(findArchitecture(name)->ggufRotatesHalves) << name;
  // llama.cpp's qwen3 and gemma3 graphs norm each q and k head; only
  // gemma3's norms the attention and MLP outputs too.
  for (const char *name : {"llama", "mistral", "qwen2"})
    EXPECT_FALSE(findArchitecture(name)->qkNorm) << name;
  EXPECT_TRUE(findArchitecture("qwen3")->qkNorm);
  EXPECT_TRUE(findArchitecture("gemma3")->qkNorm);
  EXPECT_TRUE(findArchitecture("gemma3")->sandwichNorms);
  EXPECT_TRUE(findArchitecture("gemma2")->sandwichNorms);
  EXPECT_FALSE(findArchitecture("gemma2")->qkNorm);
  EXPECT_FALSE(findArchitecture("qwen3")->sandwichNorms);
  EXPECT_FALSE(findArchitecture("qwen2")->sandwichNorms);
  // Only phi3 fuses q/k/v and gate/up.
  for (const Architecture &a : architectures())
    EXPECT_EQ(a.fusedProjections, a.family == Family::Phi3) << a.name;
}

} // namespace
