r"""Notebook 03, "Sinusoidal frequencies", figures: the sinusoidal table, its frequencies, its two layouts, its precision.

* :func:`build_frequency_heatmap` (the app's figure): rows = positions, columns = pair ``i``,
  :math:`\sin(pos\,\omega_i)` (or cos, or both), limits -1..1, beside the wavelengths on a log axis;
* static helpers that draw onto given axes: :func:`draw_frequencies`, :func:`draw_dimension_traces`,
  :func:`draw_layouts`, :func:`draw_float32_error`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from matplotlib.axes import Axes
from matplotlib.ticker import LogLocator, MaxNLocator, NullLocator

from .._validate import require_base, require_choice, require_dim, require_int
from ..encodings import inverse_frequencies, sinusoidal, wavelengths
from ..frequencies import CHANNELS, heatmap_values
from ._base import DIVERGING, OKABE_ITO, FigureHandle, format_number, label, new_figure, one_thread, settle_layout
from ..i18n import _

__all__ = [
    "build_frequency_heatmap",
    "draw_frequencies",
    "draw_dimension_traces",
    "draw_layouts",
    "draw_float32_error",
]


def _mark_frequency_sides(ax: Axes) -> None:
    """Label the left (fast) and right (slow) side of a pair axis, above the axes like the seed's figure."""
    style = dict(transform=ax.transAxes, va="bottom", color="#444444")
    ax.text(0.0, 1.01, _("← high frequency"), ha="left", **style)
    ax.text(1.0, 1.01, _("low frequency →"), ha="right", **style)


def _wavelength_panel(ax: "Axes", base: float) -> dict:
    """Right panel: the wavelengths on a log axis between the dashed line 2π and the dotted line 2π·base."""
    (line,) = ax.plot([], [], "o-", color=OKABE_ITO[0], markersize=3, linewidth=1.4)
    low = ax.axhline(2 * math.pi, color=OKABE_ITO[5], linestyle="--", linewidth=1.2)
    high = ax.axhline(2 * math.pi * base, color=OKABE_ITO[2], linestyle=":", linewidth=1.6)
    mark = dict(transform=ax.get_yaxis_transform())
    low_text = ax.text(0.97, 2 * math.pi, "2\u03c0", va="bottom", ha="right", color=OKABE_ITO[5], **mark)
    high_text = ax.text(0.03, 2 * math.pi * base, "2\u03c0\u00b7base", va="top", ha="left", color=OKABE_ITO[2],
                        **mark)
    ax.set_yscale("log")
    ax.set_ylim(2 * math.pi / 2.5, 2 * math.pi * 1e6 * 2.5)  # fixed: every base of the app fits
    ax.yaxis.set_major_locator(LogLocator(numticks=5))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_locator(MaxNLocator(5, integer=True))
    ax.yaxis.tick_right()  # its label on the right, away from the heatmap's colour bar
    ax.yaxis.set_label_position("right")
    label(ax, _("wavelength λᵢ = 2π/ωᵢ"), _("dimension pair i"), _("positions (log scale)"))
    return {"wavelengths": line, "two_pi": low, "two_pi_base": high, "two_pi_text": low_text,
            "two_pi_base_text": high_text}


def channel_label(channel: str) -> str:
    """The name of a channel (a value of :data:`pe_helpers.frequencies.CHANNELS`) in the current language."""
    return {"both": _("both")}.get(channel, channel)


