//===- HostCpuTest.cpp - CPU levels of host kernels -----------------------===//
//
// The spellings a manifest and `--host-cpu` use, what LLVM is asked for at
// each level, and the order the kernels rely on (a level has every
// instruction of those below it, so x86-64-v4-vnni code may use AVX2's).
//
//===----------------------------------------------------------------------===//

#include "qtensor/Support/HostCpu.h"

#include <gtest/gtest.h>

#include <string>

using namespace qtensor;

TEST(HostCpuLevel, SpellingsRoundTrip) {
  for (HostCpuLevel level :
       {HostCpuLevel::Generic, HostCpuLevel::X86_64_V2, HostCpuLevel::X86_64_V3,
        HostCpuLevel::X86_64_V4, HostCpuLevel::X86_64_V4_VNNI,
        HostCpuLevel::X86_64_V4_AMX}) {
    std::optional<HostCpuLevel> back = parseHostCpuLevel(toString(level));
    ASSERT_TRUE(back.has_value()) << toString(level);
    EXPECT_EQ(*back, level);
    EXPECT_NE(std::string(knownHostCpuLevels()).find(toString(level)),
              std::string::npos);
  }
  EXPECT_EQ(std::string(toString(HostCpuLevel::X86_64_V4_VNNI)),
            "x86-64-v4-vnni");
  EXPECT_EQ(std::string(toString(HostCpuLevel::X86_64_V4_AMX)),
            "x86-64-v4-amx");
  EXPECT_FALSE(parseHostCpuLevel("x86-64-v5").has_value());
  EXPECT_FALSE(parseHostCpuLevel("avx512vnni").has_value());
}

TEST(HostCpuLevel, LlvmNamesAndFeatures) {
  EXPECT_EQ(std::string(llvmCpuName(HostCpuLevel::X86_64_V3)), "x86-64-v3");
  EXPECT_EQ(std::string(llvmCpuFeatures(HostCpuLevel::X86_64_V3)), "");
  // VNNI is a feature on top of LLVM's x86-64-v4, not a CPU name of its own.
  EXPECT_EQ(std::string(llvmCpuName(HostCpuLevel::X86_64_V4_VNNI)),
            "x86-64-v4");
  EXPECT_EQ(std::string(llvmCpuFeatures(HostCpuLevel::X86_64_V4_VNNI)),
            "+avx512vnni");
  // AMX adds its tile and int8 features on top of VNNI's.
  EXPECT_EQ(std::string(llvmCpuName(HostCpuLevel::X86_64_V4_AMX)), "x86-64-v4");
  EXPECT_EQ(std::string(llvmCpuFeatures(HostCpuLevel::X86_64_V4_AMX)),
            "+avx512vnni,+amx-tile,+amx-int8");
}

TEST(HostCpuLevel, LevelsAreOrderedAndTheNativeOneRuns) {
  EXPECT_TRUE(atLeast(HostCpuLevel::X86_64_V4_VNNI, HostCpuLevel::X86_64_V3));
  EXPECT_TRUE(atLeast(HostCpuLevel::X86_64_V4, HostCpuLevel::X86_64_V4));
  EXPECT_FALSE(atLeast(HostCpuLevel::X86_64_V4, HostCpuLevel::X86_64_V4_VNNI));
  EXPECT_TRUE(
      atLeast(HostCpuLevel::X86_64_V4_AMX, HostCpuLevel::X86_64_V4_VNNI));
  EXPECT_FALSE(atLeast(HostCpuLevel::Generic, HostCpuLevel::X86_64_V2));
  const HostCpuLevel native = nativeHostCpuLevel();
  EXPECT_TRUE(hostCpuSupports(native)) << toString(native);
  EXPECT_TRUE(hostCpuSupports(HostCpuLevel::Generic));
  // A CPU that runs a level runs every level below it.
  if (hostCpuSupports(HostCpuLevel::X86_64_V4_AMX)) {
    EXPECT_TRUE(hostCpuSupports(HostCpuLevel::X86_64_V4_VNNI));
    EXPECT_EQ(native, HostCpuLevel::X86_64_V4_AMX);
  } else if (hostCpuSupports(HostCpuLevel::X86_64_V4_VNNI)) {
    EXPECT_TRUE(hostCpuSupports(HostCpuLevel::X86_64_V4));
    EXPECT_EQ(native, HostCpuLevel::X86_64_V4_VNNI);
  }
  Status refused = checkHostCpu(HostCpuLevel::X86_64_V4_VNNI, "k.so");
  EXPECT_EQ(bool(refused), hostCpuSupports(HostCpuLevel::X86_64_V4_VNNI));
  if (!refused)
    EXPECT_NE(refused.message().find("k.so: built for CPU level "
                                     "x86-64-v4-vnni"),
              std::string::npos)
        << refused.message();
}
