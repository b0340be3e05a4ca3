//===- builder_vector_add.cpp - the installed C++ builder, out of tree ----===//
//
// Builds vector_add with tk::KernelBuilder, creates it from the module
// (TK_SOURCE_MODULE) on the default backend, adds two vectors and checks
// them. Prints "correct" on success; exits non-zero with tk's message.
//
//===----------------------------------------------------------------------===//

#include "tk/ir/Builder.h"
#include "tk/tk.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdio>
#include <string>
#include <vector>

static int fail(const char *what) {
  std::fprintf(stderr, "builder_vector_add: %s: %s\n", what, tk_last_error());
  return 1;
}

int main() {
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  tk::KernelBuilder k(&context, "vector_add");
  auto x = k.argPtr("x", k.f32(), 16), y = k.argPtr("y", k.f32(), 16);
  auto out = k.argPtr("out", k.f32(), 16);
  auto n = k.argI32("n");
  auto offs = k.programId(0) * 1024 + k.arange(0, 1024);
  auto mask = offs < n;
  k.store(out + offs, k.load(x + offs, mask) + k.load(y + offs, mask), mask);
  auto module = k.finish();
  if (mlir::failed(module)) {
    std::fprintf(stderr, "builder_vector_add: the builder failed\n");
    return 1;
  }
  mlir::ModuleOp op = **module;

  const int count = 5000;
  std::vector<float> a(count), b(count), sum(count, -1.0f);
  for (int i = 0; i < count; ++i) {
    a[i] = float(i);
    b[i] = 2.0f * float(i);
  }
  tk_device device;
  if (tk_device_get(0, &device) != TK_SUCCESS)
    return fail("tk_device_get");
  tk_kernel_source source = {TK_SOURCE_MODULE, &op, 0, "vector_add"};
  tk_kernel kernel;
  if (tk_kernel_create(device, &source, nullptr, &kernel) != TK_SUCCESS)
    return fail("tk_kernel_create");
  tk_buffer bx, by, bout;
  size_t bytes = count * sizeof(float);
  if (tk_buffer_create(device, bytes, &bx) ||
      tk_buffer_create(device, bytes, &by) ||
      tk_buffer_create(device, bytes, &bout) ||
      tk_buffer_write(bx, 0, a.data(), bytes) ||
      tk_buffer_write(by, 0, b.data(), bytes))
    return fail("buffers");
  tk_arg args[] = {tk_arg_buffer(bx), tk_arg_buffer(by), tk_arg_buffer(bout),
                   tk_arg_i32(count)};
  tk_args list = {args, 4};
  tk_grid grid = {(count + 1023) / 1024, 1, 1};
  if (tk_launch(kernel, grid, &list) != TK_SUCCESS)
    return fail("tk_launch");
  if (tk_buffer_read(bout, 0, sum.data(), bytes) != TK_SUCCESS)
    return fail("tk_buffer_read");
  for (int i = 0; i < count; ++i)
    if (sum[i] != 3.0f * float(i)) {
      std::fprintf(stderr, "builder_vector_add: out[%d] = %g, want %g\n", i,
                   sum[i], 3.0 * i);
      return 1;
    }
  tk_buffer_release(bx);
  tk_buffer_release(by);
  tk_buffer_release(bout);
  tk_kernel_release(kernel);
  std::printf("builder vector_add on %d elements: correct\n", count);
  return 0;
}
