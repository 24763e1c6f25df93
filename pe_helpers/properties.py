r"""Properties of the sinusoidal table that notebooks 03 and 04 measure (compute layer, pure tensors).

* :func:`pe_dot_product`: :math:`PE(p)\cdot PE(p+k) = \sum_i \cos(k\,\omega_i)` (depends on ``k`` only);
* :func:`first_rise`: the first offset where that dot product goes *up* (its decay is not monotone);
* :func:`seed_sinusoidal` / :func:`seed_sinusoidal_rows`: the seed's all-float32 recipe, to measure
  how much precision float32 angles lose;
* :func:`float32_spacing`: the gap between a float32 number and the next one (one ulp);
* :func:`first_unrepresentable_integer`: the first integer position a float dtype cannot store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from ._validate import check_base, check_dim, check_float_dtype, check_int, check_length
from .encodings import inverse_frequencies

__all__ = [
    "phasor",
    "pe_dot_product",
    "first_rise",
    "seed_sinusoidal",
    "seed_sinusoidal_rows",
    "float32_spacing",
    "first_unrepresentable_integer",
]


def _as_real_tensor(name: str, value: object) -> Tensor:
    try:
        t = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{name} must be a number or a tensor of numbers, got {value!r}.") from None
    if t.dtype == torch.bool or t.is_complex():
        raise TypeError(f"{name} must be real numbers, got dtype {t.dtype}.")
    t = t.to(torch.float64)
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} must be finite, got {value!r}.")
    return t


def phasor(positions: float | Tensor | Sequence[float], pair: int, dim: int, base: float = 10000.0) -> Tensor:
    r"""Pair ``i`` of the encoding, :math:`[\sin(pos\,\omega_i), \cos(pos\,\omega_i)]`, at any positions (float64).

    Shape ``positions.shape + (2,)``; equal to columns ``2i, 2i+1`` of :func:`~pe_helpers.encodings.sinusoidal`
    at non-negative positions, and defined by the same formula at negative ones.
    """
    dim = check_dim("dim", dim)
    pair = check_int("pair", pair, minimum=0)
    if pair >= dim // 2:
        raise ValueError(f"pair must be in 0..{dim // 2 - 1} for dim = {dim}, got {pair}.")
    angle = _as_real_tensor("positions", positions) * inverse_frequencies(dim, base)[pair]
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1)


def pe_dot_product(k: float | Tensor | Sequence[float], dim: int, base: float = 10000.0) -> Tensor:
    r"""The dot product of two sinusoidal encodings ``k`` positions apart, in float64.

    .. math::
        PE(p)\cdot PE(p+k) = \sum_{i=0}^{d/2-1} \big[\sin(p\omega_i)\sin((p+k)\omega_i)
        + \cos(p\omega_i)\cos((p+k)\omega_i)\big] = \sum_{i=0}^{d/2-1} \cos(k\,\omega_i)

    It does not depend on ``p``, and ``cos`` is even, so ``k`` and ``-k`` give the same value.
    ``k`` may be a number or a tensor of offsets; the result has ``k``'s shape. At ``k = 0`` it is ``d/2``.
    """
    dim = check_dim("dim", dim)
    base = check_base(base)
    offsets = _as_real_tensor("k", k)
    return torch.cos(offsets[..., None] * inverse_frequencies(dim, base)).sum(-1)


def first_rise(dim: int, base: float = 10000.0, *, k_max: int = 10000) -> int | None:
    r"""The smallest integer ``k >= 0`` with :math:`f(k+1) > f(k)`, for :math:`f(k) = \sum_i \cos(k\omega_i)`.

    A monotone decay would have no such ``k``; ``None`` means none was found up to ``k_max``.
    """
    k_max = check_int("k_max", k_max, minimum=1)
    values = pe_dot_product(torch.arange(k_max + 1), dim, base)
    rises = (values[1:] > values[:-1]).nonzero()
    return int(rises[0]) if len(rises) else None


def seed_sinusoidal(seq_len: int, dim: int, base: float = 10000.0) -> Tensor:
    """The seed's implementation, line for line: every step in float32 (positions, frequencies, angles).

    Kept as the *reference for a precision problem*: its angles ``pos * inv_freq`` are rounded to
    float32, which costs up to one float32 spacing of ``pos`` (about 0.06 rad near position 1e6).
    """
    seq_len = check_length("seq_len", seq_len)
    dim = check_dim("dim", dim)
    base = check_base(base)
    position = torch.arange(seq_len).float().unsqueeze(1)  # [seq_len, 1]
    index = torch.arange(0, dim, 2).float()  # [dim / 2]
    inv_freq = base ** (-index / dim)  # [dim / 2]
    angles = position * inv_freq  # [seq_len, dim / 2]
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def seed_sinusoidal_rows(positions: Tensor | Sequence[int], dim: int, base: float = 10000.0) -> Tensor:
    """Rows ``positions`` of :func:`seed_sinusoidal` (same float32 operations), without building the whole table.

    ``seed_sinusoidal_rows(p, d) == seed_sinusoidal(n, d)[p]`` bit for bit, for every ``p < n``, so
    errors near position 1e6 can be measured without a 1e6-row table.
    """
    dim = check_dim("dim", dim)
    base = check_base(base)
    pos = torch.as_tensor(positions)
    if pos.ndim != 1 or pos.is_floating_point() or pos.dtype == torch.bool:
        raise TypeError(f"positions must be a 1-D sequence of integers, got {positions!r}.")
    if pos.numel() and int(pos.min()) < 0:
        raise ValueError(f"positions must be >= 0, got {int(pos.min())}.")
    position = pos.float().unsqueeze(1)
    index = torch.arange(0, dim, 2).float()
    inv_freq = base ** (-index / dim)
    angles = position * inv_freq
    pe = torch.zeros(len(pos), dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def float32_spacing(x: float | Tensor | Sequence[float]) -> Tensor:
    r"""One float32 ulp at ``x``: the distance from ``|x|`` (rounded to float32) to the next float32 up, in float64.

    For :math:`2^e \le |x| < 2^{e+1}` it is :math:`2^{e-23}`: 2**-23 near 1, 0.0078 near 1e5, 0.0625 near 1e6.
    A float32 angle near ``x`` can be off by up to half of it.
    """
    t = _as_real_tensor("x", x).abs().to(torch.float32)
    up = torch.nextafter(t, torch.full_like(t, math.inf))
    return up.to(torch.float64) - t.to(torch.float64)


def first_unrepresentable_integer(dtype: torch.dtype) -> int:
    r"""The smallest non-negative integer that ``dtype`` cannot store exactly: :math:`2^{p} + 1`.

    ``p`` is the number of significand bits (stored bits + the implicit one), read from
    ``torch.finfo(dtype).eps`` :math:`= 2^{1-p}`: 257 for bfloat16 (p = 8), 2049 for float16,
    2**24 + 1 for float32. Above :math:`2^p` consecutive integers are no longer all representable.
    """
    dtype = check_float_dtype(dtype)
    significand_bits = 1 - round(math.log2(torch.finfo(dtype).eps))
    return 2**significand_bits + 1
