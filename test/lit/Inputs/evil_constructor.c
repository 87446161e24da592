/* A shared object whose constructor writes the file named by
   $QTENSOR_TEST_MARK: what an untrusted artifact's host code could do the
   moment it is loaded, before any check. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void mark(void) {
  const char *path = getenv("QTENSOR_TEST_MARK");
  if (!path)
    return;
  FILE *f = fopen(path, "w");
  if (f) {
    fputs("artifact code ran\n", f);
    fclose(f);
  }
}
