"""python -m fusedmoe.bench: the layer timed from PyTorch with peers side by side.

Same grid and method as the C++ `fusedmoe bench` (bench shapes of shapes/models.json, the
layer from routing ids on, CUDA-graph replays, L2 flushed before each, median; weights uniform
with variance 1/K, the bytes of the hit experts' checkpoint tensors plus x and out): fusedmoe's
op and, for bf16, a torch._grouped_mm layer (gather, grouped GEMM, SiLU-and-mul, grouped GEMM,
weighted sum) and a per-expert loop of torch matmuls (eager), with speedups. w4a16/w8a16: GPTQ
symmetric, group 128, bf16 scales (the C++ tool's w4a16/w8a16), through prepare_weights.
fp8_tensor / fp8_channel / fp8_block: e4m3 weights quantized from the same uniform draw with
per-expert, per-row or 128 x 128 block scales and dynamic per-tensor, per-token or 1 x 128
activation scales (the C++ tool's three FP8 precisions), through quant_config. No PyTorch peer
is timed for the quantized precisions. Routing: fusedmoe.route_topk on N(0, 1) logits with the model's
routing (DeepSeek-V3 with a 0.1 N(0, 1) correction bias), as the C++ tool draws them (another
generator: at decode the experts hit differ draw to draw, so compare TB/s there).
--compare CSV (the C++ tool's --csv of the same precision) prints its us and TB/s alongside.

  python -m fusedmoe.bench [--shapes-file shapes/models.json] [--shape A,B] [--m 1,16,256]
                           [--precision bf16|w4a16|w8a16|fp8_tensor|fp8_channel|fp8_block]
                           [--seconds 0.05] [--compare bench_bf16.csv]
"""
import argparse
import csv
import json
import os
import statistics
import time

import torch

import fusedmoe

_ROUTING = {  # bench shape -> (renormalize, scoring, n_group, topk_group, scaling, weight on input, bias)
    "mixtral_8x7b_tp1": (True, "softmax", 0, 0, 1.0, False, False),
    "qwen2_57b_a14b_tp4": (False, "softmax", 0, 0, 1.0, False, False),
    "qwen3_30b_a3b_tp1": (True, "softmax", 0, 0, 1.0, False, False),
    "deepseek_v3_tp8": (True, "sigmoid", 8, 4, 2.5, False, True),
    "llama4_scout_tp8": (False, "sigmoid", 0, 0, 1.0, True, False),
}


