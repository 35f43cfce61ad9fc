"""fusedmoe: fused Mixture-of-Experts layers for Hopper GPUs, as PyTorch custom ops.

The ops (``torch.ops.fusedmoe.*``) are thin over the C++ library: they run on the current CUDA
stream, allocate their workspace through PyTorch's caching allocator (so CUDA graphs capture
them) and have fake implementations for ``torch.compile``. Argument errors raise a
RuntimeError that names the argument, the expected and the actual value.

Weights use vLLM's (and Hugging Face transformers') layout: ``w1`` [E, 2I, H] holds each
expert's gate rows and then its up rows, ``w2`` [E, H, I].
"""
from ._ops import library_path
from .layer import FusedMoE, PreparedWeights, fused_experts, fused_moe, prepare_weights, route_topk

__all__ = ["FusedMoE", "PreparedWeights", "fused_experts", "fused_moe", "prepare_weights", "route_topk",
           "library_path"]
