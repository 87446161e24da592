// ggml's CPU matmul on one quantized weight, the baseline bench/host-gemv.sh
// measures beside qtensor's host GEMM in the same run:
//
//   ggml_mul_mat TYPE N K T THREADS REPEAT     (TYPE: q4_0 or q8_0)
//
// W is [N, K] of random values quantized by ggml itself, X [T, K] f32 (ggml
// quantizes it to q8 inside the matmul). Prints the median milliseconds of
// REPEAT calls after two warm-up calls, and the weight bytes per second.
// Built by the script against a llama.cpp build (LLAMA_CPP_DIR); not part
// of the project's build.
#include "ggml-cpu.h"
#include "ggml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s q4_0|q8_0 N K T THREADS REPEAT\n", argv[0]);
    return 2;
  }
  enum ggml_type type =
      strcmp(argv[1], "q8_0") == 0 ? GGML_TYPE_Q8_0 : GGML_TYPE_Q4_0;
  long n = atol(argv[2]), k = atol(argv[3]), t = atol(argv[4]);
  int threads = atoi(argv[5]), repeat = atoi(argv[6]);
  if (n < 1 || k < 32 || k % 32 || t < 1 || threads < 1 || repeat < 1) {
    fprintf(stderr, "bad arguments (K a multiple of 32)\n");
    return 2;
  }
  size_t wbytes = ggml_row_size(type, k) * (size_t)n;
  struct ggml_init_params params = {wbytes + (size_t)(t * k) * 8 +
                                        (size_t)(t * n) * 4 + (256u << 20),
                                    NULL, false};
  struct ggml_context *ctx = ggml_init(params);
  struct ggml_tensor *w = ggml_new_tensor_2d(ctx, type, k, n);
  struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, t);
  float *src = malloc(sizeof(float) * (size_t)n * (size_t)k);
  srand(1);
  for (long i = 0; i < n * k; ++i)
    src[i] = (float)((double)rand() / RAND_MAX) - 0.5f;
  ggml_quantize_chunk(type, src, w->data, 0, n, k, NULL);
  free(src);
  float *xs = (float *)x->data;
  for (long i = 0; i < t * k; ++i)
    xs[i] = (float)((double)rand() / RAND_MAX) - 0.5f;
  struct ggml_tensor *y = ggml_mul_mat(ctx, w, x);
  struct ggml_cgraph *graph = ggml_new_graph(ctx);
  ggml_build_forward_expand(graph, y);
  double *ms = malloc(sizeof(double) * (size_t)repeat);
  for (int i = 0; i < 2; ++i)
    ggml_graph_compute_with_ctx(ctx, graph, threads);
  for (int i = 0; i < repeat; ++i) {
    double start = now();
    ggml_graph_compute_with_ctx(ctx, graph, threads);
    ms[i] = (now() - start) * 1e3;
  }
  qsort(ms, (size_t)repeat, sizeof(double), cmp);
  double median = ms[repeat / 2];
  printf("ggml %s N=%ld K=%ld T=%ld threads=%d: %.3f ms, %.2f GB/s of "
         "weights\n",
         argv[1], n, k, t, threads, median, wbytes / (median * 1e-3) / 1e9);
  free(ms);
  ggml_free(ctx);
  return 0;
}
