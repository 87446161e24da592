//===- CudaDriverTest.cpp - Loading the CUDA driver at run time -----------===//

#include "qtensor/Runtime/CudaDriver.h"

#include <gtest/gtest.h>

using namespace qtensor::runtime;

TEST(CudaDriver, MissingLibraryIsACleanError) {
  auto report = probeCudaDriver("libqtensor-no-such-driver.so.1");
  ASSERT_FALSE(report);
  EXPECT_NE(report.message().find("no CUDA driver: cannot load "
                                  "libqtensor-no-such-driver.so.1"),
            std::string::npos)
      << report.message();
}

// On a machine with a GPU this lists it; elsewhere it must fail with a
// sentence, not crash.
TEST(CudaDriver, ProbeReportsDevicesOrWhyNot) {
  auto report = probeCudaDriver();
  if (!report) {
    EXPECT_FALSE(report.message().empty());
    GTEST_SKIP() << "no GPU here: " << report.message();
  }
  ASSERT_FALSE(report->devices.empty());
  for (const CudaDeviceInfo &device : report->devices) {
    EXPECT_FALSE(device.name.empty());
    EXPECT_GE(device.computeCapabilityMajor, 3);
    EXPECT_GT(device.totalMemoryBytes, 0u);
  }
}

TEST(CudaDriver, SmName) {
  CudaDeviceInfo info;
  info.computeCapabilityMajor = 9;
  info.computeCapabilityMinor = 0;
  EXPECT_EQ(info.smName(), "sm_90");
}
