//===- ONNXReaderTest.cpp - ONNX quantized linears, honest and hostile ----===//
//
// Models are built here with the ONNX project's protobuf classes: a
// MatMulNBits and a DequantizeLinear -> MatMul linear whose codes the test
// chooses, then each untrusted field broken in turn (seed M8.9 0x05,
// 0x0CC). lit's qtc-compile-onnx.test covers models written by
// onnxruntime's own quantizer, against onnxruntime's outputs.
//
//===----------------------------------------------------------------------===//

#include "TestAssertions.h"
#include "qtensor/Formats/ONNX.h"

#include "TestTempDir.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace qtensor;
using namespace qtensor::onnxmodel;
using qtensor::test::contains;
namespace fs = std::filesystem;

namespace {

struct Scratch : qtensor::test::TempDir {
  Scratch() : qtensor::test::TempDir("qtensor-onnx-test") {}
};

::onnx::TensorProto *initializer(::onnx::GraphProto &g, const std::string &name,
                                 int type, std::vector<int64_t> dims,
                                 std::string bytes) {
  ::onnx::TensorProto *t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims)
    t->add_dims(d);
  t->set_raw_data(std::move(bytes));
  return t;
}

void intAttribute(::onnx::NodeProto &n, const char *name, int64_t v) {
  ::onnx::AttributeProto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

std::string floats(const std::vector<float> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * 4);
}

/// N = 2, K = 40, block 32 (two blocks, the second partial): code (r, c) =
/// (3r + c) % 16, zero-points 5 and 9, scales 0.5 and 0.25 per row.
::onnx::ModelProto matMulNBits(bool withZeros = true) {
  ::onnx::ModelProto m;
  m.set_producer_name("qtensor-test");
  ::onnx::OperatorSetIdProto *op = m.add_opset_import();
  op->set_version(21);
  ::onnx::GraphProto &g = *m.mutable_graph();
  const int n = 2, k = 40, blocks = 2, blob = 16;
  std::string b(size_t(n * blocks * blob), '\0');
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < k; ++c) {
      int q = (3 * r + c) % 16, blk = c / 32, j = c % 32;
      b[size_t((r * blocks + blk) * blob + j / 2)] |= char(q << (4 * (j % 2)));
    }
  initializer(g, "w.q4", ::onnx::TensorProto::UINT8, {n, blocks, blob}, b);
  initializer(g, "w.scales", ::onnx::TensorProto::FLOAT, {n * blocks},
              floats({0.5f, 0.25f, 0.5f, 0.25f}));
  ::onnx::NodeProto &node = *g.add_node();
  node.set_name("fc");
  node.set_op_type("MatMulNBits");
  node.set_domain("com.microsoft");
  node.add_input("x");
  node.add_input("w.q4");
  node.add_input("w.scales");
  if (withZeros) {
    // One byte per row: blocks 0 and 1 in the low and high nibble.
    initializer(g, "w.zeros", ::onnx::TensorProto::UINT8, {n, 1},
                std::string("\x95\x95", 2));
    node.add_input("w.zeros");
  }
  node.add_output("y");
  intAttribute(node, "K", k);
  intAttribute(node, "N", n);
  intAttribute(node, "bits", 4);
  intAttribute(node, "block_size", 32);
  return m;
}

std::string save(const Scratch &dir, const ::onnx::ModelProto &m,
                 const std::string &name = "model.onnx") {
  std::string path = (dir / name).string();
  std::ofstream out(path, std::ios::binary);
  m.SerializeToOstream(&out);
  return path;
}

} // namespace

TEST(ONNXReader, MatMulNBitsCodesAndQparamsAsStored) {
  Scratch dir;
  auto m = Model::open(save(dir, matMulNBits()));
  ASSERT_TRUE(bool(m)) << m.message();
  ASSERT_EQ(m->linears().size(), 1u);
  const QuantizedLinear &l = m->linears()[0];
  EXPECT_EQ(l.weight, "w.q4");
  EXPECT_EQ(l.node, "fc");
  EXPECT_EQ(l.n, 2);
  EXPECT_EQ(l.k, 40);
  EXPECT_EQ(l.storedType, "ONNX_MATMULNBITS_UINT4");
  const AffineDescriptor &d = l.descriptor.descriptor;
  EXPECT_FALSE(d.code.isSigned);
  EXPECT_EQ(d.zeroPoint, ZeroPointKind::Integer);
  EXPECT_EQ(d.groupSize, 32);
  EXPECT_EQ(d.scaleType, FloatType::F32);
  auto parts = unpack(l);
  ASSERT_TRUE(bool(parts)) << parts.message();
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 40; ++c)
      ASSERT_EQ(parts->codes[size_t(r * 40 + c)], (3 * r + c) % 16) << r << c;
  EXPECT_EQ(parts->scales, (std::vector<float>{0.5f, 0.25f, 0.5f, 0.25f}));
  EXPECT_EQ(parts->zeros, (std::vector<int32_t>{5, 9, 5, 9}));
  EXPECT_TRUE(m->otherInitializers().empty());
}

