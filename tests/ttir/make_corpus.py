"""Writes the TTIR corpus of issue 22 on a machine with an NVIDIA GPU, Triton 3.x
and PyTorch: for each kernel in the manner of Triton's tutorials, the TTIR
Triton wrote for it (`compiled.asm["ttir"]`), its metadata (num_warps,
num_stages, the argument list with constexprs) and its inputs and outputs on
fixed inputs. Every output is first checked against PyTorch's own answer
(dropout: against the rule that each element is dropped or scaled, since
tl.rand's stream is Triton's), so an importer is held to PyTorch.

    python3 tests/ttir/make_corpus.py OUTDIR [KERNEL...]

OUTDIR/<kernel>/: kernel.ttir, kernel.json (named as Triton names
the metadata beside a .ttir), one <arg>.bin per input buffer
(little-endian, row-major; outputs start as NaN, "initial": "nan") and
<arg>.expected.bin for each output.
"""
import json
import os
import sys

import torch
import triton
import triton.language as tl

OUT = sys.argv[1] if len(sys.argv) > 1 else "ttir-corpus"
# Names after OUTDIR: write only those cases (the others keep their files).
ONLY = set(sys.argv[2:])
torch.manual_seed(20261128)
DEV = "cuda"


@triton.jit
def vector_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.jit
def fused_softmax(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                  BLOCK: tl.constexpr):
    # Rows spread over the programs, as the tutorial's persistent version.
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        offs = tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(in_ptr + row * in_stride + offs, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_stride + offs, num / tl.sum(num, axis=0), mask=mask)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
           stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Grouped ordering of the programs, for L2 reuse.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    first_m = (pid // in_group) * GROUP_M
    group_size = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % in_group) % group_size)
    pid_n = (pid % in_group) // group_size
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def layernorm_forward(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, stride,
                      N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_ptr += row * stride
    y_ptr += row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        acc += x * x
    rstd = 1 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + cols, (x - mean) * rstd * w + b, mask=mask)


@triton.jit
def seeded_dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=mask)


@triton.jit
def transpose(in_ptr, out_ptr, M, N, stride_in, stride_out,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tile = tl.load(in_ptr + rows[:, None] * stride_in + cols[None, :], mask=mask)
    # out[col, row] = in[row, col]: the tile turned, stored by its new rows.
    tl.store(out_ptr + cols[:, None] * stride_out + rows[None, :], tl.trans(tile),
             mask=tl.trans(mask))


@triton.jit
def attention_forward(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, stride_h, stride_m,
                      N_CTX, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      HEAD_DIM: tl.constexpr):
    # FlashAttention's online softmax, one (head, row block) per program.
    start_m = tl.program_id(0)
    head = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    base = head * stride_h
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_ptr + base + cols[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, k) * qk_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + cols[:, None] * stride_m + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_m + offs_d[None, :],
             acc.to(tl.float16))


@triton.jit
def cumsum_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    # tl.cumsum: tt.scan over each row of integers.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0)
    tl.store(out_ptr + row * n_cols + cols, tl.cumsum(x, 0), mask=mask)


@triton.jit
def atomic_histogram(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    # tl.atomic_add with a mask: tt.atomic_rmw.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)


@triton.jit
def block_ptr_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                     stride_bk, stride_bn, stride_cm, stride_cn,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr):
    # Block pointers: tt.make_tensor_ptr, tt.advance, boundary checks.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a = tl.make_block_ptr(a_ptr, (M, K), (stride_am, stride_ak),
                          (pid_m * BLOCK_M, 0), (BLOCK_M, BLOCK_K), (1, 0))
    b = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn),
                          (0, pid_n * BLOCK_N), (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.dot(tl.load(a, boundary_check=(0, 1), padding_option="zero"),
                      tl.load(b, boundary_check=(0, 1), padding_option="zero"))
        a = tl.advance(a, (0, BLOCK_K))
        b = tl.advance(b, (BLOCK_K, 0))
    c = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, stride_cn),
                          (pid_m * BLOCK_M, pid_n * BLOCK_N), (BLOCK_M, BLOCK_N),
                          (1, 0))
    tl.store(c, acc.to(tl.float16), boundary_check=(0, 1))


@triton.jit
def argmax_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    # tl.argmax: a tt.reduce of two operands, value and index.
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols,
                other=-float("inf"))
    tl.store(out_ptr + row, tl.argmax(x, 0))


