r"""Notebook 06, "Toward RoPE", figures: RoPE turns q and k, and their dot product keeps only the offset.

* :func:`build_rope_pair` (the app's figure): one pair of :math:`\mathcal{R}_{m+t}\,q` and
  :math:`\mathcal{R}_{n+t}\,k` in its plane, the angle between them, and the full score against the shift
  ``t`` beside the additive :math:`(q + PE(m+t))^\top(k + PE(n+t))`;
* static helpers that draw onto given axes: :func:`draw_score_matrices` (additive vs rotary score
  matrices), :func:`draw_angle_error` (the angle's error in bf16 / float32 against position),
  :func:`draw_rope_decay` (RoFormer's long-term decay bound against the distance, one line per base).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from matplotlib.axes import Axes

from .._validate import require_base, require_dim, require_int
from ..rope import (additive_scores, angles_in_dtype, demo_query_key, pair_vectors, rope_decay_bound, rope_scores,
                    score_range, shifted_scores)
from ._base import DIVERGING, OKABE_ITO, FigureHandle, label, new_figure, one_thread, settle_layout, symmetric_limits
from ..i18n import _

__all__ = ["build_rope_pair", "draw_score_matrices", "draw_angle_error", "draw_rope_decay"]


def _circle(radius: float, n: int = 160) -> tuple[torch.Tensor, torch.Tensor]:
    t = torch.linspace(0, 2 * math.pi, n, dtype=torch.float64)
    return radius * torch.cos(t), radius * torch.sin(t)


def _plane_panel(ax: Axes, reach: float) -> dict:
    """Pair i's plane: per vector a faint circle (its length), the unrotated vector (dashed), the rotated ray and
    tip, a thin extension of the ray to the common radius (so both directions read equally well), a label."""
    ax.axhline(0, color="#dddddd", linewidth=0.8)
    ax.axvline(0, color="#dddddd", linewidth=0.8)
    art = {}
    for name, color in (("q", OKABE_ITO[0]), ("k", OKABE_ITO[5])):
        art[f"circle_{name}"] = ax.plot([], [], color=color, linewidth=0.8, alpha=0.35)[0]
        art[f"raw_{name}"] = ax.plot([], [], "--", color=color, linewidth=1.2, alpha=0.5)[0]
        art[f"reach_{name}"] = ax.plot([], [], ":", color=color, linewidth=1.4)[0]
    art["arc"] = ax.plot([], [], color=OKABE_ITO[2], linewidth=2)[0]
    for name, color in (("q", OKABE_ITO[0]), ("k", OKABE_ITO[5])):
        art[f"ray_{name}"] = ax.plot([], [], color=color, linewidth=2.4)[0]
        art[f"tip_{name}"] = ax.plot([], [], "o", color=color, markersize=9)[0]
        art[f"text_{name}"] = ax.text(0, 0, name, color=color, ha="center", va="center", fontsize=14,
                                      fontweight="bold")
    ax.set(xlim=(-reach, reach), ylim=(-reach, reach), aspect="equal")
    label(ax, _("pair i of R(m+t)q and R(n+t)k"), _("dim 2i"), _("dim 2i+1"))
    art["readout"] = ax.figure.text(0.01, 0.01, "", ha="left", va="bottom")  # in the margin kept free below
    return art


def _score_panel(ax: Axes, t: int, t_max: int, low: float, high: float) -> dict:
    """The whole score against the shift t: RoPE (flat) and additive (moves), with the current t marked."""
    pad = 0.08 * (high - low)
    art = {"line_rope": ax.plot([], [], color=OKABE_ITO[0], linewidth=2, label=_("RoPE: (R(m+t)q)·(R(n+t)k)"))[0],
           "line_additive": ax.plot([], [], color=OKABE_ITO[5], linewidth=1.4,
                                    label=_("additive: (q+PE(m+t))·(k+PE(n+t))"))[0],
           "marker": ax.axvline(t, color="#888888", linewidth=1),
           "dot_rope": ax.plot([], [], "o", color=OKABE_ITO[0], markersize=8)[0],
           "dot_additive": ax.plot([], [], "o", color=OKABE_ITO[5], markersize=8)[0]}
    ax.set(xlim=(-1, t_max + 1), ylim=(low - pad, high + 4 * pad))
    ax.legend(frameon=False, loc="upper left")
    label(ax, _("score while both positions shift by t"), _("shift t (query at m+t, key at n+t)"), _("q·k score"))
    return art


def build_rope_pair(*, m: int = 5, n: int = 2, t: int = 0, pair: int = 0, d: int = 16, base: float = 10000.0,
                    seed: int = 0, max_pos: int = 64, t_max: int = 64) -> FigureHandle:
    r"""Left: pair ``i`` of :math:`\mathcal{R}_{m+t}\,q` (blue) and :math:`\mathcal{R}_{n+t}\,k` (orange) in their plane.
    Right: the whole score :math:`(\mathcal{R}_{m+t}q)^\top(\mathcal{R}_{n+t}k)` against ``t`` (flat: it is
    :math:`q^\top\mathcal{R}_{n-m}k`) and the additive :math:`(q+PE(m+t))^\top(k+PE(n+t))` (it moves with ``t``).

    ``q``, ``k`` come from :func:`~pe_helpers.rope.demo_query_key` (``d``, ``seed``); the pair vectors from
    :func:`~pe_helpers.rope.pair_vectors`. The axis limits are fixed when the figure is built
    (:func:`~pe_helpers.rope.score_range`), so ``update(m=, n=, t=, pair=)`` only moves lines, dots and text.
    Named artists: ``tip_q``, ``tip_k``, ``ray_q``, ``ray_k``, ``circle_q``, ``circle_k``, ``raw_q``, ``raw_k``,
    ``reach_q``, ``reach_k``, ``arc``, ``readout``, ``line_rope``, ``line_additive``, ``marker``, ``dot_rope``,
    ``dot_additive``.
    """
    d = require_dim("d", d)
    base = require_base(base)
    max_pos = require_int("max_pos", max_pos, minimum=1)
    t_max = require_int("t_max", t_max, minimum=1)
    q, k = demo_query_key(d, seed=seed)
    grid = torch.arange(max_pos + t_max + 1)
    additive = additive_scores(q, k, grid, grid, base=base)  # [top+1, top+1]
    low, high = score_range(q, k, max_pos, t_max, base=base)
    longest = float(torch.cat([q.view(-1, 2).norm(dim=1), k.view(-1, 2).norm(dim=1)]).max())

    fig = new_figure(height=4.8)
    fig.get_layout_engine().set(rect=(0, 0.13, 1, 0.87))  # the bottom strip holds the readout, off the plot
    ax, ax_s = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.45]})
    art = {**_plane_panel(ax, 1.3 * longest), **_score_panel(ax_s, t, t_max, low, high)}
    ts = torch.arange(t_max + 1)

    @one_thread
    def update(*, m: int = m, n: int = n, t: int = t, pair: int = pair) -> str:
        m, n, t = (require_int(name, v, minimum=0) for name, v in (("m", m), ("n", n), ("t", t)))
        pair = require_int("pair", pair, minimum=0)
        if max(m, n) > max_pos or t > t_max:
            raise ValueError(_("m, n must be <= {max_pos} and t <= {t_max} for this figure, got m={m}, n={n}, t={t}.")
                             .format(max_pos=max_pos, t_max=t_max, m=m, n=n, t=t))
        pq, pk = pair_vectors(q, k, m + t, n + t, pair, base)
        rq, rk = pair_vectors(q, k, 0, 0, pair, base)
        for name, v, raw in (("q", pq, rq), ("k", pk, rk)):
            x, y = float(v[0]), float(v[1])
            length = max(float(v.norm()), 1e-12)
            art[f"circle_{name}"].set_data(*(c.numpy() for c in _circle(float(raw.norm()))))
            art[f"raw_{name}"].set_data([0.0, float(raw[0])], [0.0, float(raw[1])])
            art[f"ray_{name}"].set_data([0.0, x], [0.0, y])
            art[f"tip_{name}"].set_data([x], [y])
            art[f"reach_{name}"].set_data([x, x * longest / length], [y, y * longest / length])
            scale = 1.12 * longest / length
            art[f"text_{name}"].set_position((scale * x, scale * y))
        ang_q, ang_k = math.atan2(float(pq[1]), float(pq[0])), math.atan2(float(pk[1]), float(pk[0]))
        sweep = math.remainder(ang_q - ang_k, 2 * math.pi)
        theta = ang_k + sweep * torch.linspace(0, 1, 60, dtype=torch.float64)
        radius = 0.35 * longest
        art["arc"].set_data((radius * torch.cos(theta)).numpy(), (radius * torch.sin(theta)).numpy())
        start = math.remainder(math.atan2(float(rq[1]), float(rq[0])) - math.atan2(float(rk[1]), float(rk[0])),
                               2 * math.pi)
        art["readout"].set_text(_("pair {i}: angle k→q {sweep:+.3f} rad = {start:+.3f} − (n−m)ω_{i} (mod 2π);   "
              "pair score {score:+.4f}").format(i=pair, sweep=sweep, start=start, score=float(pq @ pk)))
        rotary = shifted_scores(q, k, m, n, ts, base=base)
        adds = additive[m + ts, n + ts]
        art["line_rope"].set_data(ts.numpy(), rotary.numpy())
        art["line_additive"].set_data(ts.numpy(), adds.numpy())
        art["marker"].set_xdata([t, t])
        art["dot_rope"].set_data([t], [float(rotary[t])])
        art["dot_additive"].set_data([t], [float(adds[t])])
        return _("m = {m}, n = {n}, t = {t}, pair i = {i}: offset n - m = {offset}; RoPE score = {rope:.4f} for "
                 "every t; additive score = {add:.4f} (from {low:.2f} to {high:.2f} over t)").format(
            m=m, n=n, t=t, i=pair, offset=n - m, rope=float(rotary[t]), add=float(adds[t]), low=float(adds.min()),
            high=float(adds.max()))

    update()
    settle_layout(fig)
    fig.set_dynamic(*art.values())
    return FigureHandle(fig, art, update)


def draw_score_matrices(ax_add: Axes, ax_rope: Axes, q: torch.Tensor, k: torch.Tensor, *, n: int = 48,
                        base: float = 10000.0) -> None:
    r"""Score matrices over positions ``0..n-1`` for one query/key content: additive
    :math:`(q+PE(m))^\top(k+PE(n))` (left) and rotary :math:`(\mathcal{R}_m q)^\top(\mathcal{R}_n k)` (right).

    The rotary one is constant along every diagonal (it depends on ``n - m`` only); the additive one is not.
    Shared symmetric limits, diverging colormap.
    """
    n = require_int("n", n, minimum=2)
    pos = torch.arange(n)
    add = additive_scores(q, k, pos, pos, base=base)
    rot = rope_scores(q[None].expand(n, -1), k[None].expand(n, -1), pos, pos, base=base)
    lo, hi = symmetric_limits(torch.cat([add.flatten(), rot.flatten()]))
    for ax, values, title in ((ax_add, add, _("additive: (q+PE(m))·(k+PE(n))")),
                              (ax_rope, rot, _("RoPE: (R(m)q)·(R(n)k)"))):
        image = ax.imshow(values.numpy(), cmap=DIVERGING, vmin=lo, vmax=hi, interpolation="nearest")
        label(ax, title, _("key position n"), _("query position m"))
    ax_rope.figure.colorbar(image, ax=[ax_add, ax_rope], fraction=0.03, pad=0.02, label=_("score"))


def draw_angle_error(ax: Axes, positions: torch.Tensor, dim: int, *,
                     dtypes: Sequence[torch.dtype] = (torch.bfloat16, torch.float16, torch.float32),
                     base: float = 10000.0, floor: float = 1e-9) -> None:
    r"""Log–log: the largest :math:`|\theta_{m,i} - m\,\omega_i|` over the pairs, with the angle formed in each dtype.

    Positions a dtype cannot hold (float16 above 65504) are left out of its line.
    """
    dim = require_dim("dim", dim)
    x = positions.to(torch.float64)
    exact = angles_in_dtype(x, dim, base=base)
    names = {torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float32: "float32", torch.float64: "float64"}
    colors = (OKABE_ITO[5], OKABE_ITO[3], OKABE_ITO[0], OKABE_ITO[2])
    for c, dtype in enumerate(dtypes):
        err = (angles_in_dtype(x, dim, base=base, dtype=dtype) - exact).abs().amax(dim=-1)
        ok = torch.isfinite(err)
        ax.loglog(x[ok].numpy(), err[ok].clamp_min(floor).numpy(), "o-", markersize=3, color=colors[c % len(colors)],
                  label=_("angles in {dtype}").format(dtype=names.get(dtype, str(dtype))))
    ax.axhline(math.pi, color="#555555", linestyle="--", linewidth=1, label=_("π rad (direction lost)"))
    label(ax, _("error of the RoPE angle m·ωᵢ, largest over pairs"), _("position m (log)"),
          _("|error| in rad (log)"))
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the lines, never on them


def draw_rope_decay(ax: Axes, distances: torch.Tensor, dim: int, bases: Sequence[float]) -> None:
    r"""RoFormer's relative decay bound :math:`\frac{1}{d/2}\sum_j |S_j(m)|` against the distance ``m`` (log axis),
    one line per base (:func:`~pe_helpers.rope.rope_decay_bound`): a larger base keeps the bound up to longer
    distances before it settles on the same floor.
    """
    dim = require_dim("dim", dim)
    x = distances.to(torch.float64)
    colors = (OKABE_ITO[5], OKABE_ITO[0], OKABE_ITO[2], OKABE_ITO[3])
    for c, base in enumerate(bases):
        base = require_base(base)
        bound = rope_decay_bound(x, dim, base=base)
        ax.semilogx(x.numpy(), bound.numpy(), color=colors[c % len(colors)], linewidth=1.4,
                    label=_("base {base:,.0f}").format(base=base))
    ax.set_ylim(bottom=0)
    label(ax, _("RoPE's long-term decay bound (RoFormer §3.4.3), d = {d}").format(d=dim),
          _("relative distance m (log)"), _("(1/(d/2)) Σ_j |S_j(m)|"))
    ax.legend(frameon=False, loc="upper right")
