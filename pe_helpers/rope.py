r"""Notebook 06, "Toward RoPE" (seed §3.4, §5): RoPE as a rotation inside the dot product, its layouts, its precision.

RoPE (rotary position embedding, 旋转位置编码) does not add anything to :math:`x`. It rotates the
query and the key of each attention layer, pair by pair, by the angle of their position:

.. math::
    \tilde q_m = \mathcal{R}_m\, q,\qquad \tilde k_n = \mathcal{R}_n\, k,\qquad
    \tilde q_m^\top \tilde k_n = q^\top \mathcal{R}_m^\top \mathcal{R}_n\, k = q^\top \mathcal{R}_{n-m}\, k,

with :math:`\mathcal{R}_m` block-diagonal, one 2×2 rotation by :math:`m\,\omega_i` per pair. The
values :math:`v = W_V x` are not touched. The rotation itself is
:func:`pe_helpers.encodings.apply_rope`; this module adds what notebook 06 needs around it:

* :func:`rope_matrix`: :math:`\mathcal{R}_m` as a matrix, and its link to notebook 04's
  :func:`~pe_helpers.encodings.shift_matrix` (:math:`\mathcal{R}_m = R(m)^\top = R(-m)`, because
  ``shift_matrix`` acts on (sin, cos) pairs, i.e. on (y, x), while RoPE acts on (x, y));
* :func:`interleaved_to_half_permutation`: the one fixed permutation between the interleaved
  (GPT-J, RoFormer) and half-split (GPT-NeoX, Llama-family ``rotate_half``) layouts;
* :func:`angles_in_dtype`, :func:`rope_rotate`, :func:`rope_scores`, :func:`shifted_scores`: the
  angle computed in a chosen precision, to show why public code forms it in float32 (bf16 breaks it);
  :func:`frequencies_as_computed`: the frequencies :math:`\omega_i` as three common recipes round them;
* :func:`rope_decay_bound`: RoFormer's long-term decay bound against the distance, and its dependence on the base.

The closing comparison table of notebook 06 lives in :mod:`pe_helpers.comparison`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from ._validate import (
    ROPE_LAYOUTS,
    as_int_tensor,
    as_real_tensor,
    require_base,
    require_budget,
    require_choice,
    require_dim,
    require_fits,
    require_float_dtype,
    require_float_tensor,
    require_int,
    require_finite,
    require_real,
    require_seed,
)
from .encodings import (
    apply_rope,
    inverse_frequencies,
    rotate_pairs,
    layout_permutation,
    shift_matrix,
    sinusoidal,
)
from .i18n import _

__all__ = [
    "demo_query_key",
    "rope_matrix",
    "pair_swap_permutation",
    "interleaved_to_half_permutation",
    "angles_in_dtype",
    "rope_rotate",
    "rope_scores",
    "shifted_scores",
    "additive_scores",
    "frequencies_as_computed",
    "rope_decay_bound",
]

#: How a program computes the frequencies :math:`\omega_i = \text{base}^{-2i/d}` in a low precision (see
#: :func:`frequencies_as_computed`).
FREQUENCY_RECIPES = ("rounded", "power", "reciprocal")


def demo_query_key(dim: int = 16, *, seed: int = 0) -> tuple[Tensor, Tensor]:
    """A query and a key content vector ``q, k ~ N(0, I)`` of length ``dim`` (float64, seeded): the app's example."""
    dim = require_dim("dim", dim)
    seed = require_seed("seed", seed, minimum=0)
    require_budget(f"demo_query_key(dim={dim})", (2, dim), torch.float64)
    qk = torch.randn(2, dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return qk[0], qk[1]


def rope_matrix(position: float, dim: int, *, base: float = 10000.0, layout: str = "interleaved") -> Tensor:
    r"""The rotation :math:`\mathcal{R}_m` (float64, ``[dim, dim]``) with ``apply_rope(x, [m]) == x @ R.T``.

    Interleaved: the pair ``(x_{2i}, x_{2i+1})`` turns by :math:`m\,\omega_i`,

    .. math::
        \mathcal{R}_m = \operatorname{diag}_i\begin{bmatrix}\cos m\omega_i & -\sin m\omega_i\\
        \sin m\omega_i & \cos m\omega_i\end{bmatrix} = R(m)^\top = R(-m),

    where :math:`R(k)` is notebook 04's :func:`~pe_helpers.encodings.shift_matrix` (its blocks act on
    (sin, cos) pairs, i.e. on (y, x), so the same turn is written transposed). Half layout: the same
    matrix with rows and columns permuted by :func:`interleaved_to_half_permutation`.
    """
    position = require_real("position", position)
    dim = require_dim("dim", dim)
    base = require_base(base)
    layout = require_choice("layout", layout, ROPE_LAYOUTS)
    r = shift_matrix(position, dim, base=base).T.contiguous()
    if layout == "half":
        perm = interleaved_to_half_permutation(dim)
        r = r[perm][:, perm]
    return r


def pair_swap_permutation(dim: int) -> Tensor:
    r"""Indices ``[1, 0, 3, 2, ...]`` that swap the two entries of every pair: :math:`(a, b) \mapsto (b, a)`.

    With the swap matrix :math:`S`, :math:`\mathcal{R}_m = S\,R(m)\,S`: RoPE's turn of :math:`(x, y)` is
    notebook 04's turn of :math:`(\sin, \cos) = (y, x)`, read with the pair the other way round.
    """
    dim = require_dim("dim", dim)
    require_budget(f"pair_swap_permutation(dim={dim})", (dim,), torch.int64, copies=2)
    return torch.arange(dim).view(-1, 2).flip(-1).reshape(-1)


def interleaved_to_half_permutation(dim: int) -> Tensor:
    r"""The fixed permutation :math:`P` between the two RoPE layouts: even dimensions first, then odd.

    .. math::
        \text{rope}_{\text{half}}(x[P], m) = \text{rope}_{\text{interleaved}}(x, m)[P]

    Interleaved pairs dims ``(2i, 2i+1)``; half-split pairs ``(i, i + d/2)``. After ``x[P]``, dim ``i``
    holds ``x_{2i}`` and dim ``i + d/2`` holds ``x_{2i+1}``, so both layouts turn the same two numbers
    by the same angle. It is the same index list as :func:`~pe_helpers.encodings.layout_permutation`.
    Since :math:`(Pq)^\top(Pk) = q^\top k`, permuting the output rows of :math:`W_Q` and :math:`W_K`
    (not :math:`W_V`) turns one convention into the other with identical attention scores.
    """
    return layout_permutation(dim)


def angles_in_dtype(
    positions: Tensor | Sequence[float],
    dim: int,
    *,
    base: float = 10000.0,
    dtype: torch.dtype = torch.float64,
    frequency_dtype: torch.dtype | None = None,
    frequency_recipe: str = "rounded",
) -> Tensor:
    r"""The RoPE angles :math:`\theta_{m,i} = m\,\omega_i` as a program computing them in ``dtype`` gets them.

    The positions are rounded to ``dtype``, the frequencies :math:`\omega_i = \text{base}^{-2i/d}` are
    computed in ``frequency_dtype`` (default: ``dtype``) by ``frequency_recipe``
    (:func:`frequencies_as_computed`; the default ``"rounded"`` is the float64 value correctly rounded),
    their product is formed and rounded to ``dtype``. The result is returned in float64 (exact copies of
    the rounded values), shape ``positions.shape + (d/2,)``. With ``dtype=torch.float64`` this is
    :func:`~pe_helpers.encodings.rope_angles`.
    """
    dim = require_dim("dim", dim)
    base = require_base(base)
    dtype = require_float_dtype(dtype, "dtype")
    frequency_dtype = dtype if frequency_dtype is None else require_float_dtype(frequency_dtype, "frequency_dtype")
    frequency_recipe = require_choice("frequency_recipe", frequency_recipe, FREQUENCY_RECIPES)
    pos = as_real_tensor("positions", positions)
    require_budget(f"angles_in_dtype(positions of shape {tuple(pos.shape)}, dim={dim})", (*pos.shape, dim // 2),
                 torch.float64, copies=2)
    omega = _frequencies(dim, base, frequency_dtype, frequency_recipe).to(pos.device)
    theta = pos.to(dtype)[..., None] * omega
    return theta.to(dtype).to(torch.float64)


def frequencies_as_computed(dim: int, *, base: float = 10000.0, dtype: torch.dtype = torch.float32,
                            recipe: str = "rounded") -> Tensor:
    r"""The frequencies :math:`\omega_i = \text{base}^{-2i/d}` as a program computing them in ``dtype`` gets them.

    Returned in float64 (exact copies of the ``dtype`` values), shape ``(d/2,)``. The recipes:

    * ``"rounded"``: :math:`\omega_i` computed in float64, then rounded once to ``dtype``
      (what ``pe_helpers`` does): relative error at most :math:`2^{-p}` (:math:`2^{-24}` in float32);
    * ``"power"``: ``base ** (-(2i) / d)`` in ``dtype``, the seed's line;
    * ``"reciprocal"``: ``1 / base ** ((2i) / d)`` in ``dtype``, the common ``inv_freq`` line.

    The last two round the exponent :math:`x = 2i/d` first; an error :math:`\delta x` in the exponent
    becomes a relative error :math:`\ln(\text{base})\,\delta x` of :math:`\omega_i`, i.e. the exponent's own
    rounding amplified by up to :math:`\ln(\text{base})\cdot 2i/d`, on top of the roundings of the power
    and of the reciprocal.
    """
    dim = require_dim("dim", dim)
    base = require_base(base)
    dtype = require_float_dtype(dtype, "dtype")
    recipe = require_choice("recipe", recipe, FREQUENCY_RECIPES)
    return _frequencies(dim, base, dtype, recipe).to(torch.float64)


def _frequencies(dim: int, base: float, dtype: torch.dtype, recipe: str) -> Tensor:
    """:func:`frequencies_as_computed` for checked arguments, in ``dtype``."""
    require_budget(f"frequencies_as_computed(dim={dim})", (dim // 2,), torch.float64, copies=3)
    if recipe == "rounded":
        return inverse_frequencies(dim, base).to(dtype)
    two_i = torch.arange(0, dim, 2).to(dtype)
    if recipe == "power":
        return base ** (-two_i / dim)
    return 1 / (base ** (two_i / dim))


def rope_decay_bound(distances: Tensor | Sequence[float], dim: int, *, base: float = 10000.0) -> Tensor:
    r"""RoFormer's long-term decay bound (Su et al., arXiv:2104.09864, §3.4.3) at each relative distance ``m``.

    With :math:`S_j(m) = \sum_{i=0}^{j-1} e^{\mathrm{i}\,m\,\omega_i}`, summation by parts bounds the RoPE
    score of any query and key whose pair products :math:`h_i` vary by at most :math:`A` from pair to pair:
    :math:`|q^\top\mathcal{R}_m k| \le A \sum_{j=1}^{d/2} |S_j(m)|`. This returns the paper's relative bound

    .. math:: \frac{1}{d/2}\sum_{j=1}^{d/2} |S_j(m)|,

    which is :math:`(d/2 + 1)/2` at :math:`m = 0` and falls, roughly, as :math:`m` grows. A larger ``base``
    makes the slow pairs slower, so the fall reaches further. Float64, shape ``distances.shape``.
    """
    dim = require_dim("dim", dim)
    base = require_base(base)
    m = as_real_tensor("distances", distances).cpu()
    require_budget(f"rope_decay_bound({m.numel()} distances, dim={dim})", (*m.shape, dim // 2), torch.complex128,
                   copies=3)
    phase = m.to(torch.float64)[..., None] * inverse_frequencies(dim, base)
    partial_sums = torch.polar(torch.ones_like(phase), phase).cumsum(-1)
    return partial_sums.abs().mean(-1)


def rope_rotate(
    x: Tensor,
    positions: Tensor | Sequence[float],
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    angle_dtype: torch.dtype = torch.float64,
    frequency_dtype: torch.dtype | None = None,
) -> Tensor:
    r""":math:`\mathcal{R}_m x` in float64, with the angles :math:`m\,\omega_i` formed in ``angle_dtype``.

    Everything except the angle is float64, so any error comes from the angle alone
    (:func:`angles_in_dtype`). With the defaults it equals :func:`~pe_helpers.encodings.apply_rope`
    on a float64 ``x``. ``positions`` has one entry per row of ``x`` (or broadcasts to ``x.shape[:-1]``).
    """
    return _rope_rotate(x, positions, ("x", "positions"), base=base, layout=layout, angle_dtype=angle_dtype,
                        frequency_dtype=frequency_dtype)


def _rope_rotate(x: object, positions: object, names: tuple[str, str], *, base: float, layout: str,
                 angle_dtype: torch.dtype, frequency_dtype: torch.dtype | None) -> Tensor:
    """:func:`rope_rotate` with the argument names its callers use in their error messages."""
    x_name, pos_name = names
    x = require_float_tensor(x_name, x, min_ndim=1)
    dim = require_dim(f"{x_name}.shape[-1]", x.shape[-1])
    layout = require_choice("layout", layout, ROPE_LAYOUTS)
    angle_dtype = require_float_dtype(angle_dtype, "angle_dtype")
    pos = as_real_tensor(pos_name, positions)
    if x.ndim == 1 and tuple(pos.shape) == (1,):  # one vector, one position
        pos = pos[0]
    require_fits(pos_name, pos.shape, x.shape[:-1],
               f" ({x_name} has shape {tuple(x.shape)}): give one position per row of {x_name}")
    theta = angles_in_dtype(pos.to(x.device), dim, base=base, dtype=angle_dtype, frequency_dtype=frequency_dtype)
    return rotate_pairs(x.to(torch.float64), theta, layout)


def rope_scores(
    q: Tensor,
    k: Tensor,
    positions_q: Tensor | Sequence[float],
    positions_k: Tensor | Sequence[float],
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    angle_dtype: torch.dtype = torch.float64,
    frequency_dtype: torch.dtype | None = None,
) -> Tensor:
    r"""The score matrix :math:`S_{mn} = (\mathcal{R}_{m} q_m)^\top (\mathcal{R}_{n} k_n) = q_m^\top \mathcal{R}_{n-m} k_n`.

    ``q`` is ``[..., n_q, d]`` with ``positions_q`` of length ``n_q``; ``k`` is ``[..., n_k, d]`` with
    ``positions_k``. Float64, without the :math:`1/\sqrt{d}` scale. ``angle_dtype`` as in :func:`rope_rotate`.
    """
    q = require_float_tensor("q", q, min_ndim=2)
    k = require_float_tensor("k", k, min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(_("q and k must have the same last dimension, got q {0} and k {1}.").format(tuple(q.shape), tuple(k.shape)))
    if q.device != k.device:
        raise TypeError(_("q and k must be on the same device, got {0} and {1}.").format(q.device, k.device))
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except RuntimeError:
        raise ValueError(_("q and k must have batch dimensions that broadcast, got q {0} and k {1}.").format(tuple(q.shape), tuple(k.shape))) from None
    require_budget(f"rope_scores(q {tuple(q.shape)}, k {tuple(k.shape)})", (*batch, q.shape[-2], k.shape[-2]),
                 torch.float64)
    kw = dict(base=base, layout=layout, angle_dtype=angle_dtype, frequency_dtype=frequency_dtype)
    rq = _rope_rotate(q, positions_q, ("q", "positions_q"), **kw)
    rk = _rope_rotate(k, positions_k, ("k", "positions_k"), **kw)
    return rq @ rk.transpose(-2, -1)


def shifted_scores(
    q: Tensor,
    k: Tensor,
    m: float,
    n: float,
    shifts: Tensor | Sequence[float],
    **kwargs: object,
) -> Tensor:
    r"""For each shift ``t``: :math:`(\mathcal{R}_{m+t}\,q)^\top(\mathcal{R}_{n+t}\,k)`, float64 of shape ``[len(shifts)]``.

    RoPE's claim is that this is one constant, :math:`q^\top \mathcal{R}_{n-m} k`, for every ``t``
    (exactly in float64; the keyword arguments of :func:`rope_rotate` change the angle's precision).
    ``q`` and ``k`` are single vectors ``[d]``.
    """
    q = require_float_tensor("q", q, ndim=1)
    k = require_float_tensor("k", k, ndim=1)
    if q.shape != k.shape or q.device != k.device:
        raise ValueError(_("q and k must be vectors of the same length on one device, got {0} on {1} and {2} on {3}.").format(tuple(q.shape), q.device, tuple(k.shape), k.device))
    m, n = require_real("m", m), require_real("n", n)
    unknown = sorted(set(kwargs) - {"base", "layout", "angle_dtype", "frequency_dtype"})
    if unknown:
        raise TypeError(_("shifted_scores got unknown keyword argument(s) {0}: allowed are base, layout, angle_dtype, frequency_dtype (those of rope_rotate).").format(unknown))
    t = as_real_tensor("shifts", shifts).reshape(-1).to(q.device)
    require_budget(f"shifted_scores({t.numel()} shifts, d={q.shape[0]})", (t.numel(), q.shape[0]), torch.float64,
                 copies=4)
    kw = {"base": 10000.0, "layout": "interleaved", "angle_dtype": torch.float64, "frequency_dtype": None, **kwargs}
    rq = _rope_rotate(q.expand(t.numel(), -1), m + t, ("q", "m + shifts"), **kw)
    rk = _rope_rotate(k.expand(t.numel(), -1), n + t, ("k", "n + shifts"), **kw)
    return (rq * rk).sum(-1)


def additive_scores(q: Tensor, k: Tensor, m: Tensor | Sequence[int], n: Tensor | Sequence[int], *,
                    base: float = 10000.0) -> Tensor:
    r"""The additive counterpart: :math:`(q + PE(m))^\top (k + PE(n))` for each pair of entries of ``m`` and ``n``.

    .. math:: q^\top k + q^\top PE(n) + PE(m)^\top k + PE(m)^\top PE(n)

    The two middle terms depend on ``m`` and ``n`` themselves, not only on ``n - m``. Float64,
    shape ``[len(m), len(n)]`` for vectors ``q``, ``k`` of length ``d``.
    """
    q = require_float_tensor("q", q, ndim=1)
    k = require_float_tensor("k", k, ndim=1)
    if q.shape != k.shape or q.device != k.device:
        raise ValueError(_("q and k must be vectors of the same length on one device, got {0} on {1} and {2} on {3}.").format(tuple(q.shape), q.device, tuple(k.shape), k.device))
    dim = require_dim("q.shape[-1]", q.shape[-1])
    base = require_base(base)
    if isinstance(m, Tensor) and m.device.type == "meta" or isinstance(n, Tensor) and n.device.type == "meta":
        raise TypeError(_("m and n must hold real values (lists or CPU tensors), got a meta tensor."))
    m = as_int_tensor("m", m, minimum=0).reshape(-1).cpu()
    n = as_int_tensor("n", n, minimum=0).reshape(-1).cpu()
    top = max([int(m.max()) if m.numel() else 0, int(n.max()) if n.numel() else 0]) + 1
    require_budget(f"additive_scores(m, n with positions up to {top - 1}, d={dim})", (top, dim), torch.float64)
    require_budget(f"additive_scores({len(m)} × {len(n)} pairs)", (len(m), len(n)), torch.float64)
    pe = sinusoidal(top, dim, base=base, dtype=torch.float64).to(q.device)
    q, k = q.to(torch.float64), k.to(torch.float64)
    return (q + pe[m.to(q.device)]) @ (k + pe[n.to(q.device)]).T


def _vector_pair(q: object, k: object) -> tuple[Tensor, Tensor]:
    """``q`` and ``k``: real, finite 1-D float tensors of one length, dtype and device."""
    q = require_finite("q", require_float_tensor("q", q, ndim=1))
    k = require_finite("k", require_float_tensor("k", k, ndim=1))
    if q.shape != k.shape or q.device != k.device:
        raise ValueError(_("q and k must be vectors of the same length on one device, got {0} on {1} and {2} on {3}.").format(tuple(q.shape), q.device, tuple(k.shape), k.device))
    return q, k.to(q.dtype)


def pair_vectors(q: Tensor, k: Tensor, m: int, n: int, pair: int, base: float = 10000.0) -> tuple[Tensor, Tensor]:
    r"""Pair ``i`` (dims ``2i, 2i+1``) of :math:`\mathcal{R}_m q` and :math:`\mathcal{R}_n k`, each ``[2]`` float64 = (x, y).

    Turned by :func:`rope_rotate` (so through :func:`~pe_helpers.encodings.rotate_pairs`, RoPE's one rotation).
    """
    q, k = _vector_pair(q, k)
    d = require_dim("q.shape[-1]", q.shape[-1])
    pair = require_int("pair", pair, minimum=0)
    if pair >= d // 2:
        raise ValueError(_("pair must be in 0..{0} for d = {1}, got {2}.").format(d // 2 - 1, d, pair))
    m, n = require_real("m", m), require_real("n", n)
    both = rope_rotate(torch.stack([q, k]), torch.tensor([m, n], dtype=torch.float64), base=base)
    return both[0, 2 * pair: 2 * pair + 2], both[1, 2 * pair: 2 * pair + 2]


def score_range(q: Tensor, k: Tensor, max_pos: int, t_max: int, base: float = 10000.0) -> tuple[float, float]:
    """Lowest and highest score notebook 06's app can show: additive over every ``m + t, n + t <= max_pos + t_max``
    and rotary over every offset ``|n - m| <= max_pos`` (fixed axis limits for its sliders)."""
    q, k = _vector_pair(q, k)
    max_pos = require_int("max_pos", max_pos, minimum=0)
    t_max = require_int("t_max", t_max, minimum=0)
    require_budget(f"score_range(max_pos={max_pos}, t_max={t_max})", (max_pos + t_max + 1, max_pos + t_max + 1),
                   torch.float64, copies=3)
    grid = torch.arange(max_pos + t_max + 1)
    additive = additive_scores(q, k, grid, grid, base=base)
    offsets = torch.arange(-max_pos, max_pos + 1)
    rotary = rope_scores(q[None], k[None].expand(offsets.numel(), -1), [0], offsets, base=base)[0]
    return min(float(additive.min()), float(rotary.min())), max(float(additive.max()), float(rotary.max()))


__all__ += ["pair_vectors", "score_range"]
