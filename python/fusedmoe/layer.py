"""The Python API: vLLM-compatible ``fused_experts`` / ``fused_moe``, ``prepare_weights`` and
the ``FusedMoE`` module."""
from dataclasses import dataclass
from typing import Optional, Tuple

import torch

from . import _ops  # noqa: F401  (registers torch.ops.fusedmoe)



def _check_quant_config(quant_config):
    if quant_config is not None:
        raise NotImplementedError(
            "fusedmoe: quant_config: expected None (bf16/fp16 weights; the FP8 and int4/int8 GPU kernels are not "
            f"built yet), got {quant_config!r}")


@dataclass
class PreparedWeights:
    """Expert weights in the layout the kernels read (for bf16/fp16: the checkpoint's own)."""
    w1: torch.Tensor  # [E, 2I, H]
    w2: torch.Tensor  # [E, H, I]


def prepare_weights(w1: torch.Tensor, w2: torch.Tensor, quant_config=None) -> PreparedWeights:
    """Converts checkpoint weights once, at load time. Dense bf16/fp16 weights are read as they
    are: the result holds contiguous views of them."""
    _check_quant_config(quant_config)
    return PreparedWeights(w1.contiguous(), w2.contiguous())


def _ids_weights(topk_weights: torch.Tensor, topk_ids: torch.Tensor):
    if topk_ids.dtype != torch.int32:
        topk_ids = topk_ids.to(torch.int32)
    if topk_weights.dtype != torch.float32:
        topk_weights = topk_weights.to(torch.float32)
    return topk_weights.contiguous(), topk_ids.contiguous()


def fused_experts(hidden_states: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, topk_weights: torch.Tensor,
                  topk_ids: torch.Tensor, *, activation: str = "silu", apply_router_weight_on_input: bool = False,
                  expert_map: Optional[torch.Tensor] = None, quant_config=None, inplace: bool = False,
                  path: str = "auto") -> torch.Tensor:
    """The expert computation of an MoE layer (vLLM's ``fused_experts`` arguments):
    out[t] = sum_k topk_weights[t, k] * w2[e] . act(w1[e] gate . x[t]) * (w1[e] up . x[t]), e = topk_ids[t, k].

    hidden_states [M, H] bf16/fp16; w1 [E, 2I, H]; w2 [E, H, I]; topk_weights [M, topk] (any float
    dtype, used as float32); topk_ids [M, topk] (int32 or int64); expert_map [global E] int32 with
    -1 for experts on other GPUs. ``path`` forces a kernel path (auto, small_m, grouped_gemm).
    """
    _check_quant_config(quant_config)
    weights, ids = _ids_weights(topk_weights, topk_ids)
    out = torch.ops.fusedmoe.fused_experts(hidden_states.contiguous(), w1, w2, weights, ids, activation,
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
              expert_map: Optional[torch.Tensor] = None, quant_config=None, path: str = "auto") -> torch.Tensor:
    """Routing (softmax/sigmoid top-k, DeepSeek grouped top-k with bias and scaling) and the
    experts in one call, vLLM's ``fused_moe`` arguments."""
    _check_quant_config(quant_config)
    if use_grouped_topk and (not num_expert_group or not topk_group):
        raise ValueError("fusedmoe: use_grouped_topk: expected num_expert_group and topk_group > 0, got "
                         f"{num_expert_group} and {topk_group}")
    n_group = num_expert_group if use_grouped_topk else 0
    t_group = topk_group if use_grouped_topk else 0
    bias = None if e_score_correction_bias is None else e_score_correction_bias.float().contiguous()
    return torch.ops.fusedmoe.fused_moe(hidden_states.contiguous(), router_logits.contiguous(), w1, w2, topk,
                                        renormalize, scoring_func, n_group, t_group, bias,
                                        float(routed_scaling_factor), activation, apply_router_weight_on_input,
                                        expert_map, path)


class FusedMoE(torch.nn.Module):
    """An MoE layer's experts and routing: forward(hidden_states [.., H], router_logits [.., E])."""

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

    def forward(self, hidden_states: torch.Tensor, router_logits: torch.Tensor) -> torch.Tensor:
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, shape[-1])
        out = fused_moe(x, router_logits.reshape(x.shape[0], -1), self.w13_weight, self.w2_weight, self.topk,
                        self.renormalize, use_grouped_topk=self.use_grouped_topk,
                        num_expert_group=self.num_expert_group, topk_group=self.topk_group,
                        scoring_func=self.scoring_func, e_score_correction_bias=self.e_score_correction_bias,
                        routed_scaling_factor=self.routed_scaling_factor, activation=self.activation,
                        apply_router_weight_on_input=self.apply_router_weight_on_input)
        return out.reshape(shape)
