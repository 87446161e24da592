//===- Dialect.cpp - The qtensor dialect in MLIR's C API ------------------===//

#include "CAPISupport.h"

#include "qtensor-c/Dialect.h"
#include "qtensor/Descriptor/DescriptorJson.h"
#include "qtensor/Dialect/QTensor/IR/DescriptorBridge.h"
#include "qtensor/Dialect/QTensor/IR/QTensorDialect.h"
#include "qtensor/InitAll.h"
#include "qtensor/Support/JsonObjectReader.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

using namespace qtensor;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(QTensor, qtensor,
                                      mlir::qt::QTensorDialect)

extern "C" void qtensorRegisterPasses(void) { qtensor::registerPasses(); }

extern "C" MlirAttribute qtensorAffineAttrGetFromJson(MlirContext context,
                                                      MlirStringRef json,
                                                      char **error) {
  auto fail = [&](const std::string &message) {
    capi::setError(error, message);
    return MlirAttribute{nullptr};
  };
  mlir::MLIRContext *ctx = unwrap(context);
  if (!ctx->getLoadedDialect<mlir::qt::QTensorDialect>())
    return fail("the qtensor dialect is not loaded in this context");
  auto j =
      parseStrictJson({json.data, json.length}, "descriptor JSON", 1 << 24, 8);
  if (!j)
    return fail(j.message());
  auto d = affineDescriptorFromJson(*j);
  if (!d)
    return fail(d.message());
  auto attr = mlir::qt::toAttr(ctx, *d);
  if (!attr)
    return fail(attr.message());
  return wrap(mlir::Attribute(*attr));
}

namespace {
mlir::qt::AffineDescriptorAttr affine(MlirAttribute attr) {
  return mlir::dyn_cast_or_null<mlir::qt::AffineDescriptorAttr>(unwrap(attr));
}
} // namespace

extern "C" bool qtensorAttributeIsAAffine(MlirAttribute attr) {
  return bool(affine(attr));
}

extern "C" unsigned qtensorAffineAttrGetBits(MlirAttribute attr) {
  auto a = affine(attr);
  return a ? mlir::qt::toDescriptor(a).code.bits : 0;
}

extern "C" bool qtensorAffineAttrIsSigned(MlirAttribute attr) {
  auto a = affine(attr);
  return a && mlir::qt::toDescriptor(a).code.isSigned;
}

extern "C" int64_t qtensorAffineAttrGetGroupSize(MlirAttribute attr) {
  auto a = affine(attr);
  if (!a)
    return 0;
  AffineDescriptor d = mlir::qt::toDescriptor(a);
  return d.granularity == Granularity::Group ? d.groupSize : 0;
}

extern "C" char *qtensorAffineAttrGetJson(MlirAttribute attr) {
  auto a = affine(attr);
  return a ? capi::copyString(toJson(mlir::qt::toDescriptor(a)).dump())
           : nullptr;
}
