/*===- qtensor-c/Compiler.h - Compile and verify artifacts -------*- C -*-===*\
|*                                                                            *|
|* qtensor::compiler::compileArtifact and verify::runLadder behind two       *|
|* calls. Requests and results are JSON objects (qtensor-c/Support.h).       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef QTENSOR_C_COMPILER_H
#define QTENSOR_C_COMPILER_H

#include "qtensor-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Compiles a checkpoint into a verified artifact. `requestJson` is an
 *  object with the fields of CompileRequest: "input" and "output_dir"
 *  (required), "target" (default "host"), "quant", "weights", "phase",
 *  "fallback", "group_policy", "tp", "exclude", "include" (arrays of
 *  globs); unknown fields are refused. `*resultJson` (always set; free it
 *  with qtensorFree) is {"ok", "verified", "artifact", "linears",
 *  "fallbacks", "ladder", "peak_rss_bytes"} or {"ok": false, "error"}.
 *  Returns 0 when the artifact compiled and verified, 1 otherwise. */
QTENSOR_CAPI_EXPORTED int qtensorCompileArtifact(const char *requestJson,
                                                 char **resultJson);

/** Runs the parity ladder on the artifact in `dir` (`qtc verify --json`'s
 *  object in `*resultJson`). Returns 0 when every level passed. */
QTENSOR_CAPI_EXPORTED int qtensorVerifyArtifact(const char *dir,
                                                char **resultJson);

#ifdef __cplusplus
}
#endif

#endif /* QTENSOR_C_COMPILER_H */
