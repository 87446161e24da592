//===- DescriptorBridgeTest.cpp - One descriptor, two spellings -----------===//
//
// IR text -> attribute -> JSON -> attribute -> IR text, and JSON -> attribute
// -> JSON: the dialect's attributes and the manifest schema must agree.
//
//===----------------------------------------------------------------------===//

#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Descriptor/DescriptorJson.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using json = nlohmann::json;

namespace {
class DescriptorBridge : public ::testing::Test {
protected:
  DescriptorBridge() { context.loadDialect<qt::QTensorDialect>(); }

  qt::QuantizedTensorType parse(const std::string &text) {
    Type type = parseType(text, &context);
    return llvm::dyn_cast_or_null<qt::QuantizedTensorType>(type);
  }

  static std::string print(Type type) {
    std::string s;
    llvm::raw_string_ostream os(s);
    type.print(os);
    return s;
  }

  MLIRContext context;
};

const char *kTypes[] = {
    "!qtensor.tensor<4096x4096xf16, #qtensor.affine<code = ui4, scheme = "
    "symmetric, granularity = group, axis = 1, group_size = 128, scale = f16>>",
    "!qtensor.tensor<64x256xf16, #qtensor.affine<code = ui8, scheme = "
    "asymmetric, zero_point = integer, granularity = per_axis, axis = 0, "
    "scale = f32>>",
    "!qtensor.tensor<3x5xf32, #qtensor.affine<code = si4, scheme = symmetric, "
    "granularity = group, axis = 1, group_size = 4, scale = f16, narrow_range "
    "= true>>",
    "!qtensor.tensor<4x8xbf16, #qtensor.affine<code = ui4, scheme = "
    "asymmetric, zero_point = float, granularity = group, axis = 1, "
    "group_size = 4, tail = exact, scale = bf16, rounding = nearest_away, "
    "saturation = reject, permutation = [7, 6, 5, 4, 3, 2, 1, 0], "
    "decoder_version = 2>, #qtensor.layout<family = \"tiled\", version = 3, "
    "encoding = \"msb_first\", tile = [16, 8], padding = [12, 0]>>",
    "!qtensor.tensor<8x64xf32, #qtensor.affine<code = si4, scheme = "
    "symmetric, granularity = group, axis = 1, group_size = 32, scale = f16, "
    "encoding = offset_binary>>",
    "!qtensor.tensor<2x3xf16, #qtensor.affine<code = ui2, scheme = "
    "asymmetric, zero_point = min, granularity = per_tensor, scale = f16>>",
    "!qtensor.tensor<5xf32, #qtensor.affine<code = si3, scheme = symmetric, "
    "granularity = per_axis, axis = 0, scale = f32>>",
};
} // namespace

TEST_F(DescriptorBridge, IrToJsonToIr) {
  for (const char *text : kTypes) {
    SCOPED_TRACE(text);
    qt::QuantizedTensorType type = parse(text);
    ASSERT_TRUE(type);
    auto plain = qt::toDescriptor(type);
    ASSERT_TRUE(plain) << plain.message();
    json j = ::qtensor::toJson(*plain);
    auto reparsed = ::qtensor::tensorDescriptorFromJson(j);
    ASSERT_TRUE(reparsed) << reparsed.message();
    auto back = qt::toType(&context, *reparsed);
    ASSERT_TRUE(back) << back.message();
    EXPECT_EQ(*back, type) << print(*back);
    EXPECT_EQ(::qtensor::toJson(*qt::toDescriptor(*back)), j);
  }
}

TEST_F(DescriptorBridge, JsonToIrToJson) {
  json j = json::parse(R"({
    "shape": [3, 5], "element_type": "f32",
    "descriptor": {"family": "affine", "decoder_version": 1,
      "code": {"bits": 4, "signed": false, "encoding": "twos_complement"},
      "scheme": "asymmetric", "zero_point": "integer",
      "granularity": {"kind": "group", "axis": 1, "group_size": 4,
                      "tail": "partial"},
      "scale_dtype": "f16", "rounding": "nearest_even",
      "saturation": "clamp", "narrow_range": false},
    "layout": {"family": "logical", "version": 1, "encoding": "lsb_first",
               "tile": [], "padding": []}})");
  auto plain = ::qtensor::tensorDescriptorFromJson(j);
  ASSERT_TRUE(plain) << plain.message();
  auto type = qt::toType(&context, *plain);
  ASSERT_TRUE(type) << type.message();
  EXPECT_EQ(print(*type),
            "!qtensor.tensor<3x5xf32, #qtensor.affine<code = ui4, scheme = "
            "asymmetric, zero_point = integer, granularity = group, axis = 1, "
            "group_size = 4, scale = f16>>");
  EXPECT_EQ(::qtensor::toJson(*qt::toDescriptor(*type)), j);
}

// The attribute verifier runs on the converted descriptor: an invalid one
// becomes an error, never an invalid attribute.
TEST_F(DescriptorBridge, InvalidDescriptorIsAnError) {
  ::qtensor::AffineDescriptor d;
  d.code = {4, false};
  d.granularity = ::qtensor::Granularity::Group;
  d.axis = 1;
  d.groupSize = 0;
  auto attr = qt::toAttr(&context, d);
  ASSERT_FALSE(attr);
  EXPECT_EQ(attr.message(), "group granularity needs a positive group_size, "
                            "got 0");

  ::qtensor::QuantizedTensorDescriptor t;
  t.shape = {4, 8};
  t.descriptor.code = {4, false};
  t.descriptor.granularity = ::qtensor::Granularity::PerAxis;
  t.descriptor.axis = 2;
  auto type = qt::toType(&context, t);
  ASSERT_FALSE(type);
  EXPECT_EQ(type.message(), "axis 2 is out of range for a rank-2 tensor");
}

// The mixed_2416 family: its plain contract (Mixed2416.h) -> type ->
// contract, and text -> contract; a contract the verifier refuses is an
// error, not an attribute.
TEST_F(DescriptorBridge, Mixed2416ContractRoundTrips) {
  ::qtensor::Mixed2416Descriptor d;
  d.shape = {64, 256};
  d.elementType = ::qtensor::FloatType::BF16;
  d.firstGroupSize = 128;
  d.secondGroupSize = 32;
  d.firstScaleCode = {6, false};
  d.secondType = ::qtensor::FloatType::F16;
  d.sparse = ::qtensor::SparseSemantics::Correction;
  d.sparseType = ::qtensor::FloatType::BF16;
  d.requiredKernel = "mixed2416_decode_gemv";
  auto type = qt::toType(&context, d);
  ASSERT_TRUE(bool(type)) << type.message();
  EXPECT_EQ(type->getDescriptor().getFamilyName(), "mixed_2416");
  auto back = qt::toMixed2416Descriptor(*type);
  ASSERT_TRUE(bool(back)) << back.message();
  EXPECT_EQ(*back, d);
  // The logical views: ui4 codes, f32 decoded scales, [N, K / G1] qparams.
  EXPECT_EQ(print(type->getCodesType()), "tensor<64x256xui4>");
  EXPECT_EQ(print(type->getScalesType()), "tensor<64x2xf32>");
  EXPECT_EQ(print(type->getZeroPointsType()), "tensor<64x2xui4>");

  qt::QuantizedTensorType parsed = parse(print(*type));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed, *type);
  // Not spelled in the manifest's affine JSON.
  EXPECT_FALSE(bool(qt::toDescriptor(*type)));

  d.firstGroupSize = 96;
  auto bad = qt::toType(&context, d);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(bad.message().find("multiple of 64"), std::string::npos)
      << bad.message();
}
