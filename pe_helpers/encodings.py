r"""Absolute positional encodings: sinusoidal, learned, and the rotation that links them to RoPE.

Notation (used in every notebook):

* ``pos`` a position, ``d`` the model dimension, ``i`` a dimension *pair* (0 <= i < d/2);
* :math:`\omega_i = \text{base}^{-2i/d}`, the angular frequency of pair ``i``;
* interleaved layout (the paper, the seed):
  :math:`PE(pos, 2i) = \sin(pos\,\omega_i)`, :math:`PE(pos, 2i+1) = \cos(pos\,\omega_i)`;
* concatenated layout: columns ``[sin(pos ω_0..ω_{d/2-1}) | cos(...)]``, the same ω (tensor2tensor and fairseq
  share this layout but not the frequencies: they use :math:`10000^{-i/(d/2-1)}`);
* :math:`R(k)`, the block-diagonal rotation with :math:`PE(pos+k) = R(k)\,PE(pos)`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn

from ._validate import (
    MAX_POSITION,
    MEMORY_BUDGET_BYTES,
    ROPE_LAYOUTS,
    as_int_tensor,
    as_real_tensor,
    require_base,
    require_budget,
    require_fits,
    require_float_tensor,
    require_seed,
    require_choice,
    require_dim,
    require_float_dtype,
    require_int,
    require_last_dim,
    require_layout,
    require_length,
    require_real,
    require_tensor,
)
from .i18n import _

__all__ = [
    "PositionOutOfRangeError",
    "inverse_frequencies",
    "wavelengths",
    "sinusoidal",
    "layout_permutation",
    "shift_matrix",
    "LearnedPositionalEmbedding",
    "SinusoidalPositionalEncoding",
    "rope_angles",
    "apply_rope",
    "rotate_pairs",
]


class PositionOutOfRangeError(IndexError):
    """A position past the end of a learned table: row ``max_len`` and beyond were never learned."""

    def __init__(self, max_len: int, asked: int, what: str = "a sequence of length") -> None:
        self.max_len = max_len
        self.asked = asked
        if what == "position":
            needs = _("positions must be in 0..{top}: position {asked} was asked for").format(top=max_len - 1, asked=asked - 1)
        else:
            needs = _("a sequence of length {asked} needs positions 0..{last}").format(asked=asked, last=asked - 1)
        super().__init__(_(
            "{needs}, but this learned table has max_len={max_len} rows (positions 0..{last}). A learned absolute "
            "table has no vector for a position it was not built with: use a length <= {max_len}, or a larger table "
            "(whose extra rows are untrained).").format(needs=needs, max_len=max_len, last=max_len - 1))


def inverse_frequencies(dim: int, base: float = 10000.0) -> Tensor:
    r"""Angular frequencies :math:`\omega_i = \text{base}^{-2i/d}` for ``i = 0 .. d/2 - 1``, in float64.

    They fall *geometrically* from 1 (pair 0, the fastest) towards ``1/base``.
    """
    dim = require_dim("dim", dim)
    base = require_base(base)
    require_budget(f"inverse_frequencies(dim={dim})", (dim // 2,), torch.float64, copies=2)
    two_i = torch.arange(0, dim, 2, dtype=torch.float64)
    return torch.pow(torch.tensor(base, dtype=torch.float64), -two_i / dim)


def wavelengths(dim: int, base: float = 10000.0) -> Tensor:
    r"""Wavelengths :math:`\lambda_i = 2\pi / \omega_i` (in positions), float64, from 2π up to below 2π·base."""
    return 2 * math.pi / inverse_frequencies(dim, base)


def _block_size(seq_len: int) -> int:
    return max(1, math.isqrt(max(seq_len, 1)))


def _fill_sin_cos(out: Tensor, seq_len: int, dim: int, base: float, offset: int, layout: str) -> None:
    r"""Write :math:`\sin((offset + r)\,\omega_i)` and :math:`\cos(\dots)` into ``out`` (``[n_blocks·B, dim]``).

    Angles are formed in float64. To stay fast, only ``B + seq_len/B`` rows of angles go
    through sin/cos (``B ≈ √seq_len``); the rest follow from the seed's shift identity
    :math:`\sin((a+b)\omega) = \sin a\omega\cos b\omega + \cos a\omega\sin b\omega`,
    :math:`\cos((a+b)\omega) = \cos a\omega\cos b\omega - \sin a\omega\sin b\omega`,
    with ``a`` a multiple of ``B`` (coarse) and ``0 <= b < B`` (fine).
    Each factor is correctly rounded to ``out``'s dtype, so a float32 result is within a
    few float32 ulps (< 3e-7) of the exact value at every position.
    """
    work = out.dtype
    omega = inverse_frequencies(dim, base)
    block = _block_size(seq_len)
    n_blocks = out.shape[0] // block
    fine = torch.arange(block, dtype=torch.float64)[:, None] * omega  # b·ω, [B, d/2]
    coarse = (offset + block * torch.arange(n_blocks, dtype=torch.float64))[:, None] * omega  # a·ω
    fs, fc = torch.sin(fine).to(work)[None], torch.cos(fine).to(work)[None]
    cs, cc = torch.sin(coarse).to(work)[:, None], torch.cos(coarse).to(work)[:, None]
    half = dim // 2
    if layout == "interleaved":  # columns (sin_0, cos_0, sin_1, cos_1, ...)
        pairs = out.view(n_blocks, block, half, 2)
        sin, cos = pairs[..., 0], pairs[..., 1]
    else:  # columns (sin_0 .. sin_{d/2-1}, cos_0 .. cos_{d/2-1})
        halves = out.view(n_blocks, block, 2, half)
        sin, cos = halves[:, :, 0], halves[:, :, 1]
    torch.mul(cs, fc, out=sin)
    sin.addcmul_(cc, fs)
    torch.mul(cc, fc, out=cos)
    cos.addcmul_(cs, fs, value=-1.0)


def sinusoidal(
    seq_len: int,
    dim: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    offset: int = 0,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    r"""The sinusoidal table ``[seq_len, dim]``; row ``r`` encodes position ``offset + r``.

    .. math::
        PE(pos, 2i) = \sin\!\left(\frac{pos}{\text{base}^{2i/d}}\right),\qquad
        PE(pos, 2i+1) = \cos\!\left(\frac{pos}{\text{base}^{2i/d}}\right)

    ``layout="interleaved"`` puts sin at even columns and cos at odd columns (the paper);
    ``layout="concatenated"`` puts all sin columns first, then all cos columns.
    Angles are computed in float64 and the result cast to ``dtype``: the maximum absolute
    error is below 1e-6 for every position below 2**20 (float32 angles, as in the seed's
    code, are off by ~3e-2 near position 1e6).
    """
    seq_len = require_length("seq_len", seq_len)
    dim = require_dim("dim", dim)
    base = require_base(base)
    layout = require_layout(layout)
    dtype = require_float_dtype(dtype)
    work = torch.float64 if dtype == torch.float64 else torch.float32
    require_budget(f"sinusoidal(seq_len={seq_len}, dim={dim})", (seq_len, dim), work)
    offset = require_int("offset", offset, minimum=0, maximum=MAX_POSITION - seq_len)
    block = _block_size(seq_len)
    rows = -(-seq_len // block) * block
    pe = torch.empty(rows, dim, dtype=work)
    if rows:
        _fill_sin_cos(pe, seq_len, dim, base, offset, layout)
    pe = pe[:seq_len]
    return pe if pe.dtype == dtype else pe.to(dtype)


def layout_permutation(dim: int) -> Tensor:
    """Column order that turns the interleaved table into the concatenated one.

    ``sinusoidal(n, d, layout="concatenated") == sinusoidal(n, d)[:, layout_permutation(d)]``:
    first the even (sin) columns 0, 2, 4, ..., then the odd (cos) columns 1, 3, 5, ...
    """
    dim = require_dim("dim", dim)
    require_budget(f"layout_permutation(dim={dim})", (dim,), torch.int64, copies=2)
    return torch.cat([torch.arange(0, dim, 2), torch.arange(1, dim, 2)])


def shift_matrix(k: float, dim: int, *, base: float = 10000.0, layout: str = "interleaved") -> Tensor:
    r"""The rotation :math:`R(k)` (float64, ``[dim, dim]``) with :math:`PE(pos+k) = R(k)\,PE(pos)`.

    For every pair ``i`` (column vectors ``[sin; cos]``), by the angle-addition formulas:

    .. math::
        \begin{bmatrix}\sin((pos+k)\omega_i)\\ \cos((pos+k)\omega_i)\end{bmatrix}
        = \begin{bmatrix}\cos k\omega_i & \sin k\omega_i\\ -\sin k\omega_i & \cos k\omega_i\end{bmatrix}
          \begin{bmatrix}\sin(pos\,\omega_i)\\ \cos(pos\,\omega_i)\end{bmatrix}

    The matrix depends only on the offset ``k`` (which may be negative), never on ``pos``.
    Interleaved layout: 2×2 blocks on the diagonal; concatenated: the same entries at
    ``(i, i)``, ``(i, i + d/2)``, ``(i + d/2, i)``, ``(i + d/2, i + d/2)``.
    """
    k = require_real("k", k)
    dim = require_dim("dim", dim)
    base = require_base(base)
    layout = require_layout(layout)
    require_budget(f"shift_matrix(dim={dim})", (dim, dim), torch.float64)
    angle = k * inverse_frequencies(dim, base)
    c, s = torch.cos(angle), torch.sin(angle)
    half = dim // 2
    sin_idx = torch.arange(0, dim, 2) if layout == "interleaved" else torch.arange(half)
    cos_idx = sin_idx + 1 if layout == "interleaved" else torch.arange(half) + half
    r = torch.zeros(dim, dim, dtype=torch.float64)
    r[sin_idx, sin_idx] = c
    r[sin_idx, cos_idx] = s
    r[cos_idx, sin_idx] = -s
    r[cos_idx, cos_idx] = c
    return r


class LearnedPositionalEmbedding(nn.Module):
    r"""A learned absolute position table :math:`P_{learned} \in \mathbb{R}^{L \times d}`; :math:`p_i` is row ``i``.

    ``forward(x)`` returns :math:`\tilde X = X + P[:n]` for ``x`` of shape ``(..., n, d)``.
    A sequence longer than ``max_len`` raises :class:`PositionOutOfRangeError`: row ``L`` does not exist.
    """

    def __init__(self, max_len: int, dim: int, *, init_std: float = 0.02, seed: int | None = None) -> None:
        super().__init__()
        self.max_len = require_int("max_len", max_len, minimum=1)
        self.dim = require_int("dim", dim, minimum=1)
        init_std = require_real("init_std", init_std, minimum=0.0)
        seed = None if seed is None else require_seed("seed", seed)
        require_budget(f"LearnedPositionalEmbedding(max_len={self.max_len}, dim={self.dim})",
                     (self.max_len, self.dim), torch.float32, copies=2)
        gen = torch.Generator().manual_seed(seed) if seed is not None else None
        self.table = nn.Parameter(torch.randn(self.max_len, self.dim, generator=gen) * init_std)

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, dim={self.dim}"

    def lookup(self, positions: Tensor | Sequence[int]) -> Tensor:
        """Rows ``p_i`` for the given integer positions (any shape); any position >= max_len raises."""
        pos = as_int_tensor("positions", positions, minimum=0)
        if pos.device.type == "meta":
            raise TypeError(_("positions must be on a real device (cpu, cuda, ...), got a meta tensor."))
        if pos.numel() and int(pos.max()) >= self.max_len:
            raise PositionOutOfRangeError(self.max_len, int(pos.max()) + 1, what="position")
        require_budget("lookup(positions)", (*pos.shape, self.dim), self.table.dtype)
        return self.table[pos.to(self.table.device)]

    def forward(self, x: Tensor) -> Tensor:
        """``x + P[:n]`` for a floating ``x`` of shape ``(..., n, dim)`` on any device (result in the promoted dtype)."""
        x = require_float_tensor("x", x, min_ndim=2)
        require_last_dim("x", x, self.dim)
        n = x.shape[-2]
        if n > self.max_len:
            raise PositionOutOfRangeError(self.max_len, n)
        return x + self.table[:n].to(x.device)

    def extended(self, new_max_len: int, *, seed: int | None = None) -> "LearnedPositionalEmbedding":
        """A copy with ``new_max_len`` rows: the first ``max_len`` are these, the rest fresh (never trained)."""
        new_max_len = require_int("new_max_len", new_max_len, minimum=self.max_len)
        seed = None if seed is None else require_seed("seed", seed)
        require_budget(f"extended(new_max_len={new_max_len})", (new_max_len, self.dim), torch.float32, copies=2)
        std = float(self.table.detach().std()) if self.table.numel() > 1 else 0.02
        bigger = LearnedPositionalEmbedding(new_max_len, self.dim, init_std=std, seed=seed)
        with torch.no_grad():
            bigger.table[: self.max_len] = self.table
        return bigger


class SinusoidalPositionalEncoding(nn.Module):
    r"""Adds the fixed sinusoidal table: :math:`\tilde X = X + PE[:n]`, for any length ``n``.

    No trainable parameters. The table is cached (a non-persistent buffer) and regrown,
    doubling, whenever a longer sequence arrives.
    """

    def __init__(self, dim: int, *, base: float = 10000.0, layout: str = "interleaved") -> None:
        super().__init__()
        self.dim = require_dim("dim", dim)
        self.base = require_base(base)
        self.layout = require_layout(layout)
        require_budget(f"SinusoidalPositionalEncoding(dim={self.dim}), one row", (self.dim,), torch.float64, copies=4)
        self.register_buffer("table", sinusoidal(0, self.dim, base=self.base, layout=self.layout), persistent=False)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, base={self.base}, layout={self.layout!r}, cached={self.table.shape[0]}"

    def encodings(self, n: int) -> Tensor:
        """The first ``n`` rows of the table, growing the cache if needed."""
        n = require_length("n", n)
        if n > self.table.shape[0]:
            require_budget(f"SinusoidalPositionalEncoding(dim={self.dim}).encodings(n={n})", (n, self.dim),
                         self.table.dtype)
            size = max(n, 2 * self.table.shape[0], 64)
            if size * self.dim * self.table.element_size() > MEMORY_BUDGET_BYTES:
                size = n  # doubling would pass the budget: grow to n exactly
            # Regrow in the buffer's dtype and device: after .double() the cache stays float64.
            dtype = self.table.dtype if self.table.is_floating_point() else torch.float32
            self.table = sinusoidal(size, self.dim, base=self.base, layout=self.layout,
                                    dtype=dtype).to(self.table.device)
        return self.table[:n]

    def forward(self, x: Tensor) -> Tensor:
        """``x + PE[:n]`` for a floating ``x`` of shape ``(..., n, dim)`` on any device, in ``x``'s dtype.

        The table is used at ``x``'s precision at least: a float64 ``x`` gets a float64 table even
        when the cache is float32. Integer or bool ``x`` is an error (``x.float()`` first).
        """
        x = require_float_tensor("x", x, min_ndim=2)
        require_last_dim("x", x, self.dim)
        n = x.shape[-2]
        pe = self.encodings(n)
        if torch.finfo(x.dtype).bits > torch.finfo(pe.dtype).bits:
            pe = sinusoidal(n, self.dim, base=self.base, layout=self.layout, dtype=x.dtype)
        return x + pe.to(dtype=x.dtype, device=x.device)


def rope_angles(positions: Tensor | Sequence[int], dim: int, base: float = 10000.0) -> Tensor:
    r"""Rotation angles :math:`\theta_{m,i} = m\,\omega_i` in float64, shape ``positions.shape + (d/2,)``."""
    dim = require_dim("dim", dim)
    base = require_base(base)
    pos = as_real_tensor("positions", positions)
    require_budget(f"rope_angles(positions of shape {tuple(pos.shape)}, dim={dim})", (*pos.shape, dim // 2),
                 torch.float64)
    return pos[..., None] * inverse_frequencies(dim, base).to(pos.device)


def apply_rope(
    x: Tensor,
    positions: Tensor | Sequence[int],
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
) -> Tensor:
    r"""Rotary position embedding: rotate each pair of ``x``'s last dimension by :math:`m\,\omega_i`.

    For the pair ``(a, b)`` of a vector at position ``m``:

    .. math::
        \begin{bmatrix}a'\\ b'\end{bmatrix} =
        \begin{bmatrix}\cos m\omega_i & -\sin m\omega_i\\ \sin m\omega_i & \cos m\omega_i\end{bmatrix}
        \begin{bmatrix}a\\ b\end{bmatrix}

    so that :math:`(R_m q)^\top (R_n k) = q^\top R_{n-m} k` depends only on ``n - m``.
    ``layout="interleaved"`` pairs dims ``(2i, 2i+1)`` (GPT-J, RoFormer); ``"half"`` pairs
    ``(i, i + d/2)`` (GPT-NeoX, Llama-family code). ``positions`` has shape ``x.shape[-2]``
    (one position per row) or any shape broadcastable to ``x.shape[:-1]``; a single vector takes
    a single position (``apply_rope(q, 5)`` or ``apply_rope(q, [5])``).
    Angles are computed in float64, cos/sin applied in ``x``'s dtype (float32 at least).
    """
    x = require_float_tensor("x", x, min_ndim=1)
    dim = require_dim("x.shape[-1]", x.shape[-1])
    layout = require_choice("layout", layout, ROPE_LAYOUTS)
    base = require_base(base)
    theta = _fitted_angles(positions, x, base)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    return rotate_pairs(x.to(work), theta.to(device=x.device, dtype=work), layout).to(x.dtype)


def _fitted_angles(positions: object, x: Tensor, base: float, name: str = "positions", x_name: str = "x") -> Tensor:
    """``rope_angles`` for ``positions`` after checking they broadcast to ``x.shape[:-1]`` without changing it."""
    if isinstance(positions, Tensor) and positions.device != x.device and positions.device.type == "meta":
        raise TypeError(_("{0} must be on {1}'s device ({2}), got a meta tensor.").format(name, x_name, x.device))
    pos = as_real_tensor(name, positions)
    if x.ndim == 1 and tuple(pos.shape) == (1,):  # one vector, one position
        pos = pos[0]
    require_fits(name, pos.shape, x.shape[:-1],
               f" ({x_name} has shape {tuple(x.shape)}): give one position per row, shape "
               f"({x.shape[-2] if x.ndim > 1 else 1},), or a shape that broadcasts to {tuple(x.shape[:-1])}")
    return rope_angles(pos.to(x.device), x.shape[-1], base)


def rotate_pairs(x: Tensor, theta: Tensor, layout: str = "interleaved") -> Tensor:
    r"""Turn every pair of ``x``'s last dimension by the angles ``theta`` (``[..., d/2]``): RoPE's one rotation.

    .. math::
        (a, b) \mapsto (a\cos\theta - b\sin\theta,\; a\sin\theta + b\cos\theta)

    Pairs are dims ``(2i, 2i+1)`` for ``layout="interleaved"`` and ``(i, i + d/2)`` for ``"half"``.
    This is the single home of RoPE's sign convention: :func:`apply_rope`, :mod:`pe_helpers.rope`,
    the figures, the checkers and the extrapolation lab all turn pairs through it. Computed in
    the common dtype of ``x`` and ``theta``. Only cheap checks of types and last dimensions here
    (it is on the lab's hot path); callers check positions and broadcasting.
    """
    x = require_tensor("x", x, min_ndim=1)
    theta = require_tensor("theta", theta, min_ndim=1)
    if not (x.is_floating_point() or x.is_complex()) or not theta.is_floating_point():
        raise TypeError(_("x and theta must be floating tensors, got dtypes {0} and {1}.").format(x.dtype, theta.dtype))
    dim = require_dim("x.shape[-1]", x.shape[-1])
    layout = require_choice("layout", layout, ROPE_LAYOUTS)
    if theta.device != x.device:
        raise TypeError(_("x and theta must be on one device, got x on {0} and theta on {1}.").format(x.device, theta.device))
    if theta.shape[-1] != dim // 2:
        raise ValueError(_("theta must have last dimension x.shape[-1] / 2 = {0} (one angle per pair), got shape {1}.").format(dim // 2, tuple(theta.shape)))
    cos, sin = torch.cos(theta), torch.sin(theta)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    a, b = x[..., : dim // 2], x[..., dim // 2 :]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
