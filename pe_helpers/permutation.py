r"""Permutations and the equivariance check of the seed's section 1.2.

A permutation ``perm`` of ``0..n-1`` reorders rows: :math:`(PX)_i = X_{perm[i]}`. A function
``f`` is permutation-equivariant when :math:`f(PX) = P f(X)` for every ``P``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from ._validate import check_int, check_tensor

__all__ = ["permutation_matrix", "random_permutation", "as_permutation", "check_equivariance", "permute_rows"]


def as_permutation(perm: Tensor | Sequence[int], n: int | None = None) -> Tensor:
    """``perm`` as a LongTensor, after checking it is a permutation of ``0..n-1``."""
    try:
        p = torch.as_tensor(perm)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"perm must be a sequence of integers, got {perm!r}.") from None
    if p.ndim == 1 and len(p) == 0:
        raise ValueError("perm must be a permutation of 0..n-1 with at least one element, got [].")
    if p.ndim != 1 or p.is_floating_point() or p.dtype == torch.bool or p.is_complex():
        raise TypeError(f"perm must be a 1-D sequence of integers, got {perm!r}.")
    size = len(p) if n is None else n
    if sorted(p.tolist()) != list(range(size)):
        raise ValueError(
            f"perm must be a permutation of 0..{size - 1} (each index exactly once), got {p.tolist()}."
        )
    return p.long()


def permutation_matrix(perm: Tensor | Sequence[int]) -> Tensor:
    r"""The ``n × n`` matrix :math:`P` with :math:`P_{i, perm[i]} = 1`, so :math:`(PX)_i = X_{perm[i]}`."""
    p = as_permutation(perm)
    n = len(p)
    mat = torch.zeros(n, n)
    mat[torch.arange(n), p] = 1.0
    return mat


def random_permutation(n: int, *, seed: int) -> Tensor:
    """A random permutation of ``0..n-1`` from a generator seeded with ``seed`` (same seed, same order)."""
    n = check_int("n", n, minimum=1)
    seed = check_int("seed", seed)
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed))


def permute_rows(x: Tensor, perm: Tensor | Sequence[int]) -> Tensor:
    r""":math:`PX`: the rows (the second-to-last dimension) of ``x`` in the order ``perm``."""
    p = as_permutation(perm, x.shape[-2])
    return x[..., p, :]


def check_equivariance(fn: Callable[[Tensor], Tensor], x: Tensor, perm: Tensor | Sequence[int]) -> float:
    r"""Largest entry of :math:`|f(PX) - P f(X)|`: 0 (up to rounding) when ``fn`` is equivariant.

    ``x`` has tokens along its second-to-last dimension. If ``fn`` returns a tuple (like
    ``SelfAttention``'s ``(output, weights)``), its first element is compared.
    """
    x = check_tensor("x", x, min_ndim=2)
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}.")
    p = as_permutation(perm, x.shape[-2])
    mat = permutation_matrix(p).to(x.dtype)

    def first(out: object) -> Tensor:
        return out[0] if isinstance(out, tuple) else out  # type: ignore[return-value]

    out_of_permuted = first(fn(mat @ x))
    permuted_out = mat @ first(fn(x))
    return float((out_of_permuted - permuted_out).abs().max())
