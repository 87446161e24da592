//===- HostBackendTest.cpp - The MLIR C-interface calling convention ------===//
//
// The test kernels (TestHostKernels.c) read their memref descriptors'
// aligned pointer, offset and strides: calling them through
// callMlirCInterface with a known weight proves the descriptors are built
// the way `llvm.emit_c_interface` functions expect.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestArtifact.h"

#include "qtensor/Numerics/KernelLayout.h"
#include "qtensor/Runtime/HostBackend.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace qtensor;
using namespace qtensor::runtime;
using namespace rttest;

TEST(HostKernelLibrary, CallsAKernelThroughMemRefDescriptors) {
  std::vector<uint8_t> so = testKernelLibrary();
  auto lib = HostKernelLibrary::load(so.data(), so.size(), "test.so");
  ASSERT_TRUE(bool(lib)) << lib.message();
  auto fn = (*lib)->resolve("_mlir_ciface_test_gemv_w4s_g32_f16");
  ASSERT_TRUE(bool(fn)) << fn.message();

  // W [2, 32]: row 0 all codes +1, row 1 codes -2; scales 0.5 and 0.25.
  const int64_t n = 2, k = 32;
  std::vector<int32_t> codes(n * k);
  for (int64_t c = 0; c < k; ++c) {
    codes[c] = 1;
    codes[k + c] = -2;
  }
  auto packed = packKernelLayout({KernelLayoutKind::DecodeGemv, 4, true},
                                 codes.data(), n, k);
  ASSERT_TRUE(bool(packed));
  std::vector<int32_t> words(packed->size() / 4);
  std::memcpy(words.data(), packed->data(), packed->size());
  std::vector<uint16_t> scales = {floatToHalfBits(0.5f),
                                  floatToHalfBits(0.25f)};
  // x [2, 32]: row 0 all 1, row 1 all 0.5.
  std::vector<uint16_t> x(2 * k);
  for (int64_t c = 0; c < k; ++c) {
    x[c] = floatToHalfBits(1.0f);
    x[k + c] = floatToHalfBits(0.5f);
  }
  std::vector<uint16_t> y(2 * n, 0xFFFF);
  Status s =
      callMlirCInterface(*fn, {{x.data(), {2, k}},
                               {words.data(), {n, int64_t(words.size()) / n}},
                               {scales.data(), {n, 1}},
                               {y.data(), {2, n}}});
  ASSERT_TRUE(bool(s)) << s.message();
  // y[t][o] = sum_k x[t][k] * s[o] * q[o][k].
  EXPECT_EQ(halfBitsToFloat(y[0]), 16.0f);  // 32 * 1 * 0.5 * 1
  EXPECT_EQ(halfBitsToFloat(y[1]), -16.0f); // 32 * 1 * 0.25 * -2
  EXPECT_EQ(halfBitsToFloat(y[2]), 8.0f);
  EXPECT_EQ(halfBitsToFloat(y[3]), -8.0f);
  EXPECT_STREQ((*lib)->via(), "memfd");
}

TEST(HostKernelLibrary, EachLoadIsItsOwnCopy) {
  // Two artifacts' libraries alive at once must never be taken for one
  // another (dlopen matches loaded objects by name).
  std::vector<uint8_t> so = testKernelLibrary();
  auto a = HostKernelLibrary::load(so.data(), so.size(), "a.so");
  auto b = HostKernelLibrary::load(so.data(), so.size(), "b.so");
  ASSERT_TRUE(a && b);
  auto fa = (*a)->resolve("_mlir_ciface_test_gemv_w4s_g32_f16");
  auto fb = (*b)->resolve("_mlir_ciface_test_gemv_w4s_g32_f16");
  ASSERT_TRUE(fa && fb);
  EXPECT_NE(*fa, *fb);
  a->reset();
  auto c = HostKernelLibrary::load(so.data(), so.size(), "c.so");
  ASSERT_TRUE(bool(c)) << c.message();
  auto fc = (*c)->resolve("_mlir_ciface_test_gemv_w4s_g32_f16");
  ASSERT_TRUE(bool(fc));
  EXPECT_NE(*fc, *fb);
}