@triton.jit
def gelu_clamp(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Math of the elementwise kind: erf, sigmoid, clamp (tt.clampf), where.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    gelu = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    y = tl.where(x > 0, gelu, tl.sigmoid(x) * x)
    tl.store(out_ptr + offs, tl.clamp(y, -0.25, 2.0), mask=mask)


@triton.jit
def interleave_split(pairs_ptr, a_ptr, b_ptr, sums_ptr, woven_ptr,
                     BLOCK: tl.constexpr):
    # tt.split of (BLOCK, 2) pairs, tt.join and tt.reshape of tl.interleave.
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    pairs = tl.load(pairs_ptr + offs[:, None] * 2 + tl.arange(0, 2)[None, :])
    lo, hi = tl.split(pairs)
    tl.store(sums_ptr + offs, lo + 2 * hi)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    woven = tl.interleave(a, b)
    tl.store(woven_ptr + tl.program_id(0) * 2 * BLOCK + tl.arange(0, 2 * BLOCK),
             woven)


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def tutorial_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                    stride_bk, stride_bn, stride_cm, stride_cn,
                    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                    BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                    ACTIVATION: tl.constexpr):
    # Triton 3.6's matmul tutorial (03) as it stands: tl.assume on the
    # program ids and strides (llvm.intr.assume in the TTIR) and a fused
    # activation called as a function.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    tl.assume(pid_m >= 0)
    tl.assume(pid_n >= 0)
    tl.assume(stride_am > 0)
    tl.assume(stride_ak > 0)
    tl.assume(stride_bn > 0)
    tl.assume(stride_bk > 0)
    tl.assume(stride_cm > 0)
    tl.assume(stride_cn > 0)
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def descriptor_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Tensor descriptors made in the kernel (tl.make_tensor_descriptor:
    # tt.make_tensor_descriptor, tt.descriptor_load and _store), with edges
    # that the descriptor's bounds pad with zeros and clip on the store.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_M, BLOCK_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1],
                                       block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_M, BLOCK_N])
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(tl.float16))


@triton.jit
def _maybe_make_tensor_desc(desc_or_ptr, shape, strides, block_shape):
    if isinstance(desc_or_ptr, tl.tensor_descriptor):
        return desc_or_ptr
    else:
        return tl.make_tensor_descriptor(desc_or_ptr, shape, strides,
                                         block_shape)


