//===- CudaBackendTest.cpp - GPU kernel parameters and a real launch ------===//
//
// Kernel parameters are checked word by word without a GPU. Where a GPU is
// lent, a hand-written PTX kernel is loaded, launched on buffers copied to
// the device, and read back: module load, memory, launch and
// synchronization through the dlopen'ed driver. Elsewhere that test skips
// and says why.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestArtifact.h"

#include "qtensor/Runtime/CudaBackend.h"
#include "qtensor/Runtime/CudaDevice.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace qtensor;
using namespace qtensor::runtime;

TEST(KernelParams, ExpandsEveryMemRefInArgumentOrder) {
  KernelInstance k;
  k.id = "t";
  k.n = 6;
  k.k = 256;
  k.args = {{ArgRole::X, ArgType::F16, {kDynamic, 256}},
            {ArgRole::W, ArgType::I32, {6, 32}},
            {ArgRole::S, ArgType::F16, {6, 8}},
            {ArgRole::Y, ArgType::F16, {kDynamic, 6}}};
  DeviceOperands d;
  d.w = 0x2000;
  d.s = 0x3000;
  auto p = KernelParams::build(k, d, /*x=*/0x1000, /*y=*/0x4000, /*T=*/5);
  ASSERT_TRUE(bool(p)) << p.message();
  // Each rank-2 memref: allocated, aligned, offset, 2 sizes, 2 strides.
  std::vector<int64_t> want = {
      0x1000, 0x1000, 0, 5, 256, 256, 1, 0x2000, 0x2000, 0, 6, 32, 32, 1,
      0x3000, 0x3000, 0, 6, 8,   8,   1, 0x4000, 0x4000, 0, 5, 6,  6,  1};
  EXPECT_EQ(p->words(), want);
  ASSERT_EQ(p->size(), want.size());
  EXPECT_EQ(*static_cast<int64_t *>(p->pointers()[3]), 5);

  d.s = 0;
  auto missing = KernelParams::build(k, d, 0x1000, 0x4000, 5);
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(missing.message(), "t: argument s has no device buffer");
}

// A nested kernel's second levels follow their first levels: x, w, s, s2,
// z, z2, y.
TEST(KernelParams, NestedLevelsTakeTheirOwnBuffers) {
  KernelInstance k;
  k.id = "q4k";
  k.n = 6;
  k.k = 256;
  k.args = {{ArgRole::X, ArgType::F16, {kDynamic, 256}},
            {ArgRole::W, ArgType::I32, {6, 32}},
            {ArgRole::S, ArgType::U8, {6, 8}},
            {ArgRole::S2, ArgType::F16, {6, 1}},
            {ArgRole::Z, ArgType::U8, {6, 8}},
            {ArgRole::Z2, ArgType::F16, {6, 1}},
            {ArgRole::Y, ArgType::F16, {kDynamic, 6}}};
  DeviceOperands d;
  d.w = 0x2000;
  d.s = 0x3000;
  d.s2 = 0x3800;
  d.z = 0x5000;
  d.z2 = 0x5800;
  auto p = KernelParams::build(k, d, /*x=*/0x1000, /*y=*/0x4000, /*T=*/2);
  ASSERT_TRUE(bool(p)) << p.message();
  std::vector<int64_t> bases;
  for (size_t i = 0; i < p->words().size(); i += 7)
    bases.push_back(p->words()[i]);
  EXPECT_EQ(bases, (std::vector<int64_t>{0x1000, 0x2000, 0x3000, 0x3800, 0x5000,
                                         0x5800, 0x4000}));
  d.z2 = 0;
  auto missing = KernelParams::build(k, d, 0x1000, 0x4000, 2);
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(missing.message(), "q4k: argument z2 has no device buffer");
}

// A mixed 2/4/16 kernel's streams come from their own buffers, their -1
// lengths from the tensor's streams.
TEST(KernelParams, MixedStreamsTakeTheirBuffersAndLengths) {
  KernelInstance k;
  k.id = "mixed";
  k.n = 16;
  k.k = 128;
  k.layout = artifact::kMixed2416Layout;
  k.mixed = artifact::KernelEntry::MixedStreams{};
  const std::pair<ArgRole, std::vector<int64_t>> shapes[] = {
      {ArgRole::X, {kDynamic, 128}}, {ArgRole::Map, {4}},
      {ArgRole::W2, {kDynamic}},     {ArgRole::W4, {kDynamic}},
      {ArgRole::RW4, {17}},          {ArgRole::QS, {16, 2}},
      {ArgRole::Z1, {16, 2}},        {ArgRole::S2, {1, 2}},
      {ArgRole::Z2, {1, 2}},         {ArgRole::SV, {kDynamic}},
      {ArgRole::SC, {kDynamic}},     {ArgRole::SR, {17}},
      {ArgRole::Y, {kDynamic, 16}}};
  for (const auto &[role, shape] : shapes)
    k.args.push_back({role, ArgType::I32, shape});
  DeviceOperands d;
  int64_t next = 0x10000;
  for (const auto &[role, shape] : shapes)
    if (role != ArgRole::X && role != ArgRole::Y)
      d.streams[role] = {CudaDevice::DevicePtr(next += 0x1000),
                         role == ArgRole::W2 ? 40 : 3};
  auto p = KernelParams::build(k, d, /*x=*/0x1000, /*y=*/0x4000, /*T=*/3);
  ASSERT_TRUE(bool(p)) << p.message();
  // x: [3, 128]; map: [4]; w2: [40]; w4: [3] ... y: [3, 16].
  const std::vector<int64_t> &w = p->words();
  EXPECT_EQ(std::vector<int64_t>(w.begin(), w.begin() + 7),
            (std::vector<int64_t>{0x1000, 0x1000, 0, 3, 128, 128, 1}));
  EXPECT_EQ(std::vector<int64_t>(w.begin() + 7, w.begin() + 12),
            (std::vector<int64_t>{0x11000, 0x11000, 0, 4, 1}));
  EXPECT_EQ(std::vector<int64_t>(w.begin() + 12, w.begin() + 17),
            (std::vector<int64_t>{0x12000, 0x12000, 0, 40, 1}));
  EXPECT_EQ(std::vector<int64_t>(w.begin() + 17, w.begin() + 22),
            (std::vector<int64_t>{0x13000, 0x13000, 0, 3, 1}));
  d.streams.erase(ArgRole::SC);
  auto missing = KernelParams::build(k, d, 0x1000, 0x4000, 3);
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(missing.message(), "mixed: argument sc has no device buffer");
}

