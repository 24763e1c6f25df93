r"""Notebook 06, "Toward RoPE", figures: RoPE turns q and k, and their dot product keeps only the offset.

* :func:`build_rope_pair` (the app's figure): one pair of :math:`\mathcal{R}_{m+t}\,q` and
  :math:`\mathcal{R}_{n+t}\,k` in its plane, the angle between them, and the full score against the shift
  ``t`` beside the additive :math:`(q + PE(m+t))^\top(k + PE(n+t))`;
* static helpers that draw onto given axes: :func:`draw_score_matrices` (additive vs rotary score
  matrices), :func:`draw_angle_error` (the angle's error in bf16 / float32 against position).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._validate import check_base, check_dim, check_int
from ..encodings import inverse_frequencies
from ..rope import additive_scores, angles_in_dtype, demo_query_key, rope_scores, shifted_scores
from ._base import DIVERGING, OKABE_ITO, Updater, label, symmetric_limits
from ._base import one_thread
from .frequencies import new_blit_figure, settle_layout

__all__ = ["build_rope_pair", "pair_vectors", "draw_score_matrices", "draw_angle_error"]


def pair_vectors(q: torch.Tensor, k: torch.Tensor, m: int, n: int, pair: int, base: float = 10000.0
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Pair ``i`` (dims ``2i, 2i+1``) of :math:`\mathcal{R}_m q` and :math:`\mathcal{R}_n k`, each ``[2]`` float64 = (x, y)."""
    d = check_dim("len(q)", q.shape[-1])
    pair = check_int("pair", pair, minimum=0)
    if pair >= d // 2:
        raise ValueError(f"pair must be in 0..{d // 2 - 1} for d = {d}, got {pair}.")
    omega = float(inverse_frequencies(d, base)[pair])

    def turn(v: torch.Tensor, pos: int) -> torch.Tensor:
        a, b = float(v[2 * pair]), float(v[2 * pair + 1])
        c, s = math.cos(pos * omega), math.sin(pos * omega)
        return torch.tensor([a * c - b * s, a * s + b * c], dtype=torch.float64)

    return turn(q, m), turn(k, n)


def _circle(radius: float, n: int = 160) -> tuple[torch.Tensor, torch.Tensor]:
    t = torch.linspace(0, 2 * math.pi, n, dtype=torch.float64)
    return radius * torch.cos(t), radius * torch.sin(t)