TEST(ONNXReader, DefaultZeroPointsAreASymmetricSignedCode) {
  Scratch dir;
  auto m = Model::open(save(dir, matMulNBits(/*withZeros=*/false)));
  ASSERT_TRUE(bool(m)) << m.message();
  const QuantizedLinear &l = m->linears()[0];
  const AffineDescriptor &d = l.descriptor.descriptor;
  EXPECT_TRUE(d.code.isSigned);
  EXPECT_EQ(d.encoding, SignedEncoding::OffsetBinary);
  EXPECT_EQ(d.zeroPoint, ZeroPointKind::None);
  auto parts = unpack(l);
  ASSERT_TRUE(bool(parts)) << parts.message();
  EXPECT_EQ(parts->codes[1], (3 * 0 + 1) % 16 - 8);
  EXPECT_TRUE(parts->zeros.empty());
}

TEST(ONNXReader, DequantizeLinearInt4BlocksBeforeAMatMul) {
  Scratch dir;
  ::onnx::ModelProto m;
  m.add_opset_import()->set_version(21);
  ::onnx::GraphProto &g = *m.mutable_graph();
  // W [K = 4, N = 3] int4, C order, two values a byte (low nibble first):
  // W[c][r] = c - r - 1 (so -4..2); one block of 4 along K.
  std::string w(6, '\0');
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 3; ++r) {
      int e = c * 3 + r, v = (c - r - 1) & 15;
      w[size_t(e / 2)] |= char(v << (4 * (e % 2)));
    }
  initializer(g, "w", 22 /* INT4 */, {4, 3}, w);
  initializer(g, "w.scale", ::onnx::TensorProto::FLOAT, {1, 3},
              floats({1.0f, 2.0f, 4.0f}));
  ::onnx::NodeProto &dq = *g.add_node();
  dq.set_op_type("DequantizeLinear");
  dq.set_name("dq");
  dq.add_input("w");
  dq.add_input("w.scale");
  dq.add_output("w.f");
  intAttribute(dq, "axis", 0);
  intAttribute(dq, "block_size", 4);
  ::onnx::NodeProto &mm = *g.add_node();
  mm.set_op_type("MatMul");
  mm.set_name("proj");
  mm.add_input("x");
  mm.add_input("w.f");
  mm.add_output("y");
  auto model = Model::open(save(dir, m));
  ASSERT_TRUE(bool(model)) << model.message();
  ASSERT_EQ(model->linears().size(), 1u);
  const QuantizedLinear &l = model->linears()[0];
  EXPECT_EQ(l.n, 3);
  EXPECT_EQ(l.k, 4);
  EXPECT_EQ(l.storedType, "ONNX_QDQ_INT4");
  EXPECT_TRUE(l.descriptor.descriptor.code.isSigned);
  auto parts = unpack(l);
  ASSERT_TRUE(bool(parts)) << parts.message();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(parts->codes[size_t(r * 4 + c)], c - r - 1);
  EXPECT_EQ(parts->scales, (std::vector<float>{1.0f, 2.0f, 4.0f}));
}

