//===- softmax_ceiling.cu - softmax at 16384 columns against its ceiling --===//
//
// Where softmax over 16384 fp32 columns stands on an NVIDIA GPU: tk's kernel
// (cubins made by softmax-ceiling.sh, launched raw), hand-written
// CUDA softmaxes (one row per block, and a row split over a thread-block
// cluster with DSMEM exchanges of its maximum and sum), and a
// device-to-device copy of the same bytes. Every variant runs in one
// process, interleaved round by round, each run after a kernel that flushes
// L2 (as the bench does), timed with CUDA events; the figure is the
// median. Prints one JSON object: GB/s (bytes read + written) per variant
// and row count. Each variant's output is checked against the first's.
//
//   nvcc -O3 -arch=sm_90a softmax_ceiling.cu -lcuda -o softmax_ceiling
//   ./softmax_ceiling NAME=tk.cubin:THREADS...
//
//===----------------------------------------------------------------------===//

#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace cg = cooperative_groups;

namespace {

constexpr int kCols = 16384;

void check(cudaError_t error, const char *what) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "softmax_ceiling: %s: %s\n", what,
                 cudaGetErrorString(error));
    std::exit(1);
  }
}

__device__ float warpReduce(float value, bool max) {
  for (int offset = 16; offset; offset >>= 1) {
    float other = __shfl_xor_sync(~0u, value, offset);
    value = max ? fmaxf(value, other) : value + other;
  }
  return value;
}

/// The maximum (or sum) of `value` over the block's kThreads threads.
template <int kThreads> __device__ float blockReduce(float value, bool max) {
  __shared__ float partials[32];
  value = warpReduce(value, max);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0)
    partials[warp] = value;
  __syncthreads();
  value = lane < kThreads / 32 ? partials[lane] : (max ? -INFINITY : 0.f);
  value = warpReduce(value, max);
  __syncthreads();
  return value;
}

/// The maximum (or sum) over the kCluster blocks of a cluster, each holding
/// its own `value`, through distributed shared memory.
template <int kCluster>
__device__ float clusterReduce(float value, bool max, float *slot) {
  if constexpr (kCluster == 1)
    return value;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0)
    *slot = value;
  cluster.sync();
  // Every rank's slot, this block's own among them.
  value = max ? -INFINITY : 0.f;
  for (int rank = 0; rank < kCluster; ++rank) {
    float other = *cluster.map_shared_rank(slot, rank);
    value = max ? fmaxf(value, other) : value + other;
  }
  return value;
}

/// Softmax of one row of kCols floats over a cluster of kCluster blocks of
/// kThreads threads, each block holding its share of the row in registers
/// (16-byte loads and stores). kPrograms is the occupancy hint.
template <int kCluster, int kThreads, int kPrograms>
__global__ void __launch_bounds__(kThreads, kPrograms)
    softmaxRows(const float *__restrict__ in, float *__restrict__ out) {
  constexpr int kShare = kCols / kCluster, kVectors = kShare / kThreads / 4;
  __shared__ float clusterSlots[2];
  int rank = kCluster > 1 ? int(cg::this_cluster().block_rank()) : 0;
  size_t offset = size_t(blockIdx.x / kCluster) * kCols + rank * kShare;
  const float4 *src = reinterpret_cast<const float4 *>(in + offset);
  float4 *dst = reinterpret_cast<float4 *>(out + offset);
  float4 x[kVectors];
#pragma unroll
  for (int i = 0; i < kVectors; ++i)
    x[i] = src[i * kThreads + threadIdx.x];
  float rowMax = -INFINITY;
#pragma unroll
  for (int i = 0; i < kVectors; ++i)
    rowMax = fmaxf(fmaxf(rowMax, fmaxf(x[i].x, x[i].y)), fmaxf(x[i].z, x[i].w));
  rowMax = clusterReduce<kCluster>(blockReduce<kThreads>(rowMax, true), true,
                                   &clusterSlots[0]);
  const float log2e = 1.4426950408889634f;
  float sum = 0;
#pragma unroll
  for (int i = 0; i < kVectors; ++i) {
    x[i].x = exp2f((x[i].x - rowMax) * log2e);
    x[i].y = exp2f((x[i].y - rowMax) * log2e);
    x[i].z = exp2f((x[i].z - rowMax) * log2e);
    x[i].w = exp2f((x[i].w - rowMax) * log2e);
    sum += (x[i].x + x[i].y) + (x[i].z + x[i].w);
  }
  sum = clusterReduce<kCluster>(blockReduce<kThreads>(sum, false), false,
                                &clusterSlots[1]);
  float inverse = 1.f / sum;
#pragma unroll
  for (int i = 0; i < kVectors; ++i)
    dst[i * kThreads + threadIdx.x] = make_float4(
        x[i].x * inverse, x[i].y * inverse, x[i].z * inverse, x[i].w * inverse);
  // A block's slots must outlive its peers' reads of them.
  if constexpr (kCluster > 1)
    cg::this_cluster().sync();
}

using Launch = std::function<cudaError_t(const float *, float *, int)>;

template <int kCluster, int kThreads, int kPrograms> Launch handWritten() {
  return [](const float *in, float *out, int rows) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(rows * kCluster);
    config.blockDim = dim3(kThreads);
    cudaLaunchAttribute cluster;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = kCluster;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(
        &config, softmaxRows<kCluster, kThreads, kPrograms>, in, out);
  };
}

