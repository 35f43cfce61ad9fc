"""Pure-PyTorch reference of the MoE layer in float64 (the tests' oracle), and of the routing."""
import torch


def act_fn(name, g, u):
    if name == "silu":
        return torch.nn.functional.silu(g) * u
    if name == "gelu":
        return torch.nn.functional.gelu(g) * u
    if name == "gelu_tanh":
        return torch.nn.functional.gelu(g, approximate="tanh") * u
    raise ValueError(name)


def experts_ref(x, w1, w2, topk_weights, topk_ids, activation="silu", apply_router_weight_on_input=False,
                expert_map=None):
    """out[t] = sum_k w[t,k] * w2[e] . act(w1[e] . x[t]); float64, rows of one expert at a time."""
    m, h = x.shape
    inter = w1.shape[1] // 2
    out = torch.zeros(m, h, dtype=torch.float64, device=x.device)
    ids = topk_ids.long()
    if expert_map is not None:
        ids = torch.where(ids >= 0, expert_map.long()[ids.clamp(min=0)], ids)
    xd = x.double()
    for e in torch.unique(ids).tolist():
        if e < 0:
            continue
        tok, slot = torch.where(ids == e)
        hmat = xd[tok] @ w1[e].double().t()
        wt = topk_weights[tok, slot].double()[:, None]
        if apply_router_weight_on_input:
            hmat = hmat * wt
        a = act_fn(activation, hmat[:, :inter], hmat[:, inter:])
        a = a.to(x.dtype).double()  # the layer stores the intermediate in the activation dtype
        y = a @ w2[e].double().t()
        if not apply_router_weight_on_input:
            y = y * wt
        out.index_add_(0, tok, y)
    return out


def route_ref(logits, topk, renormalize=False, scoring_func="softmax", n_group=0, topk_group=0, bias=None,
              routed_scaling_factor=1.0):
    """(weights float32, ids int64) as vLLM / DeepSeek-V3 route."""
    scores = logits.double().softmax(-1) if scoring_func == "softmax" else logits.double().sigmoid()
    choice = scores if bias is None else scores + bias.double()
    if n_group:
        m, e = choice.shape
        grouped = choice.view(m, n_group, e // n_group)
        gscore = grouped.topk(2, dim=-1).values.sum(-1) if bias is not None else grouped.max(-1).values
        gidx = gscore.topk(topk_group, dim=-1).indices
        mask = torch.zeros(m, n_group, dtype=torch.bool, device=logits.device).scatter_(1, gidx, True)
        choice = choice.masked_fill(~mask[:, :, None].expand(m, n_group, e // n_group).reshape(m, e), float("-inf"))
    ids = choice.topk(topk, dim=-1).indices
    w = scores.gather(1, ids)
    if renormalize:
        w = w / w.sum(-1, keepdim=True)
    return (w * routed_scaling_factor).float(), ids


def rel_l2(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


def assert_within(got, want, tolerance):
    """The project's comparison (reference/include/fusedmoe_ref/tolerance.h): finite, and the
    relative L2 error and max |error| / rms of the reference within tolerance = (rel,
    max_over_rms)."""
    rel, max_over_rms = tolerance
    assert torch.isfinite(got).all(), "non-finite output"
    err = rel_l2(got, want)
    rms = want.double().pow(2).mean().sqrt().item() if want.numel() else 0.0
    max_abs = (got.double() - want.double()).abs().max().item() if got.numel() else 0.0
    assert err <= rel, f"relative L2 {err:.3g} > {rel}"
    assert max_abs <= max_over_rms * rms + 1e-30, f"max |error| {max_abs:.3g} > {max_over_rms} * rms {rms:.3g}"
