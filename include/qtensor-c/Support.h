/*===- qtensor-c/Support.h - Strings and errors of the C API -----*- C -*-===*\
|*                                                                            *|
|* Every string the C API returns is malloc'd and owned by the caller, who  *|
|* frees it with qtensorFree. Results that carry structure are JSON, with   *|
|* the same fields as the matching `qtc ... --json` output, so a binding    *|
|* needs no struct layout of this library.                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef QTENSOR_C_SUPPORT_H
#define QTENSOR_C_SUPPORT_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define QTENSOR_CAPI_EXPORTED __declspec(dllexport)
#else
#define QTENSOR_CAPI_EXPORTED __attribute__((visibility("default")))
#endif

/** Frees a string or buffer this API returned (null is ignored). */
QTENSOR_CAPI_EXPORTED void qtensorFree(void *pointer);

/** The library's version, e.g. "0.1.0" (static storage: do not free). */
QTENSOR_CAPI_EXPORTED const char *qtensorVersion(void);

#ifdef __cplusplus
}
#endif

#endif /* QTENSOR_C_SUPPORT_H */