def _time_us(fn, flush, seconds=0.05, graph=True):
    """Median us of about `seconds` worth of runs (10..200), L2 flushed before each: the C++
    tool's count. It matters at compute-bound points: after tens of milliseconds at full load
    the H200 reaches its power cap and lowers the SM clock (docs/PERF.md, "Power cap")."""
    fn()
    torch.cuda.synchronize()
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        fn = g.replay
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    iters = int(min(max(seconds / max(time.perf_counter() - t0, 1e-6), 10), 200))
    times = []
    for i in range(iters):
        flush.fill_(i)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def _grouped_mm_layer(x, w1, w2, weights, ids):
    """torch._grouped_mm peer: rows sorted by expert, one grouped GEMM per projection."""
    m, k = ids.shape
    e = w1.shape[0]
    inter = w1.shape[1] // 2
    flat = ids.reshape(-1).long()
    order = flat.argsort(stable=True)
    counts = torch.zeros(e, dtype=torch.int32, device=x.device).scatter_add_(
        0, flat, torch.ones_like(flat, dtype=torch.int32))  # no host sync: graph capturable
    offs = counts.cumsum(0).to(torch.int32)
    rows = x[order // k]
    h = torch._grouped_mm(rows, w1.transpose(1, 2), offs=offs)
    a = torch.nn.functional.silu(h[:, :inter]) * h[:, inter:]
    y = torch._grouped_mm(a, w2.transpose(1, 2), offs=offs)
    y = y * weights.reshape(-1)[order, None].to(y.dtype)
    out = torch.zeros(m * k, x.shape[1], dtype=y.dtype, device=x.device)
    out[order] = y
    return out.view(m, k, -1).sum(1)


def _loop_layer(x, w1, w2, weights, ids, counts_host):
    """Per-expert loop of torch matmuls (expert counts known on the host; timed eagerly: the
    row selection has data-dependent shapes, which a CUDA graph cannot capture)."""
    m, k = ids.shape
    inter = w1.shape[1] // 2
    out = torch.zeros_like(x)
    for e, c in enumerate(counts_host):
        if c == 0:
            continue
        tok, slot = torch.where(ids == e)
        h = x[tok] @ w1[e].t()
        a = torch.nn.functional.silu(h[:, :inter]) * h[:, inter:]
        out.index_add_(0, tok, (a @ w2[e].t()) * weights[tok, slot, None].to(x.dtype))
    return out


def _uniform(shape, k):
    """Uniform weights with variance 1/K, as the C++ tool draws them."""
    half = (3.0 / k) ** 0.5
    return ((torch.rand(shape, device="cuda") * 2 - 1) * half).bfloat16()


_FP8 = {"fp8_tensor": "tensor", "fp8_channel": "channel", "fp8_block": "block"}
E4M3_MAX = 448.0


def fp8_projection(e, n, k, kind, device="cuda"):
    """e4m3 weights [E, N, K] quantized from uniform weights of variance 1/K, and their float32
    scales: [E] (tensor), [E, N] (channel) or [E, ceil(N / 128), ceil(K / 128)] (block), each
    amax / 448 over what it scales."""
    w = (torch.rand(e, n, k, device=device) * 2 - 1) * (3.0 / k) ** 0.5
    if kind == "tensor":
        s = w.abs().amax(dim=(1, 2)) / E4M3_MAX
        full = s[:, None, None]
    elif kind == "channel":
        s = w.abs().amax(dim=2) / E4M3_MAX
        full = s[:, :, None]
    else:
        nb, kb = -(-n // 128), -(-k // 128)
        padded = torch.nn.functional.pad(w.abs(), (0, kb * 128 - k, 0, nb * 128 - n))
        s = padded.view(e, nb, 128, kb, 128).amax(dim=(2, 4)) / E4M3_MAX
        full = s.repeat_interleave(128, 1)[:, :n].repeat_interleave(128, 2)[:, :, :k]
    s = torch.where(s > 0, s, torch.ones_like(s))
    q = (w / torch.where(full > 0, full, torch.ones_like(full))).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    return q, s.float().contiguous()


def _experts(precision, e, h, i):
    """(w1, w2, the op's extra keyword arguments, checkpoint bytes per expert) for a precision."""
    if precision == "bf16":
        w1, w2 = _uniform((e, 2 * i, h), h), _uniform((e, h, i), i)
        return w1, w2, {}, (w1.numel() + w2.numel()) * 2 / e
    if precision in _FP8:
        kind = _FP8[precision]
        q1, s1 = fp8_projection(e, 2 * i, h, kind)
        q2, s2 = fp8_projection(e, h, i, kind)
        qc = dict(format="fp8", w1_scale=s1, w2_scale=s2)
        if kind == "channel":
            qc["per_act_token_quant"] = True
        if kind == "block":
            qc["block_shape"] = [128, 128]
        nbytes = (q1.numel() + q2.numel() + 4 * (s1.numel() + s2.numel())) / e
        return q1, q2, {"quant_config": qc}, nbytes
    bits = {"w4a16": 4, "w8a16": 8}[precision]
    words = 32 // bits

    def projection(n, k):  # GPTQ qweight [E, K / words, N] int32 (any bits are codes), scales [E, K / 128, N]
        q = torch.randint(-2 ** 31, 2 ** 31, (e, k // words, n), dtype=torch.int64, device="cuda").to(torch.int32)
        s = ((12.0 / k) ** 0.5 / 2 ** bits * 2.0 ** (4 * torch.rand(e, k // 128, n, device="cuda") - 2)).bfloat16()
        return q, s

    q1, s1 = projection(2 * i, h)
    q2, s2 = projection(h, i)
    qc = dict(format="gptq", bits=bits, group_size=128, w1_scales=s1, w2_scales=s2)
    prepared = fusedmoe.prepare_weights(q1, q2, qc)
    nbytes = sum(t.numel() * t.element_size() for t in (q1, s1, q2, s2)) / e
    del q1, q2
    return None, None, {"prepared": prepared}, nbytes


def _cpp_rows(path, precision):
    if not path:
        return {}
    with open(path) as f:
        return {(r["shape"], int(r["m"])): r for r in csv.DictReader(f) if r["precision"].startswith(precision)}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes-file", default=os.environ.get("FUSEDMOE_SHAPES", "shapes/models.json"))
    p.add_argument("--shape", default="")
    p.add_argument("--m", default="", help="batch sizes (default: the shapes file's, up to 4096, as the C++ tool)")
    p.add_argument("--precision", default="bf16", choices=["bf16", "w4a16", "w8a16"] + list(_FP8))
    p.add_argument("--compare", default="", help="the C++ tool's CSV of the same precision")
    p.add_argument("--seconds", type=float, default=0.05, help="timed runs per point, as the C++ tool's --seconds")
    p.add_argument("--no-loop", action="store_true", help="skip the per-expert loop peer")
    args = p.parse_args(argv)
    with open(args.shapes_file) as f:
        spec = json.load(f)
    shapes = spec["bench_shapes"]
    batch_sizes = [int(v) for v in args.m.split(",")] if args.m else [m for m in spec["batch_sizes"] if m <= 4096]
    names = args.shape.split(",") if args.shape else list(shapes)
    cpp = _cpp_rows(args.compare, args.precision)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    print(f"fusedmoe.bench (PyTorch {torch.__version__}, {torch.cuda.get_device_name()}), {args.precision}, "
          "us per layer call (CUDA graph, L2 flushed, median)")
    print(f"{'shape':20s} {'m':>6s} {'fusedmoe':>10s} {'TB/s':>6s} {'grouped_mm':>11s} {'speedup':>8s} "
          f"{'loop':>10s} {'speedup':>8s}" + (f" {'c++ us':>9s} {'c++ TB/s':>8s} {'py/c++':>7s}" if cpp else ""))
    for name in names:
        s = shapes[name]
        e, h, i, k = s["E"], s["H"], s["I"], s["topk"]
        w1, w2, extra, expert_bytes = _experts(args.precision, e, h, i)
        renorm, scoring, n_group, topk_group, scaling, on_input, use_bias = _ROUTING.get(
            name, (True, "softmax", 0, 0, 1.0, False, False))
        # DeepSeek-V3's correction bias drawn as the C++ tool draws it: 0.1 N(0, 1) per expert.
        bias = 0.1 * torch.randn(e, device="cuda") if use_bias else None
        for m in batch_sizes:
            x = torch.randn(m, h, device="cuda").bfloat16()
            logits = torch.randn(m, e, device="cuda")
            weights, ids = fusedmoe.route_topk(logits, k, renormalize=renorm, scoring_func=scoring,
                                               num_expert_group=n_group, topk_group=topk_group,
                                               e_score_correction_bias=bias, routed_scaling_factor=scaling)
            ours = _time_us(lambda: fusedmoe.fused_experts(x, w1, w2, weights, ids, **extra,
                                                           apply_router_weight_on_input=on_input), flush,
                            args.seconds)
            hit = torch.unique(ids).numel()
            tbs = (hit * expert_bytes + 2.0 * m * h * 2) / ours / 1e6
            gmm_s, gmm_x = f"{'-':>11s}", f"{'-':>8s}"
            if args.precision == "bf16":
                try:
                    gmm = _time_us(lambda: _grouped_mm_layer(x, w1, w2, weights, ids), flush, args.seconds)
                    gmm_s, gmm_x = f"{gmm:11.1f}", f"{gmm / ours:7.2f}x"
                except RuntimeError as err:  # shapes torch._grouped_mm does not take
                    gmm_s = f"{'n/a':>11s}"
                    print(f"  grouped_mm: {str(err).splitlines()[0][:100]}")
            loop_s, loop_x = f"{'-':>10s}", f"{'-':>8s}"
            if not args.no_loop and args.precision == "bf16":
                counts = torch.bincount(ids.reshape(-1).long(), minlength=e).tolist()
                loop = _time_us(lambda: _loop_layer(x, w1, w2, weights, ids.long(), counts), flush, args.seconds,
                                graph=False)
                loop_s, loop_x = f"{loop:10.1f}", f"{loop / ours:7.2f}x"
            line = f"{name:20s} {m:6d} {ours:10.1f} {tbs:6.2f} {gmm_s} {gmm_x} {loop_s} {loop_x}"
            ref = cpp.get((name, m))
            if ref is not None:
                line += f" {float(ref['us']):9.1f} {float(ref['tb_s']):8.2f} {ours / float(ref['us']):6.3f}x"
            elif cpp:
                line += f" {'-':>9s} {'-':>8s} {'-':>7s}"
            print(line, flush=True)
        del w1, w2, extra
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
