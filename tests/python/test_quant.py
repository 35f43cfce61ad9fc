"""Weight-only int4/int8 from Python: GPTQ (symmetric, zero points, int8, act-order), AWQ and
moe_wna16 tensors packed here exactly as those tools store them, prepared once, against the
float64 reference on the weights dequantized from the same codes; both kernel paths, routing
inside the op, argument errors, and CUDA-graph replay."""
import pytest
import torch

from reference import assert_within, experts_ref, route_ref

# As reference/include/fusedmoe_ref/tolerance.h (wna16): the dequant path rounds each weight to
# bf16 once, hence the looser max |error| than dense bf16's.
TOLERANCE = {torch.bfloat16: (1.0e-2, 1.5e-1), torch.float16: (2.5e-3, 2.0e-2)}
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]  # nibble i of an AWQ word holds column AWQ_ORDER[i] of its 8


def assert_close(got, want, dtype):
    assert_within(got, want, TOLERANCE[dtype])


def to_int32(words):
    """int64 words holding 32-bit patterns -> int32 (two's complement), as GPTQ stores them."""
    return torch.where(words >= 2 ** 31, words - 2 ** 32, words).to(torch.int32)


def pack_along(codes, dim, per_word, bits, order=None):
    """Packs `per_word` consecutive values along `dim` into one word, value i at bits i * bits
    (order[i] of each group instead of i when given)."""
    shape = list(codes.shape)
    shape[dim:dim + 1] = [shape[dim] // per_word, per_word]
    c = codes.long().reshape(shape)
    if order is not None:
        c = c.index_select(dim + 1, torch.tensor(order, device=codes.device))
    shifts = (torch.arange(per_word, device=codes.device) * bits).reshape([-1] + [1] * (len(shape) - dim - 2))
    return (c << shifts).sum(dim + 1)


class Projection:
    """Random codes [E, K, N], zeros and scales [E, G, N] of one projection (N output rows, K
    inputs), the checkpoint tensors of a format, and the float64 weights [E, N, K]."""

    def __init__(self, e, n, k, bits, group, zeros, act_order, scale_dtype, gen):
        self.k, self.n, self.bits = k, n, bits
        groups = 1 if group == -1 else k // group
        top = 2 ** bits
        self.codes = torch.randint(0, top, (e, k, n), device="cuda", generator=gen)
        # zero points away from the midpoint, 1..top-1 (classic GPTQ stores zero - 1)
        self.zeros = torch.randint(1, top, (e, groups, n), device="cuda", generator=gen) if zeros else None
        base = 0.5 / (k ** 0.5 * top)
        self.scales = (base * 2.0 ** (4 * torch.rand(e, groups, n, device="cuda", generator=gen) - 2)).to(scale_dtype)
        if act_order:
            perm = torch.stack([torch.randperm(k, device="cuda", generator=gen) for _ in range(e)])
            self.g_idx = (perm // group).to(torch.int32)
        else:
            self.g_idx = None
        glen = k if group == -1 else group
        g_of_k = (self.g_idx.long() if act_order else (torch.arange(k, device="cuda") // glen).expand(e, k))
        zero = self.zeros if zeros else torch.full((e, groups, n), top // 2, device="cuda")
        gather = g_of_k[:, :, None].expand(e, k, n)
        z = zero.double().gather(1, gather)
        s = self.scales.double().gather(1, gather)
        self.w = ((self.codes.double() - z) * s).transpose(1, 2).contiguous()  # [E, N, K]

    def tensors(self, fmt, minus_one=True):
        """(qweight, scales, qzeros, g_idx) as the format stores them."""
        b = self.bits
        if fmt == "gptq":
            p = 32 // b
            qweight = to_int32(pack_along(self.codes, 1, p, b))
            qzeros = None
            if self.zeros is not None:
                stored = (self.zeros - (1 if minus_one else 0)) & (2 ** b - 1)
                qzeros = to_int32(pack_along(stored, 2, p, b))
            return qweight, self.scales, qzeros, self.g_idx
        if fmt == "awq":
            qweight = to_int32(pack_along(self.codes, 2, 8, 4, AWQ_ORDER))
            qzeros = None if self.zeros is None else to_int32(pack_along(self.zeros, 2, 8, 4, AWQ_ORDER))
            return qweight, self.scales, qzeros, None
        p = 8 // b  # moe_wna16: qweight [E, N, K / p] uint8, scales [E, N, G], qzeros [E, N / p, G]
        qweight = pack_along(self.codes.transpose(1, 2), 2, p, b).to(torch.uint8)
        qzeros = None if self.zeros is None else pack_along(self.zeros.transpose(1, 2), 1, p, b).to(torch.uint8)
        return qweight, self.scales.transpose(1, 2).contiguous(), qzeros, None


def make_layer(fmt, bits, group, zeros, e, h, i, act_order=False, scale_dtype=torch.float16, minus_one=True,
               seed=0):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    p13 = Projection(e, 2 * i, h, bits, group, zeros, act_order, scale_dtype, gen)
    p2 = Projection(e, h, i, bits, group, zeros, act_order, scale_dtype, gen)
    q1, s1, z1, g1 = p13.tensors(fmt, minus_one)
    q2, s2, z2, g2 = p2.tensors(fmt, minus_one)
    qc = dict(format=fmt, bits=bits, group_size=group, w1_scales=s1, w2_scales=s2, w1_zeros=z1, w2_zeros=z2,
              w1_g_idx=g1, w2_g_idx=g2, gptq_zeros_minus_one=minus_one)
    return q1, q2, qc, p13.w, p2.w


CASES = {  # name -> (format, bits, group, zeros, act_order, scale dtype, gptq minus one)
    "gptq_int4_sym": ("gptq", 4, 128, False, False, torch.float16, True),
    "gptq_int4_zp": ("gptq", 4, 128, True, False, torch.float16, True),
    "gptq_int4_zp_v2_g32": ("gptq", 4, 32, True, False, torch.bfloat16, False),
    "gptq_int4_actorder": ("gptq", 4, 128, False, True, torch.float16, True),
    "gptq_int8_zp_channel": ("gptq", 8, -1, True, False, torch.float32, True),
    "awq_int4_g64": ("awq", 4, 64, True, False, torch.float16, True),
    "moe_wna16_int4": ("moe_wna16", 4, 128, True, False, torch.bfloat16, True),
    "moe_wna16_int8": ("moe_wna16", 8, 128, False, False, torch.float16, True),
}


@pytest.mark.parametrize("path", ["auto", "small_m", "grouped_gemm", "grouped_swapped", "grouped_mixed"])
@pytest.mark.parametrize("case", list(CASES))
def test_formats_against_reference(case, path):
    import fusedmoe
    fmt, bits, group, zeros, act_order, sdt, minus_one = CASES[case]
    e, h, i, topk = 8, 512, 256, 2
    q1, q2, qc, w1, w2 = make_layer(fmt, bits, group, zeros, e, h, i, act_order, sdt, minus_one)
    prepared = fusedmoe.prepare_weights(q1, q2, qc)
    for m in (1, 7, 64):
        gen = torch.Generator(device="cuda").manual_seed(m)
        x = torch.randn(m, h, device="cuda", generator=gen).bfloat16()
        logits = torch.randn(m, e, device="cuda", generator=gen)
        w, ids = route_ref(logits, topk, renormalize=True)
        got = fusedmoe.fused_experts(x, None, None, w, ids, prepared=prepared, path=path)
        assert_close(got, experts_ref(x, w1, w2, w, ids), torch.bfloat16)


def test_vllm_style_call_fp16_and_routing_inside():
    import fusedmoe
    e, h, i, topk, m = 16, 1024, 512, 4, 9
    q1, q2, qc, w1, w2 = make_layer("awq", 4, 128, True, e, h, i)
    x = torch.randn(m, h, device="cuda").half()
    logits = torch.randn(m, e, device="cuda")
    # quant_config straight into fused_moe (prepared on the fly) and prepared once
    got = fusedmoe.fused_moe(x, logits, q1, q2, topk, renormalize=True, quant_config=qc)
    w, ids = route_ref(logits, topk, renormalize=True)
    want = experts_ref(x, w1, w2, w, ids)
    assert_close(got, want, torch.float16)
    prepared = fusedmoe.prepare_weights(q1, q2, qc, act_dtype=torch.float16)
    again = fusedmoe.fused_moe(x, logits, None, None, topk, renormalize=True, prepared=prepared)
    assert torch.equal(got, again)


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("shape_name", ["mixtral_8x7b_tp1", "qwen2_57b_a14b_tp4", "qwen3_30b_a3b_tp1",
                                        "deepseek_v3_tp8", "llama4_scout_tp8"])
def test_bench_shapes(bench_shapes, shape_name, bits):
    """The five bench shapes of shapes/models.json in GPTQ int4 (zero points) and int8
    (symmetric), group 128, at decode and just past the GEMV's token tile."""
    import fusedmoe
    spec = bench_shapes[shape_name]
    q1, q2, qc, w1, w2 = make_layer("gptq", bits, 128, bits == 4, spec["E"], spec["H"], spec["I"])
    prepared = fusedmoe.prepare_weights(q1, q2, qc)
    del q1, q2, qc
    for m in (1, 33):
        gen = torch.Generator(device="cuda").manual_seed(m)
        logits = torch.randn(m, spec["E"], device="cuda", generator=gen)
        w, ids = route_ref(logits, spec["topk"], renormalize=True)
        x = torch.randn(m, spec["H"], device="cuda", generator=gen).bfloat16()
        got = fusedmoe.fused_experts(x, None, None, w, ids, prepared=prepared)
        assert_close(got, experts_ref(x, w1, w2, w, ids), torch.bfloat16)


def test_bad_quant_tensors_name_the_tensor():
    import fusedmoe
    q1, q2, qc, _, _ = make_layer("gptq", 4, 128, True, 4, 256, 128)
    bad = dict(qc, w1_scales=qc["w1_scales"][:, :, :8].contiguous())
    with pytest.raises(RuntimeError, match=r"w13.scales: expected fp16 \[4, 2, 256\], got Half \[4, 2, 8\]"):
        fusedmoe.prepare_weights(q1, q2, bad)
    with pytest.raises(RuntimeError, match=r"w2.zeros: expected a int32 tensor of shape \[4, 1, 32\], got None"):
        fusedmoe.prepare_weights(q1, q2, dict(qc, w2_zeros=None))  # w1's zeros say the format has them
    prepared = fusedmoe.prepare_weights(q1, q2, qc)
    x = torch.randn(2, 256, device="cuda").half()
    w, ids = torch.ones(2, 2, device="cuda"), torch.zeros(2, 2, dtype=torch.int32, device="cuda")
    with pytest.raises(RuntimeError, match="hidden_states: expected dtype bf16 .the weights were prepared for it."):
        fusedmoe.fused_experts(x, None, None, w, ids, prepared=prepared)


def test_cuda_graph_replay_with_new_routing():
    import fusedmoe
    e, h, i, topk, m = 8, 512, 256, 2, 16
    q1, q2, qc, w1, w2 = make_layer("gptq", 4, 128, True, e, h, i)
    prepared = fusedmoe.prepare_weights(q1, q2, qc)
    x = torch.randn(m, h, device="cuda").bfloat16()
    w, ids = route_ref(torch.randn(m, e, device="cuda"), topk, renormalize=True)
    ids = ids.to(torch.int32)
    fusedmoe.fused_experts(x, None, None, w, ids, prepared=prepared)  # warm-up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fusedmoe.fused_experts(x, None, None, w, ids, prepared=prepared)
    for seed in (1, 2):
        nw, nids = route_ref(torch.randn(m, e, device="cuda", generator=torch.Generator(device="cuda").manual_seed(seed)),
                             topk, renormalize=True)
        w.copy_(nw)
        ids.copy_(nids)
        graph.replay()
        torch.cuda.synchronize()
        assert_close(out, experts_ref(x, w1, w2, w, ids), torch.bfloat16)


def test_fused_moe_module_holds_integer_weights():
    """FusedMoE loaded from GPTQ tensors: eager and torch.compile(fullgraph=True) against the
    reference; the dense parameters are gone, the prepared storage follows the module."""
    import fusedmoe
    e, h, i, topk = 16, 512, 256, 4
    q1, q2, qc, w1, w2 = make_layer("gptq", 4, 64, True, e, h, i)
    layer = fusedmoe.FusedMoE(e, topk, h, i, renormalize=True, device="cuda")
    layer.load_weights(q1, q2, qc)
    assert layer.w13_weight is None and layer.w2_weight is None
    assert "prepared_storage" in dict(layer.named_buffers())
    x = torch.randn(3, 5, h, device="cuda").bfloat16()
    logits = torch.randn(15, e, device="cuda")
    w, ids = route_ref(logits, topk, renormalize=True)
    want = experts_ref(x.reshape(15, h), w1, w2, w, ids).reshape(x.shape)
    assert_close(layer(x, logits), want, torch.bfloat16)
    assert_close(torch.compile(layer, fullgraph=True)(x, logits), want, torch.bfloat16)
    with pytest.raises(ValueError, match=r"expected weights of \(E, H, I\) = \(16, 512, 256\), got \(16, 512, 128\)"):
        q1b, q2b, qcb, _, _ = make_layer("gptq", 4, 64, True, e, h, 128)
        fusedmoe.FusedMoE(e, topk, h, i, device="cuda").load_weights(q1b, q2b, qcb)
