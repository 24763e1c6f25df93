r"""Self-attention from scratch, as in the seed's section 1.

.. math::
    Q = XW_Q,\quad K = XW_K,\quad V = XW_V,\qquad
    \text{Attention}(Q, K, V) = \text{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ._validate import check_int, check_tensor

__all__ = ["scaled_dot_product_attention", "causal_mask", "attention_scores", "SelfAttention"]


def attention_scores(q: Tensor, k: Tensor) -> Tensor:
    r"""The score matrix :math:`S = QK^\top / \sqrt{d_k}`, shape ``(..., n_q, n_k)``."""
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def _check_qkv(q: Tensor, k: Tensor, v: Tensor) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, t, min_ndim=2)
        if not t.is_floating_point():
            raise TypeError(f"{name} must be a floating tensor, got dtype {t.dtype}.")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same last dimension d_k, got q {tuple(q.shape)} and k {tuple(k.shape)}."
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of rows (one value per key), got k {tuple(k.shape)} "
            f"and v {tuple(v.shape)}."
        )


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""Return ``(output, weights)`` with weights :math:`A = \text{softmax}(QK^\top/\sqrt{d_k})` and output :math:`AV`.

    ``mask`` follows :func:`torch.nn.functional.scaled_dot_product_attention`: a bool tensor
    where ``True`` means "may attend", or a float tensor added to the scores. Its shape must
    broadcast to ``(..., n_q, n_k)``. A query row with nothing to attend to is an error.
    """
    _check_qkv(q, k, v)
    scores = attention_scores(q, k)
    if mask is not None:
        check_tensor("mask", mask, min_ndim=2)
        try:
            torch.broadcast_shapes(mask.shape, scores.shape)
        except RuntimeError:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not broadcast to the score matrix "
                f"{tuple(scores.shape)} (queries × keys)."
            ) from None
        if mask.dtype == torch.bool:
            if not bool(mask.any(dim=-1).all()):
                raise ValueError("mask leaves a query row with no key to attend to (a row of all False).")
            scores = scores.masked_fill(~mask, float("-inf"))
        else:
            scores = scores + mask
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def causal_mask(n: int) -> Tensor:
    """The ``n × n`` bool mask with ``True`` where query ``i`` may attend to key ``j`` (``j <= i``)."""
    n = check_int("n", n, minimum=1)
    return torch.ones(n, n, dtype=torch.bool).tril()


class SelfAttention(nn.Module):
    r"""One head of self-attention with projections :math:`W_Q, W_K, W_V \in \mathbb{R}^{d \times d}` (no bias).

    ``forward(x, mask=None)`` returns ``(output, weights)``. The weights are drawn from a
    generator seeded with ``seed``, so the same seed gives the same head everywhere.
    """

    def __init__(self, dim: int, *, seed: int = 0) -> None:
        super().__init__()
        self.dim = check_int("dim", dim, minimum=1)
        seed = check_int("seed", seed)
        gen = torch.Generator().manual_seed(seed)
        scale = 1.0 / math.sqrt(self.dim)
        self.W_Q = nn.Parameter(torch.randn(self.dim, self.dim, generator=gen) * scale)
        self.W_K = nn.Parameter(torch.randn(self.dim, self.dim, generator=gen) * scale)
        self.W_V = nn.Parameter(torch.randn(self.dim, self.dim, generator=gen) * scale)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"

    def project(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        r""":math:`Q = XW_Q,\ K = XW_K,\ V = XW_V`."""
        x = check_tensor("x", x, min_ndim=2)
        if x.shape[-1] != self.dim:
            raise ValueError(f"x must have last dimension {self.dim}, got shape {tuple(x.shape)}.")
        return x @ self.W_Q, x @ self.W_K, x @ self.W_V

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        q, k, v = self.project(x)
        return scaled_dot_product_attention(q, k, v, mask)
