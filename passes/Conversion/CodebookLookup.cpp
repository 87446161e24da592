//===- CodebookLookup.cpp - A code's value from its codebook, in registers ===//
//
// Selects rather than a gather: on the host a gather from the table
// (vgatherdps) measured about 5x slower than the affine conversion at
// T = 1 (bench/codebook-gemv.sh); on a GPU lane it would be a local-memory
// array indexed per element. Bytes go through a tree (4 bit tests, 15
// blends for a whole chunk in one register); wider fields through a chain,
// which keeps one value live per field.
//
//===----------------------------------------------------------------------===//

#include "CodebookLookup.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;

/// E4M3's value from its bits rather than 256 selects: the code's 7
/// exponent-and-mantissa bits placed at f32's bits 20-26 (its sign at bit
/// 31) make 2^-120 times the value, an f32 subnormal for exponent 0, and
/// one multiply by 2^120 rescales it exactly. NaN codes never get here
/// (readers refuse them).
static Value emitE4M3(ImplicitLocOpBuilder &b, Value fields) {
  auto fieldsTy = cast<VectorType>(fields.getType());
  Type i32 = b.getI32Type();
  auto wideTy = fieldsTy.clone(i32);
  Value wide = fieldsTy.getElementType() == i32
                   ? fields
                   : Value(arith::ExtUIOp::create(b, wideTy, fields));
  auto splat = [&](int32_t v) {
    return arith::ConstantOp::create(
        b, SplatElementsAttr::get(wideTy, b.getI32IntegerAttr(v)));
  };
  Value magnitude = arith::ShLIOp::create(
      b, arith::AndIOp::create(b, wide, splat(0x7F)), splat(20));
  Value sign = arith::ShLIOp::create(
      b, arith::AndIOp::create(b, wide, splat(0x80)), splat(24));
  Value scaled =
      vector::BitCastOp::create(b, fieldsTy.clone(b.getF32Type()),
                                arith::OrIOp::create(b, magnitude, sign));
  return arith::MulFOp::create(
      b, scaled,
      arith::ConstantOp::create(
          b, SplatElementsAttr::get(cast<VectorType>(scaled.getType()),
                                    b.getF32FloatAttr(std::ldexp(1.0f, 120)))));
}

Value qtensor::conversion::emitCodebookLookup(ImplicitLocOpBuilder &b,
                                              Value fields, Codebook codebook) {
  if (codebook == Codebook::E4M3)
    return emitE4M3(b, fields);
  const std::vector<float> &values = codebookValues(codebook);
  auto fieldsTy = cast<VectorType>(fields.getType());
  auto fieldTy = cast<IntegerType>(fieldsTy.getElementType());
  // Bytes pay off where a whole chunk of them is one register (the host's
  // 32 x i8); wider fields would select as many lanes as f32 and then
  // convert each, so those select f32 directly. A table of integers times
  // 2^-shift (E2M1: ggml's doubled kvalues_mxfp4 halved) selects the
  // integers and rescales once, exactly.
  int shift = -1;
  for (int s = 0; s <= 4 && shift < 0 && fieldTy.getWidth() == 8; ++s)
    if (llvm::all_of(values, [s](float v) {
          const float w = std::ldexp(v, s);
          return w == std::trunc(w) && w >= -128.0f && w <= 127.0f;
        }))
      shift = s;
  const bool integers = shift >= 0;
  Type f32 = b.getF32Type();
  auto laneTy = integers ? fieldsTy : fieldsTy.clone(f32);
  SmallVector<Value> level;
  for (float v : values)
    level.push_back(arith::ConstantOp::create(
        b, SplatElementsAttr::get(
               laneTy, integers ? Attribute(b.getIntegerAttr(
                                      fieldTy, int64_t(std::ldexp(v, shift))))
                                : Attribute(b.getF32FloatAttr(v)))));
  if (!integers) {
    // A chain of compare-and-selects keeps one value live per lane; the
    // tree below keeps a level's (8 per lane at its widest), which a GPU
    // lane pays for in registers (159 per thread against 32 at T = 1).
    Value v = level[0];
    for (size_t i = 1; i < level.size(); ++i)
      v = arith::SelectOp::create(
          b,
          arith::CmpIOp::create(
              b, arith::CmpIPredicate::eq, fields,
              arith::ConstantOp::create(
                  b, SplatElementsAttr::get(
                         fieldsTy, b.getIntegerAttr(fieldTy, int64_t(i))))),
          level[i], v);
    return v;
  }
  Value zero = arith::ConstantOp::create(
      b, SplatElementsAttr::get(fieldsTy, b.getIntegerAttr(fieldTy, 0)));
  // Level `bit` picks between neighbours that differ in that bit.
  for (int64_t bit = 0; level.size() > 1; ++bit) {
    Value set = arith::CmpIOp::create(
        b, arith::CmpIPredicate::ne,
        arith::AndIOp::create(
            b, fields,
            arith::ConstantOp::create(
                b, SplatElementsAttr::get(
                       fieldsTy, b.getIntegerAttr(fieldTy, 1 << bit)))),
        zero);
    SmallVector<Value> next;
    for (size_t j = 0; j + 1 < level.size(); j += 2)
      next.push_back(arith::SelectOp::create(b, set, level[j + 1], level[j]));
    level = std::move(next);
  }
  auto valuesTy = fieldsTy.clone(f32);
  Value converted = arith::SIToFPOp::create(b, valuesTy, level[0]);
  if (shift == 0)
    return converted;
  return arith::MulFOp::create(
      b, converted,
      arith::ConstantOp::create(
          b,
          SplatElementsAttr::get(cast<VectorType>(valuesTy),
                                 b.getF32FloatAttr(std::ldexp(1.0f, -shift)))));
}
