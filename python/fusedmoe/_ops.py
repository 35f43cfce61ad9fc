"""Loads libfusedmoe_torch.so (registers torch.ops.fusedmoe.*) and the ops' fake kernels."""
import os

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
library_path = os.path.join(_HERE, "libfusedmoe_torch.so")
if not os.path.exists(library_path):
    raise ImportError(f"fusedmoe: {library_path} is missing; install the package with `pip install .` "
                      "(a CUDA build: nvcc and CUTLASS headers from scripts/setup.sh)")
torch.ops.load_library(library_path)


@torch.library.register_fake("fusedmoe::fused_experts")
def _fused_experts_fake(hidden_states, w1, w2, topk_weights, topk_ids, activation, apply_router_weight_on_input,
                        expert_map, path):
    return torch.empty_like(hidden_states)


@torch.library.register_fake("fusedmoe::fused_moe")
def _fused_moe_fake(hidden_states, router_logits, w1, w2, topk, renormalize, scoring_func, num_expert_group,
                    topk_group, e_score_correction_bias, routed_scaling_factor, activation,
                    apply_router_weight_on_input, expert_map, path):
    return torch.empty_like(hidden_states)


@torch.library.register_fake("fusedmoe::route_topk")
def _route_topk_fake(router_logits, topk, renormalize, scoring_func, num_expert_group, topk_group,
                     e_score_correction_bias, routed_scaling_factor):
    m = router_logits.shape[0]
    return (router_logits.new_empty((m, topk), dtype=torch.float32),
            router_logits.new_empty((m, topk), dtype=torch.int32))


@torch.library.register_fake("fusedmoe::fused_experts_quant")
def _fused_experts_quant_fake(hidden_states, storage, quant, topk_weights, topk_ids, activation,
                              apply_router_weight_on_input, expert_map, path):
    return torch.empty_like(hidden_states)


@torch.library.register_fake("fusedmoe::fused_experts_fp8")
def _fused_experts_fp8_fake(hidden_states, w1, w1_scale, w2, w2_scale, a1_scale, a2_scale, fp8, topk_weights, topk_ids,
                            activation, apply_router_weight_on_input, expert_map, path):
    return torch.empty_like(hidden_states)
