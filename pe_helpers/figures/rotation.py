r"""Notebook 04, "The rotation identity", figures: each (sin, cos) pair as a phasor, the rotation R(k), and PE(p)·PE(p+k).

* :func:`build_phasor` (app figure): pair ``i`` at ``pos`` and ``pos + k`` on the unit circle, the angle
  :math:`k\,\omega_i` between them, and the 2×2 block of :math:`R(k)` as text;
* :func:`build_dot_product` (app figure): :math:`PE(p)\cdot PE(p+k) = \sum_i \cos(k\,\omega_i)` against ``k``,
  with dots measured from the table at a chosen ``p``;
* :func:`draw_shift_matrix` (static): :math:`R(k)` as an image.
"""

from __future__ import annotations

import math

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .._validate import check_base, check_dim, check_int, check_layout, check_real
from ..encodings import inverse_frequencies, shift_matrix, sinusoidal
from ..rotation import first_rise, pe_dot_product, phasor
from ._base import DIVERGING, OKABE_ITO, Updater, label
from ._base import one_thread
from .frequencies import new_blit_figure, settle_layout

__all__ = ["pair_block", "build_phasor", "build_dot_product", "draw_shift_matrix", "draw_dot_products",
           "measured_dot_products"]


def pair_block(k: float, pair: int, d: int, base: float = 10000.0) -> torch.Tensor:
    r"""The 2×2 block of :math:`R(k)` acting on columns ``(2i, 2i+1)``: :math:`\begin{bmatrix}\cos k\omega_i & \sin k\omega_i\\
    -\sin k\omega_i & \cos k\omega_i\end{bmatrix}` (read from :func:`~pe_helpers.encodings.shift_matrix`)."""
    d = check_dim("d", d)
    pair = check_int("pair", pair, minimum=0)
    if pair >= d // 2:
        raise ValueError(f"pair must be in 0..{d // 2 - 1} for d = {d}, got {pair}.")
    r = shift_matrix(k, d, base=base)
    return r[2 * pair: 2 * pair + 2, 2 * pair: 2 * pair + 2]


def _arc(start: float, sweep: float, n: int = 120) -> tuple[torch.Tensor, torch.Tensor]:
    """Points of the arc from angle ``start`` through ``sweep`` (a spiral when it is more than one turn)."""
    t = torch.linspace(0.0, 1.0, n, dtype=torch.float64)
    turns = abs(sweep) / (2 * math.pi)
    radius = 0.3 + (0.15 * t * min(turns, 3.0) / max(turns, 1e-12) if turns > 1 else 0.0 * t)
    theta = start + sweep * t
    return radius * torch.cos(theta), radius * torch.sin(theta)


