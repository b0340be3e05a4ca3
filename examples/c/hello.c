/*===- hello.c - vector add through the tk C API -------------------------===*\
 *
 * Reads examples/kernels/vector_add.tk, compiles it for the first device of
 * the default backend (TK_BACKEND), adds two vectors and checks the result.
 * Prints one line; exits non-zero with tk's message on any failure.
 *
\*===----------------------------------------------------------------------===*/

#include "tk/tk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef TK_VECTOR_ADD_PATH
#error "TK_VECTOR_ADD_PATH must name examples/kernels/vector_add.tk"
#endif

/* Elements to add: not a multiple of the kernel's BLOCK (1024), so that the
 * masked tail of the last program is exercised too. */
#define N 10000
#define BLOCK 1024

/* Reports a failed tk call and jumps to cleanup. */
#define CHECK(call)                                                            \
  do {                                                                         \
    tk_status check_status = (call);                                           \
    if (check_status != TK_SUCCESS) {                                          \
      fprintf(stderr, "hello: %s failed: %s: %s\n", #call,                     \
              tk_status_string(check_status), tk_last_error());                \
      goto cleanup;                                                            \
    }                                                                          \
  } while (0)

/* The whole file at `path` in a malloc'd buffer; NULL on failure. */
static char *read_file(const char *path, size_t *out_size) {
  char *text = NULL;
  long size;
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) >= 0 &&
      fseek(file, 0, SEEK_SET) == 0) {
    text = (char *)malloc((size_t)size + 1);
    if (text && fread(text, 1, (size_t)size, file) == (size_t)size) {
      text[size] = '\0';
      *out_size = (size_t)size;
    } else {
      free(text);
      text = NULL;
    }
  }
  fclose(file);
  return text;
}

int main(void) {
  int result = 1;
  size_t i, size = 0, errors = 0;
  const char *backend = "?";
  char *text = NULL;
  float *x = NULL, *y = NULL, *out = NULL;
  tk_device device = NULL;
  tk_device_props props;
  tk_buffer bx = NULL, by = NULL, bout = NULL;
  tk_kernel kernel = NULL;
  tk_kernel_source source;
  tk_arg args[4];
  tk_args arg_list;
  tk_grid grid;

  text = read_file(TK_VECTOR_ADD_PATH, &size);
  x = (float *)malloc(N * sizeof(float));
  y = (float *)malloc(N * sizeof(float));
  out = (float *)malloc(N * sizeof(float));
  if (!text || !x || !y || !out) {
    fprintf(stderr, "hello: cannot read %s or allocate host memory\n",
            TK_VECTOR_ADD_PATH);
    goto cleanup;
  }
  for (i = 0; i < N; ++i) {
    x[i] = (float)i;
    y[i] = 0.5f * (float)i;
    out[i] = -1.0f;
  }

  CHECK(tk_device_get(0, &device));
  CHECK(tk_backend_name(&backend));
  props.struct_size = sizeof(props);
  CHECK(tk_device_query(device, &props));

  CHECK(tk_buffer_create(device, N * sizeof(float), &bx));
  CHECK(tk_buffer_create(device, N * sizeof(float), &by));
  CHECK(tk_buffer_create(device, N * sizeof(float), &bout));
  CHECK(tk_buffer_write(bx, 0, x, N * sizeof(float)));
  CHECK(tk_buffer_write(by, 0, y, N * sizeof(float)));

  source.kind = TK_SOURCE_TEXT;
  source.data = text;
  source.size = size;
  source.entry = "vector_add";
  CHECK(tk_kernel_create(device, &source, NULL, &kernel));

  args[0] = tk_arg_buffer(bx);
  args[1] = tk_arg_buffer(by);
  args[2] = tk_arg_buffer(bout);
  args[3] = tk_arg_i32(N);
  arg_list.args = args;
  arg_list.count = 4;
  grid.x = (N + BLOCK - 1) / BLOCK;
  grid.y = 1;
  grid.z = 1;
  CHECK(tk_launch(kernel, grid, &arg_list));
  CHECK(tk_buffer_read(bout, 0, out, N * sizeof(float)));

  for (i = 0; i < N; ++i)
    if (fabsf(out[i] - 1.5f * (float)i) > 1e-3f * (1.0f + (float)i))
      ++errors;
  if (errors) {
    fprintf(stderr, "hello: %lu of %d results are wrong (out[1] = %g)\n",
            (unsigned long)errors, N, (double)out[1]);
    goto cleanup;
  }
  printf("hello: vector_add of %d floats on %s (%s) is correct\n", N, backend,
         props.name);
  result = 0;

cleanup:
  if (kernel)
    tk_kernel_release(kernel);
  if (bout)
    tk_buffer_release(bout);
  if (by)
    tk_buffer_release(by);
  if (bx)
    tk_buffer_release(bx);
  free(out);
  free(y);
  free(x);
  free(text);
  return result;
}
