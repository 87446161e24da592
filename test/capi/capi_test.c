/*===- capi_test.c - The C API, from C ------------------------------------===*\
|*                                                                            *|
|* usage: capi_test CHECKPOINT_DIR OUT_DIR                                  *|
|* Loads the dialect through MLIR's C API, round-trips an affine attribute  *|
|* through its descriptor JSON, compiles the checkpoint, verifies the       *|
|* artifact, loads it and generates, and checks the refusals. Prints one    *|
|* line per check; exits 1 at the first failure.                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "qtensor-c/Compiler.h"
#include "qtensor-c/Dialect.h"
#include "qtensor-c/Runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char *what, const char *detail) {
  printf("%s: %s%s%s\n", ok ? "ok" : "FAILED", what, detail ? " - " : "",
         detail ? detail : "");
  if (!ok)
    failures++;
}

static const char *kDescriptor =
    "{\"family\": \"affine\", \"decoder_version\": 1,"
    " \"code\": {\"bits\": 4, \"signed\": false, \"encoding\": "
    "\"twos_complement\"},"
    " \"scheme\": \"asymmetric\", \"zero_point\": \"integer\","
    " \"granularity\": {\"kind\": \"group\", \"axis\": 1, \"group_size\": "
    "128, \"tail\": \"partial\"},"
    " \"scale_dtype\": \"f16\", \"rounding\": \"nearest_even\","
    " \"saturation\": \"clamp\", \"narrow_range\": false}";

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: capi_test CHECKPOINT_DIR OUT_DIR\n");
    return 2;
  }
  printf("qtensor %s\n", qtensorVersion());

  /* The dialect and its attribute through MLIR's C API. */
  MlirContext ctx = mlirContextCreate();
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__qtensor__(), ctx);
  char *error = NULL;
  MlirAttribute attr = qtensorAffineAttrGetFromJson(
      ctx, mlirStringRefCreateFromCString(kDescriptor), &error);
  check(!mlirAttributeIsNull(attr) && qtensorAttributeIsAAffine(attr),
        "affine attribute from JSON", error);
  check(qtensorAffineAttrGetBits(attr) == 4 &&
            !qtensorAffineAttrIsSigned(attr) &&
            qtensorAffineAttrGetGroupSize(attr) == 128,
        "accessors: ui4, groups of 128", NULL);
  char *json = qtensorAffineAttrGetJson(attr);
  MlirAttribute again = qtensorAffineAttrGetFromJson(
      ctx, mlirStringRefCreateFromCString(json), NULL);
  check(mlirAttributeEqual(attr, again), "JSON round trip", NULL);
  qtensorFree(json);
  MlirAttribute bad = qtensorAffineAttrGetFromJson(
      ctx, mlirStringRefCreateFromCString("{\"family\": \"affine\"}"), &error);
  check(mlirAttributeIsNull(bad) && error, "a bad descriptor is refused",
        error);
  qtensorFree(error);
  error = NULL;
  mlirContextDestroy(ctx);

  /* Compile, verify, load, generate. */
  char request[4096];
  snprintf(request, sizeof request,
           "{\"input\": \"%s\", \"output_dir\": \"%s\", \"target\": "
           "\"host\", \"quant\": \"w4a16:g64\"}",
           argv[1], argv[2]);
  char *result = NULL;
  int rc = qtensorCompileArtifact(request, &result);
  check(rc == 0 && strstr(result, "\"verified\": true"), "compile", NULL);
  qtensorFree(result);
  rc = qtensorVerifyArtifact(argv[2], &result);
  check(rc == 0 && strstr(result, "\"ok\": true"), "verify", NULL);
  qtensorFree(result);

  QtensorModel *model = qtensorModelLoad(argv[2], &error);
  check(model != NULL, "load", error);
  if (model) {
    int32_t prompt[3] = {1, 2, 3}, tokens[4];
    size_t count = 0;
    int64_t vocab = qtensorModelVocabSize(model);
    float *logits = malloc(sizeof(float) * (size_t)vocab);
    rc = qtensorModelGenerate(model, prompt, 3, 4, tokens, 4, &count, logits,
                              &error);
    int inVocab = 1;
    for (size_t i = 0; i < count; ++i)
      inVocab &= tokens[i] >= 0 && tokens[i] < vocab;
    check(rc == 0 && count >= 1 && count <= 4 && inVocab, "generate", error);
    int32_t outside[1] = {(int32_t)vocab};
    rc = qtensorModelGenerate(model, outside, 1, 1, tokens, 4, &count, NULL,
                              &error);
    check(rc == 1 && error, "an id outside the vocabulary is refused", error);
    qtensorFree(error);
    error = NULL;
    free(logits);
    qtensorModelDestroy(model);
  }

  rc = qtensorCompileArtifact("{\"input\": \"x\"}", &result);
  check(rc == 1 && strstr(result, "output_dir"),
        "a request without output_dir is refused", NULL);
  qtensorFree(result);
  model = qtensorModelLoad("/nonexistent-artifact", &error);
  check(model == NULL && error, "a missing artifact is refused", error);
  qtensorFree(error);
  return failures ? 1 : 0;
}
