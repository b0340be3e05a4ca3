"""The peers' kernels: Triton versions of the kernels tk's benchmark times
(tests/bench/BenchKernels.cpp). The CUDA benchmark times them beside tk's
(backends/cuda/test/bench/cuda_bench.py); the ROCm comparison compiles them
for AMD targets (backends/rocm/test/triton_compare.py).
"""

import triton
import triton.language as tl


@triton.jit
def triton_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def triton_softmax(out_ptr, in_ptr, in_stride, out_stride, n_cols,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * out_stride + offs, num / tl.sum(num, axis=0),
             mask=mask)


@triton.jit
def grouped_tile(M, N, BM: tl.constexpr, BN: tl.constexpr,
                 GROUP: tl.constexpr):
    """This program's tile of c, GROUP rows of tiles walked column by
    column (tk's seed matmul's order)."""
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    group = pid // (GROUP * tiles_n)
    first_m = group * GROUP
    size_m = min(tiles_m - first_m, GROUP)
    pid_m = first_m + ((pid % (GROUP * tiles_n)) % size_m)
    pid_n = (pid % (GROUP * tiles_n)) // size_m
    return pid_m, pid_n


@triton.jit
def triton_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk,
                  stride_cm, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr, GROUP: tl.constexpr):
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0),
                     tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0), acc)
        a += BK
        b += BK * stride_bk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :],
             acc.to(c_ptr.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def triton_scaled_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bn,
                         stride_cm, scale_a, scale_b, BM: tl.constexpr,
                         BN: tl.constexpr, BK: tl.constexpr,
                         GROUP: tl.constexpr, ROW_SCALES: tl.constexpr):
    """tk's scaled fp8 matmuls (BenchKind::ScaledMatmul, RowScaledMatmul):
    b stored as N rows of K, c = a b scale_a scale_b, the scales f32
    tensors as torch._scaled_mm takes them: one element each, or with
    ROW_SCALES M (a's rows) and N (b's columns)."""
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b = b_ptr + rn[None, :] * stride_bn + rk[:, None]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        acc = tl.dot(tl.load(a, mask=rk[None, :] < K - k * BK, other=0.0),
                     tl.load(b, mask=rk[:, None] < K - k * BK, other=0.0), acc)
        a += BK
        b += BK
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    if ROW_SCALES:
        acc = acc * (tl.load(scale_a + cm, mask=cm < M, other=1.0)[:, None] *
                     tl.load(scale_b + cn, mask=cn < N, other=1.0)[None, :])
    else:
        acc = acc * (tl.load(scale_a) * tl.load(scale_b))
    tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :],
             acc.to(c_ptr.dtype.element_ty),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def attention_trips(acc, l_i, m_i, q, K, V, head, rm, N, qk_scale, lo, hi,
                    D: tl.constexpr, BN: tl.constexpr,
                    CAUSAL_MASK: tl.constexpr):
    """The online softmax over the keys [lo, hi), BN at a time; keys past N
    (and with CAUSAL_MASK those past each row) score -inf."""
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    for s in range(lo, hi, BN):
        kv = s + rn
        k = tl.load(K + head + kv[None, :] * D + rd[:, None],
                    mask=kv[None, :] < N, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        visible = kv[None, :] < N
        if CAUSAL_MASK:
            visible = visible & (kv[None, :] <= rm[:, None])
        qk = tl.where(visible, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + head + kv[:, None] * D + rd[None, :],
                    mask=kv[:, None] < N, other=0.0)
        acc = tl.dot(p.to(V.dtype.element_ty), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def triton_attention(Q, K, V, O, N, scale, D: tl.constexpr, BM: tl.constexpr,
                     BN: tl.constexpr, CAUSAL: tl.constexpr = False):
    """FlashAttention-2 forward; CAUSAL: query i over keys 0..i, the keys
    before the block's first row unmasked, the diagonal's masked."""
    start = tl.program_id(0) * BM
    head = tl.program_id(1).to(tl.int64) * N * D
    rm = start + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(Q + head + rm[:, None] * D + rd[None, :], mask=rm[:, None] < N,
                other=0.0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    qk_scale = scale * 1.4426950408889634
    if CAUSAL:
        diagonal = (start // BN) * BN
        acc, l_i, m_i = attention_trips(acc, l_i, m_i, q, K, V, head, rm, N,
                                        qk_scale, 0, diagonal, D, BN, False)
        acc, l_i, m_i = attention_trips(acc, l_i, m_i, q, K, V, head, rm, N,
                                        qk_scale, diagonal,
                                        tl.minimum(start + BM, N), D, BN, True)
    else:
        acc, l_i, m_i = attention_trips(acc, l_i, m_i, q, K, V, head, rm, N,
                                        qk_scale, 0, N, D, BN, False)
    tl.store(O + head + rm[:, None] * D + rd[None, :],
             (acc / l_i[:, None]).to(O.dtype.element_ty), mask=rm[:, None] < N)
