"""python -m fusedmoe.bench: the layer timed from PyTorch with peers side by side.

Same grid and method as the C++ `fusedmoe bench` (bench shapes of shapes/models.json, the
layer from routing ids on, CUDA-graph replays, L2 flushed before each, median): fusedmoe's op,
a torch._grouped_mm layer (gather, grouped GEMM, SiLU-and-mul, grouped GEMM, weighted sum) and
a per-expert loop of torch matmuls (eager), with speedups. Routing: fusedmoe.route_topk on
N(0, 1) logits with the model's routing (DeepSeek-V3 with a 0.1 N(0, 1) correction bias), as
the C++ tool draws them (other generators: the experts hit differ draw to draw).

  python -m fusedmoe.bench [--shapes-file shapes/models.json] [--shape A,B] [--m 1,16,256]
"""
import argparse
import json
import os
import statistics

import torch

import fusedmoe

_ROUTING = {  # bench shape -> (renormalize, scoring, n_group, topk_group, scaling, weight on input, bias)
    "mixtral_8x7b_tp1": (True, "softmax", 0, 0, 1.0, False, False),
    "qwen2_57b_a14b_tp4": (False, "softmax", 0, 0, 1.0, False, False),
    "qwen3_30b_a3b_tp1": (True, "softmax", 0, 0, 1.0, False, False),
    "deepseek_v3_tp8": (True, "sigmoid", 8, 4, 2.5, False, True),
    "llama4_scout_tp8": (False, "sigmoid", 0, 0, 1.0, True, False),
}


def _time_us(fn, flush, iters=30, graph=True):
    fn()
    torch.cuda.synchronize()
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        fn = g.replay
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes-file", default=os.environ.get("FUSEDMOE_SHAPES", "shapes/models.json"))
    p.add_argument("--shape", default="")
    p.add_argument("--m", default="1,16,64,256,1024,4096")
    p.add_argument("--no-loop", action="store_true", help="skip the per-expert loop peer")
    args = p.parse_args(argv)
    with open(args.shapes_file) as f:
        shapes = json.load(f)["bench_shapes"]
    names = args.shape.split(",") if args.shape else list(shapes)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    print(f"fusedmoe.bench (PyTorch {torch.__version__}, {torch.cuda.get_device_name()}), bf16, "
          "us per layer call (CUDA graph, L2 flushed, median)")
    print(f"{'shape':20s} {'m':>6s} {'fusedmoe':>10s} {'grouped_mm':>11s} {'speedup':>8s} {'loop':>10s} {'speedup':>8s}")
    for name in names:
        s = shapes[name]
        e, h, i, k = s["E"], s["H"], s["I"], s["topk"]
        w1 = (torch.randn(e, 2 * i, h, device="cuda") / h ** 0.5).bfloat16()
        w2 = (torch.randn(e, h, i, device="cuda") / i ** 0.5).bfloat16()
        renorm, scoring, n_group, topk_group, scaling, on_input, use_bias = _ROUTING.get(
            name, (True, "softmax", 0, 0, 1.0, False, False))
        # DeepSeek-V3's correction bias drawn as the C++ tool draws it: 0.1 N(0, 1) per expert.
        bias = 0.1 * torch.randn(e, device="cuda") if use_bias else None
        for m in (int(v) for v in args.m.split(",")):
            x = torch.randn(m, h, device="cuda").bfloat16()
            logits = torch.randn(m, e, device="cuda")
            weights, ids = fusedmoe.route_topk(logits, k, renormalize=renorm, scoring_func=scoring,
                                               num_expert_group=n_group, topk_group=topk_group,
                                               e_score_correction_bias=bias, routed_scaling_factor=scaling)
            ours = _time_us(lambda: fusedmoe.fused_experts(x, w1, w2, weights, ids,
                                                           apply_router_weight_on_input=on_input), flush)
            try:
                gmm = _time_us(lambda: _grouped_mm_layer(x, w1, w2, weights, ids), flush)
                gmm_s, gmm_x = f"{gmm:11.1f}", f"{gmm / ours:7.2f}x"
            except RuntimeError as err:  # shapes torch._grouped_mm does not take
                gmm_s, gmm_x = f"{'n/a':>11s}", f"{'-':>8s}"
                print(f"  grouped_mm: {str(err).splitlines()[0][:100]}")
            loop_s, loop_x = f"{'-':>10s}", f"{'-':>8s}"
            if not args.no_loop:
                counts = torch.bincount(ids.reshape(-1).long(), minlength=e).tolist()
                loop = _time_us(lambda: _loop_layer(x, w1, w2, weights, ids.long(), counts), flush, iters=10,
                                graph=False)
                loop_s, loop_x = f"{loop:10.1f}", f"{loop / ours:7.2f}x"
            print(f"{name:20s} {m:6d} {ours:10.1f} {gmm_s} {gmm_x} {loop_s} {loop_x}", flush=True)
        del w1, w2
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
