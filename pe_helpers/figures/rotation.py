r"""Notebook 04, "The rotation identity", figures: each (sin, cos) pair as a phasor, the rotation R(k), and PE(p)·PE(p+k).

* :func:`build_phasor` (app figure): pair ``i`` at ``pos`` and ``pos + k`` on the unit circle, the angle
  :math:`k\,\omega_i` between them, and the 2×2 block of :math:`R(k)` as text;
* :func:`build_dot_product` (app figure): :math:`PE(p)\cdot PE(p+k) = \sum_i \cos(k\,\omega_i)` against ``k``,
  with dots measured from the table at a chosen ``p``;
* :func:`draw_shift_matrix` (static): :math:`R(k)` as an image;
* :func:`plot_dot_products` (static): the normalised dot product for several ``(d, base)``, one panel each.
"""

from __future__ import annotations

import math

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import MaxNLocator

from .._validate import require_base, require_dim, require_int, require_layout, require_real
from ..encodings import inverse_frequencies, shift_matrix
from ..rotation import (first_rise, measured_dot_products, mirrored_dot_products, pair_block, pe_dot_product, phasor,
                        phasor_label_radii)
from ._base import (DIVERGING, OKABE_ITO, FigureHandle, format_number, label, new_figure, one_thread, settle_layout,
                    static_figure)
from ..i18n import _

__all__ = ["build_phasor", "build_dot_product", "draw_shift_matrix", "plot_dot_products"]


def _circle_panel(ax: Axes) -> dict:
    """The unit circle with its axes, and the artists the phasor moves (path, arc, two rays, two dots, labels)."""
    circle = torch.linspace(0, 2 * math.pi, 200, dtype=torch.float64)
    ax.plot(torch.cos(circle).numpy(), torch.sin(circle).numpy(), color="#999999", linewidth=1)
    ax.axhline(0, color="#dddddd", linewidth=0.8)
    ax.axvline(0, color="#dddddd", linewidth=0.8)
    art = {"path": ax.plot([], [], "o", color="#888888", markersize=3)[0],
           "arc": ax.plot([], [], color=OKABE_ITO[2], linewidth=2)[0]}
    for name, color in (("a", OKABE_ITO[0]), ("b", OKABE_ITO[5])):
        art[f"ray_{name}"] = ax.plot([], [], color=color, linewidth=2)[0]
        art[f"dot_{name}"] = ax.plot([], [], "o", color=color, markersize=10)[0]
        art[f"text_{name}"] = ax.text(0, 0, "", color=color, ha="center", va="center", fontsize=13,
                                      fontweight="bold")
    ax.set(xlim=(-1.45, 1.45), ylim=(-1.45, 1.45), xticks=[-1, 0, 1], yticks=[-1, 0, 1], aspect="equal")
    label(ax, _("pair i on the unit circle"), _("cos(pos·ωᵢ), column 2i+1"), _("sin(pos·ωᵢ), column 2i"))
    return art


def _place_label(text: Text, x: float, y: float, *, outside: bool, other_up: bool = True) -> bool:
    """Put a point's label beside the point ``(x, y)`` on the unit circle so that it grows away from it.

    Outside the circle the text is anchored on the side facing the point (left-aligned on the right of the
    circle, bottom-aligned at its top, …), so a long label ("pos+k") never runs back over its own dot; near
    the horizontal axis it goes above (or below) the point, where the panel has room, instead of out past
    the axes' edge. Inside (the two points are close) it sits by the ray at radius 0.55, on the side away
    from the other label (``other_up``: that label went above its point). Returns whether this label went up.
    """
    if not outside:
        text.set_position((0.55 * x, 0.55 * y + (-0.05 if other_up else 0.05)))
        text.set_horizontalalignment("center")
        text.set_verticalalignment("top" if other_up else "bottom")
        return not other_up
    if abs(x) > 0.85:  # within ~32° of the horizontal axis: above the point (below it in the lower half)
        up = y >= 0.0
        text.set_position((x, y + (0.1 if up else -0.1)))
        text.set_horizontalalignment("center")
        text.set_verticalalignment("bottom" if up else "top")
        return up
    text.set_position((1.1 * x, 1.1 * y))
    text.set_horizontalalignment("left" if x > 0.38 else "right" if x < -0.38 else "center")
    text.set_verticalalignment("bottom" if y > 0.38 else "top" if y < -0.38 else "center")
    return y >= 0.0


