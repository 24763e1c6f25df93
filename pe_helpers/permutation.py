r"""Permutations and the equivariance check of the seed's section 1.2.

A permutation ``perm`` of ``0..n-1`` reorders rows: :math:`(PX)_i = X_{perm[i]}`. A function
``f`` is permutation-equivariant when :math:`f(PX) = P f(X)` for every ``P``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from ._validate import _short, as_int_tensor, require_budget, require_int, require_seed, require_tensor
from .i18n import _

__all__ = ["permutation_matrix", "random_permutation", "as_permutation", "equivariance_gap", "permute_rows"]


def as_permutation(perm: Tensor | Sequence[int], n: int | None = None) -> Tensor:
    """``perm`` as a LongTensor, after checking it is a permutation of ``0..n-1`` (``n = len(perm)`` by default).

    ``perm``: a 1-D list, numpy array or integer tensor (on the CPU) with each index exactly once.
    """
    if isinstance(perm, Tensor) and perm.device.type == "meta":
        raise TypeError(_("perm must hold real values (a list or a CPU tensor), got a meta tensor."))
    if isinstance(perm, (list, tuple)) and not perm or isinstance(perm, Tensor) and perm.shape == (0,):
        raise ValueError(_("perm must be a permutation of 0..n-1 with at least one element, got []."))
    p = as_int_tensor("perm", perm)
    if p.ndim != 1:
        raise ValueError(_("perm must be a 1-D sequence of integers, got shape {0}: {1}.").format(tuple(p.shape), _short(perm)))
    if len(p) == 0:
        raise ValueError(_("perm must be a permutation of 0..n-1 with at least one element, got []."))
    size = len(p) if n is None else n
    if len(p) != size or not torch.equal(torch.sort(p.cpu()).values, torch.arange(size)):
        raise ValueError(
            _("perm must be a permutation of 0..{0} (each index exactly once), got {1}.").format(size - 1, _short(p.tolist()))
        )
    return p.long()


def permutation_matrix(perm: Tensor | Sequence[int]) -> Tensor:
    r"""The ``n × n`` matrix :math:`P` with :math:`P_{i, perm[i]} = 1`, so :math:`(PX)_i = X_{perm[i]}`."""
    p = as_permutation(perm)
    n = len(p)
    require_budget(f"permutation_matrix(perm of length {n})", (n, n), torch.float32)
    mat = torch.zeros(n, n)
    mat[torch.arange(n), p] = 1.0
    return mat


def random_permutation(n: int, *, seed: int) -> Tensor:
    """A random permutation of ``0..n-1`` from a generator seeded with ``seed`` (same seed, same order)."""
    n = require_int("n", n, minimum=1)
    seed = require_seed("seed", seed)
    require_budget(f"random_permutation(n={n})", (n,), torch.int64, copies=2)
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed))


def permute_rows(x: Tensor, perm: Tensor | Sequence[int]) -> Tensor:
    r""":math:`PX`: the rows (the second-to-last dimension) of ``x`` in the order ``perm``.

    ``x``: a tensor ``(..., n, d)`` of any dtype, on any device; ``perm``: a permutation of ``0..n-1``.
    """
    x = require_tensor("x", x, min_ndim=2)
    p = as_permutation(perm, x.shape[-2])
    return x[..., p.to(x.device), :]


def equivariance_gap(fn: Callable[[Tensor], Tensor], x: Tensor, perm: Tensor | Sequence[int]) -> float:
    r"""Largest entry of :math:`|f(PX) - P f(X)|`: 0 (up to rounding) when ``fn`` is equivariant.

    ``x`` has tokens along its second-to-last dimension. If ``fn`` returns a tuple (like
    ``SelfAttention``'s ``(output, weights)``), its first element is compared.
    """
    x = require_tensor("x", x, min_ndim=2)
    if not callable(fn):
        raise TypeError(_("fn must be callable, got {0}.").format(type(fn).__name__))
    p = as_permutation(perm, x.shape[-2])

    def first(out: object, what: str) -> Tensor:
        out = out[0] if isinstance(out, tuple) and out else out
        if not isinstance(out, Tensor) or out.ndim < 2 or out.shape[-2] != x.shape[-2]:
            shape = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
            raise TypeError(_("fn must return a tensor with one row per token ({0} rows, shape (..., {1}, d)), got {2} for {3}.").format(x.shape[-2], x.shape[-2], shape, what))
        return out

    out_of_permuted = first(fn(permute_rows(x, p)), "f(PX)")
    permuted_out = permute_rows(first(fn(x), "f(X)"), p)
    if out_of_permuted.shape != permuted_out.shape:
        raise TypeError(_("fn must return the same shape for X and PX, got {0} and {1}.").format(tuple(permuted_out.shape), tuple(out_of_permuted.shape)))
    if out_of_permuted.numel() == 0:
        return 0.0
    if not (out_of_permuted.is_floating_point() or out_of_permuted.is_complex()):
        out_of_permuted, permuted_out = out_of_permuted.double(), permuted_out.double()  # ints, bools
    return float((out_of_permuted - permuted_out).abs().max())
