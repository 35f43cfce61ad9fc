"""The Python API: vLLM-compatible ``fused_experts`` / ``fused_moe``, ``prepare_weights`` and
the ``FusedMoE`` module."""
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from . import _ops  # noqa: F401  (registers torch.ops.fusedmoe)



_DENSE = 0  # fusedmoe::WeightFormat
_FORMATS = {"gptq": 4, "awq": 5, "moe_wna16": 6}
_SCALE_DTYPES = {torch.bfloat16: 0, torch.float16: 1, torch.float32: 2}  # fusedmoe::DType
_ACT_DTYPES = {torch.bfloat16: 0, torch.float16: 1}


@dataclass
class PreparedWeights:
    """Expert weights in the layout the kernels read: ``storage`` holds the prepared layout and
    ``quant`` its description (see ``prepare_weights``); or dense bf16/fp16 ``w1``/``w2`` read in
    place, in the checkpoint's order."""
    w1: Optional[torch.Tensor]  # [E, 2I, H]
    w2: Optional[torch.Tensor]  # [E, H, I]
    storage: Optional[torch.Tensor] = None
    quant: Optional[List[int]] = None


def _dense_list(w1: torch.Tensor, w2: torch.Tensor) -> List[int]:
    """The ops' description of dense weights (the integer list's fields, no scales)."""
    if w1.dtype not in _ACT_DTYPES or w2.dtype != w1.dtype:
        raise ValueError(f"fusedmoe: w1, w2: expected bfloat16 or float16 tensors of one dtype, got {w1.dtype} and "
                         f"{w2.dtype}")
    if w1.dim() != 3:
        raise ValueError(f"fusedmoe: w1: expected [E, 2I, H], got shape {tuple(w1.shape)}")
    e, n, hidden = w1.shape
    return [_DENSE, 16, -1, 0, 0, _SCALE_DTYPES[w1.dtype], 0, e, hidden, n // 2, _ACT_DTYPES[w1.dtype]]


def _quant_list(w1: torch.Tensor, w2: torch.Tensor, qc: dict, act_dtype: torch.dtype) -> List[int]:
    """The ops' description of integer weights: format, bits, group_size, has_zeros, has_g_idx,
    scale dtype, gptq_zeros_minus_one, E, H, I, activation dtype. H and I come from w1's shape
    as the format stores it (docs/FORMATS.md)."""
    fmt = qc.get("format")
    if fmt not in _FORMATS:
        raise ValueError(f"fusedmoe: quant_config['format']: expected one of {sorted(_FORMATS)}, got {fmt!r}")
    bits = int(qc.get("bits", 4))
    if w1.dim() != 3:
        raise ValueError(f"fusedmoe: w1: expected 3 dimensions (packed {fmt} qweight), got shape {tuple(w1.shape)}")
    e = w1.shape[0]
    if fmt == "gptq":  # qweight [E, H / (32 / bits), 2I] int32
        hidden, n = w1.shape[1] * (32 // bits), w1.shape[2]
    elif fmt == "awq":  # qweight [E, H, 2I / 8] int32
        hidden, n = w1.shape[1], w1.shape[2] * 8
    else:  # moe_wna16: qweight [E, 2I, H / (8 / bits)] uint8
        hidden, n = w1.shape[2] * (8 // bits), w1.shape[1]
    scales = qc.get("w1_scales")
    if scales is None or scales.dtype not in _SCALE_DTYPES:
        raise ValueError("fusedmoe: quant_config['w1_scales']: expected a float16, bfloat16 or float32 tensor, got "
                         f"{None if scales is None else scales.dtype}")
    if act_dtype not in _ACT_DTYPES:
        raise ValueError(f"fusedmoe: act_dtype: expected torch.bfloat16 or torch.float16, got {act_dtype}")
    return [_FORMATS[fmt], bits, int(qc.get("group_size", 128)), int(qc.get("w1_zeros") is not None),
            int(qc.get("w1_g_idx") is not None), _SCALE_DTYPES[scales.dtype],
            int(qc.get("gptq_zeros_minus_one", True)), e, hidden, n // 2, _ACT_DTYPES[act_dtype]]


_FP8_WEIGHTS = {"tensor": 1, "channel": 2, "block": 3}  # fusedmoe::WeightFormat
_FP8_ACTS = {"per_tensor_dynamic": 1, "per_tensor_static": 2, "per_token": 3, "per_group": 4}  # fusedmoe::ActQuant


_FP8_TENSORS = ("w1_scale", "w2_scale", "a1_scale", "a2_scale")


def _is_fp8(qc: Optional[dict]) -> bool:
    return qc is not None and qc.get("format") == "fp8"


def _fp8_args(w1: torch.Tensor, qc: dict):
    """FP8 W8A8 in vLLM's terms: e4m3 w1/w2 with ``w1_scale``/``w2_scale`` per expert [E], per
    output row ([E, N] or [E, N, 1]) or per block with ``block_shape`` [block_n, block_k]
    ([E, N / bn, K / bk]); activations quantized per group (block weights), with the static
    ``a1_scale``/``a2_scale`` when given, per token with ``per_act_token_quant``, else per
    tensor at run time. Returns the op's (w1_scale, w2_scale, a1_scale, a2_scale, fp8 list)."""
    e = w1.shape[0]
    s1, s2 = qc.get("w1_scale"), qc.get("w2_scale")
    if s1 is None or s2 is None:
        raise ValueError("fusedmoe: quant_config['w1_scale'], ['w2_scale']: expected float32 tensors, got "
                         f"{type(s1).__name__} and {type(s2).__name__}")
    block = qc.get("block_shape")
    a1, a2 = qc.get("a1_scale"), qc.get("a2_scale")
    if block is not None:
        if len(block) != 2:
            raise ValueError(f"fusedmoe: quant_config['block_shape']: expected [block_n, block_k], got {block}")
        weights, acts, bn, bk = "block", "per_group", int(block[0]), int(block[1])
    else:
        weights = "tensor" if s1.numel() == e else "channel"
        if weights == "channel":  # vLLM keeps per-channel scales as [E, N, 1]
            s1, s2 = s1.reshape(e, -1), s2.reshape(e, -1)
        else:
            s1, s2 = s1.reshape(e), s2.reshape(e)
        bn, bk = 128, 128
        if a1 is not None or a2 is not None:
            if a1 is None or a2 is None:
                raise ValueError("fusedmoe: quant_config['a1_scale'], ['a2_scale']: expected both or neither, got "
                                 f"{'a tensor' if a1 is not None else None} and {'a tensor' if a2 is not None else None}")
            acts = "per_tensor_static"
            a1, a2 = a1.float().reshape(1), a2.float().reshape(1)
        else:
            acts = "per_token" if qc.get("per_act_token_quant", False) else "per_tensor_dynamic"
    return (s1.float().contiguous(), s2.float().contiguous(), a1, a2,
            [_FP8_WEIGHTS[weights], _FP8_ACTS[acts], bn, bk])


def prepare_weights(w1: torch.Tensor, w2: torch.Tensor, quant_config: Optional[dict] = None,
                    act_dtype: torch.dtype = torch.bfloat16) -> PreparedWeights:
    """Converts checkpoint weights once, at load time. Dense bf16/fp16 weights (quant_config
    None): w1 with its gate and up rows interleaved (so the grouped GEMM applies the activation
    in its epilogue) and w2, copied into one storage tensor; the activations' dtype is theirs.

    Weight-only int4/int8: ``w1``/``w2`` are the packed ``qweight`` tensors of the checkpoint and
    ``quant_config`` a dict with ``format`` ("gptq", "awq" or "moe_wna16"), ``bits`` (4 or 8),
    ``group_size`` (-1: per channel), ``w1_scales``/``w2_scales``, optional ``w1_zeros``/``w2_zeros``
    (``qzeros``), ``w1_g_idx``/``w2_g_idx`` (GPTQ act-order) and ``gptq_zeros_minus_one`` (True for
    classic GPTQ checkpoints, False for gptq_v2), in the layouts of docs/FORMATS.md; ``act_dtype``
    is the dtype of the hidden states the layer will see."""
    if quant_config is None:
        quant = _dense_list(w1, w2)
        storage = torch.ops.fusedmoe.prepare_quant(w1.contiguous(), None, None, None, w2.contiguous(), None, None, None,
                                                   quant)
        return PreparedWeights(None, None, storage, quant)
    quant = _quant_list(w1, w2, quant_config, act_dtype)

    def opt(name):
        t = quant_config.get(name)
        return None if t is None else t.contiguous()

    storage = torch.ops.fusedmoe.prepare_quant(w1.contiguous(), opt("w1_scales"), opt("w1_zeros"), opt("w1_g_idx"),
                                               w2.contiguous(), opt("w2_scales"), opt("w2_zeros"), opt("w2_g_idx"),
                                               quant)
    return PreparedWeights(None, None, storage, quant)


def _prepared(w1, w2, quant_config, prepared, act_dtype) -> PreparedWeights:
    if prepared is not None:
        return prepared
    if quant_config is not None:
        return prepare_weights(w1, w2, quant_config, act_dtype)  # once per call: prefer prepare_weights
    return PreparedWeights(w1, w2)


def _ids_weights(topk_weights: torch.Tensor, topk_ids: torch.Tensor):
    if topk_ids.dtype != torch.int32:
        topk_ids = topk_ids.to(torch.int32)
    if topk_weights.dtype != torch.float32:
        topk_weights = topk_weights.to(torch.float32)
    return topk_weights.contiguous(), topk_ids.contiguous()


def fused_experts(hidden_states: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, topk_weights: torch.Tensor,
                  topk_ids: torch.Tensor, *, activation: str = "silu", apply_router_weight_on_input: bool = False,
                  expert_map: Optional[torch.Tensor] = None, quant_config: Optional[dict] = None,
                  inplace: bool = False, path: str = "auto",
                  prepared: Optional[PreparedWeights] = None) -> torch.Tensor:
    """The expert computation of an MoE layer (vLLM's ``fused_experts`` arguments):
    out[t] = sum_k topk_weights[t, k] * w2[e] . act(w1[e] gate . x[t]) * (w1[e] up . x[t]), e = topk_ids[t, k].

    hidden_states [M, H] bf16/fp16; w1 [E, 2I, H]; w2 [E, H, I]; topk_weights [M, topk] (any float
    dtype, used as float32); topk_ids [M, topk] (int32 or int64); expert_map [global E] int32 with
    -1 for experts on other GPUs. ``path`` forces a kernel path (auto, small_m, grouped_gemm, grouped_swapped;
    grouped_mixed for integer weights).
    FP8 W8A8: e4m3 w1/w2 with ``quant_config=dict(format="fp8", w1_scale=, w2_scale=,
    block_shape=None | [bn, bk], a1_scale=None, a2_scale=None, per_act_token_quant=False)``
    (vLLM's names; see ``_fp8_args``).
    """
    weights, ids = _ids_weights(topk_weights, topk_ids)
    if prepared is None and _is_fp8(quant_config):
        s1, s2, a1, a2, fp8 = _fp8_args(w1, quant_config)
        out = torch.ops.fusedmoe.fused_experts_fp8(hidden_states.contiguous(), w1.contiguous(), s1, w2.contiguous(), s2,
                                                   a1, a2, fp8, weights, ids, activation,
                                                   apply_router_weight_on_input, expert_map, path)
        if inplace:
            hidden_states.copy_(out)
            return hidden_states
        return out
    pw = _prepared(w1, w2, quant_config, prepared, hidden_states.dtype)
    if pw.storage is not None:
        out = torch.ops.fusedmoe.fused_experts_quant(hidden_states.contiguous(), pw.storage, pw.quant, weights, ids,
                                                     activation, apply_router_weight_on_input, expert_map, path)
    else:
        out = torch.ops.fusedmoe.fused_experts(hidden_states.contiguous(), pw.w1, pw.w2, weights, ids, activation,
                                               apply_router_weight_on_input, expert_map, path)
    if inplace:
        hidden_states.copy_(out)
        return hidden_states
    return out


def route_topk(router_logits: torch.Tensor, topk: int, *, renormalize: bool = False, scoring_func: str = "softmax",
               num_expert_group: int = 0, topk_group: int = 0,
               e_score_correction_bias: Optional[torch.Tensor] = None,
               routed_scaling_factor: float = 1.0) -> Tuple[torch.Tensor, torch.Tensor]:
    """Routing on the GPU: (topk_weights float32 [M, topk], topk_ids int32 [M, topk])."""
    bias = None if e_score_correction_bias is None else e_score_correction_bias.float().contiguous()
    return torch.ops.fusedmoe.route_topk(router_logits.contiguous(), topk, renormalize, scoring_func,
                                         num_expert_group or 0, topk_group or 0, bias, float(routed_scaling_factor))


def fused_moe(hidden_states: torch.Tensor, router_logits: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
              topk: int, renormalize: bool = False, *, use_grouped_topk: bool = False,
              num_expert_group: Optional[int] = None, topk_group: Optional[int] = None, scoring_func: str = "softmax",
              e_score_correction_bias: Optional[torch.Tensor] = None, routed_scaling_factor: float = 1.0,
              activation: str = "silu", apply_router_weight_on_input: bool = False,
              expert_map: Optional[torch.Tensor] = None, quant_config: Optional[dict] = None, path: str = "auto",
              prepared: Optional[PreparedWeights] = None) -> torch.Tensor:
    """Routing (softmax/sigmoid top-k, DeepSeek grouped top-k with bias and scaling) and the
    experts in one call, vLLM's ``fused_moe`` arguments. Integer weights: ``quant_config`` as in
    ``prepare_weights``, or ``prepared`` (then w1/w2 are not read)."""
    if use_grouped_topk and (not num_expert_group or not topk_group):
        raise ValueError("fusedmoe: use_grouped_topk: expected num_expert_group and topk_group > 0, got "
                         f"{num_expert_group} and {topk_group}")
    n_group = num_expert_group if use_grouped_topk else 0
    t_group = topk_group if use_grouped_topk else 0
    bias = None if e_score_correction_bias is None else e_score_correction_bias.float().contiguous()
    if prepared is None and _is_fp8(quant_config):  # routing, then the FP8 layer
        weights, ids = torch.ops.fusedmoe.route_topk(router_logits.contiguous(), topk, renormalize, scoring_func,
                                                     n_group or 0, t_group or 0, bias, float(routed_scaling_factor))
        return fused_experts(hidden_states, w1, w2, weights, ids, activation=activation,
                             apply_router_weight_on_input=apply_router_weight_on_input, expert_map=expert_map,
                             quant_config=quant_config, path=path)
    pw = _prepared(w1, w2, quant_config, prepared, hidden_states.dtype)
    if pw.storage is not None:  # routing, then the integer layer
        weights, ids = torch.ops.fusedmoe.route_topk(router_logits.contiguous(), topk, renormalize, scoring_func,
                                                     n_group or 0, t_group or 0, bias, float(routed_scaling_factor))
        return torch.ops.fusedmoe.fused_experts_quant(hidden_states.contiguous(), pw.storage, pw.quant, weights, ids,
                                                      activation, apply_router_weight_on_input, expert_map, path)
    return torch.ops.fusedmoe.fused_moe(hidden_states.contiguous(), router_logits.contiguous(), pw.w1, pw.w2, topk,
                                        renormalize, scoring_func, n_group, t_group, bias,
                                        float(routed_scaling_factor), activation, apply_router_weight_on_input,
                                        expert_map, path)


class FusedMoE(torch.nn.Module):
    """An MoE layer's experts and routing: forward(hidden_states [.., H], router_logits [.., E]).
    Dense weights live in ``w13_weight``/``w2_weight``; ``load_weights`` loads a checkpoint's
    dense, GPTQ/AWQ/moe_wna16 or FP8 tensors."""

    def __init__(self, num_experts: int, topk: int, hidden_size: int, intermediate_size: int, *,
                 renormalize: bool = False, use_grouped_topk: bool = False, num_expert_group: Optional[int] = None,
                 topk_group: Optional[int] = None, scoring_func: str = "softmax", routed_scaling_factor: float = 1.0,
                 e_score_correction_bias: bool = False, activation: str = "silu",
                 apply_router_weight_on_input: bool = False, dtype: torch.dtype = torch.bfloat16,
                 device: Optional[torch.device] = None):
        super().__init__()
        self.topk = topk
        self.renormalize = renormalize
        self.use_grouped_topk = use_grouped_topk
        self.num_expert_group = num_expert_group
        self.topk_group = topk_group
        self.scoring_func = scoring_func
        self.routed_scaling_factor = routed_scaling_factor
        self.activation = activation
        self.apply_router_weight_on_input = apply_router_weight_on_input
        self.w13_weight = torch.nn.Parameter(
            torch.empty(num_experts, 2 * intermediate_size, hidden_size, dtype=dtype, device=device),
            requires_grad=False)
        self.w2_weight = torch.nn.Parameter(
            torch.empty(num_experts, hidden_size, intermediate_size, dtype=dtype, device=device), requires_grad=False)
        self.e_score_correction_bias = (torch.nn.Parameter(
            torch.zeros(num_experts, dtype=torch.float32, device=device), requires_grad=False)
            if e_score_correction_bias else None)
        self.dtype = dtype
        self.experts_shape = (num_experts, hidden_size, intermediate_size)  # (E, H, I)
        self.quant: Optional[List[int]] = None  # set with the prepared storage by load_weights
        self.register_buffer("prepared_storage", None)
        self.fp8_options: Optional[dict] = None  # FP8: quant_config without its tensors (buffers fp8_*)

    def _check_expert_tensors(self, w13: torch.Tensor, w2: torch.Tensor, dtype: torch.dtype, dtype_name: str) -> None:
        """w13 [E, 2I, H] and w2 [E, H, I] of this layer's (E, H, I), in ``dtype``."""
        e, h, i = self.experts_shape
        for name, t, want in (("w13", w13, (e, 2 * i, h)), ("w2", w2, (e, h, i))):
            if t.dtype != dtype or tuple(t.shape) != want:
                raise ValueError(f"fusedmoe: FusedMoE.load_weights: {name}: expected {dtype_name} {list(want)}, "
                                 f"got {t.dtype} {list(t.shape)}")

    def load_weights(self, w13: torch.Tensor, w2: torch.Tensor, quant_config: Optional[dict] = None) -> None:
        """Loads the experts from a checkpoint's tensors. Dense (``quant_config`` None): w13
        [E, 2I, H] and w2 [E, H, I] are prepared (w13's gate and up rows interleaved) into the
        ``prepared_storage`` buffer. Weight-only int4/int8: the packed ``qweight`` tensors and
        ``quant_config`` as in ``prepare_weights``, converted once into ``prepared_storage``.
        Either way the dense parameters are dropped (a layer whose ``w13_weight``/``w2_weight``
        were written directly reads them in place).
        FP8 (``format="fp8"``, as in ``fused_experts``): the e4m3 tensors become ``w13_weight``
        and ``w2_weight``, the scales the buffers ``fp8_w1_scale`` ... ``fp8_a2_scale``."""
        if _is_fp8(quant_config):
            self._check_expert_tensors(w13, w2, torch.float8_e4m3fn, "float8_e4m3fn")
            _fp8_args(w13, quant_config)  # argument errors now, not at the first forward
            self.w13_weight = torch.nn.Parameter(w13.contiguous(), requires_grad=False)
            self.w2_weight = torch.nn.Parameter(w2.contiguous(), requires_grad=False)
            for name in _FP8_TENSORS:
                value = quant_config.get(name)
                self.register_buffer("fp8_" + name, None if value is None else value.contiguous())
            self.fp8_options = {k: v for k, v in quant_config.items() if k not in _FP8_TENSORS}
            self.prepared_storage = None
            self.quant = None
            return
        if quant_config is None:
            self._check_expert_tensors(w13, w2, self.dtype, str(self.dtype))
        prepared = prepare_weights(w13, w2, quant_config, act_dtype=self.dtype)
        got = tuple(prepared.quant[7:10])  # (E, H, I) as the packed tensors give them
        if got != self.experts_shape:
            raise ValueError(f"fusedmoe: FusedMoE.load_weights: expected weights of (E, H, I) = {self.experts_shape}, "
                             f"got {got} from the packed tensors")
        self.w13_weight = None
        self.w2_weight = None
        self.prepared_storage = prepared.storage
        self.quant = prepared.quant

    def forward(self, hidden_states: torch.Tensor, router_logits: torch.Tensor) -> torch.Tensor:
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, shape[-1])
        prepared = None if self.quant is None else PreparedWeights(None, None, self.prepared_storage, self.quant)
        quant_config = None
        if self.fp8_options is not None:
            quant_config = dict(self.fp8_options, **{name: getattr(self, "fp8_" + name) for name in _FP8_TENSORS})
        out = fused_moe(x, router_logits.reshape(x.shape[0], -1), self.w13_weight, self.w2_weight, self.topk,
                        self.renormalize, use_grouped_topk=self.use_grouped_topk,
                        num_expert_group=self.num_expert_group, topk_group=self.topk_group,
                        scoring_func=self.scoring_func, e_score_correction_bias=self.e_score_correction_bias,
                        routed_scaling_factor=self.routed_scaling_factor, activation=self.activation,
                        apply_router_weight_on_input=self.apply_router_weight_on_input, quant_config=quant_config,
                        prepared=prepared)
        return out.reshape(shape)