TEST(ONNXReader, ExternalDataStaysInTheModelsFolder) {
  Scratch dir;
  ::onnx::ModelProto m = matMulNBits();
  ::onnx::TensorProto &b = *m.mutable_graph()->mutable_initializer(0);
  std::string bytes = b.raw_data();
  b.clear_raw_data();
  b.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto set = [&](const std::string &location, const std::string &offset,
                 const std::string &length) {
    b.clear_external_data();
    auto add = [&](const char *k, const std::string &v) {
      ::onnx::StringStringEntryProto *e = b.add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    if (!offset.empty())
      add("offset", offset);
    if (!length.empty())
      add("length", length);
  };
  {
    std::ofstream out(dir / "w.bin", std::ios::binary);
    out << std::string(16, 'x') << bytes;
  }
  set("w.bin", "16", "64");
  auto ok = Model::open(save(dir, m));
  ASSERT_TRUE(bool(ok)) << ok.message();
  EXPECT_EQ(ok->files().size(), 2u);
  auto parts = unpack(ok->linears()[0]);
  ASSERT_TRUE(bool(parts));
  EXPECT_EQ(parts->codes[5], 5);

  struct Case {
    std::string location, offset, length, error;
  };
  fs::create_directories(dir / "sub");
  fs::create_symlink(dir / "w.bin", dir / "link.bin");
  fs::create_symlink(dir.path(), dir / "sub" / "up");
  std::ofstream(dir / "short.bin") << "abc";
  for (const Case &c : std::vector<Case>{
           {"../w.bin", "16", "", "has a '..' component"},
           {"/etc/passwd", "", "", "absolute"},
           {"link.bin", "16", "", "symbolic link"},
           {"sub/up/w.bin", "16", "", "symbolic link"},
           {"missing.bin", "", "", "missing"},
           {"short.bin", "", "", "is outside"},
           {"w.bin", "40", "", "is outside"},
           {"w.bin", "16", "63", "external_data length 63 bytes"},
           {"w.bin", "-1", "", "is not a byte count"},
       }) {
    SCOPED_TRACE(c.location + " @" + c.offset);
    set(c.location, c.offset, c.length);
    auto bad = Model::open(save(dir, m));
    ASSERT_FALSE(bool(bad));
    EXPECT_TRUE(contains(bad.message(), "initializer w.q4"));
    EXPECT_TRUE(contains(bad.message(), c.error));
  }
}

TEST(ONNXReader, ExternalDataChecksumIsVerified) {
  Scratch dir;
  ::onnx::ModelProto m = matMulNBits();
  ::onnx::TensorProto &b = *m.mutable_graph()->mutable_initializer(0);
  std::ofstream(dir / "w.bin", std::ios::binary) << b.raw_data();
  b.clear_raw_data();
  b.set_data_location(::onnx::TensorProto::EXTERNAL);
  for (auto [k, v] :
       {std::pair<const char *, const char *>{"location", "w.bin"},
        {"checksum", "0000000000000000000000000000000000000000"}}) {
    ::onnx::StringStringEntryProto *e = b.add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  auto bad = Model::open(save(dir, m));
  ASSERT_FALSE(bool(bad));
  EXPECT_TRUE(contains(bad.message(), "has SHA-1 "));
  EXPECT_TRUE(contains(bad.message(), "the model's checksum is 0000"));
}

TEST(ONNXReader, EachBrokenFieldIsNamed) {
  struct Case {
    const char *what;
    std::function<void(::onnx::ModelProto &)> breakIt;
    std::string error;
  };
  auto node = [](::onnx::ModelProto &m) -> ::onnx::NodeProto & {
    return *m.mutable_graph()->mutable_node(0);
  };
  auto setAttr = [&](::onnx::ModelProto &m, const char *name, int64_t v) {
    for (::onnx::AttributeProto &a : *node(m).mutable_attribute())
      if (a.name() == name)
        a.set_i(v);
  };
  std::vector<Case> cases = {
      {"bits", [&](auto &m) { setAttr(m, "bits", 3); },
       "bits = 3 is not read (2-, 4- and 8-bit codes are)"},
      {"block", [&](auto &m) { setAttr(m, "block_size", 24); },
       "block_size = 24 (expected a power of two, at least 16)"},
      {"K", [&](auto &m) { setAttr(m, "K", 72); },
       "B (w.q4) is U8 [2, 2, 16], expected uint8 [2, 3, 16]"},
      {"N", [&](auto &m) { setAttr(m, "N", -2); },
       "K = 40, N = -2 (each must be in [1, 2^31])"},
      {"raw",
       [](auto &m) {
         m.mutable_graph()
             ->mutable_initializer(0)
             ->mutable_raw_data()
             ->pop_back();
       },
       "raw_data holds 63 bytes, its U8 [2, 2, 16] needs 64"},
      {"scales",
       [](auto &m) {
         m.mutable_graph()->mutable_initializer(1)->set_dims(0, 3);
       },
       "initializer w.scales: raw_data holds 16 bytes"},
      {"not an initializer",
       [&](auto &m) { *node(m).mutable_input(2) = "computed"; },
       "input scales (computed) is not an initializer"},
      {"type",
       [](auto &m) {
         m.mutable_graph()->mutable_initializer(1)->set_data_type(99);
       },
       "data type 99 is not one this reader takes"},
      {"g_idx",
       [&](auto &m) {
         node(m).add_input("gidx");
         *node(m).mutable_input(4) = "gidx";
       },
       "input g_idx (gidx"},
      {"duplicate",
       [](auto &m) {
         *m.mutable_graph()->add_initializer() = m.graph().initializer(0);
       },
       "initializer w.q4 is defined twice"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    Scratch dir;
    ::onnx::ModelProto m = matMulNBits();
    c.breakIt(m);
    auto bad = Model::open(save(dir, m));
    ASSERT_FALSE(bool(bad));
    EXPECT_TRUE(contains(bad.message(), c.error));
  }
}

TEST(ONNXReader, NotAModel) {
  Scratch dir;
  std::ofstream(dir / "junk.onnx", std::ios::binary) << "\xff\xff\xff garbage";
  auto bad = Model::open((dir / "junk.onnx").string());
  ASSERT_FALSE(bool(bad));
  EXPECT_TRUE(contains(bad.message(), "junk.onnx: not an ONNX model"));
}