@triton.jit
def descriptor_attention(Q, K, V, O, sm_scale, Z_H, N_CTX,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                         BLOCK_N: tl.constexpr):
    # The fused-attention tutorial's (06) forward in its descriptor form:
    # heads stacked along rows; q, k, v and o are tensor descriptors, made
    # here from pointers or on the host (TensorDescriptor, as the tutorial
    # passes them on Hopper); k transposed after its load.
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    y_dim = Z_H * N_CTX
    desc_q = _maybe_make_tensor_desc(Q, shape=[y_dim, HEAD_DIM],
                                     strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_M, HEAD_DIM])
    desc_k = _maybe_make_tensor_desc(K, shape=[y_dim, HEAD_DIM],
                                     strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_N, HEAD_DIM])
    desc_v = _maybe_make_tensor_desc(V, shape=[y_dim, HEAD_DIM],
                                     strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_N, HEAD_DIM])
    desc_o = _maybe_make_tensor_desc(O, shape=[y_dim, HEAD_DIM],
                                     strides=[HEAD_DIM, 1],
                                     block_shape=[BLOCK_M, HEAD_DIM])
    offset_y = off_hz * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([qo_offset_y, 0])
    for start_n in tl.range(0, N_CTX, BLOCK_N):
        k = desc_k.load([offset_y + start_n, 0]).T
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([offset_y + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
    acc = acc / l_i[:, None]
    desc_o.store([qo_offset_y, 0], acc.to(tl.float16))


def buffer(name, tensor, output=False):
    return {"name": name, "tensor": tensor, "output": output}


def tensor_descriptor(tensor, block_shape):
    """A TensorDescriptor over all of `tensor`, as a host makes one."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    return TensorDescriptor(tensor, list(tensor.shape), list(tensor.stride()),
                            block_shape)


def host_descriptor(name, tensor, block_shape, output=False):
    """A host descriptor argument over a 2-D row-major tensor."""
    return {"name": name, "tensor": tensor, "output": output,
            "descriptor": tensor_descriptor(tensor, block_shape)}


def scalar(name, value, kind):
    return {"name": name, "value": value, "kind": kind}


def write_case(name, kernel, grid, args, constexprs, options, check,
               reference="torch"):
    if ONLY and name not in ONLY:
        return
    launch_args = [a.get("descriptor", a["tensor"]) if "tensor" in a
                   else a["value"] for a in args]
    compiled = kernel[grid](*launch_args, **constexprs, **options)
    torch.cuda.synchronize()
    check()
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "kernel.ttir"), "w") as f:
        f.write(compiled.asm["ttir"])
    meta = {
        "kernel": kernel.__name__,
        "triton": triton.__version__,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "num_warps": compiled.metadata.num_warps,
        "num_stages": compiled.metadata.num_stages,
        "grid": list(grid) + [1] * (3 - len(grid)),
        "constexprs": constexprs,
        "reference": reference,
        "args": [],
    }
    for a in args:
        if "tensor" in a:
            t = a["tensor"]
            entry = {"name": a["name"], "kind": "buffer",
                     "dtype": str(t.dtype).replace("torch.", ""),
                     "shape": list(t.shape)}
            if a["output"] and torch.isnan(a["input"]).all():
                # Outputs start as NaN: a kernel that misses an element
                # cannot pass by the buffer's old contents.
                entry["initial"] = "nan"
            else:
                entry["file"] = a["name"] + ".bin"
                a["input"].cpu().contiguous().numpy().tofile(
                    os.path.join(folder, entry["file"]))
            if a["output"]:
                entry["expected"] = a["name"] + ".expected.bin"
                t.cpu().contiguous().numpy().tofile(
                    os.path.join(folder, entry["expected"]))
            meta["args"].append(entry)
            if "descriptor" in a:
                # A host descriptor reaches tk as its base, shape (i32) and
                # strides (i64), each passed even when 1.
                d = a["descriptor"]
                for i, extent in enumerate(d.shape):
                    meta["args"].append({"name": f"{a['name']}_shape{i}",
                                         "kind": "i32", "value": int(extent),
                                         "descriptor": a["name"]})
                for i, stride in enumerate(d.strides):
                    meta["args"].append({"name": f"{a['name']}_stride{i}",
                                         "kind": "i64", "value": int(stride),
                                         "descriptor": a["name"]})
        else:
            meta["args"].append({"name": a["name"], "kind": a["kind"],
                                 "value": a["value"]})
    with open(os.path.join(folder, "kernel.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"{name}: {meta['num_warps']} warps, {meta['num_stages']} stages, "
          f"{len(compiled.asm['ttir'])} bytes of TTIR", flush=True)


def prepared(args):
    # Keep each buffer's input before the launch writes outputs.
    for a in args:
        if "tensor" in a:
            a["input"] = a["tensor"].clone()
    return args


def matmul_args(A, B, C):
    """c = a @ b's arguments, as both matmul kernels take them."""
    (M, K), N = A.shape, B.shape[1]
    return prepared([buffer("a", A), buffer("b", B), buffer("c", C, True),
                     scalar("M", M, "i32"), scalar("N", N, "i32"), scalar("K", K, "i32"),
                     scalar("stride_am", A.stride(0), "i32"),
                     scalar("stride_ak", A.stride(1), "i32"),
                     scalar("stride_bk", B.stride(0), "i32"),
                     scalar("stride_bn", B.stride(1), "i32"),
                     scalar("stride_cm", C.stride(0), "i32"),
                     scalar("stride_cn", C.stride(1), "i32")])


def main():
    n = 5000
    x = torch.randn(n, device=DEV)
    y = torch.randn(n, device=DEV)
    out = torch.full((n,), float("nan"), device=DEV)
    args = prepared([buffer("x", x), buffer("y", y), buffer("out", out, True),
                     scalar("n", n, "i32")])
    write_case("vector_add", vector_add, (triton.cdiv(n, 1024),), args,
               {"BLOCK": 1024}, {},
               lambda: torch.testing.assert_close(out, x + y))

    dst = torch.full((n,), float("nan"), device=DEV)
    args = prepared([buffer("src", x), buffer("dst", dst, True), scalar("n", n, "i32")])
    write_case("copy", copy, (triton.cdiv(n, 512),), args, {"BLOCK": 512}, {},
               lambda: torch.testing.assert_close(dst, x))

    rows, cols = 96, 781
    a = torch.randn(rows, cols, device=DEV)
    s = torch.full_like(a, float("nan"))
    args = prepared([buffer("output", s, True), buffer("input", a),
                     scalar("input_row_stride", a.stride(0), "i32"),
                     scalar("output_row_stride", s.stride(0), "i32"),
                     scalar("n_rows", rows, "i32"), scalar("n_cols", cols, "i32")])
    write_case("fused_softmax", fused_softmax, (32,), args, {"BLOCK": 1024},
               {"num_warps": 4},
               lambda: torch.testing.assert_close(s, torch.softmax(a, 1)))

    for dtype, name, tol in ((torch.float16, "matmul_f16", 1e-2),
                             (torch.float32, "matmul_f32_tf32", 2e-2)):
        M, N, K = 192, 160, 224
        A = torch.randn(M, K, device=DEV, dtype=dtype)
        B = torch.randn(K, N, device=DEV, dtype=dtype)
        C = torch.full((M, N), float("nan"), device=DEV, dtype=dtype)
        meta = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}
        grid = (triton.cdiv(M, 64) * triton.cdiv(N, 64),)
        args = matmul_args(A, B, C)
        ref = (A.float() @ B.float()).to(dtype)
        write_case(name, matmul, grid, args, meta, {"num_warps": 4, "num_stages": 3},
                   lambda C=C, ref=ref, tol=tol: torch.testing.assert_close(
                       C.float(), ref.float(), atol=tol * K ** 0.5, rtol=tol))

    M, N = 48, 1000
    X = torch.randn(M, N, device=DEV)
    W = torch.rand(N, device=DEV)
    Bias = torch.randn(N, device=DEV)
    Y = torch.full_like(X, float("nan"))
    Mean = torch.full((M,), float("nan"), device=DEV)
    Rstd = torch.full((M,), float("nan"), device=DEV)
    args = prepared([buffer("x", X), buffer("y", Y, True), buffer("weight", W),
                     buffer("bias", Bias), buffer("mean", Mean, True),
                     buffer("rstd", Rstd, True), scalar("stride", X.stride(0), "i32"),
                     scalar("N", N, "i32"), scalar("eps", 1e-5, "f32")])
    write_case("layernorm_forward", layernorm_forward, (M,), args, {"BLOCK": 256},
               {"num_warps": 4},
               lambda: torch.testing.assert_close(
                   Y, torch.nn.functional.layer_norm(X, (N,), W, Bias, 1e-5),
                   atol=1e-4, rtol=1e-4))

    n, p, seed = 4000, 0.3, 1234
    xd = torch.randn(n, device=DEV)
    od = torch.full_like(xd, float("nan"))

    def check_dropout():
        kept = od != 0
        torch.testing.assert_close(od[kept], xd[kept] / (1 - p))
        share = kept.float().mean().item()
        assert abs(share - (1 - p)) < 0.05, share

    args = prepared([buffer("x", xd), buffer("output", od, True), scalar("n", n, "i32"),
                     scalar("p", p, "f32"), scalar("seed", seed, "i32")])
    write_case("seeded_dropout", seeded_dropout, (triton.cdiv(n, 1024),), args,
               {"BLOCK": 1024}, {}, check_dropout, reference="triton (tl.rand)")

    M, N = 300, 200
    T = torch.randn(M, N, device=DEV)
    TO = torch.full((N, M), float("nan"), device=DEV)
    args = prepared([buffer("input", T), buffer("output", TO, True),
                     scalar("M", M, "i32"), scalar("N", N, "i32"),
                     scalar("stride_in", T.stride(0), "i32"),
                     scalar("stride_out", TO.stride(0), "i32")])
    write_case("transpose", transpose, (triton.cdiv(M, 32), triton.cdiv(N, 32)), args,
               {"BLOCK_M": 32, "BLOCK_N": 32}, {"num_warps": 4},
               lambda: torch.testing.assert_close(TO, T.t()))

    H, N_CTX, D = 4, 256, 64
    q = torch.randn(H, N_CTX, D, device=DEV, dtype=torch.float16)
    k = torch.randn(H, N_CTX, D, device=DEV, dtype=torch.float16)
    v = torch.randn(H, N_CTX, D, device=DEV, dtype=torch.float16)
    o = torch.full_like(q, float("nan"))
    scale = D ** -0.5
    args = prepared([buffer("q", q), buffer("k", k), buffer("v", v), buffer("o", o, True),
                     scalar("sm_scale", scale, "f32"),
                     scalar("stride_h", q.stride(0), "i32"),
                     scalar("stride_m", q.stride(1), "i32"),
                     scalar("N_CTX", N_CTX, "i32")])
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale)
    write_case("attention_forward", attention_forward, (N_CTX // 64, H), args,
               {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD_DIM": D},
               {"num_warps": 4, "num_stages": 2},
               lambda: torch.testing.assert_close(o, ref, atol=2e-2, rtol=2e-2))

    torch.manual_seed(22)
    rows, cols = 37, 600
    xi = torch.randint(-1000, 1000, (rows, cols), device=DEV, dtype=torch.int32)
    ci = torch.full_like(xi, -1)
    args = prepared([buffer("x", xi), buffer("out", ci, True),
                     scalar("n_cols", cols, "i32")])
    write_case("cumsum_rows", cumsum_rows, (rows,), args, {"BLOCK": 1024}, {},
               lambda: torch.testing.assert_close(ci, torch.cumsum(xi, 1,
                                                                   dtype=torch.int32)))

    n = 10000
    values = torch.randint(0, 64, (n,), device=DEV, dtype=torch.int32)
    hist = torch.zeros(64, device=DEV, dtype=torch.int32)
    args = prepared([buffer("x", values), buffer("hist", hist, True),
                     scalar("n", n, "i32")])
    write_case("atomic_histogram", atomic_histogram, (triton.cdiv(n, 1024),), args,
               {"BLOCK": 1024}, {},
               lambda: torch.testing.assert_close(
                   hist, torch.bincount(values, minlength=64).to(torch.int32)))

    M, N, K = 100, 72, 80
    A = torch.randn(M, K, device=DEV, dtype=torch.float16)
    B = torch.randn(K, N, device=DEV, dtype=torch.float16)
    C = torch.full((M, N), float("nan"), device=DEV, dtype=torch.float16)
    args = matmul_args(A, B, C)
    ref = (A.float() @ B.float()).half()
    write_case("block_ptr_matmul", block_ptr_matmul,
               (triton.cdiv(M, 32), triton.cdiv(N, 32)), args,
               {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, {"num_warps": 4},
               lambda: torch.testing.assert_close(C.float(), ref.float(),
                                                  atol=1e-2 * K ** 0.5, rtol=1e-2))

    rows, cols = 50, 700
    xa = torch.randn(rows, cols, device=DEV)
    am = torch.full((rows,), -1, device=DEV, dtype=torch.int32)
    args = prepared([buffer("x", xa), buffer("out", am, True),
                     scalar("n_cols", cols, "i32")])
    write_case("argmax_rows", argmax_rows, (rows,), args, {"BLOCK": 1024}, {},
               lambda: torch.testing.assert_close(am, xa.argmax(1).to(torch.int32)))

    n = 3000
    xg = torch.randn(n, device=DEV) * 2
    og = torch.full_like(xg, float("nan"))
    gelu = 0.5 * xg * (1 + torch.erf(xg * 0.7071067811865476))
    want = torch.where(xg > 0, gelu, torch.sigmoid(xg) * xg).clamp(-0.25, 2.0)
    args = prepared([buffer("x", xg), buffer("out", og, True), scalar("n", n, "i32")])
    write_case("gelu_clamp", gelu_clamp, (triton.cdiv(n, 1024),), args,
               {"BLOCK": 1024}, {}, lambda: torch.testing.assert_close(og, want))

    n = 2048
    pairs = torch.randn(n, 2, device=DEV)
    wa = torch.randn(n, device=DEV)
    wb = torch.randn(n, device=DEV)
    sums = torch.full((n,), float("nan"), device=DEV)
    woven = torch.full((2 * n,), float("nan"), device=DEV)
    args = prepared([buffer("pairs", pairs), buffer("a", wa), buffer("b", wb),
                     buffer("sums", sums, True), buffer("woven", woven, True)])
    write_case("interleave_split", interleave_split, (n // 256,), args,
               {"BLOCK": 256}, {},
               lambda: (torch.testing.assert_close(sums, pairs[:, 0] + 2 * pairs[:, 1]),
                        torch.testing.assert_close(
                            woven, torch.stack([wa, wb], 1).flatten())))

    # Tensor descriptors made in the kernel take a global scratch allocator.
    triton.set_allocator(lambda size, align, stream:
                         torch.empty(size, dtype=torch.int8, device=DEV))

    M, N, K = 192, 160, 224
    A = torch.randn(M, K, device=DEV, dtype=torch.float16)
    B = torch.randn(K, N, device=DEV, dtype=torch.float16)
    C = torch.full((M, N), float("nan"), device=DEV, dtype=torch.float16)
    args = matmul_args(A, B, C)
    ref = torch.nn.functional.leaky_relu(A.float() @ B.float(), 0.01).half()
    write_case("tutorial_matmul", tutorial_matmul,
               (triton.cdiv(M, 64) * triton.cdiv(N, 64),), args,
               {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32,
                "GROUP_SIZE_M": 8, "ACTIVATION": "leaky_relu"},
               {"num_warps": 4, "num_stages": 4},
               lambda: torch.testing.assert_close(C.float(), ref.float(),
                                                  atol=1e-2 * K ** 0.5, rtol=1e-2))

    M, N, K = 100, 72, 80
    A = torch.randn(M, K, device=DEV, dtype=torch.float16)
    B = torch.randn(K, N, device=DEV, dtype=torch.float16)
    C = torch.full((M, N), float("nan"), device=DEV, dtype=torch.float16)
    args = prepared([buffer("a", A), buffer("b", B), buffer("c", C, True),
                     scalar("M", M, "i32"), scalar("N", N, "i32"),
                     scalar("K", K, "i32")])
    ref = (A.float() @ B.float()).half()
    write_case("descriptor_matmul", descriptor_matmul,
               (triton.cdiv(M, 64), triton.cdiv(N, 64)), args,
               {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
               {"num_warps": 4, "num_stages": 3},
               lambda: torch.testing.assert_close(C.float(), ref.float(),
                                                  atol=1e-2 * K ** 0.5, rtol=1e-2))

    Z_H, N_CTX, D = 4, 256, 64
    q = torch.randn(Z_H, N_CTX, D, device=DEV, dtype=torch.float16)
    k = torch.randn(Z_H, N_CTX, D, device=DEV, dtype=torch.float16)
    v = torch.randn(Z_H, N_CTX, D, device=DEV, dtype=torch.float16)
    o = torch.full_like(q, float("nan"))
    scale = D ** -0.5
    args = prepared([buffer("q", q), buffer("k", k), buffer("v", v),
                     buffer("o", o, True), scalar("sm_scale", scale, "f32"),
                     scalar("Z_H", Z_H, "i32"), scalar("N_CTX", N_CTX, "i32")])
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale)
    write_case("descriptor_attention", descriptor_attention, (N_CTX // 128, Z_H),
               args, {"HEAD_DIM": D, "BLOCK_M": 128, "BLOCK_N": 64},
               {"num_warps": 4, "num_stages": 3},
               lambda: torch.testing.assert_close(o, ref, atol=2e-2, rtol=2e-2))

    # The same kernel as the tutorial calls it on Hopper: host descriptors.
    o2 = torch.full_like(q, float("nan"))
    rows = lambda t: t.view(Z_H * N_CTX, D)  # noqa: E731
    args = prepared([host_descriptor("desc_q", rows(q), [128, D]),
                     host_descriptor("desc_k", rows(k), [64, D]),
                     host_descriptor("desc_v", rows(v), [64, D]),
                     host_descriptor("desc_o", rows(o2), [128, D], True),
                     scalar("sm_scale", scale, "f32"),
                     scalar("Z_H", Z_H, "i32"), scalar("N_CTX", N_CTX, "i32")])
    write_case("host_descriptor_attention", descriptor_attention,
               (N_CTX // 128, Z_H), args,
               {"HEAD_DIM": D, "BLOCK_M": 128, "BLOCK_N": 64},
               {"num_warps": 4, "num_stages": 3},
               lambda: torch.testing.assert_close(o2, ref, atol=2e-2, rtol=2e-2))


if __name__ == "__main__":
    main()