def build_phasor(*, pos: int = 3, k: int = 5, pair: int = 0, d: int = 16,
                 base: float = 10000.0) -> tuple[Figure, Updater]:
    r"""Pair ``i`` of :math:`PE(pos)` and :math:`PE(pos+k)` as points :math:`(\cos, \sin)` on the unit circle.

    The point turns by :math:`\omega_i` per position, so from ``pos`` to ``pos + k`` by :math:`k\,\omega_i`
    whatever ``pos`` is. Right: the 2×2 block of :math:`R(k)` and the check
    :math:`R(k)\,[\sin, \cos](pos) = [\sin, \cos](pos + k)`.
    ``update(pos=, k=, pair=)`` moves the points, the path and the arc in place; only they and the
    text are repainted (the circle and the axes are a cached background).
    """
    d = check_dim("d", d)
    base = check_base(base)
    fig = new_blit_figure()
    grid = fig.add_gridspec(1, 2, width_ratios=[1.0, 1.15])
    ax, ax_text = fig.add_subplot(grid[0]), fig.add_subplot(grid[1])
    circle = torch.linspace(0, 2 * math.pi, 200, dtype=torch.float64)
    ax.plot(torch.cos(circle).numpy(), torch.sin(circle).numpy(), color="#999999", linewidth=1)
    ax.axhline(0, color="#dddddd", linewidth=0.8)
    ax.axvline(0, color="#dddddd", linewidth=0.8)
    (path,) = ax.plot([], [], "o", color="#888888", markersize=2.5)
    (arc,) = ax.plot([], [], color=OKABE_ITO[2], linewidth=1.5)
    (ray_a,) = ax.plot([], [], color=OKABE_ITO[0], linewidth=1.5)
    (ray_b,) = ax.plot([], [], color=OKABE_ITO[5], linewidth=1.5)
    (dot_a,) = ax.plot([], [], "o", color=OKABE_ITO[0], markersize=8)
    (dot_b,) = ax.plot([], [], "o", color=OKABE_ITO[5], markersize=8)
    text_a = ax.text(0, 0, "pos", color=OKABE_ITO[0], fontsize=9, ha="center", va="center")
    text_b = ax.text(0, 0, "pos+k", color=OKABE_ITO[5], fontsize=9, ha="center", va="center")
    ax.set_xlim(-1.35, 1.35)
    ax.set_ylim(-1.35, 1.35)
    ax.set_aspect("equal")
    ax.set_xticks([-1, 0, 1])
    ax.set_yticks([-1, 0, 1])
    label(ax, "pair i on the unit circle", "cos(pos\u00b7\u03c9\u1d62)  (column 2i+1)", "sin(pos\u00b7\u03c9\u1d62)  (column 2i)")
    ax_text.set_axis_off()
    ax_text.text(0.0, 0.97, "R(k) block = [[cos k\u03c9\u1d62, sin k\u03c9\u1d62], [-sin k\u03c9\u1d62, cos k\u03c9\u1d62]]\n"
                 "PE_i = (sin, cos) of pair i = columns (2i, 2i+1)", fontsize=8, va="top", ha="left",
                 transform=ax_text.transAxes)
    panel = ax_text.text(0.0, 0.5, "", family="DejaVu Sans Mono", fontsize=9, va="center", ha="left",
                         transform=ax_text.transAxes)

    @one_thread
    def update(*, pos: int = pos, k: int = k, pair: int = pair) -> str:
        pos = check_int("pos", pos, minimum=0)
        k = check_int("k", k)
        pair = check_int("pair", pair, minimum=0)
        if pair >= d // 2:
            raise ValueError(f"pair must be in 0..{d // 2 - 1} for d = {d}, got {pair}.")
        omega = float(inverse_frequencies(d, base)[pair])
        between = phasor(torch.arange(min(pos, pos + k), max(pos, pos + k) + 1), pair, d, base)  # [sin, cos]
        a, b = phasor(pos, pair, d, base), phasor(pos + k, pair, d, base)
        path.set_data(between[:, 1].numpy(), between[:, 0].numpy())
        ray_a.set_data([0.0, float(a[1])], [0.0, float(a[0])])
        ray_b.set_data([0.0, float(b[1])], [0.0, float(b[0])])
        dot_a.set_data([float(a[1])], [float(a[0])])
        dot_b.set_data([float(b[1])], [float(b[0])])
        text_a.set_position((1.2 * float(a[1]), 1.2 * float(a[0])))
        text_b.set_position((1.2 * float(b[1]), 1.2 * float(b[0])))
        arc_x, arc_y = _arc(pos * omega, k * omega)
        arc.set_data(arc_x.numpy(), arc_y.numpy())
        block = pair_block(k, pair, d, base)
        moved = block @ a
        panel.set_text(
            f"\u03c9_{pair} = {omega:.5f} rad/position\n"
            f"k\u00b7\u03c9_{pair} = {k * omega:.4f} rad\n\n"
            f"R(k) block, k = {k}:\n"
            f" [{float(block[0, 0]):7.4f} {float(block[0, 1]):7.4f}]\n"
            f" [{float(block[1, 0]):7.4f} {float(block[1, 1]):7.4f}]\n\n"
            f"R(k)\u00b7PE_i(pos) = [{float(moved[0]):7.4f}, {float(moved[1]):7.4f}]\n"
            f"PE_i(pos+k)     = [{float(b[0]):7.4f}, {float(b[1]):7.4f}]"
        )
        return f"pos = {pos}, k = {k}, pair i = {pair}: angle k\u00b7\u03c9_i = {k * omega:.4f} rad"

    update()
    settle_layout(fig)
    fig.set_dynamic(path, arc, ray_a, ray_b, dot_a, dot_b, text_a, text_b, panel)
    return fig, update


