r"""Self-attention from scratch, as in the seed's section 1.

.. math::
    Q = XW_Q,\quad K = XW_K,\quad V = XW_V,\qquad
    \text{Attention}(Q, K, V) = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ._validate import require_budget, require_float_tensor, require_int, require_same_kind, require_seed, require_tensor
from .i18n import _

__all__ = ["scaled_dot_product_attention", "causal_mask", "attention_scores", "SelfAttention"]


def attention_scores(q: Tensor, k: Tensor) -> Tensor:
    r"""The score matrix :math:`S = QK^\top / \sqrt{d_k}`, shape ``(..., n_q, n_k)``.

    ``q`` ``(..., n_q, d_k)`` and ``k`` ``(..., n_k, d_k)``: real floating tensors of one dtype and
    device, with batch dimensions that broadcast.
    """
    _scores_shape(q, k)
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def _scores_shape(q: object, k: object) -> tuple[int, ...]:
    """Check ``q`` and ``k`` and return the shape of :math:`QK^\top` (within the memory budget)."""
    q = require_float_tensor("q", q, min_ndim=2)
    k = require_float_tensor("k", k, min_ndim=2)
    require_same_kind(("q", "k"), q, k)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            _("q and k must have the same last dimension d_k, got q {0} and k {1}.").format(tuple(q.shape), tuple(k.shape))
        )
    if q.shape[-1] == 0:
        raise ValueError(_("q and k must have a last dimension d_k >= 1, got q {0}.").format(tuple(q.shape)))
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except RuntimeError:
        raise ValueError(
            _("q and k must have batch dimensions that broadcast, got q {0} and k {1}.").format(tuple(q.shape), tuple(k.shape))
        ) from None
    shape = (*batch, q.shape[-2], k.shape[-2])
    require_budget(f"the scores of q {tuple(q.shape)} and k {tuple(k.shape)}", shape, q.dtype, copies=2)
    return shape


def _check_qkv(q: Tensor, k: Tensor, v: Tensor) -> tuple[int, ...]:
    shape = _scores_shape(q, k)
    v = require_float_tensor("v", v, min_ndim=2)
    require_same_kind(("q", "v"), q, v)
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            _("k and v must have the same number of rows (one value per key), got k {0} and v {1}.").format(tuple(k.shape), tuple(v.shape))
        )
    try:
        torch.broadcast_shapes(shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            _("v must have batch dimensions that broadcast with q and k, got v {0} and scores {1}.").format(tuple(v.shape), shape)
        ) from None
    return shape


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""Return ``(output, weights)`` with weights :math:`A = \text{softmax}(QK^\top/\sqrt{d_k})` and output :math:`AV`.

    ``mask`` follows :func:`torch.nn.functional.scaled_dot_product_attention`: a bool tensor
    where ``True`` means "may attend", or a real floating tensor added to the scores (0 or
    ``-inf``, say). An integer 0/1 mask is an error (it would be *added*): use ``mask.bool()``.
    Its shape must broadcast to ``(..., n_q, n_k)`` without changing it, on the scores' device.
    A query row with nothing to attend to is an error.
    """
    shape = _check_qkv(q, k, v)
    if mask is not None:
        mask = require_tensor("mask", mask, min_ndim=2)
        if mask.dtype != torch.bool and not mask.is_floating_point():
            hint = " (a 0/1 integer mask would be added to the scores: use mask.bool())" \
                if not mask.is_complex() else ""
            raise TypeError(_("mask must be a bool tensor (True = may attend) or a real floating tensor added to the scores, got dtype {0}{1}.").format(mask.dtype, hint))
        if mask.device != q.device:
            raise TypeError(_("mask must be on the device of q, k, v ({0}), got {1}.").format(q.device, mask.device))
        try:
            fits = tuple(torch.broadcast_shapes(mask.shape, shape)) == shape
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(
                _("mask of shape {0} does not broadcast to the score matrix {1} (queries × keys).").format(tuple(mask.shape), shape)
            )
    scores = attention_scores(q, k)
    if mask is not None:
        if mask.dtype == torch.bool:
            if mask.device.type != "meta" and not bool(mask.any(dim=-1).all()):
                raise ValueError(_("mask leaves a query row with no key to attend to (a row of all False)."))
            scores = scores.masked_fill(~mask, float("-inf"))
        else:
            if mask.device.type != "meta" and bool((torch.isnan(mask) | torch.isposinf(mask)).any()):
                raise ValueError(_("mask must not contain NaN or +inf (use 0 for 'may attend', -inf for 'may not attend')."))
            scores = scores + mask
            if scores.device.type != "meta" and bool(torch.isneginf(scores).all(dim=-1).any()):
                raise ValueError(_("mask leaves a query row with no key to attend to (a row of all -inf)."))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def causal_mask(n: int) -> Tensor:
    """The ``n × n`` bool mask with ``True`` where query ``i`` may attend to key ``j`` (``j <= i``)."""
    n = require_int("n", n, minimum=1)
    require_budget(f"causal_mask(n={n})", (n, n), torch.bool, copies=2)
    return torch.ones(n, n, dtype=torch.bool).tril()


class SelfAttention(nn.Module):
    r"""One head of self-attention with projections :math:`W_Q, W_K, W_V \in \mathbb{R}^{d \times d}` (no bias).

    ``forward(x, mask=None)`` returns ``(output, weights)``. The weights are drawn from a
    generator seeded with ``seed``, so the same seed gives the same head everywhere.
    """

    def __init__(self, dim: int, *, seed: int = 0) -> None:
        super().__init__()
        self.dim = require_int("dim", dim, minimum=1)
        seed = require_seed("seed", seed)
        require_budget(f"SelfAttention(dim={self.dim})", (3, self.dim, self.dim), torch.float32, copies=2)
        gen = torch.Generator().manual_seed(seed)
        scale = 1.0 / math.sqrt(self.dim)
        self.W_Q = nn.Parameter(torch.randn(self.dim, self.dim, generator=gen) * scale)
        self.W_K = nn.Parameter(torch.randn(self.dim, self.dim, generator=gen) * scale)
        self.W_V = nn.Parameter(torch.randn(self.dim, self.dim, generator=gen) * scale)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

    def project(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        r""":math:`Q = XW_Q,\ K = XW_K,\ V = XW_V`, in ``x``'s dtype and on ``x``'s device.

        ``x``: a real floating tensor ``(..., n, dim)``; the weights are cast to its dtype (float64
        input gets float64 arithmetic, float16 input float16), gradients still reach them.
        """
        x = require_float_tensor("x", x, min_ndim=2)
        if x.shape[-1] != self.dim:
            raise ValueError(_("x must have last dimension {0}, got shape {1}.").format(self.dim, tuple(x.shape)))
        require_budget(f"SelfAttention.project(x of shape {tuple(x.shape)})", x.shape, x.dtype, copies=3)

        def cast(w: Tensor) -> Tensor:
            return w.to(dtype=x.dtype, device=x.device)

        return x @ cast(self.W_Q), x @ cast(self.W_K), x @ cast(self.W_V)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.project(x)
        return scaled_dot_product_attention(q, k, v, mask)
