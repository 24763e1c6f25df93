r"""RoPE as a rotation inside the dot product, its two layouts, its precision, and the closing comparison (notebook 06).

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
* :func:`position_probe`, :func:`value_carries_position`, :func:`score_position_dependence`,
  :func:`comparison_table`: the closing table, measured, with the lab's results past the training length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ._validate import ROPE_LAYOUTS, check_base, check_choice, check_dim, check_int, check_real, check_tensor
from .attention import SelfAttention
from .encodings import (
    LearnedPositionalEmbedding,
    apply_rope,
    inverse_frequencies,
    layout_permutation,
    shift_matrix,
    sinusoidal,
)

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
    "SCHEMES",
    "position_probe",
    "value_carries_position",
    "score_position_dependence",
    "extrapolation_verdict",
    "LabOutcome",
    "lab_outcome",
    "ComparisonRow",
    "comparison_table",
    "format_comparison_table",
]


def demo_query_key(dim: int = 16, *, seed: int = 0) -> tuple[Tensor, Tensor]:
    """A query and a key content vector ``q, k ~ N(0, I)`` of length ``dim`` (float64, seeded): the app's example."""
    dim = check_dim("dim", dim)
    seed = check_int("seed", seed, minimum=0)
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
    position = check_real("position", position)
    dim = check_dim("dim", dim)
    base = check_base(base)
    layout = check_choice("layout", layout, ROPE_LAYOUTS)
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
    dim = check_dim("dim", dim)
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
) -> Tensor:
    r"""The RoPE angles :math:`\theta_{m,i} = m\,\omega_i` as a program computing them in ``dtype`` gets them.

    The positions are rounded to ``dtype``, the frequencies :math:`\omega_i = \text{base}^{-2i/d}` to
    ``frequency_dtype`` (default: ``dtype``), their product is formed and rounded to ``dtype``. The
    result is returned in float64 (exact copies of the rounded values), shape ``positions.shape + (d/2,)``.
    With ``dtype=torch.float64`` this is :func:`~pe_helpers.encodings.rope_angles`.
    """
    dim = check_dim("dim", dim)
    base = check_base(base)
    for name, value in (("dtype", dtype), ("frequency_dtype", frequency_dtype or dtype)):
        if not isinstance(value, torch.dtype) or not value.is_floating_point:
            raise TypeError(f"{name} must be a floating torch dtype such as torch.float32, got {value!r}.")
    frequency_dtype = frequency_dtype or dtype
    pos = torch.as_tensor(positions)
    if pos.dtype == torch.bool:
        raise TypeError("positions must be numbers, got a bool tensor.")
    omega = inverse_frequencies(dim, base).to(frequency_dtype)
    theta = pos.to(torch.float64).to(dtype)[..., None] * omega
    return theta.to(dtype).to(torch.float64)


