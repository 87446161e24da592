//===- LedgerTimelineTest.cpp - Memory ledgers and the startup timeline ---===//

#include "qtensor/Runtime/ExecutionTrace.h"
#include "qtensor/Runtime/MemoryLedger.h"
#include "qtensor/Runtime/Timeline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>

using namespace qtensor::runtime;

TEST(MemoryLedger, CategoriesAreSeparateSums) {
  MemoryLedger l;
  ASSERT_TRUE(bool(l.add(MemoryCategory::Disk, "a.safetensors", 1000)));
  ASSERT_TRUE(bool(l.add(MemoryCategory::Disk, "b.safetensors", 24)));
  ASSERT_TRUE(bool(l.add(MemoryCategory::Mapped, "a.safetensors", 1000)));
  EXPECT_EQ(l.current(MemoryCategory::Disk), 1024u);
  EXPECT_EQ(l.current(MemoryCategory::Mapped), 1000u);
  EXPECT_EQ(l.current(MemoryCategory::ResidentHost), 0u);
  EXPECT_EQ(l.items(MemoryCategory::Disk).size(), 2u);
  // An item grows when added again.
  ASSERT_TRUE(bool(l.add(MemoryCategory::Disk, "b.safetensors", 6)));
  EXPECT_EQ(l.held(MemoryCategory::Disk, "b.safetensors"), 30u);
  EXPECT_EQ(l.current(MemoryCategory::Disk), 1030u);
}

TEST(MemoryLedger, PeakSurvivesRelease) {
  MemoryLedger l;
  ASSERT_TRUE(bool(l.add(MemoryCategory::Workspace, "call 1", 300)));
  ASSERT_TRUE(bool(l.add(MemoryCategory::Workspace, "call 2", 200)));
  ASSERT_TRUE(bool(l.release(MemoryCategory::Workspace, "call 1")));
  EXPECT_EQ(l.current(MemoryCategory::Workspace), 200u);
  EXPECT_EQ(l.peak(MemoryCategory::Workspace), 500u);
  ASSERT_TRUE(bool(l.add(MemoryCategory::Workspace, "call 3", 100)));
  EXPECT_EQ(l.peak(MemoryCategory::Workspace), 500u);
  ASSERT_TRUE(bool(l.release(MemoryCategory::Workspace, "call 2")));
  ASSERT_TRUE(bool(l.release(MemoryCategory::Workspace, "call 3")));
  EXPECT_EQ(l.current(MemoryCategory::Workspace), 0u);
  EXPECT_EQ(l.held(MemoryCategory::Workspace, "call 3"), 0u);
}

TEST(MemoryLedger, ReleasingWhatIsNotHeldIsAnError) {
  MemoryLedger l;
  ASSERT_TRUE(bool(l.add(MemoryCategory::Fallback, "w", 8)));
  qtensor::Status s = l.release(MemoryCategory::QParams, "w");
  ASSERT_FALSE(bool(s));
  EXPECT_EQ(s.message(), "memory ledger qparams: w holds nothing to release");
  EXPECT_EQ(l.current(MemoryCategory::Fallback), 8u);
}

TEST(MemoryLedger, OverflowIsAnErrorNotAWrap) {
  MemoryLedger l;
  uint64_t max = std::numeric_limits<uint64_t>::max();
  ASSERT_TRUE(bool(l.add(MemoryCategory::Disk, "a", max - 1)));
  qtensor::Status s = l.add(MemoryCategory::Disk, "b", 2);
  ASSERT_FALSE(bool(s));
  EXPECT_NE(s.message().find("overflows 64 bits"), std::string::npos);
  EXPECT_EQ(l.current(MemoryCategory::Disk), max - 1);
}

TEST(MemoryLedger, JsonNamesEveryCategory) {
  MemoryLedger l;
  ASSERT_TRUE(bool(l.add(MemoryCategory::DeviceCodes, "x.codes", 64)));
  nlohmann::ordered_json j = l.toJson(/*withItems=*/true);
  for (const char *c : {"disk", "mapped", "resident_host", "device_codes",
                        "qparams", "workspace", "fallback"})
    EXPECT_TRUE(j.contains(c)) << c;
  EXPECT_EQ(j["device_codes"]["bytes"], 64);
  EXPECT_EQ(j["device_codes"]["by_item"]["x.codes"], 64);
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(3 * 1024 * 1024 / 2), "1.50 MiB");
}

TEST(Timeline, TotalsPerStageAndOverall) {
  Timeline t;
  t.record(Stage::Parse, 0.25, "manifest");
  t.record(Stage::Parse, 0.5, "trace");
  t.record(Stage::Read, 1.0);
  t.record(Stage::Repack, -3.0); // clock noise never subtracts
  t.record(Stage::Warmup, std::nan(""));
  EXPECT_DOUBLE_EQ(t.total(Stage::Parse), 0.75);
  EXPECT_DOUBLE_EQ(t.total(Stage::Read), 1.0);
  EXPECT_DOUBLE_EQ(t.total(Stage::Repack), 0.0);
  EXPECT_DOUBLE_EQ(t.total(Stage::Warmup), 0.0);
  EXPECT_DOUBLE_EQ(t.total(), 1.75);
  ASSERT_EQ(t.intervals().size(), 5u);
  EXPECT_EQ(t.intervals()[1].detail, "trace");
  nlohmann::ordered_json j = t.toJson();
  EXPECT_EQ(j["stages"].size(), kNumStages);
  EXPECT_DOUBLE_EQ(j["stages"]["parse"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["total_seconds"].get<double>(), 1.75);
  // The text has one line per stage plus "ready".
  std::string text = t.toText();
  EXPECT_NE(text.find("parse"), std::string::npos);
  EXPECT_NE(text.find("manifest; trace"), std::string::npos);
  EXPECT_NE(text.find("ready"), std::string::npos);
}

TEST(Timeline, ScopedStageRecordsOnce) {
  Timeline t;
  {
    ScopedStage s(t, Stage::Engine);
    s.setDetail("dlopen");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    s.stop();
    s.stop();
  }
  ASSERT_EQ(t.intervals().size(), 1u);
  EXPECT_EQ(t.intervals()[0].detail, "dlopen");
  EXPECT_GE(t.total(Stage::Engine), 0.002);
}

TEST(ExecutionTrace, CountsFallbacksAndSerializes) {
  ExecutionTrace tr;
  tr.add({"a.weight", "k_decode", "host", qtensor::kernels::Phase::Decode, 4,
          0.001, false, false});
  tr.add({"b.weight", "full_dequant_linear", "host (full-dequant fallback)",
          qtensor::kernels::Phase::Prefill, 64, 0.01, true, false});
  EXPECT_EQ(tr.fallbacks(), 1u);
  nlohmann::ordered_json j = tr.toJson();
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1]["phase"], "prefill");
  EXPECT_EQ(j[1]["T"], 64);
  EXPECT_EQ(j[1]["fallback"], true);
  EXPECT_NE(tr.toText().find("[FALLBACK]"), std::string::npos);
}
