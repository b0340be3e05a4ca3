/* vector_add through the typed launcher tk_add_kernels generated, from the
 * package it embeds: no kernel source and no compile at run time. A launch
 * with a wrong argument returns its status. */
#ifdef TK_KERNELS_HEADER
#include TK_KERNELS_HEADER
#else
#include "example_kernels.h"
#endif

#include <stdio.h>

#define N 5000

int main(void) {
  static float x[N], y[N], out[N];
  tk_device device;
  tk_kernel kernel;
  tk_buffer bx, by, bout;
  tk_grid grid = {(N + 1023) / 1024, 1, 1};
  int i, wrong = 0;
  for (i = 0; i < N; ++i) {
    x[i] = (float)i;
    y[i] = 2.0f * (float)i;
  }
  if (tk_device_get(0, &device) || vector_add_create(device, &kernel) ||
      tk_buffer_create(device, sizeof(x), &bx) ||
      tk_buffer_create(device, sizeof(y), &by) ||
      tk_buffer_create(device, sizeof(out), &bout) ||
      tk_buffer_write(bx, 0, x, sizeof(x)) ||
      tk_buffer_write(by, 0, y, sizeof(y)) ||
      vector_add_launch(kernel, NULL, grid, bx, by, bout, N) ||
      tk_synchronize(device) || tk_buffer_read(bout, 0, out, sizeof(out))) {
    printf("failed: %s\n", tk_last_error());
    return 1;
  }
  for (i = 0; i < N; ++i)
    wrong += out[i] != 3.0f * (float)i;
  /* A buffer released already: refused, the program goes on. */
  tk_buffer_release(by);
  if (vector_add_launch(kernel, NULL, grid, bx, by, bout, N) == TK_SUCCESS) {
    printf("a launch with a released buffer succeeded\n");
    return 1;
  }
  printf("%s (%d wrong); a released buffer: %s\n", wrong ? "wrong" : "correct",
         wrong, tk_last_error());
  tk_kernel_release(kernel);
  tk_buffer_release(bx);
  tk_buffer_release(bout);
  return wrong != 0;
}