def build_phasor(*, pos: int = 3, k: int = 5, pair: int = 1, d: int = 16, base: float = 10000.0) -> FigureHandle:
    r"""Pair ``i`` of :math:`PE(pos)` and :math:`PE(pos+k)` as points :math:`(\cos, \sin)` on the unit circle.

    The point turns by :math:`\omega_i` per position, so from ``pos`` to ``pos + k`` by :math:`k\,\omega_i`
    whatever ``pos`` is (the green arc; a spiral when it is more than a turn). Right: the 2×2 block of
    :math:`R(k)` and the check :math:`R(k)\,[\sin, \cos](pos) = [\sin, \cos](pos + k)`.
    ``update(pos=, k=, pair=)`` moves the points, the path and the arc in place.
    Named artists: ``path``, ``arc``, ``ray_a``/``dot_a``/``text_a`` (pos), ``ray_b``/``dot_b``/``text_b``
    (pos + k), ``panel`` (the text on the right).
    """
    d = require_dim("d", d)
    base = require_base(base)
    fig = new_figure(height=4.4)
    ax, ax_text = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.0, 1.25]})
    art = _circle_panel(ax)
    ax_text.set_axis_off()
    ax_text.text(0.0, 1.0, _("PE_i = (sin, cos) of pair i: columns (2i, 2i+1)") + "\n" + _("R(k) block") +
                 " = [[cos k\u03c9\u1d62, sin k\u03c9\u1d62], [\u2212sin k\u03c9\u1d62, cos k\u03c9\u1d62]]",
                 va="top", ha="left", transform=ax_text.transAxes)
    art["panel"] = ax_text.text(0.0, 0.42, "", va="center", ha="left", transform=ax_text.transAxes, fontsize=12,
                                linespacing=1.5)

    @one_thread
    def update(*, pos: int = pos, k: int = k, pair: int = pair) -> str:
        pos = require_int("pos", pos, minimum=0)
        k = require_int("k", k)
        pair = require_int("pair", pair, minimum=0)
        if pair >= d // 2:
            raise ValueError(_("pair must be in 0..{top} for d = {d}, got {value}.").format(top=d // 2 - 1, d=d, value=pair))
        omega = float(inverse_frequencies(d, base)[pair])
        between = phasor(torch.arange(min(pos, pos + k), max(pos, pos + k) + 1), pair, d, base)  # [sin, cos]
        a, b = phasor(pos, pair, d, base), phasor(pos + k, pair, d, base)
        art["path"].set_data(between[:, 1].numpy(), between[:, 0].numpy())
        radii = phasor_label_radii(pos * omega, (pos + k) * omega)
        up = True
        for name, point, text, r in (("b", b, "pos+k", radii[1]), ("a", a, "pos", radii[0])):  # b first: a may dodge it
            x, y = float(point[1]), float(point[0])
            art[f"ray_{name}"].set_data([0.0, x], [0.0, y])
            art[f"dot_{name}"].set_data([x], [y])
            up = _place_label(art[f"text_{name}"], x, y, outside=r > 1.0, other_up=up)
            art[f"text_{name}"].set_text(text)
        t = torch.linspace(0.0, 1.0, 120, dtype=torch.float64)
        turns = abs(k * omega) / (2 * math.pi)
        radius = 0.3 + (0.15 * t * min(turns, 3.0) / turns if turns > 1 else 0.0 * t)
        theta = pos * omega + k * omega * t
        art["arc"].set_data((radius * torch.cos(theta)).numpy(), (radius * torch.sin(theta)).numpy())
        block = pair_block(k, pair, d, base)
        moved = block @ a
        art["panel"].set_text(
            _("ω_{i} = {omega:.5f} rad per position\nangle k·ω_{i} = {angle:.4f} rad = {degrees:.1f}°\n"
              "R(k) block, k = {k}:").format(i=pair, omega=omega, angle=k * omega, degrees=math.degrees(k * omega), k=k)
            + f"\n    [{float(block[0, 0]):7.4f} {float(block[0, 1]):7.4f}]\n"
            f"    [{float(block[1, 0]):7.4f} {float(block[1, 1]):7.4f}]\n"
            f"R(k)\u00b7PE_i(pos) = [{float(moved[0]):7.4f}, {float(moved[1]):7.4f}]\n"
            f"PE_i(pos+k)       = [{float(b[0]):7.4f}, {float(b[1]):7.4f}]"
        )
        return _("pos = {pos}, k = {k}, pair i = {i}: angle k·ω_i = {angle:.4f} rad").format(
            pos=pos, k=k, i=pair, angle=k * omega)

    update(pos=0, k=-50, pair=0)  # the widest text, whatever the start values: the same values always look the same
    settle_layout(fig)
    update()
    fig.set_dynamic(*art.values())
    return FigureHandle(fig, art, update)


def build_dot_product(*, d: int = 64, base: float = 10000.0, p: int = 0, k_max: int = 128) -> FigureHandle:
    r""":math:`PE(p)\cdot PE(p+k) = \sum_i \cos(k\,\omega_i)` against ``k`` in ``[-k_max, k_max]``.

    The line is the formula; the filled dots are dot products read off the table at the chosen ``p``
    (``p + k >= 0``); the open dots, for offsets before row 0, are the table's :math:`PE(0)\cdot PE(|k|)`
    (the same value by symmetry), so both sides ±k are measured for every ``p``. The first ``k`` where
    the value *rises* is marked: the decay with ``|k|`` is not monotone.
    Named artists: ``curve``, ``dots``, ``mirror_dots``, ``rise``, ``rise_text``, ``note``.
    """
    fig = new_figure(height=4.2)
    ax = fig.subplots()
    art = {"zero": ax.axhline(0, color="#bbbbbb", linewidth=0.8), "zero_k": ax.axvline(0, color="#bbbbbb", lw=0.8),
           "curve": ax.plot([], [], color=OKABE_ITO[0], linewidth=1.5, label=_("formula Σᵢ cos(kωᵢ)"))[0],
           "dots": ax.plot([], [], "o", color=OKABE_ITO[5], markersize=5, label=_("table: PE(p)·PE(p+k)"))[0],
           "mirror_dots": ax.plot([], [], "o", color=OKABE_ITO[5], markersize=5, markerfacecolor="white",
                                  label=_("p+k < 0: table's PE(0)·PE(|k|)"))[0],
           "rise": ax.plot([], [], "o", color=OKABE_ITO[2], markersize=12, markerfacecolor="none",
                           markeredgewidth=2)[0],
           "rise_text": ax.text(0, 0, "", color="#006e50", ha="left", va="top",
                                bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=1)),
           "note": ax.text(0.01, 0.97, "", transform=ax.transAxes, ha="left", va="top")}
    ax.xaxis.set_major_locator(MaxNLocator(7, integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(5))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    label(ax, _("PE(p)·PE(p+k) against the offset k: the same at +k and −k"), _("offset k"), _("dot product"))

    @one_thread
    def update(*, d: int = d, base: float = base, p: int = p, k_max: int = k_max) -> str:
        d = require_dim("d", d)
        base = require_base(base)
        p = require_int("p", p, minimum=0)
        k_max = require_int("k_max", k_max, minimum=1)
        ks = torch.arange(-k_max, k_max + 1)
        values = pe_dot_product(ks, d, base)
        art["curve"].set_data(ks.numpy(), values.numpy())
        sample = ks[:: max(1, k_max // 24)]
        on_table, before = sample[p + sample >= 0], sample[p + sample < 0]
        art["dots"].set_data(on_table.numpy(), measured_dot_products(p, on_table, d, base).numpy())
        art["mirror_dots"].set_data(before.numpy(), mirrored_dot_products(p, before, d, base).numpy())
        k_rise = first_rise(d, base, k_max=k_max)
        if k_rise is None:
            art["rise"].set_data([], [])
            art["rise_text"].set_text("")
            rise_msg = _("no rise up to k = {k_max}").format(k_max=k_max)
        else:
            y = float(pe_dot_product(k_rise, d, base))
            art["rise"].set_data([k_rise], [y])
            art["rise_text"].set_position((k_rise + 0.03 * k_max, y - 0.04 * d / 2))
            art["rise_text"].set_text(_("rises after k = {k}").format(k=k_rise))
            rise_msg = _("it rises from k = {k} to {next} (not monotone)").format(k=k_rise, next=k_rise + 1)
        low, high = float(values.min()), d / 2
        pad = 0.12 * (high - low)
        ax.set_xlim(-k_max, k_max)
        ax.set_ylim(low - pad, high + 2 * pad)
        art["note"].set_text(_("d = {d}, base = {base}, p = {p}: value d/2 = {half} at k = 0").format(
            d=d, base=format_number(base), p=p, half=d // 2))
        return _("d = {d}, base = {base}, p = {p}: PE(p)·PE(p+k) = {half} at k = 0, minimum {low:.3f}; "
                 "{rise}").format(d=d, base=format_number(base), p=p, half=d // 2, low=low, rise=rise_msg)

    update(d=256, base=1e6, p=0, k_max=1024)  # widest tick labels first, so every later value fits
    settle_layout(fig)
    fig.set_dynamic(*art.values(), *ax.spines.values(), ax.xaxis, ax.yaxis)
    update()
    return FigureHandle(fig, art, update)


def draw_shift_matrix(ax: Axes, k: float, d: int, *, base: float = 10000.0, layout: str = "interleaved") -> None:
    r""":math:`R(k)` from :func:`~pe_helpers.encodings.shift_matrix` as an image (RdBu_r, limits -1..1).

    Interleaved: 2×2 rotation blocks on the diagonal; concatenated: the same entries on four diagonals.
    """
    k = require_real("k", k)
    layout = require_layout(layout)
    r = shift_matrix(k, d, base=base, layout=layout)
    image = ax.imshow(r.numpy(), cmap=DIVERGING, vmin=-1, vmax=1, interpolation="nearest")
    ax.xaxis.set_major_locator(MaxNLocator(8, integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(8, integer=True))
    layout_name = _("interleaved") if layout == "interleaved" else _("concatenated")
    label(ax, _("R(k = {k:g}), {layout}, d = {d}").format(k=k, layout=layout_name, d=d), _("column of PE(pos)"),
          _("row of PE(pos+k)"))
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)


def plot_dot_products(configs: tuple[tuple[int, float], ...] = ((16, 10000.0), (64, 10000.0), (256, 10000.0),
                                                             (64, 100.0)), *, k_max: int = 200) -> Figure:
    r""":math:`\sum_i \cos(k\omega_i) / (d/2)` against ``k``, one small panel per ``(d, base)`` (no overlaid spaghetti).

    Divided by its value ``d/2`` at ``k = 0`` so the panels share one y axis: 1 at ``k = 0``, a rough decay,
    the same for ``+k`` and ``-k``.
    """
    k_max = require_int("k_max", k_max, minimum=1)
    ks = torch.arange(-k_max, k_max + 1)
    cols = 2 if len(configs) > 1 else 1
    rows = -(-len(configs) // cols)
    fig, axes = static_figure(rows, cols, height=2.4 * rows + 0.8, sharex=True, sharey=True, squeeze=False)
    for n, (ax, (d, base)) in enumerate(zip(axes.flat, configs)):
        d = require_dim("d", d)
        ax.plot(ks.numpy(), (pe_dot_product(ks, d, base) / (d / 2)).numpy(), color=OKABE_ITO[n % 4], linewidth=1.4)
        ax.axhline(0, color="#bbbbbb", linewidth=0.8)
        ax.set_title(f"d = {d}, base = {format_number(base)}")
        ax.set_xlim(-k_max, k_max)
    for ax in axes[-1]:
        ax.set_xlabel(_("offset k"))
    for ax in axes[:, 0]:
        ax.set_ylabel(_("dot / (d/2)"))
    fig.suptitle(_("PE(p)·PE(p+k) / (d/2) = mean of cos(k·ωᵢ): 1 at k = 0, symmetric in ±k"))
    return fig
