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
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;

Value qtensor::conversion::emitCodebookLookup(ImplicitLocOpBuilder &b,
                                              Value fields, Codebook codebook) {
  const std::vector<float> &values = codebookValues(codebook);
  auto fieldsTy = cast<VectorType>(fields.getType());
  auto fieldTy = cast<IntegerType>(fieldsTy.getElementType());
  // Bytes pay off where a whole chunk of them is one register (the host's
  // 32 x i8); wider fields would select as many lanes as f32 and then
  // convert each, so those select f32 directly.
  const bool integers =
      fieldTy.getWidth() == 8 && llvm::all_of(values, [](float v) {
        return v == std::trunc(v) && v >= -128.0f && v <= 127.0f;
      });
  Type f32 = b.getF32Type();
  auto laneTy = integers ? fieldsTy : fieldsTy.clone(f32);
  SmallVector<Value> level;
  for (float v : values)
    level.push_back(arith::ConstantOp::create(
        b, SplatElementsAttr::get(
               laneTy, integers ? Attribute(b.getIntegerAttr(fieldTy, v))
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
  return integers
             ? Value(arith::SIToFPOp::create(b, fieldsTy.clone(f32), level[0]))
             : level[0];
}