def measured_dot_products(p: int, ks: torch.Tensor, d: int, base: float = 10000.0) -> torch.Tensor:
    r""":math:`PE(p)\cdot PE(p+k)` for each ``k`` in ``ks`` (all with ``p + k >= 0``), from rows of the float64 table.

    Each row comes from :func:`~pe_helpers.encodings.sinusoidal` (``offset = p + k``), so the dots are an
    independent check of the closed form :func:`~pe_helpers.rotation.pe_dot_product`.
    """
    p = check_int("p", p, minimum=0)
    ks = torch.as_tensor(ks, dtype=torch.long)
    if ks.numel() and int((p + ks).min()) < 0:
        raise ValueError(f"p + k must be >= 0 for every k, got p = {p} and k down to {int(ks.min())}.")
    rows = torch.cat([sinusoidal(1, d, base=base, offset=p + int(k), dtype=torch.float64) for k in ks]) \
        if ks.numel() else torch.zeros(0, d, dtype=torch.float64)
    return rows @ sinusoidal(1, d, base=base, offset=p, dtype=torch.float64)[0]


def build_dot_product(*, d: int = 64, base: float = 10000.0, p: int = 0, k_max: int = 128) -> tuple[Figure, Updater]:
    r""":math:`PE(p)\cdot PE(p+k) = \sum_i \cos(k\,\omega_i)` against ``k`` in ``[-k_max, k_max]``.

    The line is the formula; the dots are dot products read off the table at the chosen ``p``
    (they sit on the line for every ``p``). The first ``k`` where the value *rises* is marked:
    the decay with ``|k|`` is not monotone. ``update(d=, base=, p=, k_max=)`` edits the artists in place.
    """
    fig = new_blit_figure()
    ax = fig.add_subplot()
    zero_line = ax.axhline(0, color="#bbbbbb", linewidth=0.8)
    zero_k = ax.axvline(0, color="#bbbbbb", linewidth=0.8)
    (curve,) = ax.plot([], [], color=OKABE_ITO[0], linewidth=1.3)
    (dots,) = ax.plot([], [], "o", color=OKABE_ITO[5], markersize=3.5)
    (rise,) = ax.plot([], [], "o", color=OKABE_ITO[2], markersize=9, markerfacecolor="none", markeredgewidth=1.5)
    rise_text = ax.text(0, 0, "", color=OKABE_ITO[2], fontsize=8, ha="left", va="top",
                        bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1))
    ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(5))
    note = ax.text(0.99, 0.97, "", transform=ax.transAxes, ha="right", va="top", fontsize=8)
    label(ax, "PE(p)\u00b7PE(p+k) = \u03a3\u1d62 cos(k\u00b7\u03c9\u1d62): line = formula, dots = table at p",
          "offset k", "dot product")

    @one_thread
    def update(*, d: int = d, base: float = base, p: int = p, k_max: int = k_max) -> str:
        d = check_dim("d", d)
        base = check_base(base)
        p = check_int("p", p, minimum=0)
        k_max = check_int("k_max", k_max, minimum=1)
        ks = torch.arange(-k_max, k_max + 1)
        values = pe_dot_product(ks, d, base)
        curve.set_data(ks.numpy(), values.numpy())
        step = max(1, k_max // 24)
        sample = ks[::step]
        sample = sample[p + sample >= 0]
        dots.set_data(sample.numpy(), measured_dot_products(p, sample, d, base).numpy())
        k_rise = first_rise(d, base, k_max=k_max)
        if k_rise is None:
            rise.set_data([], [])
            rise_text.set_text("")
            rise_msg = f"no rise up to k = {k_max}"
        else:
            y = float(pe_dot_product(k_rise, d, base))
            span = d / 2
            rise.set_data([k_rise], [y])
            rise_text.set_position((k_rise + 0.03 * k_max, y - 0.04 * span))
            rise_text.set_text(f"rises after k = {k_rise}")
            rise_msg = f"it rises from k = {k_rise} to {k_rise + 1} (not monotone)"
        low, high = float(values.min()), d / 2
        pad = 0.12 * (high - low)
        ax.set_xlim(-k_max, k_max)
        ax.set_ylim(low - pad, high + pad)
        note.set_text(f"d = {d}, base = {base:g}, p = {p}\nvalue d/2 = {d // 2} at k = 0; same at +k and -k")
        return f"d = {d}, base = {base:g}, p = {p}: PE(p)\u00b7PE(p+k) = {d // 2} at k = 0, minimum {low:.3f}; {rise_msg}"

    update(d=256, base=1e6, p=0, k_max=1024)  # widest tick labels first, so every later value fits
    settle_layout(fig)
    fig.set_dynamic(zero_line, zero_k, curve, dots, rise, rise_text, note, *ax.spines.values(), ax.xaxis, ax.yaxis)
    update()
    return fig, update


def draw_shift_matrix(ax: Axes, k: float, d: int, *, base: float = 10000.0, layout: str = "interleaved") -> None:
    r""":math:`R(k)` from :func:`~pe_helpers.encodings.shift_matrix` as an image (RdBu_r, limits -1..1).

    Interleaved: 2×2 rotation blocks on the diagonal; concatenated: the same entries on four diagonals.
    """
    k = check_real("k", k)
    layout = check_layout(layout)
    r = shift_matrix(k, d, base=base, layout=layout)
    image = ax.imshow(r.numpy(), cmap=DIVERGING, vmin=-1, vmax=1, interpolation="nearest")
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(8, integer=True))
    label(ax, f"R(k = {k:g}), {layout}, d = {d}", "column of PE(pos)", "row of PE(pos + k)")
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)


