r"""Notebook 03, "Sinusoidal frequencies" (seed §3.1–3.3): the table's frequencies, and the precision it needs.

* :func:`heatmap_values`: what the seed's heatmap shows, :math:`\sin(pos\,\omega_i)` (or cos, or both);
* :func:`seed_sinusoidal` / :func:`seed_sinusoidal_rows`: the seed's all-float32 recipe, to measure
  how much precision float32 angles lose;
* :func:`float32_spacing`: the gap between a float32 number and the next one (one ulp);
* :func:`first_unrepresentable_integer`: the first integer position a float dtype cannot store.

The table itself is :func:`pe_helpers.encodings.sinusoidal`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor

from ._validate import as_int_tensor, as_real_tensor, require_base, require_budget, require_choice, require_dim
from ._validate import require_float_dtype, require_length
from .encodings import sinusoidal
from .i18n import _

__all__ = [
    "CHANNELS",
    "heatmap_values",
    "seed_sinusoidal",
    "seed_sinusoidal_rows",
    "float32_spacing",
    "first_unrepresentable_integer",
]

#: What the heatmap shows: the sin columns (2i), the cos columns (2i+1), or all d columns interleaved.
CHANNELS = ("sin", "cos", "both")


def heatmap_values(seq_len: int, d: int, base: float, channel: str) -> Tensor:
    """The array the heatmap shows: ``[seq_len, d/2]`` for "sin"/"cos", ``[seq_len, d]`` (interleaved) for "both"."""
    seq_len = require_length("seq_len", seq_len)
    d = require_dim("d", d)
    channel = require_choice("channel", channel, CHANNELS)
    require_budget(f"heatmap_values(seq_len={seq_len}, d={d})", (seq_len, d), torch.float32)
    pe = sinusoidal(seq_len, d, base=base)
    if channel == "sin":
        return pe[:, 0::2]
    if channel == "cos":
        return pe[:, 1::2]
    return pe


def seed_sinusoidal(seq_len: int, dim: int, base: float = 10000.0) -> Tensor:
    """The seed's implementation, line for line: every step in float32 (positions, frequencies, angles).

    Kept as the *reference for a precision problem*: its angles ``pos * inv_freq`` are rounded to
    float32, which costs up to one float32 spacing of ``pos`` (about 0.06 rad near position 1e6).
    """
    seq_len = require_length("seq_len", seq_len)
    dim = require_dim("dim", dim)
    base = require_base(base)
    require_budget(f"seed_sinusoidal(seq_len={seq_len}, dim={dim})", (seq_len, dim), torch.float32, copies=2)
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
    dim = require_dim("dim", dim)
    base = require_base(base)
    pos = as_int_tensor("positions", positions, minimum=0, ndim=1).cpu()
    require_budget(f"seed_sinusoidal_rows({len(pos)} positions, dim={dim})", (len(pos), dim), torch.float32, copies=2)
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
    t = as_real_tensor("x", x).abs()
    if t.numel() and t.device.type != "meta" and float(t.max()) > torch.finfo(torch.float32).max:
        raise ValueError(_("x must be within the float32 range (|x| <= {0:.4g}), got {1:.4g}.").format(torch.finfo(torch.float32).max, float(t.max())))
    t = t.to(torch.float32)
    up = torch.nextafter(t, torch.full_like(t, math.inf))
    return up.to(torch.float64) - t.to(torch.float64)


def first_unrepresentable_integer(dtype: torch.dtype) -> int:
    r"""The smallest non-negative integer that ``dtype`` cannot store exactly: :math:`2^{p} + 1`.

    ``p`` is the number of significand bits (stored bits + the implicit one), read from
    ``torch.finfo(dtype).eps`` :math:`= 2^{1-p}`: 257 for bfloat16 (p = 8), 2049 for float16,
    2**24 + 1 for float32. Above :math:`2^p` consecutive integers are no longer all representable.
    """
    dtype = require_float_dtype(dtype)
    significand_bits = 1 - round(math.log2(torch.finfo(dtype).eps))
    return 2**significand_bits + 1