TEST(CudaDevice, NoDriverIsACleanError) {
  auto d = CudaDevice::open(0, "libqtensor-no-such-driver.so.1");
  ASSERT_FALSE(bool(d));
  EXPECT_NE(d.message().find("no CUDA driver: cannot load"), std::string::npos);
}

// y[i] = 2 * x[i] + w[0] over n f32 elements, one thread each; the
// parameters are expanded rank-1 memrefs (5 words each), as MLIR lowers a
// gpu.func taking memref<?xf32>.
static const char *kScalePtx = R"(
.version 7.0
.target sm_80
.address_size 64
.visible .entry qt_test_axpb(
  .param .u64 x_alloc, .param .u64 x_ptr, .param .u64 x_off,
  .param .u64 x_size, .param .u64 x_stride,
  .param .u64 w_alloc, .param .u64 w_ptr, .param .u64 w_off,
  .param .u64 w_size, .param .u64 w_stride,
  .param .u64 y_alloc, .param .u64 y_ptr, .param .u64 y_off,
  .param .u64 y_size, .param .u64 y_stride)
{
  .reg .pred %p;
  .reg .b32 %r<4>;
  .reg .b64 %rd<10>;
  .reg .f32 %f<4>;
  ld.param.u64 %rd1, [x_ptr];
  ld.param.u64 %rd2, [w_ptr];
  ld.param.u64 %rd3, [y_ptr];
  ld.param.u64 %rd4, [y_size];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r1, %r1, %r2, %r3;
  cvt.u64.u32 %rd5, %r1;
  setp.ge.u64 %p, %rd5, %rd4;
  @%p bra DONE;
  shl.b64 %rd6, %rd5, 2;
  add.u64 %rd7, %rd1, %rd6;
  ld.global.f32 %f1, [%rd7];
  ld.global.f32 %f2, [%rd2];
  fma.rn.f32 %f3, %f1, 0f40000000, %f2;
  add.u64 %rd8, %rd3, %rd6;
  st.global.f32 [%rd8], %f3;
DONE:
  ret;
}
)";

TEST(CudaDevice, LoadsPtxLaunchesAndCopiesBack) {
  auto device = CudaDevice::open();
  if (!device)
    GTEST_SKIP() << "no GPU here: " << device.message();
  CudaDevice &d = **device;
  auto module = d.loadModule(reinterpret_cast<const uint8_t *>(kScalePtx),
                             std::strlen(kScalePtx), /*isPtx=*/true, "axpb");
  ASSERT_TRUE(bool(module)) << module.message();
  auto fn = d.function(*module, "qt_test_axpb", "axpb");
  ASSERT_TRUE(bool(fn)) << fn.message();

  const int64_t n = 1000;
  std::vector<float> x(n), y(n, -1.0f);
  for (int64_t i = 0; i < n; ++i)
    x[i] = float(i) * 0.5f;
  float w = 3.0f;
  auto dx = d.allocate(n * 4, "x"), dw = d.allocate(4, "w"),
       dy = d.allocate(n * 4, "y");
  ASSERT_TRUE(dx && dw && dy);
  ASSERT_TRUE(bool(d.copyToDevice(*dx, x.data(), n * 4, "x")));
  ASSERT_TRUE(bool(d.copyToDevice(*dw, &w, 4, "w")));
  ASSERT_TRUE(bool(d.zero(*dy, n * 4, "y")));
  int64_t words[15] = {int64_t(*dx), int64_t(*dx), 0, n, 1,
                       int64_t(*dw), int64_t(*dw), 0, 1, 1,
                       int64_t(*dy), int64_t(*dy), 0, n, 1};
  void *params[15];
  for (int i = 0; i < 15; ++i)
    params[i] = &words[i];
  ASSERT_TRUE(bool(
      d.launch(*fn, {(n + 127) / 128, 1, 1}, {128, 1, 1}, 0, params, "axpb")));
  ASSERT_TRUE(bool(d.synchronize("axpb")));
  ASSERT_TRUE(bool(d.copyToHost(y.data(), *dy, n * 4, "y")));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], 2.0f * x[i] + 3.0f) << "i = " << i;
  EXPECT_TRUE(bool(d.free(*dx)));
  EXPECT_FALSE(bool(d.free(*dx))); // twice: not an allocation any more

  // Bad PTX: the JIT's log is in the error.
  const char *bad = ".version 7.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry broken() { bogus.instruction; }\n";
  auto broken = d.loadModule(reinterpret_cast<const uint8_t *>(bad),
                             std::strlen(bad), true, "broken.ptx");
  ASSERT_FALSE(bool(broken));
  EXPECT_NE(broken.message().find("cuModuleLoadDataEx (broken.ptx) failed"),
            std::string::npos)
      << broken.message();
}