TEST(HostKernelLibrary, NotASharedObject) {
  std::vector<uint8_t> junk(4096, 0x5a);
  auto lib = HostKernelLibrary::load(junk.data(), junk.size(), "junk.so");
  ASSERT_FALSE(bool(lib));
  EXPECT_NE(lib.message().find("junk.so: cannot load host kernels"),
            std::string::npos)
      << lib.message();
}

TEST(HostKernelLibrary, MissingSymbolIsNamed) {
  std::vector<uint8_t> so = testKernelLibrary();
  auto lib = HostKernelLibrary::load(so.data(), so.size(), "test.so");
  ASSERT_TRUE(bool(lib)) << lib.message();
  auto fn = (*lib)->resolve("_mlir_ciface_absent");
  ASSERT_FALSE(bool(fn));
  EXPECT_NE(fn.message().find("test.so: symbol _mlir_ciface_absent is not "
                              "exported"),
            std::string::npos);
}

TEST(CallMlirCInterface, RefusesWhatItCannotDescribe) {
  int dummy = 0;
  void *f = reinterpret_cast<void *>(&dummy);
  Status none = callMlirCInterface(f, {});
  EXPECT_FALSE(bool(none));
  std::vector<HostOperand> tooMany(kMaxKernelArgs + 1,
                                   HostOperand{&dummy, {1}});
  EXPECT_NE(callMlirCInterface(f, tooMany)
                .message()
                .find(std::to_string(kMaxKernelArgs + 1) + " arguments"),
            std::string::npos);
  EXPECT_NE(callMlirCInterface(f, {{&dummy, {1, 1, 1, 1, 1}}})
                .message()
                .find("rank 5"),
            std::string::npos);
  EXPECT_NE(callMlirCInterface(f, {{nullptr, {1}}}).message().find("no data"),
            std::string::npos);
  EXPECT_NE(callMlirCInterface(f, {{&dummy, {-1}}}).message().find("negative"),
            std::string::npos);
  EXPECT_FALSE(bool(callMlirCInterface(nullptr, {{&dummy, {1}}})));
}

namespace {
/// The descriptors a 14-argument C interface receives, copied while they
/// live (they are the caller's stack): rank 2, so 7 words each.
int64_t received[14][7];
void recordFourteen(void *a0, void *a1, void *a2, void *a3, void *a4, void *a5,
                    void *a6, void *a7, void *a8, void *a9, void *a10,
                    void *a11, void *a12, void *a13) {
  void *all[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
  for (size_t i = 0; i < 14; ++i)
    std::memcpy(received[i], all[i], sizeof(received[i]));
}
} // namespace

// The mixed 2/4/16 GEMV takes 14 memrefs: each reaches its parameter as a
// descriptor of its own data and shape.
TEST(CallMlirCInterface, PassesEveryArgumentUpToTheMost) {
  static_assert(kMaxKernelArgs == 14);
  int64_t data[14] = {};
  std::vector<HostOperand> operands;
  for (int64_t i = 0; i < 14; ++i)
    operands.push_back(HostOperand{&data[i], {i + 1, 2}});
  Status s = callMlirCInterface(reinterpret_cast<void *>(&recordFourteen),
                                operands.data(), operands.size());
  ASSERT_TRUE(bool(s)) << s.message();
  for (int64_t i = 0; i < 14; ++i) {
    const int64_t *d = received[i];
    EXPECT_EQ(d[1], int64_t(reinterpret_cast<intptr_t>(&data[i]))) << i;
    EXPECT_EQ(d[3], i + 1) << i; // sizes
    EXPECT_EQ(d[4], 2) << i;
    EXPECT_EQ(d[5], 2) << i; // row-major strides
    EXPECT_EQ(d[6], 1) << i;
  }
}
