/*===- runtime_only.c - a program of libtk_runtime.so alone ---------------===//
 *
 * Linked against libtk_runtime.so and nothing else of tk: loads the package
 * named on the command line, runs its vector_add and softmax on the device
 * TK_BACKEND picks (through the driver-only plugin) against host references,
 * and checks that what needs a compiler is refused with a message saying so.
 * Exits 0 when every check passes; prints what failed otherwise.
 *
 *   runtime_only PACKAGE
 *
 *===----------------------------------------------------------------------===*/

#include "tk/tk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(call)                                                            \
  do {                                                                         \
    tk_status status_ = (call);                                                \
    if (status_ != TK_SUCCESS) {                                               \
      fprintf(stderr, "FAILED: %s: %s\n", #call, tk_last_error());             \
      return 1;                                                                \
    }                                                                          \
  } while (0)

static void expect(int condition, const char *what) {
  if (!condition) {
    fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

static char *readFile(const char *path, size_t *size) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return NULL;
  fseek(file, 0, SEEK_END);
  long length = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *bytes = malloc(length > 0 ? (size_t)length : 1);
  if (bytes && fread(bytes, 1, (size_t)length, file) != (size_t)length) {
    free(bytes);
    bytes = NULL;
  }
  fclose(file);
  *size = (size_t)length;
  return bytes;
}

static tk_status createFrom(tk_device device, const char *package, size_t size,
                            const char *entry, tk_kernel *kernel) {
  tk_kernel_source source = {TK_SOURCE_PACKAGE, package, size, entry};
  return tk_kernel_create(device, &source, NULL, kernel);
}

static int runVectorAdd(tk_device device, const char *package, size_t size) {
  enum { n = 4099 };
  static float x[n], y[n], out[n];
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * (float)i;
    y[i] = (float)(n - i);
  }
  tk_kernel kernel;
  CHECK(createFrom(device, package, size, "vector_add", &kernel));
  tk_buffer bx, by, bout;
  CHECK(tk_buffer_create(device, sizeof(x), &bx));
  CHECK(tk_buffer_create(device, sizeof(y), &by));
  CHECK(tk_buffer_create(device, sizeof(out), &bout));
  CHECK(tk_buffer_write(bx, 0, x, sizeof(x)));
  CHECK(tk_buffer_write(by, 0, y, sizeof(y)));
  tk_arg args[] = {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_buffer(bout),
                   tk_arg_i32(n)};
  tk_args list = {args, 4};
  tk_grid grid = {(n + 1023) / 1024, 1, 1};
  CHECK(tk_launch(kernel, grid, &list));
  CHECK(tk_buffer_read(bout, 0, out, sizeof(out)));
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += out[i] != x[i] + y[i];
  expect(wrong == 0, "vector_add from the package matches x + y");
  /* The package's signature checks launches. */
  tk_args shortList = {args, 3};
  expect(tk_launch(kernel, grid, &shortList) == TK_ERROR_ARGUMENT_MISMATCH,
         "a launch with 3 of vector_add's 4 arguments is refused");
  CHECK(tk_kernel_release(kernel));
  CHECK(tk_buffer_release(bx));
  CHECK(tk_buffer_release(by));
  CHECK(tk_buffer_release(bout));
  printf("vector_add: %d elements %s\n", n, wrong ? "WRONG" : "right");
  return 0;
}

static int runSoftmax(tk_device device, const char *package, size_t size) {
  enum { rows = 3, cols = 1000 };
  static float in[rows * cols], soft[rows * cols];
  for (int i = 0; i < rows * cols; ++i)
    in[i] = sinf(0.01f * (float)i);
  tk_kernel kernel;
  CHECK(createFrom(device, package, size, "softmax", &kernel));
  tk_buffer bin, bsoft;
  CHECK(tk_buffer_create(device, sizeof(in), &bin));
  CHECK(tk_buffer_create(device, sizeof(soft), &bsoft));
  CHECK(tk_buffer_write(bin, 0, in, sizeof(in)));
  tk_arg args[] = {tk_arg_buffer(bin), tk_arg_buffer(bsoft), tk_arg_i32(cols),
                   tk_arg_i32(cols), tk_arg_i32(cols)};
  tk_args list = {args, 5};
  tk_grid grid = {rows, 1, 1};
  CHECK(tk_launch(kernel, grid, &list));
  CHECK(tk_buffer_read(bsoft, 0, soft, sizeof(soft)));
  double worst = 0;
  for (int r = 0; r < rows; ++r) {
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c)
      max = fmax(max, in[r * cols + c]);
    for (int c = 0; c < cols; ++c)
      sum += exp(in[r * cols + c] - max);
    for (int c = 0; c < cols; ++c)
      worst = fmax(
          worst, fabs(soft[r * cols + c] - exp(in[r * cols + c] - max) / sum));
  }
  expect(worst <= 1e-6, "softmax from the package within 1e-6 of the host");
  CHECK(tk_kernel_release(kernel));
  CHECK(tk_buffer_release(bin));
  CHECK(tk_buffer_release(bsoft));
  printf("softmax: %dx%d, largest error %.2g\n", rows, cols, worst);
  return 0;
}

/* Sources other than packages need a compiler, which this runtime lacks. */
static void checkRefusals(tk_device device) {
  const char *text = "tk.func @f() {\n  tk.return\n}\n";
  tk_kernel_source source = {TK_SOURCE_TEXT, text, strlen(text), "f"};
  tk_kernel kernel = NULL;
  expect(tk_kernel_create(device, &source, NULL, &kernel) ==
             TK_ERROR_UNSUPPORTED,
         "a text source is TK_ERROR_UNSUPPORTED");
  expect(strstr(tk_last_error(), "libtk_runtime.so") &&
             strstr(tk_last_error(), "link libtk.so"),
         "the refusal names libtk_runtime.so and says to link libtk.so");
  expect(kernel == NULL, "no kernel is made");
  tk_compile_options options;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  expect(tk_ttir_read_metadata("{\"num_warps\": 4}", 0, &options) ==
             TK_ERROR_UNSUPPORTED,
         "tk_ttir_read_metadata is TK_ERROR_UNSUPPORTED");
  tk_autotune_request request;
  memset(&request, 0, sizeof(request));
  request.struct_size = sizeof(request);
  kernel = NULL;
  expect(tk_autotune(device, &request, &kernel, NULL) == TK_ERROR_UNSUPPORTED,
         "tk_autotune is TK_ERROR_UNSUPPORTED");
  expect(kernel == NULL, "tk_autotune makes no kernel");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: runtime_only PACKAGE\n");
    return 2;
  }
  size_t size = 0;
  char *package = readFile(argv[1], &size);
  if (!package) {
    fprintf(stderr, "runtime_only: cannot read '%s'\n", argv[1]);
    return 2;
  }
  const char *backend = NULL;
  CHECK(tk_backend_name(&backend));
  tk_device device;
  CHECK(tk_device_get(0, &device));
  tk_device_props props;
  memset(&props, 0, sizeof(props));
  props.struct_size = sizeof(props);
  CHECK(tk_device_query(device, &props));
  printf("backend %s, device %s (%s)\n", backend, props.name, props.arch);
  if (runVectorAdd(device, package, size) || runSoftmax(device, package, size))
    return 1;
  checkRefusals(device);
  free(package);
  printf("%s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