def build_frequency_heatmap(
    *, seq_len: int = 64, d: int = 64, base: float = 10000.0, channel: str = "sin"
) -> FigureHandle:
    r"""The seed's heatmap of :math:`PE(pos, \cdot)` (left) and the wavelengths :math:`2\pi/\omega_i` (right).

    Left: rows are positions (0 at the top), columns the pair ``i``; colours
    :math:`\sin(pos\,\omega_i)` in ``RdBu_r`` with fixed limits -1..1. With ``channel="both"``
    the ``d`` interleaved columns are squeezed into the same pair axis (sin then cos inside each ``i``).
    At twice the displayed size the map has a device pixel per row up to 512 rows (crisp ``nearest`` cells);
    with fewer pixels than rows it switches to antialiased resampling (the rows' mean, not a moiré).
    Right: :math:`\lambda_i = 2\pi\,\text{base}^{2i/d}` on a log axis, between the lines 2π and 2π·base.
    ``update(seq_len=, d=, base=, channel=)`` changes the image's data and extent in place.
    Named artists: ``heatmap``, ``map_title``, ``wavelengths``, ``two_pi``, ``two_pi_base`` (+ their texts).
    """
    fig = new_figure(height=4.4)
    ax_map, ax_wave = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.55, 1.0]})
    image = ax_map.imshow(torch.zeros(1, 1).numpy(), cmap=DIVERGING, vmin=-1.0, vmax=1.0, aspect="auto",
                          origin="upper", interpolation="nearest")
    bar = fig.colorbar(image, ax=ax_map, label=_("PE value"), fraction=0.06, pad=0.02, ticks=[-1, 0, 1])
    bar.ax.yaxis.set_minor_locator(NullLocator())
    bar.ax.yaxis.set_label_position("left")  # beside its own bar: on the right it read as the wavelength axis's label
    _mark_frequency_sides(ax_map)
    for axis in (ax_map.xaxis, ax_map.yaxis):
        axis.set_major_locator(MaxNLocator(5, integer=True))
    ax_map.set_xlabel(_("dimension pair i"))
    ax_map.set_ylabel(_("position pos"))
    map_title = ax_map.set_title(_("sin(pos·ωᵢ), columns 2i"), y=1.1)
    art = {"heatmap": image, "map_title": map_title, **_wavelength_panel(ax_wave, base)}

    @one_thread
    def update(*, seq_len: int = seq_len, d: int = d, base: float = base, channel: str = channel) -> str:
        seq_len = require_int("seq_len", seq_len, minimum=1)
        d = require_dim("d", d)
        base = require_base(base)
        channel = require_choice("channel", channel, CHANNELS)
        half = d // 2
        image.set_data(heatmap_values(seq_len, d, base, channel).numpy())
        # at least one device pixel per row: crisp nearest cells; fewer pixels than rows: average them (no moiré)
        image.set_interpolation("nearest" if seq_len <= ax_map.bbox.height else "antialiased")
        image.set_extent((-0.5, half - 0.5, seq_len - 0.5, -0.5))
        ax_map.set_xlim(-0.5, half - 0.5)
        ax_map.set_ylim(seq_len - 0.5, -0.5)
        map_title.set_text({"sin": _("sin(pos·ωᵢ), columns 2i"), "cos": _("cos(pos·ωᵢ), columns 2i+1"),
                            "both": _("sin | cos side by side in each pair i")}[channel])
        lam = wavelengths(d, base)
        art["wavelengths"].set_data(torch.arange(half).numpy(), lam.numpy())
        art["two_pi_base"].set_ydata([2 * math.pi * base] * 2)
        art["two_pi_base_text"].set_y(2 * math.pi * base * 0.8)
        art["two_pi_text"].set_y(2 * math.pi * 1.1)
        ax_wave.set_xlim(-0.5, max(half - 0.5, 0.5))
        return _("seq_len = {seq_len}, d = {d}, base = {base}, channel = {channel}: {half} pairs, "
                 "wavelengths {shortest} … {longest} positions (2π·base = {two_pi_base})").format(
            seq_len=seq_len, d=d, base=format_number(base), channel=channel_label(channel), half=half,
            shortest=format_number(float(lam[0])), longest=format_number(float(lam[-1])),
            two_pi_base=format_number(2 * math.pi * base))

    update(seq_len=512, d=256, base=1e6, channel="both")  # the widest tick labels, so the layout fits all values
    settle_layout(fig)
    fig.set_dynamic(image, *ax_map.spines.values(), ax_map.xaxis, ax_map.yaxis, map_title, *art.values(),
                    ax_wave.xaxis)
    update()
    return FigureHandle(fig, art, update)


