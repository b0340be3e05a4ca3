#!/usr/bin/env python3
"""tk/peer ratios from tk-bench-cuda's JSON, .device/triton_reference.py's
and tests/bench/cublas_reference.py's, all taken in the same command on the
same GPU. Prints one JSON object with each figure, the peers' figure and the
ratio (above 1: tk is faster), and the issue's target for it.

    cuda_ratios.py tk_cuda.json triton_reference.json [cublas_reference.json]
"""
import json
import sys


def ratio(tk, peer):
    return None if tk is None or not peer else tk / peer


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: cuda_ratios.py tk_cuda.json triton_reference.json "
                 "[cublas_reference.json]")
    tk = json.load(open(sys.argv[1]))
    ref = json.load(open(sys.argv[2]))
    cublas = json.load(open(sys.argv[3])) if len(sys.argv) == 4 else {}
    if cublas and cublas.get("device") != tk.get("device"):
        sys.exit(f"different devices: tk {tk.get('device')}, "
                 f"cuBLAS reference {cublas.get('device')}")
    if tk.get("device") != ref.get("device"):
        sys.exit(f"different devices: tk {tk.get('device')}, "
                 f"reference {ref.get('device')}")
    out = {"device": tk["device"], "commit": tk.get("commit", "unknown"),
           "figures": []}

    def add(name, unit, tk_value, peer_name, peer_value, target):
        out["figures"].append({
            "name": name, "unit": unit, "tk": tk_value, "peer": peer_name,
            "peer_value": peer_value, "ratio": ratio(tk_value, peer_value),
            "target": target})

    va = tk.get("vector_add_fp32_2^28", {}).get("GBs")
    rva = ref.get("vector_add_fp32_2^28", {})
    add("vector_add fp32 2^28", "GB/s", va, "triton", rva.get("triton_GBs"),
        ">= 0.98")
    add("vector_add fp32 2^28", "GB/s", va, "d2d copy",
        rva.get("d2d_copy_GBs"), None)
    for shape, fig in tk.get("softmax_fp32", {}).items():
        peer = ref.get("softmax_fp32", {}).get(shape, {})
        add(f"softmax fp32 {shape}", "GB/s", fig["GBs"], "triton",
            peer.get("triton_GBs"), ">= 1.0")
        add(f"softmax fp32 {shape}", "GB/s", fig["GBs"], "torch",
            peer.get("torch_GBs"), None)
        # The memory ceiling: tk's bench copies the same bytes device to
        # device, timed the same way, in its own run.
        add(f"softmax fp32 {shape}", "GB/s", fig["GBs"], "d2d copy (tk bench)",
            fig.get("d2d_copy_GBs"), None)
    matmuls = dict(tk.get("matmul", {}))
    matmuls.update(tk.get("matmul_bf16", {}))
    for shape, fig in matmuls.items():
        peer = ref.get("matmul", {}).get(shape, {})
        extra = cublas.get("matmul", {}).get(shape, {})
        if peer.get("triton_TFLOPs"):
            add(f"matmul {shape}", "TFLOP/s", fig["TFLOPs"], "triton",
                peer.get("triton_TFLOPs"),
                ">= 0.9" if "8192^3" in shape else None)
        add(f"matmul {shape}", "TFLOP/s", fig["TFLOPs"], "cublas",
            peer.get("cublas_TFLOPs") or extra.get("cublas_TFLOPs"),
            ">= 1.0 (aim)")
    for shape, fig in tk.get("attention_fwd_fp16", {}).items():
        peer = ref.get("attention_fwd_fp16", {}).get(shape, {})
        add(f"attention fwd fp16 {shape}", "TFLOP/s", fig["TFLOPs"], "sdpa",
            peer.get("sdpa_TFLOPs"), ">= 0.8")
        add(f"attention fwd fp16 {shape}", "TFLOP/s", fig["TFLOPs"],
            "triton fa2", peer.get("triton_fa2_TFLOPs"), None)
    launch = tk.get("launch_us_per_call", {})
    if launch:
        raw = launch.get("raw_cuLaunchKernel")
        # Lower is better for time: the ratio is raw / tk (above 1: faster).
        out["figures"].append({
            "name": "launch host us per call", "unit": "us",
            "tk": launch.get("tk_launch_async"), "peer": "raw cuLaunchKernel",
            "peer_value": raw,
            "overhead_ratio": ratio(launch.get("tk_launch_async"), raw),
            "target": "overhead_ratio <= 1.25"})
        out["figures"].append({
            "name": "launch host us per call", "unit": "us",
            "tk": launch.get("tk_launch_async"), "peer": "triton python",
            "peer_value": ref.get("launch_us_per_call", {}).get(
                "triton_python"),
            "overhead_ratio": ratio(
                launch.get("tk_launch_async"),
                ref.get("launch_us_per_call", {}).get("triton_python")),
            "target": None})
    out["not_measured"] = [
        "matmul bf16 and decode against Triton (the Triton reference times "
        "fp16 4096^3 and 8192^3 only; cuBLAS is the peer there)"]
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