def _rotate_pairs(x: Tensor, theta: Tensor, layout: str) -> Tensor:
    """Turn each pair of ``x`` (float64) by ``theta`` ([..., d/2]): (a, b) -> (a cos - b sin, a sin + b cos)."""
    dim = x.shape[-1]
    cos, sin = torch.cos(theta), torch.sin(theta)
    if layout == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    a, b = x[..., : dim // 2], x[..., dim // 2:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


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
    x = check_tensor("x", x, min_ndim=1)
    if not x.is_floating_point():
        raise TypeError(f"x must be a floating tensor, got dtype {x.dtype}.")
    dim = check_dim("x.shape[-1]", x.shape[-1])
    layout = check_choice("layout", layout, ROPE_LAYOUTS)
    theta = angles_in_dtype(positions, dim, base=base, dtype=angle_dtype, frequency_dtype=frequency_dtype)
    try:
        torch.broadcast_shapes(theta.shape[:-1], x.shape[:-1])
    except RuntimeError:
        raise ValueError(f"positions of shape {tuple(theta.shape[:-1])} do not fit x of shape {tuple(x.shape)}: "
                         f"give one position per row of x.") from None
    return _rotate_pairs(x.to(torch.float64), theta, layout)


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
    q = check_tensor("q", q, min_ndim=2)
    k = check_tensor("k", k, min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must have the same last dimension, got q {tuple(q.shape)} and k {tuple(k.shape)}.")
    kw = dict(base=base, layout=layout, angle_dtype=angle_dtype, frequency_dtype=frequency_dtype)
    return rope_rotate(q, positions_q, **kw) @ rope_rotate(k, positions_k, **kw).transpose(-2, -1)


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
    q = check_tensor("q", q, min_ndim=1)
    k = check_tensor("k", k, min_ndim=1)
    if q.ndim != 1 or k.ndim != 1 or q.shape != k.shape:
        raise ValueError(f"q and k must be vectors of the same length, got {tuple(q.shape)} and {tuple(k.shape)}.")
    m, n = check_real("m", m), check_real("n", n)
    t = torch.as_tensor(shifts, dtype=torch.float64).reshape(-1)
    rq = rope_rotate(q.expand(t.numel(), -1), m + t, **kwargs)
    rk = rope_rotate(k.expand(t.numel(), -1), n + t, **kwargs)
    return (rq * rk).sum(-1)


def additive_scores(q: Tensor, k: Tensor, m: Tensor | Sequence[int], n: Tensor | Sequence[int], *,
                    base: float = 10000.0) -> Tensor:
    r"""The additive counterpart: :math:`(q + PE(m))^\top (k + PE(n))` for each pair of entries of ``m`` and ``n``.

    .. math:: q^\top k + q^\top PE(n) + PE(m)^\top k + PE(m)^\top PE(n)

    The two middle terms depend on ``m`` and ``n`` themselves, not only on ``n - m``. Float64,
    shape ``[len(m), len(n)]`` for vectors ``q``, ``k`` of length ``d``.
    """
    q = check_tensor("q", q, min_ndim=1).to(torch.float64)
    k = check_tensor("k", k, min_ndim=1).to(torch.float64)
    m = torch.as_tensor(m, dtype=torch.long).reshape(-1)
    n = torch.as_tensor(n, dtype=torch.long).reshape(-1)
    top = int(max(m.max(), n.max())) + 1 if m.numel() and n.numel() else 1
    if m.numel() and int(min(m.min(), n.min())) < 0:
        raise ValueError("positions m and n must be >= 0.")
    pe = sinusoidal(top, q.shape[-1], base=base, dtype=torch.float64)
    return (q + pe[m]) @ (k + pe[n]).T


# ---- the closing comparison ----------------------------------------------------------------------------

#: The four schemes of the closing table: display name, lab encoding(s), what is added or rotated and where.
SCHEMES: dict[str, dict[str, object]] = {
    "learned": {
        "name": "learned absolute",
        "lab": ("learned", "learned-extended"),
        "what": ("a trained row p_i of the table P (max_len×d) is added to x_i, once, at the input "
                 "(before W_Q, W_K, W_V)"),
    },
    "sinusoidal": {
        "name": "sinusoidal absolute",
        "lab": ("sinusoidal",),
        "what": "the fixed PE(i) (sin, cos of i·ω_j) is added to x_i, once, at the input (before W_Q, W_K, W_V)",
    },
    "rope": {
        "name": "RoPE",
        "lab": ("rope",),
        "what": "q_m and k_n are rotated by R_m and R_n in every attention layer, after W_Q and W_K; nothing is added",
    },
    "none": {
        "name": "no PE + causal mask",
        "lab": ("none",),
        "what": "nothing is added or rotated; the causal mask (token i sees 0..i) is the only source of order",
    },
}


def position_probe(scheme: str, *, n: int = 12, dim: int = 16, seed: int = 0) -> tuple[Tensor, Tensor]:
    r"""One attention layer under ``scheme``, fed the **same token** at positions ``0 .. n-1``.

    Returns ``(scores, values)``: the raw scores :math:`S_{mn} = \tilde q_m^\top \tilde k_n` (``[n, n]``) and
    the values ``[n, dim]``. With identical content everywhere, any difference between positions comes
    from the scheme alone. Weights: :class:`~pe_helpers.attention.SelfAttention` (``seed``); learned
    table: random rows (:class:`~pe_helpers.encodings.LearnedPositionalEmbedding`, std 1, ``seed``).
    """
    scheme = check_choice("scheme", scheme, tuple(SCHEMES))
    n = check_int("n", n, minimum=2)
    dim = check_dim("dim", dim)
    head = SelfAttention(dim, seed=seed).double()
    token = torch.randn(1, dim, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64)
    x = token.expand(n, dim)
    positions = torch.arange(n)
    with torch.no_grad():
        if scheme == "learned":
            table = LearnedPositionalEmbedding(n, dim, init_std=1.0, seed=seed).double()
            x = table(x)
        elif scheme == "sinusoidal":
            x = x + sinusoidal(n, dim, dtype=torch.float64)
        q, k, v = head.project(x)
        if scheme == "rope":
            q, k = apply_rope(q, positions), apply_rope(k, positions)
    return q @ k.T, v


def value_carries_position(scheme: str, *, n: int = 12, dim: int = 16, seed: int = 0) -> bool:
    """True when the values :math:`v_i` of one repeated token differ between positions (measured, :func:`position_probe`)."""
    _, v = position_probe(scheme, n=n, dim=dim, seed=seed)
    return not torch.allclose(v, v[:1].expand_as(v), atol=1e-9, rtol=0)


def score_position_dependence(scheme: str, *, n: int = 12, dim: int = 16, seed: int = 0) -> str:
    r"""How the score :math:`S_{mn}` of one repeated token depends on the positions (measured):

    * ``"none"``: the same for every ``(m, n)``, position does not enter the score;
    * ``"offset-only"``: :math:`S_{m+t,\,n+t} = S_{mn}` for every shift (constant along diagonals): relative distance explicit;
    * ``"absolute"``: neither; the score depends on where the pair sits, relative distance only implicit.
    """
    s, _ = position_probe(scheme, n=n, dim=dim, seed=seed)
    if torch.allclose(s, s[:1, :1].expand_as(s), atol=1e-9, rtol=0):
        return "none"
    if torch.allclose(s[1:, 1:], s[:-1, :-1], atol=1e-9, rtol=0):
        return "offset-only"
    return "absolute"


def extrapolation_verdict(in_distribution: float, past: float | None, chance: float) -> str:
    r"""A word for the accuracy past the training length, from the fraction of above-chance accuracy kept:

    .. math:: r = \frac{\text{past} - \text{chance}}{\text{in-distribution} - \text{chance}}

    ``"holds"`` (r >= 0.9), ``"degrades"`` (0.35 <= r < 0.9), ``"collapses"`` (r < 0.35); ``"cannot run"`` if ``past`` is None.
    """
    if past is None:
        return "cannot run"
    span = in_distribution - chance
    kept = (past - chance) / span if span > 1e-12 else 0.0
    if kept >= 0.9:
        return "holds"
    if kept >= 0.35:
        return "degrades"
    return "collapses"


@dataclass(frozen=True)
class LabOutcome:
    """One lab model's token accuracy at and past the training length ``L``, as means over copy lengths.

    ``in_distribution``: lengths ``1..L``; ``near``: just past ``L``, lengths ``L+1 .. L + max(1, L//4)``;
    ``far``: lengths ``2L+1 .. test_len``. ``None`` where the model cannot run (a learned table too short).
    """

    encoding: str
    train_len: int
    test_len: int
    chance: float
    in_distribution: float
    near: float | None
    far: float | None

    @property
    def near_span(self) -> tuple[int, int]:
        return self.train_len + 1, min(self.test_len, self.train_len + max(1, self.train_len // 4))

    @property
    def far_span(self) -> tuple[int, int]:
        return 2 * self.train_len + 1, self.test_len

    @property
    def near_verdict(self) -> str:
        return extrapolation_verdict(self.in_distribution, self.near, self.chance)

    @property
    def far_verdict(self) -> str:
        return extrapolation_verdict(self.in_distribution, self.far, self.chance)

    def past_text(self) -> str:
        """``"0.63 at n = 17..20 (degrades); 0.13 at n = 33..64 (collapses)"``."""
        (a, b), (c, e) = self.near_span, self.far_span
        return (f"{_fmt(self.near)} at n = {a}..{b} ({self.near_verdict}); "
                f"{_fmt(self.far)} at n = {c}..{e} ({self.far_verdict})")


def lab_outcome(results: object, encoding: str) -> LabOutcome:
    """The :class:`LabOutcome` of ``encoding`` in a :class:`pe_helpers.lab.LabResults` (chance = 1 / vocab_size)."""
    L, top = results.train_len, results.test_len
    outcome = LabOutcome(encoding=encoding, train_len=L, test_len=top, chance=1.0 / results.config.vocab_size,
                         in_distribution=results.in_distribution(encoding), near=None, far=None)
    near = results.mean_accuracy(encoding, *outcome.near_span) if top > L else None
    far = results.mean_accuracy(encoding, *outcome.far_span) if top > 2 * L else None
    return LabOutcome(**{**outcome.__dict__, "near": near, "far": far})


@dataclass(frozen=True)
class ComparisonRow:
    """One scheme of the closing table; every field but ``what`` is measured or read from the lab's results."""

    key: str
    scheme: str
    what: str
    value_carries_position: bool
    score_dependence: str
    lab: LabOutcome
    extended: LabOutcome | None = None  # learned only: the trained table grown with untrained rows

    @property
    def relative(self) -> str:
        return {"offset-only": "yes: q·k depends on n − m only",
                "absolute": "no: only implicit in the absolute positions",
                "none": "no: no position in q·k (order only from the mask)"}[self.score_dependence]

    @property
    def past_training(self) -> str:
        """The lab column: accuracy at copy lengths ≤ L, just past L, and from 2L+1 on, each with a verdict."""
        head = f"{self.lab.in_distribution:.2f} at n ≤ {self.lab.train_len}"
        if self.lab.near is None:
            text = f"{head}; past it: cannot run (PositionOutOfRangeError)"
            if self.extended is not None:
                text += f"; grown with untrained rows: {self.extended.past_text()}"
            return text
        return f"{head}; {self.lab.past_text()}"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def comparison_table(results: object, *, dim: int = 16, seed: int = 0) -> list[ComparisonRow]:
    r"""The closing table of notebook 06, one :class:`ComparisonRow` per scheme in :data:`SCHEMES`.

    * "V carries position" and "relative distance explicit" are *measured* with :func:`position_probe`;
    * "past the training length" is read from ``results`` (a :class:`pe_helpers.lab.LabResults`, e.g.
      ``pe_helpers.lab.reference_results()``) by :func:`lab_outcome`: mean token accuracy at copy lengths
      ``1..L``, just past ``L`` and ``2L+1..test_len``, each with :func:`extrapolation_verdict`. The learned
      row also reports the ``learned-extended`` model when the results have it.
    """
    for attr in ("accuracy", "train_len", "test_len", "mean_accuracy", "in_distribution", "config"):
        if not hasattr(results, attr):
            raise TypeError(f"results must be a pe_helpers.lab.LabResults (e.g. pe_helpers.lab.reference_results()), "
                            f"got {type(results).__name__} without .{attr}.")
    needed = [spec["lab"][0] for spec in SCHEMES.values()]
    missing = [e for e in needed if e not in results.accuracy]
    if missing:
        raise ValueError(f"results lack the encoding(s) {', '.join(missing)}; the table needs {', '.join(needed)}.")
    rows = []
    for key, spec in SCHEMES.items():
        extended = lab_outcome(results, "learned-extended") \
            if key == "learned" and "learned-extended" in results.accuracy else None
        if extended is not None:  # judged against the trained table's accuracy at n <= L
            extended = LabOutcome(**{**extended.__dict__,
                                     "in_distribution": results.in_distribution(spec["lab"][0])})
        rows.append(ComparisonRow(
            key=key,
            scheme=str(spec["name"]),
            what=str(spec["what"]),
            value_carries_position=value_carries_position(key, dim=dim, seed=seed),
            score_dependence=score_position_dependence(key, dim=dim, seed=seed),
            lab=lab_outcome(results, spec["lab"][0]),
            extended=extended,
        ))
    return rows


def format_comparison_table(rows: Sequence[ComparisonRow]) -> str:
    """The rows as a Markdown (pipe) table, readable as plain text too."""
    lab = f"L = {rows[0].lab.train_len}, " if rows else ""
    head = ["scheme", "what is added or rotated, and where", "V carries position", "relative distance explicit",
            f"past the training length (notebook 05's lab, {lab}token accuracy)"]
    body = [[r.scheme, r.what, "yes" if r.value_carries_position else "no", r.relative, r.past_training] for r in rows]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)