def build_rope_pair(*, m: int = 5, n: int = 2, t: int = 0, pair: int = 0, d: int = 16, base: float = 10000.0,
                    seed: int = 0, max_pos: int = 64, t_max: int = 64) -> tuple[Figure, Updater]:
    r"""Left: pair ``i`` of :math:`\mathcal{R}_{m+t}\,q` (blue) and :math:`\mathcal{R}_{n+t}\,k` (orange) in their plane.
    Right: the whole score :math:`(\mathcal{R}_{m+t}q)^\top(\mathcal{R}_{n+t}k)` against ``t`` (flat: it is
    :math:`q^\top\mathcal{R}_{n-m}k`) and the additive :math:`(q+PE(m+t))^\top(k+PE(n+t))` (it moves with ``t``).

    ``q``, ``k`` come from :func:`~pe_helpers.rope.demo_query_key` (``d``, ``seed``). The axis limits are
    fixed when the figure is built (they cover every ``m, n <= max_pos`` and ``t <= t_max``), so
    ``update(m=, n=, t=, pair=)`` only moves lines, dots and text.
    """
    d = check_dim("d", d)
    base = check_base(base)
    max_pos = check_int("max_pos", max_pos, minimum=1)
    t_max = check_int("t_max", t_max, minimum=1)
    q, k = demo_query_key(d, seed=seed)
    omegas = inverse_frequencies(d, base)
    top = max_pos + t_max
    grid = torch.arange(top + 1)
    additive = additive_scores(q, k, grid, grid, base=base)  # [top+1, top+1]
    offsets = torch.arange(-max_pos, max_pos + 1)
    rotary_all = rope_scores(q[None], k[None].expand(offsets.numel(), -1), [0], offsets, base=base)[0]
    low = min(float(additive.min()), float(rotary_all.min()))
    high = max(float(additive.max()), float(rotary_all.max()))
    pad = 0.08 * (high - low)
    norms = torch.cat([q.view(-1, 2).norm(dim=1), k.view(-1, 2).norm(dim=1)])
    reach = 1.3 * float(norms.max())

    fig = new_blit_figure()
    gs = fig.add_gridspec(1, 2, width_ratios=[1.0, 1.45])
    ax, ax_s = fig.add_subplot(gs[0]), fig.add_subplot(gs[1])
    ax.axhline(0, color="#dddddd", linewidth=0.8)
    ax.axvline(0, color="#dddddd", linewidth=0.8)
    (circle_q,) = ax.plot([], [], color=OKABE_ITO[0], linewidth=0.6, alpha=0.35)
    (circle_k,) = ax.plot([], [], color=OKABE_ITO[5], linewidth=0.6, alpha=0.35)
    (raw_q,) = ax.plot([], [], "--", color=OKABE_ITO[0], linewidth=1, alpha=0.5)
    (raw_k,) = ax.plot([], [], "--", color=OKABE_ITO[5], linewidth=1, alpha=0.5)
    (arc,) = ax.plot([], [], color=OKABE_ITO[2], linewidth=1.6)
    (ray_q,) = ax.plot([], [], color=OKABE_ITO[0], linewidth=2)
    (ray_k,) = ax.plot([], [], color=OKABE_ITO[5], linewidth=2)
    (tip_q,) = ax.plot([], [], "o", color=OKABE_ITO[0], markersize=7)
    (tip_k,) = ax.plot([], [], "o", color=OKABE_ITO[5], markersize=7)
    text_q = ax.text(0, 0, "q", color=OKABE_ITO[0], fontsize=9, ha="center", va="center")
    text_k = ax.text(0, 0, "k", color=OKABE_ITO[5], fontsize=9, ha="center", va="center")
    readout = ax.text(0.02, 0.02, "", transform=ax.transAxes, fontsize=8, family="DejaVu Sans Mono", va="bottom")
    ax.set_xlim(-reach, reach)
    ax.set_ylim(-reach, reach)
    ax.set_aspect("equal")
    label(ax, "pair i of R(m+t)q and R(n+t)k", "dim 2i", "dim 2i+1")

    ts = torch.arange(t_max + 1)
    (line_r,) = ax_s.plot([], [], color=OKABE_ITO[0], linewidth=1.8, label="RoPE: (R(m+t)q)\u00b7(R(n+t)k)")
    (line_a,) = ax_s.plot([], [], color=OKABE_ITO[5], linewidth=1.2, label="additive: (q+PE(m+t))\u00b7(k+PE(n+t))")
    marker = ax_s.axvline(t, color="#888888", linewidth=0.8)
    (dot_r,) = ax_s.plot([], [], "o", color=OKABE_ITO[0], markersize=6)
    (dot_a,) = ax_s.plot([], [], "o", color=OKABE_ITO[5], markersize=6)
    ax_s.set_xlim(-1, t_max + 1)
    ax_s.set_ylim(low - pad, high + 2.2 * pad)
    ax_s.legend(fontsize=7.5, frameon=False, loc="upper left", ncol=1)
    label(ax_s, "score while both positions shift by t", "shift t (query at m+t, key at n+t)", "q\u00b7k score")

    @one_thread
    def update(*, m: int = m, n: int = n, t: int = t, pair: int = pair) -> str:
        m = check_int("m", m, minimum=0)
        n = check_int("n", n, minimum=0)
        t = check_int("t", t, minimum=0)
        pair = check_int("pair", pair, minimum=0)
        if max(m, n) > max_pos or t > t_max:
            raise ValueError(f"m, n must be <= {max_pos} and t <= {t_max} for this figure, got m={m}, n={n}, t={t}.")
        pq, pk = pair_vectors(q, k, m + t, n + t, pair, base)
        rq, rk = pair_vectors(q, k, 0, 0, pair, base)
        circle_q.set_data(*(c.numpy() for c in _circle(float(rq.norm()))))
        circle_k.set_data(*(c.numpy() for c in _circle(float(rk.norm()))))
        raw_q.set_data([0.0, float(rq[0])], [0.0, float(rq[1])])
        raw_k.set_data([0.0, float(rk[0])], [0.0, float(rk[1])])
        ray_q.set_data([0.0, float(pq[0])], [0.0, float(pq[1])])
        ray_k.set_data([0.0, float(pk[0])], [0.0, float(pk[1])])
        tip_q.set_data([float(pq[0])], [float(pq[1])])
        tip_k.set_data([float(pk[0])], [float(pk[1])])
        for text, v, name in ((text_q, pq, "q"), (text_k, pk, "k")):
            scale = 1.0 + 0.12 * reach / max(float(v.norm()), 1e-9)
            text.set_position((scale * float(v[0]), scale * float(v[1])))
            text.set_text(name)
        ang_q, ang_k = math.atan2(float(pq[1]), float(pq[0])), math.atan2(float(pk[1]), float(pk[0]))
        sweep = math.remainder(ang_q - ang_k, 2 * math.pi)
        radius = 0.3 * min(float(pq.norm()), float(pk.norm()))
        theta = ang_k + sweep * torch.linspace(0, 1, 60, dtype=torch.float64)
        arc.set_data((radius * torch.cos(theta)).numpy(), (radius * torch.sin(theta)).numpy())
        pair_score = float(pq @ pk)
        start = math.remainder(math.atan2(float(rq[1]), float(rq[0])) - math.atan2(float(rk[1]), float(rk[0])),
                               2 * math.pi)
        readout.set_text(f"angle k\u2192q {sweep:+.3f} rad\n"
                         f"= {start:+.3f} + (m-n)\u03c9_{pair} (mod 2\u03c0)\n"
                         f"pair score {pair_score:+.4f}")
        rotary = shifted_scores(q, k, m, n, ts, base=base)
        adds = additive[m + ts, n + ts]
        line_r.set_data(ts.numpy(), rotary.numpy())
        line_a.set_data(ts.numpy(), adds.numpy())
        marker.set_xdata([t, t])
        dot_r.set_data([t], [float(rotary[t])])
        dot_a.set_data([t], [float(adds[t])])
        return (f"m = {m}, n = {n}, t = {t}, pair i = {pair}: offset m - n = {m - n}; "
                f"RoPE score = {float(rotary[t]):.4f} for every t; additive score = {float(adds[t]):.4f} "
                f"(from {float(adds.min()):.2f} to {float(adds.max()):.2f} over t)")

    update()
    settle_layout(fig)
    fig.set_dynamic(circle_q, circle_k, raw_q, raw_k, arc, ray_q, ray_k, tip_q, tip_k, text_q, text_k, readout,
                    line_r, line_a, marker, dot_r, dot_a)
    return fig, update