def draw_dot_products(ax: Axes, configs: tuple[tuple[int, float], ...] = ((16, 10000.0), (64, 10000.0),
                                                                          (256, 10000.0), (64, 100.0)),
                      *, k_max: int = 200) -> None:
    r""":math:`\sum_i \cos(k\omega_i) / (d/2)` against ``k`` for several ``(d, base)``: 1 at ``k = 0``, a rough decay.

    Divided by its value ``d/2`` at ``k = 0`` so curves for different ``d`` share one axis.
    """
    k_max = check_int("k_max", k_max, minimum=1)
    ks = torch.arange(-k_max, k_max + 1)
    for n, (d, base) in enumerate(configs):
        d = check_dim("d", d)
        values = pe_dot_product(ks, d, base) / (d / 2)
        ax.plot(ks.numpy(), values.numpy(), color=OKABE_ITO[n % len(OKABE_ITO)], linewidth=1.1,
                label=f"d = {d}, base = {base:g}")
    ax.axhline(0, color="#bbbbbb", linewidth=0.8)
    ax.set_xlim(-k_max, k_max)
    label(ax, "PE(p)\u00b7PE(p+k) / (d/2) = mean of cos(k\u00b7\u03c9\u1d62): same for +k and -k", "offset k",
          "normalised dot product")
    ax.legend(fontsize=8, frameon=False, loc="upper right")
