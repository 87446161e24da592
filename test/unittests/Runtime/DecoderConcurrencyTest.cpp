//===- DecoderConcurrencyTest.cpp - Sequences sharing one model -----------===//
//
// Issue 14, item 3: N independent sequences (a Decoder and a KVCache each)
// running one loaded model at once give the tokens and logits of serial
// runs. scripts/tsan.sh runs it under ThreadSanitizer.
//
// The model kernels are generated in MLIR, which this MLIR-free test binary
// cannot do: it runs a host artifact that `qtc compile` made from the tiny
// llama, named by QTENSOR_TEST_DECODER_ARTIFACT (scripts/tsan.sh and the
// CTest environment set it), with that artifact's own code (this build
// compiled it). Without the variable the test says so and skips.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Runtime/Decoder.h"
#include "qtensor/Runtime/Loader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

using namespace qtensor;
using namespace qtensor::runtime;

namespace {

struct Sequence {
  std::vector<int32_t> prompt;
  std::vector<int32_t> tokens;
  std::vector<float> promptLogits;
};

/// Greedy generation of `s.prompt` on its own decoder and cache.
Status generate(LoadedModel &model, Sequence &s, int64_t n) {
  QTENSOR_ASSIGN_OR_RETURN(std::unique_ptr<Decoder> d,
                           Decoder::create(model, /*chunk=*/8));
  QTENSOR_ASSIGN_OR_RETURN(KVCache cache, d->newCache(64));
  GenerateOptions o;
  o.maxTokens = n;
  o.stopAtEos = false;
  QTENSOR_ASSIGN_OR_RETURN(GenerateResult r, d->generate(s.prompt, cache, o));
  s.tokens = r.tokens;
  s.promptLogits = r.promptLogits;
  return Status::ok();
}

} // namespace

/// The compiled tiny llama named by QTENSOR_TEST_DECODER_ARTIFACT, loaded
/// for its decoder; the test skips without it.
class DecoderArtifact : public ::testing::Test {
protected:
  void SetUp() override {
    const char *dir = std::getenv("QTENSOR_TEST_DECODER_ARTIFACT");
    if (!dir || !std::filesystem::exists(dir))
      GTEST_SKIP() << "QTENSOR_TEST_DECODER_ARTIFACT does not name a "
                      "compiled host artifact of the tiny llama "
                      "(scripts/tsan.sh makes one with qtc compile)";
    LoadOptions lo;
    lo.backend = BackendChoice::Host;
    lo.decoder = true;
    lo.code.trustArtifactCode = true; // compiled by this build's qtc
    auto loaded = loadModel(dir, lo);
    ASSERT_TRUE(bool(loaded)) << loaded.message();
    model = loaded.take();
  }
  std::unique_ptr<LoadedModel> model;
};

// The suites keep their names (scripts/tsan.sh filters on them).
class DecoderConcurrency : public DecoderArtifact {};
class DecoderBeams : public DecoderArtifact {};

TEST_F(DecoderConcurrency, SequencesOnOneModelMatchSerialRuns) {
  LoadedModel &model = *this->model;

  // Prompts of different lengths: prefill chunks (8 tokens) and decode
  // steps of the sequences interleave in every way.
  constexpr int kSequences = 4;
  constexpr int64_t kTokens = 6;
  std::vector<Sequence> serial(kSequences);
  for (int i = 0; i < kSequences; ++i) {
    for (int j = 0; j <= 3 * i + 2; ++j)
      serial[i].prompt.push_back(int32_t(1 + (17 * i + 5 * j) % 200));
    Status s = generate(model, serial[i], kTokens);
    ASSERT_TRUE(bool(s)) << s.message();
    ASSERT_EQ(serial[i].tokens.size(), size_t(kTokens));
  }

  constexpr int kRounds = 3;
  std::atomic<int> failures{0}, mismatches{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kSequences; ++i)
    threads.emplace_back([&, i] {
      for (int round = 0; round < kRounds; ++round) {
        Sequence s;
        s.prompt = serial[i].prompt;
        if (!generate(model, s, kTokens))
          ++failures;
        else if (s.tokens != serial[i].tokens ||
                 s.promptLogits != serial[i].promptLogits)
          ++mismatches;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(model.ledger().current(MemoryCategory::Workspace), 0u);
}

// Beam search on a real model: two beams from different prompts, then both
// continue beam 1 (KVCache::reorder): each then gives exactly the logits of
// beam 1 continued alone.
TEST_F(DecoderBeams, ReorderedCachesContinueTheirParent) {
  auto d = Decoder::create(*model, 8);
  ASSERT_TRUE(bool(d)) << d.message();
  std::vector<KVCache> beams;
  for (const std::vector<int32_t> &prompt :
       {std::vector<int32_t>{5, 6, 7}, std::vector<int32_t>{9, 10, 11, 12}}) {
    auto cache = (*d)->newCache(32);
    ASSERT_TRUE(bool(cache)) << cache.message();
    ASSERT_TRUE(bool((*d)->forward(prompt, *cache)));
    beams.push_back(cache.take());
  }
  // Beam 1 continued alone: the reference.
  auto alone = beams[1].fork(beams[1].size());
  ASSERT_TRUE(bool(alone));
  auto ref = (*d)->forward({42}, *alone);
  ASSERT_TRUE(bool(ref)) << ref.message();
  const std::vector<float> expected = **ref;

  Status s = KVCache::reorder(beams, {1, 1});
  ASSERT_TRUE(bool(s)) << s.message();
  for (KVCache &beam : beams) {
    EXPECT_EQ(beam.size(), 4);
    auto logits = (*d)->forward({42}, beam);
    ASSERT_TRUE(bool(logits)) << logits.message();
    EXPECT_EQ(**logits, expected);
  }
}
