//===- Mixed2416LoadTest.cpp - A mixed 2/4/16 artifact's streams at load -===//
//
// The mixed GEMV indexes its streams by what they say (CSR columns and row
// pointers, the map's W4 counts): the loader must verify them before any
// kernel may read them. Here an artifact whose bytes, hashes and records
// are all consistent carries streams that lie, and the load stops at them,
// before the kernel code is touched.
//
//===----------------------------------------------------------------------===//

#include "Formats/Manifest/Mixed2416TestData.h"

#include "qtensor/Runtime/Loader.h"

#include <gtest/gtest.h>

namespace arttest {
namespace {

/// A host artifact running kWeight ([16, 128], G1 64, G2 8) on the mixed
/// GEMV: a record, a binding, and `kernelBytes` as its kernel file.
Status writeMixedArtifact(const std::string &dir,
                          const Mixed2416Streams &streams,
                          std::vector<uint8_t> kernelBytes) {
  const Mixed2416Descriptor d = smallDescriptor();
  Manifest m = baseManifest();
  m.model.architecture = "test";
  KernelEntry k;
  k.id = "mixed_0";
  k.file = "kernels-host.so";
  k.registryId = "mixed2416_decode_gemv";
  k.tokens = {1, 2};
  k.n = 16;
  k.k = 128;
  k.layout = kMixed2416Layout;
  k.mixed = KernelEntry::MixedStreams{64, 8, FloatType::F16, FloatType::F16,
                                      SparseSemantics::Replacement};
  for (int64_t t : {1, 2})
    k.entries.push_back({"_mlir_ciface_mixed_t" + std::to_string(t), {t, t}});
  const std::pair<ArgRole, std::pair<ArgType, std::vector<int64_t>>> args[] = {
      {ArgRole::X, {ArgType::F16, {kDynamic, 128}}},
      {ArgRole::Map, {ArgType::U8, {4}}},
      {ArgRole::W2, {ArgType::I32, {kDynamic}}},
      {ArgRole::W4, {ArgType::I32, {kDynamic}}},
      {ArgRole::RW4, {ArgType::I32, {17}}},
      {ArgRole::QS, {ArgType::U8, {16, 2}}},
      {ArgRole::Z1, {ArgType::U8, {16, 2}}},
      {ArgRole::S2, {ArgType::F16, {2, 2}}},
      {ArgRole::Z2, {ArgType::F16, {2, 2}}},
      {ArgRole::SV, {ArgType::F16, {kDynamic}}},
      {ArgRole::SC, {ArgType::I32, {kDynamic}}},
      {ArgRole::SR, {ArgType::I32, {17}}},
      {ArgRole::Y, {ArgType::F16, {kDynamic, 16}}}};
  for (const auto &[role, typed] : args)
    k.args.push_back({role, typed.first, typed.second});
  k.ops = {kWeight};
  m.kernels = {k};
  OpBinding b;
  b.op = kWeight;
  b.n = 16;
  b.k = 128;
  b.ranks = {{0, 16, 0, 128}};
  b.phases = {{kernels::Phase::Decode, "mixed2416_decode_gemv", false}};
  m.bindings = {b};
  ArtifactWriter writer(m);
  std::vector<std::unique_ptr<std::vector<uint8_t>>> keep;
  QTENSOR_TRY(writer.addMixed2416Tensor(kShard, kWeight, d,
                                        streamData(kWeight, d, streams, keep)));
  QTENSOR_TRY(writer.addFile("kernels-host.so", FileRole::Kernel,
                             std::move(kernelBytes)));
  auto written = writer.write(dir);
  if (!written)
    return written.error();
  return Status::ok();
}

runtime::LoadOptions hostOptions() {
  runtime::LoadOptions o;
  o.backend = runtime::BackendChoice::Host;
  o.code.trustArtifactCode = true;
  return o;
}

TEST(Mixed2416Load, StreamsThatLieStopTheLoadBeforeAnyCode) {
  const Mixed2416Descriptor d = smallDescriptor();
  // Not a shared object: a load that gets as far as the code says so.
  const std::vector<uint8_t> notCode(64, 0x5a);
  {
    TempDir dir;
    ASSERT_TRUE(writeMixedArtifact(dir.str(), smallStreams(d), notCode));
    auto model = runtime::loadModel(dir.str(), hostOptions());
    ASSERT_FALSE(model);
    EXPECT_NE(model.message().find("cannot load host kernels"),
              std::string::npos)
        << model.message();
  }
  struct Case {
    const char *what;
    std::function<void(Mixed2416Streams &)> edit;
    const char *message;
  };
  const Case cases[] = {
      {"a column past K", [](Mixed2416Streams &s) { s.sparseColumns[1] = 500; },
       "sparse_columns[1]: 500 is outside [0, 128)"},
      {"row pointers past the values",
       [](Mixed2416Streams &s) { s.sparseRowPointers.back() = 40; },
       "sparse_row_pointers"},
      {"an outlier in a W4 group (replacement)",
       [](Mixed2416Streams &s) { s.sparseColumns[1] = 70; },
       "replacement outliers are reserved from W2 groups"},
      {"a zero-point outside its codes",
       [](Mixed2416Streams &s) { s.firstZeroPoints[0] = 9; },
       "first_zero_points[0]"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    Mixed2416Streams streams = smallStreams(d);
    c.edit(streams);
    TempDir dir;
    ASSERT_TRUE(writeMixedArtifact(dir.str(), streams, notCode));
    auto model = runtime::loadModel(dir.str(), hostOptions());
    ASSERT_FALSE(model);
    EXPECT_NE(model.message().find(kWeight), std::string::npos)
        << model.message();
    EXPECT_NE(model.message().find(c.message), std::string::npos)
        << model.message();
    EXPECT_EQ(model.message().find("host kernels"), std::string::npos)
        << model.message();
  }
}

} // namespace
} // namespace arttest
