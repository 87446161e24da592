/*===- qtensor-c/Dialect.h - The qtensor dialect in MLIR's C API -*- C -*-===*\
|*                                                                            *|
|* Registration in MLIR's C API style (mlirGetDialectHandle__qtensor__),    *|
|* the passes, and the affine descriptor attribute: built from and read as  *|
|* its descriptor JSON (docs/descriptor-json.md), with accessors for the    *|
|* fields a front end branches on.                                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef QTENSOR_C_DIALECT_H
#define QTENSOR_C_DIALECT_H

#include "mlir-c/IR.h"
#include "qtensor-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(QTensor, qtensor);

/** Registers qtensor's passes and pipelines with MLIR's global registry. */
QTENSOR_CAPI_EXPORTED void qtensorRegisterPasses(void);

/** #qtensor.affine from descriptor JSON; a null attribute on error, with
 *  the reason in `*error` (free it with qtensorFree). The dialect must be
 *  loaded in `context`. */
QTENSOR_CAPI_EXPORTED MlirAttribute qtensorAffineAttrGetFromJson(
    MlirContext context, MlirStringRef json, char **error);
QTENSOR_CAPI_EXPORTED bool qtensorAttributeIsAAffine(MlirAttribute attr);
/** Code width in bits (2 to 8). */
QTENSOR_CAPI_EXPORTED unsigned qtensorAffineAttrGetBits(MlirAttribute attr);
QTENSOR_CAPI_EXPORTED bool qtensorAffineAttrIsSigned(MlirAttribute attr);
/** The group size, 0 when the scales are not grouped. */
QTENSOR_CAPI_EXPORTED int64_t qtensorAffineAttrGetGroupSize(MlirAttribute attr);
/** The attribute's descriptor JSON (free it with qtensorFree). */
QTENSOR_CAPI_EXPORTED char *qtensorAffineAttrGetJson(MlirAttribute attr);

#ifdef __cplusplus
}
#endif

#endif /* QTENSOR_C_DIALECT_H */
