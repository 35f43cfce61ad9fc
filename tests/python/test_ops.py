"""torch.ops.fusedmoe against the float64 PyTorch reference: the five bench shapes on both
kernel paths, routing inside the op, route_topk, argument errors, torch.compile and CUDA
graph replay with new routing."""
import pytest
import torch

from reference import assert_within, experts_ref, route_ref

# Declared once per precision (as reference/include/fusedmoe_ref/tolerance.h): every element
# finite, relative L2 and max |error| over the reference's RMS.
TOLERANCE = {torch.bfloat16: (1.0e-2, 8.0e-2), torch.float16: (2.5e-3, 2.0e-2)}

ROUTING = {  # bench shape -> routing of its model
    "mixtral_8x7b_tp1": dict(renormalize=True),
    "qwen2_57b_a14b_tp4": dict(renormalize=False),
    "qwen3_30b_a3b_tp1": dict(renormalize=True),
    "deepseek_v3_tp8": dict(renormalize=True, scoring_func="sigmoid", num_expert_group=8, topk_group=4,
                            routed_scaling_factor=2.5, bias=True),
    "llama4_scout_tp8": dict(scoring_func="sigmoid", apply_router_weight_on_input=True),
}


def assert_close(got, want, dtype):
    assert_within(got, want, TOLERANCE[dtype])


_WEIGHTS = {}


def weights(e, h, i, dtype, seed=0):
    key = (e, h, i, dtype)
    if key not in _WEIGHTS:
        _WEIGHTS.clear()
        g = torch.Generator(device="cuda").manual_seed(seed)
        w1 = (torch.randn(e, 2 * i, h, device="cuda", generator=g) / h ** 0.5).to(dtype)
        w2 = (torch.randn(e, h, i, device="cuda", generator=g) / i ** 0.5).to(dtype)
        _WEIGHTS[key] = (w1, w2)
    return _WEIGHTS[key]