/// A tk softmax cubin (entry `softmax`, arguments input, output, the two row
/// strides and the column count), one row per program of `threads`.
Launch tkCubin(const std::string &path, int threads) {
  CUmodule module;
  CUfunction function;
  if (cuModuleLoad(&module, path.c_str()) != CUDA_SUCCESS ||
      cuModuleGetFunction(&function, module, "softmax") != CUDA_SUCCESS) {
    std::fprintf(stderr, "softmax_ceiling: cannot load %s\n", path.c_str());
    std::exit(1);
  }
  return [function, threads](const float *in, float *out, int rows) {
    int cols = kCols;
    void *args[] = {&in, &out, &cols, &cols, &cols};
    // 1 KiB of dynamic shared memory covers the reductions' partials.
    CUresult result = cuLaunchKernel(function, rows, 1, 1, threads, 1, 1, 1024,
                                     nullptr, args, nullptr);
    return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorLaunchFailure;
  };
}

__global__ void flushL2(float *data, size_t count) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < count)
    data[i] += 1.f;
}

struct Variant {
  std::string name;
  Launch launch; // null: the device-to-device copy
};

} // namespace

int main(int argc, char **argv) {
  check(cudaFree(nullptr), "cudaFree");
  std::vector<Variant> variants = {
      {"cuda 1 block a row, 1024 threads", handWritten<1, 1024, 1>()},
      {"cuda 1 block a row, 1024 threads, 2 a SM", handWritten<1, 1024, 2>()},
      {"cuda 1 block a row, 512 threads, 2 a SM", handWritten<1, 512, 2>()},
      {"cuda cluster of 2, 512 threads", handWritten<2, 512, 2>()},
      {"cuda cluster of 4, 256 threads", handWritten<4, 256, 4>()},
      {"cuda cluster of 8, 256 threads", handWritten<8, 256, 8>()},
      {"d2d copy", nullptr}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('='), colon = arg.rfind(':');
    if (eq == std::string::npos || colon == std::string::npos || colon < eq) {
      std::fprintf(stderr, "usage: softmax_ceiling [NAME=CUBIN:THREADS]...\n");
      return 2;
    }
    variants.push_back(
        {arg.substr(0, eq), tkCubin(arg.substr(eq + 1, colon - eq - 1),
                                    std::atoi(arg.c_str() + colon + 1))});
  }
  const size_t flushCount = size_t(64) << 20; // 256 MB
  float *flush;
  check(cudaMalloc(&flush, flushCount * 4), "cudaMalloc");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  cudaDeviceProp props;
  check(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
  std::printf("{\n  \"device\": \"%s\",\n  \"cols\": %d", props.name, kCols);
  for (int rows : {8192, 16384}) {
    size_t count = size_t(rows) * kCols, bytes = count * 4;
    float *in, *out, *reference;
    check(cudaMalloc(&in, bytes), "cudaMalloc");
    check(cudaMalloc(&out, bytes), "cudaMalloc");
    check(cudaMalloc(&reference, bytes), "cudaMalloc");
    std::vector<float> host(count), result(count), expected(count);
    for (size_t i = 0; i < count; ++i)
      host[i] = float((i * 2654435761u) % 1000) / 250.f - 2.f;
    check(cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice), "copy");
    check(variants[0].launch(in, reference, rows), "launch");
    check(cudaMemcpy(expected.data(), reference, bytes, cudaMemcpyDeviceToHost),
          "copy");
    for (const Variant &variant : variants) {
      if (!variant.launch)
        continue;
      check(cudaMemset(out, 0, bytes), "cudaMemset");
      check(variant.launch(in, out, rows), variant.name.c_str());
      check(cudaMemcpy(result.data(), out, bytes, cudaMemcpyDeviceToHost),
            "copy");
      for (size_t i = 0; i < count; ++i)
        if (std::fabs(result[i] - expected[i]) > 1e-6f) {
          std::fprintf(stderr,
                       "softmax_ceiling: %s: element %zu is %g, not %g\n",
                       variant.name.c_str(), i, result[i], expected[i]);
          return 1;
        }
    }
    // Round r visits the variants in turn from variant r: the clock's drift
    // falls on all of them alike. Round 0 is the warm-up.
    const int rounds = 41;
    std::vector<std::vector<float>> times(variants.size());
    for (int round = 0; round < rounds; ++round)
      for (size_t step = 0; step < variants.size(); ++step) {
        size_t v = (step + round) % variants.size();
        flushL2<<<flushCount / 1024, 1024>>>(flush, flushCount);
        check(cudaEventRecord(start), "cudaEventRecord");
        if (variants[v].launch)
          check(variants[v].launch(in, out, rows), variants[v].name.c_str());
        else
          check(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice),
                "cudaMemcpyAsync");
        check(cudaEventRecord(stop), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        if (round > 0)
          times[v].push_back(ms);
      }
    std::printf(",\n  \"rows %d\": {", rows);
    for (size_t v = 0; v < variants.size(); ++v) {
      std::vector<float> &t = times[v];
      std::sort(t.begin(), t.end());
      double gbs = 2.0 * bytes / (t[t.size() / 2] * 1e-3) / 1e9;
      std::printf("%s\n    \"%s\": %.1f", v ? "," : "",
                  variants[v].name.c_str(), gbs);
    }
    std::printf("\n  }");
    check(cudaFree(in), "cudaFree");
    check(cudaFree(out), "cudaFree");
    check(cudaFree(reference), "cudaFree");
  }
  std::printf("\n}\n");
  return 0;
}
