//===- OpRunTest.cpp - runOps: each op run, checked and reported ----------===//
//
// The library behind `qtc run` without --prompt, on the test artifacts:
// every op runs and passes its check against the float64 reference, the
// report's JSON and text agree on what ran, the outputs file holds each
// op's output as F32 bit for bit, and each failing stage is named.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestArtifact.h"
#include "TestAssertions.h"

#include "qtensor/Formats/Safetensors.h"
#include "qtensor/Runtime/OpRun.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace qtensor;
using namespace qtensor::runtime;
using namespace rttest;
using qtensor::test::contains;

namespace {

TestArtifactSpec twoLinears() {
  TestArtifactSpec spec;
  TestLinear b;
  b.name = "layer.b.weight";
  b.asymmetric = true;
  spec.linears.push_back(b);
  return spec;
}

TEST(OpRun, EveryOpRunsAndPassesItsCheck) {
  TempDir dir;
  auto model = loadSpec(dir, twoLinears());
  ASSERT_TRUE(bool(model)) << model.message();
  OpRunOptions o;
  o.artifact = dir.str();
  o.check = true;
  o.tokens = 3;
  OpRunReport r = runOps(**model, o);
  ASSERT_FALSE(r.failedStage) << *r.failedStage << ": " << r.error;
  EXPECT_TRUE(r.ok);
  const auto &ops = r.json.at("ops");
  ASSERT_EQ(ops.size(), 2u);
  for (const auto &op : ops) {
    EXPECT_EQ(op.at("check").at("ok"), true) << op.dump();
    EXPECT_EQ(op.at("shape"), (nlohmann::ordered_json{3, 6}));
    EXPECT_EQ(op.at("fallback"), false);
    // The text names the op and the same hash prefix.
    EXPECT_TRUE(contains(r.text, op.at("op").get<std::string>() + ": [3, 6]"));
    EXPECT_TRUE(
        contains(r.text, "sha256 " + op.at("sha256_16").get<std::string>()));
  }
  EXPECT_EQ(r.json.at("ok"), true);
  EXPECT_EQ(r.json.at("artifact"), dir.str());
  EXPECT_TRUE(contains(r.text, "check: ok"));
  EXPECT_TRUE(contains(r.text, "dispatch trace:"));
}

TEST(OpRun, TheOutputsFileHoldsEachOutputAsF32) {
  TempDir dir;
  auto model = loadSpec(dir, twoLinears());
  ASSERT_TRUE(bool(model)) << model.message();
  OpRunOptions o;
  o.artifact = dir.str();
  o.outputs = dir.str() + "/outputs.safetensors";
  OpRunReport r = runOps(**model, o);
  ASSERT_FALSE(r.failedStage) << r.error;
  auto file = safetensors::SafetensorsFile::open(o.outputs);
  ASSERT_TRUE(bool(file)) << file.message();
  ASSERT_EQ(file->tensors().size(), 2u);
  for (const auto &op : r.json.at("ops")) {
    auto view = file->get(op.at("op").get<std::string>());
    ASSERT_TRUE(bool(view)) << view.message();
    EXPECT_EQ((*view)->dtype, safetensors::DType::F32);
    EXPECT_EQ((*view)->shape, (std::vector<int64_t>{1, 6}));
    // The report's first values are the file's, rounded to F32.
    auto values = safetensors::toFloat32(**view);
    ASSERT_TRUE(bool(values));
    for (size_t i = 0; i < values->size(); ++i)
      EXPECT_EQ((*values)[i], float(op.at("values")[i].get<double>()));
  }
}

TEST(OpRun, EachFailingStageIsNamed) {
  TempDir dir;
  auto model = loadSpec(dir, {});
  ASSERT_TRUE(bool(model)) << model.message();
  OpRunOptions o;
  o.artifact = dir.str();
  o.input = dir.str() + "/missing.safetensors";
  OpRunReport r = runOps(**model, o);
  ASSERT_TRUE(r.failedStage);
  EXPECT_EQ(*r.failedStage, "input");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(contains(r.error, "missing.safetensors")) << r.error;
  EXPECT_EQ(r.json.at("stage"), "input");
  EXPECT_TRUE(r.text.empty());

  // The outputs file's directory does not exist: the last stage fails.
  OpRunOptions out;
  out.artifact = dir.str();
  out.outputs = dir.str() + "/no/such/dir/outputs.safetensors";
  OpRunReport w = runOps(**model, out);
  ASSERT_TRUE(w.failedStage);
  EXPECT_EQ(*w.failedStage, "outputs");
  EXPECT_TRUE(contains(w.error, "outputs.safetensors")) << w.error;
}

TEST(OpRun, AGroupOfOneRankJoinsAsARankRun) {
  TempDir dir;
  writeTestArtifact(dir.str(), twoLinears());
  auto group = TensorParallelGroup::load(dir.str(), hostOptions());
  ASSERT_TRUE(bool(group)) << group.message();
  OpRunOptions o;
  o.artifact = dir.str();
  o.check = true;
  OpRunReport g = runGroupOps(**group, nullptr, o);
  ASSERT_FALSE(g.failedStage) << g.error;
  EXPECT_TRUE(g.ok);
  EXPECT_TRUE(g.speaks);
  EXPECT_EQ(g.json.at("rank"), "all");
  EXPECT_EQ(g.json.at("ops").size(), 2u);

  // The same ops on the same activations, one rank: the same outputs.
  auto model = loadModel(dir.str(), hostOptions());
  ASSERT_TRUE(bool(model)) << model.message();
  OpRunReport r = runOps(**model, o);
  ASSERT_FALSE(r.failedStage) << r.error;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(g.json["ops"][i]["sha256_16"], r.json["ops"][i]["sha256_16"]);
    EXPECT_EQ(g.json["ops"][i]["check"]["reference"], "whole weight");
  }
}

} // namespace