def draw_frequencies(ax_omega: Axes, ax_wave: Axes, *, dims: Sequence[int] = (16, 64, 128),
                     base: float = 10000.0) -> None:
    r"""Left: :math:`\omega_i = \text{base}^{-2i/d}` against the pair ``i`` on a log axis (straight lines:
    a geometric fall). Right: :math:`\lambda_i = 2\pi/\omega_i`, between 2π and 2π·base.
    A larger ``d`` adds pairs between the same two ends."""
    base = require_base(base)
    for n, d in enumerate(dims):
        d = require_dim("d", d)
        pairs = torch.arange(d // 2)
        style = dict(marker="o", markersize=3, linewidth=1.4, color=OKABE_ITO[n % len(OKABE_ITO)], label=f"d = {d}")
        ax_omega.plot(pairs.numpy(), inverse_frequencies(d, base).numpy(), **style)
        ax_wave.plot(pairs.numpy(), wavelengths(d, base).numpy(), **style)
    for ax in (ax_omega, ax_wave):
        ax.set_yscale("log")
    ax_wave.axhline(2 * math.pi, color=OKABE_ITO[5], linestyle="--", linewidth=1)
    ax_wave.axhline(2 * math.pi * base, color=OKABE_ITO[5], linestyle=":", linewidth=1.4)
    ax_wave.text(0.98, 2 * math.pi * 1.3, "2\u03c0", color=OKABE_ITO[5], ha="right",
                 transform=ax_wave.get_yaxis_transform())
    ax_wave.text(0.03, 2 * math.pi * base / 1.4, f"2\u03c0\u00b7base = {format_number(2 * math.pi * base)}",
                 color=OKABE_ITO[5], ha="left", va="top", transform=ax_wave.get_yaxis_transform())
    label(ax_omega, f"\u03c9\u1d62 = base^(-2i/d), base = {format_number(base)}", _("dimension pair i"),
          _("ωᵢ (rad per position, log)"))
    label(ax_wave, _("wavelength λᵢ = 2π/ωᵢ"), _("dimension pair i"), _("positions (log scale)"))
    ax_omega.legend(frameon=False)


def draw_dimension_traces(ax: Axes, *, pairs: Sequence[int] = (0, 2), seq_len: int = 24, d: int = 16,
                          base: float = 10000.0) -> None:
    r"""Columns ``2i`` (sin, solid) and ``2i+1`` (cos, dashed) of a few pairs against position.

    Curves are the continuous :math:`\sin(x\,\omega_i)`, :math:`\cos(x\,\omega_i)`; dots are the table's
    entries at integer positions. The cos curve is the sin curve shifted left by a quarter wavelength
    (a phase of π/2, i.e. :math:`\pi/(2\omega_i)` positions), marked for the first pair.
    """
    omega = inverse_frequencies(d, base)
    pe = sinusoidal(seq_len, d, base=base)
    fine = torch.linspace(0, seq_len - 1, 400, dtype=torch.float64)
    pos = torch.arange(seq_len)
    for n, i in enumerate(pairs):
        i = require_int("pair", i, minimum=0)
        color = OKABE_ITO[n % len(OKABE_ITO)]
        w = float(omega[i])
        ax.plot(fine.numpy(), torch.sin(fine * w).numpy(), color=color, linewidth=1.4,
                label=_("dim {col}: sin(pos·ω_{i})").format(col=2 * i, i=i))
        ax.plot(fine.numpy(), torch.cos(fine * w).numpy(), color=color, linewidth=1.4, linestyle="--",
                label=_("dim {col}: cos(pos·ω_{i})").format(col=2 * i + 1, i=i))
        ax.plot(pos.numpy(), pe[:, 2 * i].numpy(), "o", color=color, markersize=3)
        ax.plot(pos.numpy(), pe[:, 2 * i + 1].numpy(), "s", color=color, markersize=3, markerfacecolor="none")
    w0 = float(omega[pairs[0]])
    ax.annotate("", xy=(math.pi / (2 * w0), 1.12), xytext=(0.0, 1.12),
                arrowprops=dict(arrowstyle="<->", color="#333333", linewidth=1))
    ax.text(math.pi / (4 * w0), 1.16, _("phase π/2"), ha="center", va="bottom")
    ax.set_ylim(-1.15, 1.35)
    ax.set_xlim(-0.5, seq_len - 0.5)
    label(ax, _("columns of PE (d = {d}, base = {base}): cos = sin shifted by π/2").format(d=d, base=format_number(base)),
          _("position pos"), _("PE value"))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)  # beside the curves, never on them


def draw_layouts(ax_inter: Axes, ax_concat: Axes, *, seq_len: int = 48, d: int = 32,
                 base: float = 10000.0) -> None:
    """The same table in the interleaved layout (sin, cos, sin, cos, ...) and the concatenated one ([sin | cos])."""
    for ax, layout in ((ax_inter, "interleaved"), (ax_concat, "concatenated")):
        table = sinusoidal(seq_len, d, base=base, layout=layout)
        image = ax.imshow(table.numpy(), cmap=DIVERGING, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_xlabel(_("column j"))
        ax.set_ylabel(_("position pos"))
    ax_inter.set_title(_("interleaved: sin(ω₀), cos(ω₀), sin(ω₁), …"))
    ax_concat.set_title(_("concatenated: [sin(ω₀ …) | cos(ω₀ …)]"))
    ax_concat.axvline(d / 2 - 0.5, color="black", linewidth=1)
    ax_concat.figure.colorbar(image, ax=[ax_inter, ax_concat], label=_("PE value"), fraction=0.04)


def draw_float32_error(ax: Axes, positions: torch.Tensor, seed_error: torch.Tensor, helper_error: torch.Tensor,
                       spacing: torch.Tensor, *, floor: float = 1e-9) -> None:
    """Log–log: the largest table error at each position, for float32 angles (the seed) and float64 angles
    (``pe_helpers.sinusoidal``), beside one float32 spacing of ``pos``. Errors below ``floor`` are drawn at ``floor``."""
    x = positions.to(torch.float64).numpy()
    ax.loglog(x, seed_error.clamp_min(floor).numpy(), "o-", color=OKABE_ITO[5], markersize=3,
              label=_("seed recipe (float32 angles)"))
    ax.loglog(x, helper_error.clamp_min(floor).numpy(), "s-", color=OKABE_ITO[0], markersize=3,
              label=_("pe_helpers.sinusoidal (float64 angles)"))
    ax.loglog(x, spacing.numpy(), "--", color="#555555", linewidth=1, label=_("float32 spacing (ulp) of pos"))
    label(ax, _("largest |PE - exact| over the d columns, against position"), _("position pos (log)"),
          _("absolute error (log)"))
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
