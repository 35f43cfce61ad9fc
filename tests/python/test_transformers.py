"""End to end against real model code: the MoE blocks of Hugging Face transformers (Mixtral,
Qwen3-MoE, DeepSeek-V3) built from small random-weight configs, run as they are and with their
expert computation replaced by fusedmoe (routing from the model's own router, or fusedmoe's
routing from the router's logits); the block outputs must agree within the bf16 tolerance."""
import types

import pytest
import torch

from test_ops import assert_close

transformers = pytest.importorskip("transformers", reason="transformers is not installed")


def _fused_experts_forward(experts, hidden_states, top_k_index, top_k_weights):
    import fusedmoe
    return fusedmoe.fused_experts(hidden_states, experts.gate_up_proj, experts.down_proj, top_k_weights, top_k_index)


def _init(block, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in block.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (1.0 / p.shape[-1] ** 0.5))
    return block.to(device="cuda", dtype=torch.bfloat16)


def _compare(block, x, fused_moe_call=None):
    with torch.no_grad():
        want = block(x)
        original = block.experts.forward
        block.experts.forward = types.MethodType(_fused_experts_forward, block.experts)
        try:
            got = block(x)
        finally:
            block.experts.forward = original
        assert_close(got, want, torch.bfloat16)
        if fused_moe_call is not None:
            assert_close(fused_moe_call(x), want, torch.bfloat16)


@pytest.mark.parametrize("tokens", [1, 5, 200])
def test_mixtral_block(tokens):
    import fusedmoe
    from transformers.models.mixtral.modeling_mixtral import MixtralConfig, MixtralSparseMoeBlock
    cfg = MixtralConfig(hidden_size=512, intermediate_size=1024, num_local_experts=8, num_experts_per_tok=2)
    block = _init(MixtralSparseMoeBlock(cfg), 1)
    x = torch.randn(2, tokens, 512, device="cuda").bfloat16()

    def with_routing(x):
        flat = x.view(-1, 512)
        logits = torch.nn.functional.linear(flat, block.gate.weight)
        out = fusedmoe.fused_moe(flat, logits, block.experts.gate_up_proj, block.experts.down_proj, 2,
                                 renormalize=True)
        return out.view_as(x)

    _compare(block, x, with_routing)


@pytest.mark.parametrize("tokens", [3, 100])
def test_qwen3_moe_block(tokens):
    from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeConfig, Qwen3MoeSparseMoeBlock
    cfg = Qwen3MoeConfig(hidden_size=256, moe_intermediate_size=128, num_experts=32, num_experts_per_tok=8,
                         norm_topk_prob=True)
    block = _init(Qwen3MoeSparseMoeBlock(cfg), 2)
    _compare(block, torch.randn(1, tokens, 256, device="cuda").bfloat16())


@pytest.mark.parametrize("tokens", [2, 64])
def test_deepseek_v3_block(tokens):
    import fusedmoe
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Config, DeepseekV3MoE
    cfg = DeepseekV3Config(hidden_size=256, moe_intermediate_size=64, n_routed_experts=32, num_experts_per_tok=4,
                           n_group=4, topk_group=2, n_shared_experts=1, routed_scaling_factor=2.5,
                           norm_topk_prob=True)
    block = _init(DeepseekV3MoE(cfg), 3)
    with torch.no_grad():
        block.gate.e_score_correction_bias.copy_(torch.randn(32) * 0.05)
    assert block.experts.num_experts == 32

    def with_routing(x):
        flat = x.view(-1, 256)
        logits = torch.nn.functional.linear(flat.float(), block.gate.weight.float())
        routed = fusedmoe.fused_moe(flat, logits, block.experts.gate_up_proj, block.experts.down_proj, 4,
                                    renormalize=True, use_grouped_topk=True, num_expert_group=4, topk_group=2,
                                    scoring_func="sigmoid", e_score_correction_bias=block.gate.e_score_correction_bias,
                                    routed_scaling_factor=2.5)
        return routed.view_as(x) + block.shared_experts(x)

    _compare(block, torch.randn(1, tokens, 256, device="cuda").bfloat16(), with_routing)