def routing_for(shape_name, spec, m, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    logits = torch.randn(m, spec["E"], device="cuda", generator=g)
    r = dict(ROUTING[shape_name])
    bias = torch.randn(spec["E"], device="cuda", generator=g) * 0.1 if r.pop("bias", False) else None
    on_input = r.pop("apply_router_weight_on_input", False)
    w, ids = route_ref(logits, spec["topk"], r.get("renormalize", False), r.get("scoring_func", "softmax"),
                       r.get("num_expert_group", 0), r.get("topk_group", 0), bias, r.get("routed_scaling_factor", 1.0))
    return logits, bias, r, on_input, w, ids


@pytest.mark.parametrize("path", ["small_m", "grouped_gemm", "grouped_swapped", "auto"])
@pytest.mark.parametrize("shape_name", list(ROUTING))
def test_fused_experts_bench_shapes(bench_shapes, shape_name, path):
    import fusedmoe
    spec = bench_shapes[shape_name]
    w1, w2 = weights(spec["E"], spec["H"], spec["I"], torch.bfloat16)
    for m in (1, 7, 64, 300):
        g = torch.Generator(device="cuda").manual_seed(m)
        x = torch.randn(m, spec["H"], device="cuda", generator=g).to(torch.bfloat16)
        _, _, _, on_input, w, ids = routing_for(shape_name, spec, m, m)
        got = fusedmoe.fused_experts(x, w1, w2, w, ids, apply_router_weight_on_input=on_input, path=path)
        want = experts_ref(x, w1, w2, w, ids, apply_router_weight_on_input=on_input)
        assert_close(got, want, torch.bfloat16)


@pytest.mark.parametrize("path", ["small_m", "grouped_gemm", "grouped_swapped"])
@pytest.mark.parametrize("shape_name", ["qwen3_30b_a3b_tp1", "llama4_scout_tp8"])
def test_prepared_dense_weights(bench_shapes, shape_name, path):
    """prepare_weights(w1, w2): w1's gate and up rows interleaved in the storage, the activation
    in GEMM1's epilogue on the grouped paths."""
    import fusedmoe
    spec = bench_shapes[shape_name]
    for dtype in (torch.bfloat16, torch.float16):
        w1, w2 = weights(spec["E"], spec["H"], spec["I"], dtype)
        prepared = fusedmoe.prepare_weights(w1, w2)
        assert prepared.storage is not None and prepared.w1 is None
        for m in (1, 64, 300):
            x = torch.randn(m, spec["H"], device="cuda").to(dtype)
            _, _, _, on_input, w, ids = routing_for(shape_name, spec, m, m)
            got = fusedmoe.fused_experts(x, None, None, w, ids, apply_router_weight_on_input=on_input, path=path,
                                         prepared=prepared)
            want = experts_ref(x, w1, w2, w, ids, apply_router_weight_on_input=on_input)
            assert_close(got, want, dtype)


def test_fused_moe_module_prepares_dense_weights():
    import fusedmoe
    torch.manual_seed(1)
    e, h, i = 16, 512, 256
    w13 = (torch.randn(e, 2 * i, h, device="cuda") / h ** 0.5).bfloat16()
    w2 = (torch.randn(e, h, i, device="cuda") / i ** 0.5).bfloat16()
    layer = fusedmoe.FusedMoE(e, 2, h, i, renormalize=True, device="cuda")
    layer.load_weights(w13, w2)
    assert layer.w13_weight is None and layer.prepared_storage is not None
    x = torch.randn(300, h, device="cuda").bfloat16()
    logits = torch.randn(300, e, device="cuda")
    w, ids = route_ref(logits, 2, renormalize=True)
    assert_close(layer(x, logits), experts_ref(x, w13, w2, w, ids), torch.bfloat16)
    with pytest.raises(ValueError, match="w2: expected torch.bfloat16"):
        layer.load_weights(w13, w2.half())


@pytest.mark.parametrize("shape_name", list(ROUTING))
def test_fused_moe_routes_like_the_model(bench_shapes, shape_name):
    import fusedmoe
    spec = bench_shapes[shape_name]
    w1, w2 = weights(spec["E"], spec["H"], spec["I"], torch.bfloat16)
    m = 33
    x = torch.randn(m, spec["H"], device="cuda").to(torch.bfloat16)
    logits, bias, r, on_input, w, ids = routing_for(shape_name, spec, m, 5)
    got = fusedmoe.fused_moe(x, logits, w1, w2, spec["topk"], r.get("renormalize", False),
                             use_grouped_topk="num_expert_group" in r, num_expert_group=r.get("num_expert_group"),
                             topk_group=r.get("topk_group"), scoring_func=r.get("scoring_func", "softmax"),
                             e_score_correction_bias=bias, routed_scaling_factor=r.get("routed_scaling_factor", 1.0),
                             apply_router_weight_on_input=on_input)
    want = experts_ref(x, w1, w2, w, ids, apply_router_weight_on_input=on_input)
    assert_close(got, want, torch.bfloat16)
    # route_topk alone: the same experts (fp32 scores; the weights to 1e-5)
    gw, gids = fusedmoe.route_topk(logits, spec["topk"], renormalize=r.get("renormalize", False),
                                   scoring_func=r.get("scoring_func", "softmax"),
                                   num_expert_group=r.get("num_expert_group", 0), topk_group=r.get("topk_group", 0),
                                   e_score_correction_bias=bias,
                                   routed_scaling_factor=r.get("routed_scaling_factor", 1.0))
    assert torch.equal(gids.long().sort(-1).values, ids.sort(-1).values)
    order = gids.long().argsort(-1)
    ref_order = ids.argsort(-1)
    torch.testing.assert_close(gw.gather(1, order), w.gather(1, ref_order), rtol=1e-5, atol=1e-6)


def test_fp16_gelu_expert_map_and_int64_ids():
    import fusedmoe
    e, h, i, k, m = 16, 512, 256, 4, 40
    w1, w2 = weights(e, h, i, torch.float16)
    x = torch.randn(m, h, device="cuda").half()
    ids = torch.randint(0, 2 * e, (m, k), device="cuda")  # int64, as torch.topk gives
    w = torch.rand(m, k, device="cuda")
    expert_map = torch.tensor([g // 2 if g % 2 else -1 for g in range(2 * e)], dtype=torch.int32, device="cuda")
    for path in ("small_m", "grouped_gemm"):
        got = fusedmoe.fused_experts(x, w1, w2, w, ids, activation="gelu", expert_map=expert_map, path=path)
        want = experts_ref(x, w1, w2, w, ids, activation="gelu", expert_map=expert_map)
        assert_close(got, want, torch.float16)


def test_empty_batch():
    import fusedmoe
    w1, w2 = weights(8, 256, 128, torch.bfloat16)
    x = torch.empty(0, 256, device="cuda", dtype=torch.bfloat16)
    out = fusedmoe.fused_experts(x, w1, w2, torch.empty(0, 2, device="cuda"),
                                 torch.empty(0, 2, device="cuda", dtype=torch.int32))
    assert out.shape == (0, 256)


def test_bad_arguments_name_the_argument():
    import fusedmoe
    w1, w2 = weights(8, 256, 128, torch.bfloat16)
    x = torch.randn(4, 256, device="cuda").bfloat16()
    ids = torch.zeros(4, 2, dtype=torch.int32, device="cuda")
    w = torch.ones(4, 2, device="cuda")
    with pytest.raises(RuntimeError, match=r"w2: expected \[8, 256, 128\], got \[8, 128, 256\]"):
        fusedmoe.fused_experts(x, w1, w2.transpose(1, 2).contiguous(), w, ids)
    with pytest.raises(RuntimeError, match="hidden_states: expected dtype bfloat16 or float16, got Float"):
        fusedmoe.fused_experts(x.float(), w1, w2, w, ids)
    with pytest.raises(RuntimeError, match="activation: expected silu, gelu or gelu_tanh, got 'relu'"):
        fusedmoe.fused_experts(x, w1, w2, w, ids, activation="relu")
    with pytest.raises(RuntimeError, match="path: expected auto, small_m, grouped_gemm, grouped_swapped or grouped_mixed, got 'fast'"):
        fusedmoe.fused_experts(x, w1, w2, w, ids, path="fast")
    with pytest.raises(ValueError, match=r"quant_config\['format'\]: expected one of \['awq', 'gptq', 'moe_wna16'\]"):
        fusedmoe.fused_experts(x, w1, w2, w, ids, quant_config={"fp8": True})
    with pytest.raises(RuntimeError, match="expected a tensor on cuda:0, got cpu"):
        fusedmoe.fused_experts(x, w1.cpu(), w2, w, ids)


def test_torch_compile_fullgraph():
    import fusedmoe
    torch.manual_seed(0)
    layer = fusedmoe.FusedMoE(16, 2, 512, 256, renormalize=True, device="cuda")
    with torch.no_grad():
        layer.w13_weight.copy_(torch.randn_like(layer.w13_weight, dtype=torch.float32) / 512 ** 0.5)
        layer.w2_weight.copy_(torch.randn_like(layer.w2_weight, dtype=torch.float32) / 256 ** 0.5)
    x = torch.randn(2, 9, 512, device="cuda").bfloat16()
    logits = torch.randn(18, 16, device="cuda")
    compiled = torch.compile(layer, fullgraph=True)
    got = compiled(x, logits)
    assert got.shape == x.shape
    w, ids = route_ref(logits, 2, renormalize=True)
    want = experts_ref(x.reshape(18, 512), layer.w13_weight, layer.w2_weight, w, ids).reshape(x.shape)
    assert_close(got, want, torch.bfloat16)


@pytest.mark.parametrize("path", ["small_m", "grouped_gemm"])
def test_cuda_graph_replays_with_new_routing(path):
    import fusedmoe
    e, h, i, k, m = 64, 1024, 512, 8, 48
    w1, w2 = weights(e, h, i, torch.bfloat16)
    x = torch.randn(m, h, device="cuda").bfloat16()
    ids = torch.zeros(m, k, dtype=torch.int32, device="cuda")
    w = torch.zeros(m, k, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fusedmoe.fused_experts(x, w1, w2, w, ids, path=path)  # warm-up outside the capture
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fusedmoe.fused_experts(x, w1, w2, w, ids, path=path)
    for seed in range(3):
        g = torch.Generator(device="cuda").manual_seed(seed)
        new_w, new_ids = route_ref(torch.randn(m, e, device="cuda", generator=g), k, renormalize=True)
        ids.copy_(new_ids.int())
        w.copy_(new_w)
        graph.replay()
        torch.cuda.synchronize()
        assert_close(out, experts_ref(x, w1, w2, new_w, new_ids), torch.bfloat16)