def draw_score_matrices(ax_add: Axes, ax_rope: Axes, q: torch.Tensor, k: torch.Tensor, *, n: int = 48,
                        base: float = 10000.0) -> None:
    r"""Score matrices over positions ``0..n-1`` for one query/key content: additive
    :math:`(q+PE(m))^\top(k+PE(n))` (left) and rotary :math:`(\mathcal{R}_m q)^\top(\mathcal{R}_n k)` (right).

    The rotary one is constant along every diagonal (it depends on ``n - m`` only); the additive one is not.
    Shared symmetric limits, diverging colormap.
    """
    n = check_int("n", n, minimum=2)
    pos = torch.arange(n)
    add = additive_scores(q, k, pos, pos, base=base)
    rot = rope_scores(q[None].expand(n, -1), k[None].expand(n, -1), pos, pos, base=base)
    lo, hi = symmetric_limits(torch.cat([add.flatten(), rot.flatten()]))
    for ax, values, title in ((ax_add, add, "additive: (q+PE(m))\u00b7(k+PE(n))"),
                              (ax_rope, rot, "RoPE: (R(m)q)\u00b7(R(n)k)")):
        image = ax.imshow(values.numpy(), cmap=DIVERGING, vmin=lo, vmax=hi, interpolation="nearest")
        label(ax, title, "key position n", "query position m")
    ax_rope.figure.colorbar(image, ax=[ax_add, ax_rope], fraction=0.03, pad=0.02, label="score")


def draw_angle_error(ax: Axes, positions: torch.Tensor, dim: int, *,
                     dtypes: Sequence[torch.dtype] = (torch.bfloat16, torch.float16, torch.float32),
                     base: float = 10000.0, floor: float = 1e-9) -> None:
    r"""Log–log: the largest :math:`|\theta_{m,i} - m\,\omega_i|` over the pairs, with the angle formed in each dtype.

    Positions a dtype cannot hold (float16 above 65504) are left out of its line.
    """
    dim = check_dim("dim", dim)
    x = positions.to(torch.float64)
    exact = angles_in_dtype(x, dim, base=base)
    names = {torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float32: "float32", torch.float64: "float64"}
    colors = (OKABE_ITO[5], OKABE_ITO[3], OKABE_ITO[0], OKABE_ITO[2])
    for c, dtype in enumerate(dtypes):
        err = (angles_in_dtype(x, dim, base=base, dtype=dtype) - exact).abs().amax(dim=-1)
        ok = torch.isfinite(err)
        ax.loglog(x[ok].numpy(), err[ok].clamp_min(floor).numpy(), "o-", markersize=3, color=colors[c % len(colors)],
                  label=f"angles in {names.get(dtype, str(dtype))}")
    ax.axhline(math.pi, color="#555555", linestyle="--", linewidth=1, label="\u03c0 rad (direction lost)")
    label(ax, "error of the RoPE angle m\u00b7\u03c9\u1d62, largest over pairs", "position m (log)",
          "|error| in rad (log)")
    ax.legend(fontsize=8, frameon=False, loc="upper left")
