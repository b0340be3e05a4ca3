/*===- triton_kernel.c - a Triton kernel from C, through its TTIR ---------===*\
 *
 *   triton_kernel [KERNEL.ttir]
 *
 * Runs the TTIR Triton wrote for a vector add (by default the corpus'
 * tests/ttir/corpus/vector_add/kernel.ttir; any `x + y` kernel with
 * Triton's tutorial signature (x, y, out, n) and BLOCK 1024 will do) on the
 * first device of the default backend, with the num_warps and num_stages of
 * the `.json` Triton wrote beside it, and checks the sum. Prints one line;
 * exits non-zero with tk's message on any failure.
 *
\*===----------------------------------------------------------------------===*/

#include "tk/tk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TK_TTIR_VECTOR_ADD_PATH
#error "TK_TTIR_VECTOR_ADD_PATH must name the corpus' vector_add/kernel.ttir"
#endif

#define N 5000
#define BLOCK 1024

#define CHECK(call)                                                            \
  do {                                                                         \
    tk_status check_status = (call);                                           \
    if (check_status != TK_SUCCESS) {                                          \
      fprintf(stderr, "triton_kernel: %s failed: %s: %s\n", #call,             \
              tk_status_string(check_status), tk_last_error());                \
      goto cleanup;                                                            \
    }                                                                          \
  } while (0)

/* The whole file at `path`, NUL-terminated, in a malloc'd buffer; NULL on
 * failure. */
static char *read_file(const char *path) {
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
    } else {
      free(text);
      text = NULL;
    }
  }
  fclose(file);
  return text;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : TK_TTIR_VECTOR_ADD_PATH;
  char *ttir = read_file(path), *json = NULL, *json_path = NULL;
  float x[N], y[N], out[N];
  size_t i, errors = 0;
  int result = 1;
  tk_device device = NULL;
  tk_buffer bx = NULL, by = NULL, bout = NULL;
  tk_kernel kernel = NULL;

  if (!ttir) {
    fprintf(stderr, "triton_kernel: cannot read %s\n", path);
    return 1;
  }
  /* Triton writes NAME.json beside NAME.ttir: num_warps, num_stages. */
  json_path = (char *)malloc(strlen(path) + 6);
  if (json_path) {
    strcpy(json_path, path);
    if (strlen(json_path) > 5 &&
        strcmp(json_path + strlen(json_path) - 5, ".ttir") == 0)
      json_path[strlen(json_path) - 5] = '\0';
    strcat(json_path, ".json");
    json = read_file(json_path);
  }
  for (i = 0; i < N; ++i) {
    x[i] = (float)i;
    y[i] = 0.25f * (float)i;
  }
  CHECK(tk_device_get(0, &device));
  CHECK(tk_buffer_create(device, sizeof x, &bx));
  CHECK(tk_buffer_create(device, sizeof y, &by));
  CHECK(tk_buffer_create(device, sizeof out, &bout));
  CHECK(tk_buffer_write(bx, 0, x, sizeof x));
  CHECK(tk_buffer_write(by, 0, y, sizeof y));

  {
    /* The ten lines: Triton's compile options, its TTIR, a launch. */
    tk_compile_options options;
    tk_kernel_source source = {TK_SOURCE_TTIR, NULL, 0, NULL};
    tk_arg args[4];
    tk_args list = {NULL, 4};
    tk_grid grid = {(N + BLOCK - 1) / BLOCK, 1, 1};
    memset(&options, 0, sizeof options);
    options.struct_size = sizeof options;
    if (json)
      CHECK(tk_ttir_read_metadata(json, 0, &options));
    source.data = ttir;
    CHECK(tk_kernel_create(device, &source, &options, &kernel));
    args[0] = tk_arg_buffer(bx);
    args[1] = tk_arg_buffer(by);
    args[2] = tk_arg_buffer(bout);
    args[3] = tk_arg_i32(N);
    list.args = args;
    CHECK(tk_launch(kernel, grid, &list));
  }
  CHECK(tk_buffer_read(bout, 0, out, sizeof out));

  for (i = 0; i < N; ++i)
    if (out[i] != x[i] + y[i])
      ++errors;
  if (errors) {
    fprintf(stderr, "triton_kernel: %lu of %d sums are wrong\n",
            (unsigned long)errors, N);
    goto cleanup;
  }
  printf("triton_kernel: %s ran %d additions from Triton's TTIR%s\n", path, N,
         json ? ", with Triton's num_warps and num_stages" : "");
  result = 0;

cleanup:
  if (kernel)
    tk_kernel_release(kernel);
  if (bx)
    tk_buffer_release(bx);
  if (by)
    tk_buffer_release(by);
  if (bout)
    tk_buffer_release(bout);
  free(ttir);
  free(json);
  free(json_path);
  return result;
}
