"""Tests of tk.py, the ctypes layer over the C API, on the cpu backend.

Run by ctest (test `python-capi`) with TK_LIBRARY naming the built libtk.so
and TK_BACKEND=cpu; the standard library's unittest only.
"""

import array
import os
import struct
import unittest

import tk

KERNELS = os.environ.get(
    "TK_TEST_KERNELS_DIR",
    os.path.join(os.path.dirname(__file__), "..", "..", "examples", "kernels"))


def vector_add_text():
    with open(os.path.join(KERNELS, "vector_add.tk")) as f:
        return f.read()


class CApiFromPython(unittest.TestCase):
    def setUp(self):
        self.device = tk.Device(0)
        self.n = 3000
        self.x = array.array("f", (float(i % 97) for i in range(self.n)))
        self.y = array.array("f", (0.5 * i for i in range(self.n)))

    def buffers(self):
        size = 4 * self.n
        x, y, out = (self.device.buffer(size) for _ in range(3))
        x.write(self.x.tobytes())
        y.write(self.y.tobytes())
        # A sentinel, so that an element the kernel skips fails.
        out.write(struct.pack("<f", float("nan")) * self.n)
        return x, y, out

    def check_sum(self, out):
        got = array.array("f")
        got.frombytes(out.read())
        want = [a + b for a, b in zip(self.x, self.y)]
        self.assertEqual(list(got), want)

    def test_properties_name_the_backend(self):
        self.assertEqual(self.device.backend, "cpu")
        props = self.device.properties()
        self.assertEqual(props["backend"], "cpu")
        self.assertGreater(props["compute_units"], 0)

    def test_vector_add_on_a_stream_timed_by_events(self):
        kernel = self.device.kernel(vector_add_text(), entry="vector_add")
        self.assertEqual(kernel.num_args, 4)
        x, y, out = self.buffers()
        stream = self.device.stream()
        start, end = self.device.event(), self.device.event()
        start.record(stream)
        kernel.launch(((self.n + 1023) // 1024,), [x, y, out, tk.i32(self.n)],
                      stream=stream)
        end.record(stream)
        end.synchronize()
        self.assertGreaterEqual(start.elapsed_ms(end), 0.0)
        self.check_sum(out)

    def test_a_triton_kernel_from_its_ttir(self):
        corpus = os.path.join(KERNELS, "..", "..", "tests", "ttir", "corpus")
        with open(os.path.join(corpus, "vector_add", "kernel.ttir")) as f:
            kernel = self.device.kernel(f.read(), ttir=True, num_warps=4)
        self.assertEqual(kernel.num_args, 4)
        x, y, out = self.buffers()
        kernel.launch(((self.n + 1023) // 1024,), [x, y, out, tk.i32(self.n)],
                      wait=True)
        self.check_sum(out)
        with self.assertRaises(tk.TkError) as refused:
            self.device.kernel("module {\n  tt.func public @k() {\n"
                               "    gpu.barrier\n    tt.return\n  }\n}\n",
                               ttir=True)
        self.assertIn("UNSUPPORTED", str(refused.exception))

    def test_a_kernel_from_a_package(self):
        # The package ctest's package-build wrote (cpu among its targets).
        path = os.environ.get("TK_TEST_PACKAGE")
        if not path or not os.path.exists(path):
            self.skipTest("no package (TK_TEST_PACKAGE; a build of every "
                          "backend makes one)")
        with open(path, "rb") as f:
            package = f.read()
        kernel = self.device.kernel(package, entry="vector_add", package=True)
        self.assertEqual(kernel.num_args, 4)
        x, y, out = self.buffers()
        kernel.launch(((self.n + 1023) // 1024,), [x, y, out, tk.i32(self.n)],
                      wait=True)
        self.check_sum(out)
        with self.assertRaises(tk.TkError) as refused:
            self.device.kernel(package[:-1], entry="vector_add", package=True)
        self.assertIn("INVALID_ARGUMENT", str(refused.exception))

    def test_wrapped_memory(self):
        kernel = self.device.kernel(vector_add_text())
        x, y, out = self.buffers()
        # On the cpu a device pointer is a host address: wrap it again, as a
        # CUDA program wraps its own allocations.
        alias = self.device.wrap_buffer(out.pointer, out.size)
        kernel.launch(((self.n + 1023) // 1024,),
                      [x, y, alias, tk.i32(self.n)], wait=True)
        self.check_sum(out)

    def test_autotune_picks_one_of_the_candidates(self):
        text = vector_add_text()
        x, y, out = self.buffers()
        grid = ((self.n + 1023) // 1024,)
        seen = []
        kernel, best, seconds, cached = self.device.autotune(
            [{"code": text, "grid": grid, "num_warps": 1, "label": "w1"},
             {"code": text, "grid": grid, "num_warps": 2, "label": "w2"}],
            [x, y, out, tk.i32(self.n)], key=f"python test {os.getpid()}",
            repetitions=3, progress=lambda *step: seen.append(step))
        self.assertIn(best, (0, 1))
        self.assertTrue(seen)
        kernel.launch(grid, [x, y, out, tk.i32(self.n)], wait=True)
        self.check_sum(out)

    def test_errors_name_the_problem(self):
        with self.assertRaises(tk.TkError) as caught:
            self.device.kernel("tk.func @broken(")
        self.assertEqual(caught.exception.status, "TK_ERROR_INVALID_IR")
        self.assertIn("<source>:1:", str(caught.exception))
        # source_name is what the diagnostics call the source.
        with self.assertRaises(tk.TkError) as caught:
            self.device.kernel("tk.func @broken(", source_name="broken.tk")
        self.assertIn("broken.tk:1:", str(caught.exception))
        kernel = self.device.kernel(vector_add_text())
        x, y, out = self.buffers()
        with self.assertRaises(tk.TkError) as caught:
            kernel.launch((1,), [x, y, out, tk.f32(1.0)])
        self.assertEqual(caught.exception.status, "TK_ERROR_ARGUMENT_MISMATCH")
        with self.assertRaises(TypeError):
            kernel.launch((1,), [x, y, out, 3])  # a bare int: which width?
        # The cpu has no vendor streams to adopt.
        with self.assertRaises(tk.TkError) as caught:
            self.device.wrap_stream(1234)
        self.assertEqual(caught.exception.status, "TK_ERROR_UNSUPPORTED")
        self.assertIn("no native streams", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
