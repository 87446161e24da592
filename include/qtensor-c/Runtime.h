/*===- qtensor-c/Runtime.h - Load an artifact and generate -------*- C -*-===*\
|*                                                                            *|
|* An artifact's decoder program, loaded with this installation's rebuild  *|
|* of its kernels (the artifact's own code never runs; docs/security.md).  *|
|* A model may be used from one thread at a time.                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef QTENSOR_C_RUNTIME_H
#define QTENSOR_C_RUNTIME_H

#include "qtensor-c/Support.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct QtensorModel QtensorModel;

/** Loads the artifact in `dir` with its decoder program; null on error,
 *  with the reason in `*error` (free it with qtensorFree). */
QTENSOR_CAPI_EXPORTED QtensorModel *qtensorModelLoad(const char *dir,
                                                     char **error);
QTENSOR_CAPI_EXPORTED void qtensorModelDestroy(QtensorModel *model);

/** The vocabulary size (the length of the logits). */
QTENSOR_CAPI_EXPORTED int64_t qtensorModelVocabSize(const QtensorModel *model);

/** Prefills `prompt` (n ids) in a fresh KV cache and decodes greedily up to
 *  `maxTokens` tokens (stopping at EOS). Writes at most `capacity` ids to
 *  `tokens`, their count to `*count`, and, when `logits` is not null, the
 *  vocab-size logits after the last prompt token. Returns 0, or 1 with the
 *  reason in `*error`. */
QTENSOR_CAPI_EXPORTED int
qtensorModelGenerate(QtensorModel *model, const int32_t *prompt, size_t n,
                     int64_t maxTokens, int32_t *tokens, size_t capacity,
                     size_t *count, float *logits, char **error);

#ifdef __cplusplus
}
#endif

#endif /* QTENSOR_C_RUNTIME_H */
