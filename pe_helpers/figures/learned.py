r"""Notebook 02, "Learned position vectors", figures: a trained table, one row at a time, and what enlarging it gives.

* :func:`build_position_row_figure` (the app's figure): one row :math:`p_i` of a learned
  table, the table's cosine-similarity heatmap with row ``i`` outlined, and
  :math:`\cos(p_i, p_j)` against ``j``. The table is the trained one enlarged by a few rows
  that were never trained (shaded), or the same table before training.
* :func:`plot_similarity_heatmaps`: cosine-similarity heatmaps of several tables side by side.
* :func:`plot_qkv_change`: how much Q, K and V change when positions are added (or RoPE, notebook 06, applied).

The tables come from :func:`pe_helpers.learned.app_tables`; no figure here trains a model.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._validate import require_choice, require_int
from ..learned import QKV_METHODS, row_cosine_similarity
from ._base import DIVERGING, OKABE_ITO, FigureHandle, new_figure, settle_layout, single_thread, static_figure
from ..i18n import _

__all__ = ["build_position_row_figure", "plot_similarity_heatmaps", "plot_qkv_change"]


def _curve_panels(fig: Figure, dim: int, rows: int, trained: int) -> dict:
    """The row panel (p_i against its component c) and the cosine panel (cos(p_i, p_j) against row j)."""
    ax_row, ax_map, ax_cos = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.0, 1.05, 1.0]})
    (row_line,) = ax_row.plot(range(dim), [0.0] * dim, "o-", ms=3, lw=1.2, color=OKABE_ITO[0])
    ax_row.axhline(0.0, color="#999999", lw=0.6)
    ax_row.set(xlim=(-0.5, dim - 0.5), ylim=(-1.08, 1.08), title=_("row p_i, scaled by max|P|"),
               xlabel=_("component c of p_i"), ylabel=_("p_i[c] / max|P|"))
    ax_cos.axvspan(trained - 0.5, rows - 0.5, color="#dddddd", lw=0)
    ax_cos.axhline(0.0, color="#999999", lw=0.6)
    (cos_line,) = ax_cos.plot(range(rows), [0.0] * rows, "o-", ms=3, lw=1.2, color=OKABE_ITO[5])
    marker = ax_cos.axvline(0, color=OKABE_ITO[0], lw=1.5)
    ax_cos.set(xlim=(-0.5, rows - 0.5), ylim=(-1.05, 1.05), title=_("cos(p_i, p_j) along row j"),
               xlabel=_("row j (grey: rows ≥ {0},\nnever trained)").format(trained))
    return {"axes": (ax_row, ax_map, ax_cos), "row": row_line, "cosines": cos_line, "marker": marker}


def table_label(table: str) -> str:
    """The name of a table (a value of :data:`pe_helpers.learned.TABLES`) in the current language."""
    return {"after training": _("after training"), "before training": _("before training")}.get(table, table)


def _row_title(table: str, i: int, trained: bool, scale: float, neighbours: list[str], trained_rows: int,
               untrained: float) -> str:
    kind = _("trained row") if trained else _("never-trained row")
    return _("{table}: i = {i} ({kind}), max|P| = {scale:.3f}\ncos with neighbours {neighbours}; "
             "mean |cos| with rows ≥ {rows}: {untrained:.2f}").format(
        table=table_label(table), i=i, kind=kind, scale=scale, neighbours=", ".join(neighbours), rows=trained_rows,
        untrained=untrained)


def build_position_row_figure(
    tables: Mapping[str, torch.Tensor], *, trained_rows: int, position: int = 3, table: str | None = None
) -> FigureHandle:
    r"""Row :math:`p_i`, the similarity heatmap :math:`C_{ij} = \cos(p_i, p_j)` and the curve :math:`j \mapsto C_{ij}`.

    ``tables`` maps a name ("after training", "before training") to a table ``[rows, dim]`` whose first
    ``trained_rows`` rows are the model's own and the rest were added by ``.extended`` (never trained):
    :func:`pe_helpers.learned.app_tables`. Colours: ``RdBu_r`` with fixed limits -1..1.
    ``update(position=, table=)`` moves the outline and redraws the row and the curve.
    Named artists: ``heatmap``, ``outline``, ``row``, ``cosines``, ``marker``, ``title``.
    """
    names = tuple(tables)
    table = require_choice("table", table or names[0], names)
    trained_rows = require_int("trained_rows", trained_rows, minimum=1)
    sims = {name: row_cosine_similarity(t) for name, t in tables.items()}
    scale = {name: float(t.abs().max()) for name, t in tables.items()}
    rows, dim = tables[names[0]].shape

    fig = new_figure(height=4.6)
    art = _curve_panels(fig, dim, rows, trained_rows)
    ax_row, ax_map, ax_cos = art.pop("axes")
    art["heatmap"] = ax_map.imshow(sims[table].numpy(), cmap=DIVERGING, vmin=-1.0, vmax=1.0,
                                   interpolation="nearest", aspect="auto")
    fig.colorbar(art["heatmap"], ax=ax_map, fraction=0.08, pad=0.03, ticks=[-1, 0, 1])
    art["outline"] = ax_map.add_patch(Rectangle((-0.5, position - 0.5), rows, 1.0, fill=False, lw=2, ec="black"))
    boundaries = [draw(trained_rows - 0.5, color="black", lw=1, ls="--") for draw in (ax_map.axhline, ax_map.axvline)]
    ax_map.set(title=_("cos(p_i, p_j), all rows"), ylabel=_("row i"),
               xlabel=_("row j (dashed: rows ≥ {rows}\nnever trained)").format(rows=trained_rows))
    art["title"] = fig.suptitle(_row_title(names[-1], 23, False, 0.0, ["+0.00", "+0.00"], 16, 0.0))

    def update(*, position: int = position, table: str = table) -> str:
        table = require_choice("table", table, names)
        i = require_int("position", position, minimum=0)
        if i >= rows:
            raise ValueError(_("position must be in 0..{top}, got {value}.").format(top=rows - 1, value=i))
        with single_thread():
            sim = sims[table]
            art["heatmap"].set_data(sim.numpy())
            art["outline"].set_y(i - 0.5)
            art["row"].set_ydata((tables[table][i] / scale[table]).numpy())
            art["cosines"].set_ydata(sim[i].numpy())
            art["marker"].set_xdata([i, i])
            neighbours = [f"{float(sim[i, j]):+.2f}" for j in (i - 1, i + 1) if 0 <= j < rows]
            others = [j for j in range(trained_rows, rows) if j != i]
            untrained = float(sim[i, others].abs().mean()) if others else float("nan")
        trained = i < trained_rows and table == names[0]
        art["title"].set_text(_row_title(table, i, trained, scale[table], neighbours, trained_rows, untrained))
        # The caption names what is shown; the numbers are in the figure's title (not repeated word for word).
        return _("{table}: i = {i} ({kind})").format(
            table=table_label(table), i=i, kind=_("trained row") if trained else _("never-trained row"))

    settle_layout(fig)
    update()
    # drawn over the (dynamic) heatmap, so they are dynamic too
    fig.set_dynamic(art["heatmap"], *boundaries, *ax_map.spines.values(), art["outline"], art["row"],
                    art["cosines"], art["marker"], art["title"])
    return FigureHandle(fig, art, update)


def plot_similarity_heatmaps(
    tables: Mapping[str, torch.Tensor], *, trained_rows: Mapping[str, int] | None = None
) -> Figure:
    r"""One heatmap per table of :math:`C_{ij} = \cos(p_i, p_j)` (``RdBu_r``, limits -1..1).

    ``trained_rows`` maps a table's name to its number of trained rows: dashed lines, labelled, mark
    where the never-trained rows of that enlarged table begin.
    """
    fig, axes = static_figure(1, len(tables), height=4.6, squeeze=False)
    for ax, (name, table) in zip(axes[0], tables.items()):
        im = ax.imshow(row_cosine_similarity(table).numpy(), cmap=DIVERGING, vmin=-1, vmax=1, interpolation="nearest")
        rows = (trained_rows or {}).get(name)
        if rows is not None and rows < table.shape[0]:
            ax.axhline(rows - 0.5, color="black", lw=1, ls="--")
            ax.axvline(rows - 0.5, color="black", lw=1, ls="--", label=_("rows ≥ {rows}: never trained").format(rows=rows))
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
        ax.set(title=table_label(name), xlabel=_("position j"), ylabel=_("position i"))
    fig.colorbar(im, ax=list(axes[0]), shrink=0.9, label=_("cos(p_i, p_j)"))
    return fig


def plot_qkv_change(changes: Mapping[str, Mapping[str, float]]) -> Figure:
    r"""Grouped bars of the relative change :math:`\lVert M' - M\rVert / \lVert M\rVert` of Q, K and V per method.

    ``changes`` is keyed by method: a key of :data:`~pe_helpers.learned.QKV_METHODS` is shown by its name there, in the
    current language, any other key as it is. A method whose name mentions RoPE is flagged as notebook 06's (it is
    shown here before it is taught).
    """
    fig, ax = static_figure(height=3.8)
    names = list(changes)
    width = 0.8 / max(1, len(names))
    for k, name in enumerate(names):
        values = [changes[name][m] for m in ("Q", "K", "V")]
        xs = [j + (k - (len(names) - 1) / 2) * width for j in range(3)]
        label = str(QKV_METHODS.get(name, name))
        shown = _("{name} (notebook 06)").format(name=label) if "rope" in name.lower() else label
        bars = ax.bar(xs, values, width=width, color=OKABE_ITO[k % len(OKABE_ITO)], label=shown)
        ax.bar_label(bars, fmt="%.2f")
    ax.set_xticks(range(3), ["Q", "K", "V"])
    ax.set_ylabel(_("‖M(with position) − M(without)‖\n/ ‖M(without)‖"))
    ax.set_title(_("How much of Q, K, V changes when position is put in"))
    ax.set_ylim(0, 1.2 * max(max(c.values()) for c in changes.values()))
    fig.legend(loc="outside right upper", frameon=False)
    return fig
