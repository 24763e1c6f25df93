r"""Notebook 04, "The rotation identity" (seed §3.4): each pair turns on a circle, and what the dot product keeps.

* :func:`pe_dot_product`: :math:`PE(p)\cdot PE(p+k) = \sum_i \cos(k\,\omega_i)` (depends on ``k`` only);
* :func:`first_rise`: the first offset where that dot product goes *up* (its decay is not monotone);
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from ._validate import (MAX_POSITION, as_int_tensor, as_real_tensor, require_base, require_budget, require_dim, require_int,
                        require_real)
from .encodings import inverse_frequencies
from .i18n import _

__all__ = [
    "phasor",
    "pe_dot_product",
    "first_rise",
]


def phasor(positions: float | Tensor | Sequence[float], pair: int, dim: int, base: float = 10000.0) -> Tensor:
    r"""Pair ``i`` of the encoding, :math:`[\sin(pos\,\omega_i), \cos(pos\,\omega_i)]`, at any positions (float64).

    Shape ``positions.shape + (2,)``; equal to columns ``2i, 2i+1`` of :func:`~pe_helpers.encodings.sinusoidal`
    at non-negative positions, and defined by the same formula at negative ones.
    """
    dim = require_dim("dim", dim)
    pair = require_int("pair", pair, minimum=0)
    if pair >= dim // 2:
        raise ValueError(_("pair must be in 0..{0} for dim = {1}, got {2}.").format(dim // 2 - 1, dim, pair))
    base = require_base(base)
    pos = as_real_tensor("positions", positions)
    require_budget(f"phasor(positions of shape {tuple(pos.shape)})", (*pos.shape, 2), torch.float64, copies=2)
    angle = pos * inverse_frequencies(dim, base)[pair].to(pos.device)
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1)


def pe_dot_product(k: float | Tensor | Sequence[float], dim: int, base: float = 10000.0) -> Tensor:
    r"""The dot product of two sinusoidal encodings ``k`` positions apart, in float64.

    .. math::
        PE(p)\cdot PE(p+k) = \sum_{i=0}^{d/2-1} \big[\sin(p\omega_i)\sin((p+k)\omega_i)
        + \cos(p\omega_i)\cos((p+k)\omega_i)\big] = \sum_{i=0}^{d/2-1} \cos(k\,\omega_i)

    It does not depend on ``p``, and ``cos`` is even, so ``k`` and ``-k`` give the same value.
    ``k`` may be a number or a tensor of offsets; the result has ``k``'s shape. At ``k = 0`` it is ``d/2``.
    """
    dim = require_dim("dim", dim)
    base = require_base(base)
    offsets = as_real_tensor("k", k)
    require_budget(f"pe_dot_product(k of shape {tuple(offsets.shape)}, dim={dim})", (*offsets.shape, dim // 2),
                 torch.float64, copies=2)
    return torch.cos(offsets[..., None] * inverse_frequencies(dim, base).to(offsets.device)).sum(-1)


def first_rise(dim: int, base: float = 10000.0, *, k_max: int = 10000) -> int | None:
    r"""The smallest integer ``k >= 0`` with :math:`f(k+1) > f(k)`, for :math:`f(k) = \sum_i \cos(k\omega_i)`.

    A monotone decay would have no such ``k``; ``None`` means none was found up to ``k_max``.
    """
    dim = require_dim("dim", dim)
    base = require_base(base)
    k_max = require_int("k_max", k_max, minimum=1)
    require_budget(f"first_rise(dim={dim}, k_max={k_max})", (k_max + 1, dim // 2), torch.float64, copies=2)
    values = pe_dot_product(torch.arange(k_max + 1), dim, base)
    rises = (values[1:] > values[:-1]).nonzero()
    return int(rises[0]) if len(rises) else None


def pair_block(k: float, pair: int, d: int, base: float = 10000.0) -> Tensor:
    r"""The 2×2 block of :math:`R(k)` acting on columns ``(2i, 2i+1)``: :math:`\begin{bmatrix}\cos k\omega_i & \sin k\omega_i\\
    -\sin k\omega_i & \cos k\omega_i\end{bmatrix}` (read from :func:`~pe_helpers.encodings.shift_matrix`)."""
    from .encodings import shift_matrix

    d = require_dim("d", d)
    pair = require_int("pair", pair, minimum=0)
    if pair >= d // 2:
        raise ValueError(_("pair must be in 0..{top} for d = {d}, got {value}.").format(top=d // 2 - 1, d=d, value=pair))
    require_budget(f"pair_block(d={d})", (d, d), torch.float64, copies=2)
    r = shift_matrix(k, d, base=base)
    return r[2 * pair: 2 * pair + 2, 2 * pair: 2 * pair + 2]


def measured_dot_products(p: int, ks: Tensor, d: int, base: float = 10000.0) -> Tensor:
    r""":math:`PE(p)\cdot PE(p+k)` for each ``k`` in ``ks`` (all with ``p + k >= 0``), from rows of the float64 table.

    Each row comes from :func:`~pe_helpers.encodings.sinusoidal` (``offset = p + k``), so the dots are an
    independent check of the closed form :func:`~pe_helpers.rotation.pe_dot_product`.
    """
    from .encodings import sinusoidal

    p = require_int("p", p, minimum=0)
    ks = as_int_tensor("ks", ks).reshape(-1)
    d = require_dim("d", d)
    base = require_base(base)
    require_budget(f"measured_dot_products({ks.numel()} offsets, d={d})", (ks.numel() + 1, d), torch.float64, copies=2)
    if ks.numel() and int((p + ks).max()) > MAX_POSITION:
        raise ValueError(_("p + k must be at most 2**53 for every k in ks, got p = {p} and ks up to {high}.").format(p=p, high=int(ks.max())))
    if ks.numel() and int((p + ks).min()) < 0:
        raise ValueError(_("p + k must be >= 0 for every k in ks, got p = {p} and ks down to {low}.").format(p=p, low=int(ks.min())))
    if not ks.numel():
        return torch.zeros(0, dtype=torch.float64)
    rows = torch.cat([sinusoidal(1, d, base=base, offset=p + int(k), dtype=torch.float64) for k in ks])
    return rows @ sinusoidal(1, d, base=base, offset=p, dtype=torch.float64)[0]


def mirrored_dot_products(p: int, ks: Tensor, d: int, base: float = 10000.0) -> Tensor:
    r""":math:`PE(p)\cdot PE(p+k)` for offsets ``k`` with ``p + k < 0`` (before the table's first row).

    By the symmetry :math:`PE(a)\cdot PE(b) = PE(b)\cdot PE(a)` and shift invariance, the value at
    ``k`` equals the table's :math:`PE(0)\cdot PE(|k|)`: measured from rows 0 and ``|k|``, so the ``-k``
    side of the plot is measured data too, for every ``p`` (``p = 0`` included).
    """
    require_int("p", p, minimum=0)  # the value does not depend on p: the table's rows 0 and |k| are measured
    ks = as_int_tensor("ks", ks).reshape(-1)
    return measured_dot_products(0, ks.abs(), d, base)


def phasor_label_radii(angle_a: float, angle_b: float, *, near: float = 0.35) -> tuple[float, float]:
    """Radii for the labels of two points on the unit circle: both outside (1.22), unless their angles are
    within ``near`` rad of each other, then the first goes inside (0.7), so "pos" and "pos+k" never overlap.
    The phasor figure reads only which side each label is on (radius > 1: outside) and places it itself."""
    import math

    angle_a, angle_b = require_real("angle_a", angle_a), require_real("angle_b", angle_b)
    near = require_real("near", near, minimum=0.0)
    gap = abs(math.remainder(angle_a - angle_b, 2 * math.pi))
    return (0.7 if gap < near else 1.22), 1.22


__all__ += ["pair_block", "measured_dot_products", "mirrored_dot_products", "phasor_label_radii"]
