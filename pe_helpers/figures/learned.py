r"""Notebook 02, "Learned position vectors", figures: a trained table, one row at a time, and what enlarging it gives.

* :func:`build_position_row_figure` (the app's figure): one row :math:`p_i` of a learned
  table, the table's cosine-similarity heatmap with row ``i`` outlined, and
  :math:`\cos(p_i, p_j)` against ``j``. The table is the trained one enlarged by a few rows
  that were never trained (shaded), or the same table before training.
* :func:`plot_similarity_heatmaps`: cosine-similarity heatmaps of several tables side by side.
* :func:`plot_qkv_change`: how much Q, K and V change when positions are added (or RoPE applied).
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .._validate import check_choice, check_int
from ..encodings import LearnedPositionalEmbedding
from ..learned import OrderTaskResult, row_cosine_similarity, train_running_max
from ._base import DIVERGING, OKABE_ITO, Updater, new_cached_figure, new_figure
from ._base import single_thread

__all__ = ["TABLES", "app_tables", "build_position_row_figure", "plot_similarity_heatmaps", "plot_qkv_change"]

#: Which table the app shows.
TABLES = ("after training", "before training")


def app_tables(result: OrderTaskResult, extra_rows: int, *, seed: int = 1) -> dict[str, torch.Tensor]:
    """The trained and the initial table, each enlarged by ``extra_rows`` fresh rows with ``.extended``."""
    max_len = result.positions.max_len
    before = LearnedPositionalEmbedding(max_len, result.positions.dim)
    with torch.no_grad():
        before.table.copy_(result.initial_table)
    new_len = max_len + extra_rows
    return {
        "after training": result.positions.extended(new_len, seed=seed).table.detach().clone(),
        "before training": before.extended(new_len, seed=seed).table.detach().clone(),
    }


def build_position_row_figure(
    *,
    position: int = 3,
    table: str = "after training",
    max_len: int = 16,
    extra_rows: int = 8,
    result: OrderTaskResult | None = None,
) -> tuple[Figure, Updater]:
    r"""Row :math:`p_i`, the similarity heatmap :math:`C_{ij} = \cos(p_i, p_j)` and the curve :math:`j \mapsto C_{ij}`.

    ``result`` is a trained running-maximum model (default: :func:`~pe_helpers.learned.train_running_max`
    with ``max_len``, cached). Rows ``max_len ..`` are added by ``.extended`` and never trained.
    Colours: ``RdBu_r`` with fixed limits -1..1. ``update(position=, table=)`` moves the
    outline and redraws the row and the curve; the rest of the figure is a cached background.
    """
    result = result or train_running_max(max_len=max_len)
    max_len = result.positions.max_len
    extra_rows = check_int("extra_rows", extra_rows, minimum=0)
    tables = app_tables(result, extra_rows)
    sims = {name: row_cosine_similarity(t) for name, t in tables.items()}
    scale = {name: float(t.abs().max()) for name, t in tables.items()}
    rows, dim = tables["after training"].shape

    fig = new_cached_figure(8.0, 3.6)
    bottom, height = 0.16, 0.64
    ax_row = fig.add_axes((0.085, bottom, 0.22, height))
    ax_map = fig.add_axes((0.37, bottom, 0.235, height))
    cax = fig.add_axes((0.615, bottom, 0.01, height))
    ax_cos = fig.add_axes((0.75, bottom, 0.235, height))

    (row_line,) = ax_row.plot(range(dim), [0.0] * dim, "o-", ms=3, lw=1, color=OKABE_ITO[0])
    ax_row.axhline(0.0, color="#999999", lw=0.6)
    ax_row.set_xlim(-0.5, dim - 0.5)
    ax_row.set_ylim(-1.08, 1.08)
    ax_row.set_title("row p_i / max|P| (dimension j)", fontsize=8.5)
    ax_row.set_xlabel("dimension j", fontsize=8)
    ax_row.set_ylabel("p_i[j] / max|P|", fontsize=8)

    image = ax_map.imshow(sims[table].numpy(), cmap=DIVERGING, vmin=-1.0, vmax=1.0, interpolation="nearest",
                          aspect="auto")
    fig.colorbar(image, cax=cax).ax.tick_params(labelsize=7)
    outline = Rectangle((-0.5, position - 0.5), rows, 1.0, fill=False, lw=1.5, ec="black")
    ax_map.add_patch(outline)
    boundaries = [draw(max_len - 0.5, color="black", lw=0.8, ls="--") for draw in (ax_map.axhline, ax_map.axvline)]
    ax_map.set_title("cos(p_i, p_j), all rows", fontsize=8.5)
    ax_map.set_xlabel(f"j (rows ≥ {max_len} never trained)", fontsize=8)
    ax_map.set_ylabel("i", fontsize=8)

    ax_cos.axvspan(max_len - 0.5, rows - 0.5, color="#dddddd", lw=0)
    ax_cos.text(max_len, -0.98, "never\ntrained", fontsize=7, va="bottom", color="#555555")
    ax_cos.axhline(0.0, color="#999999", lw=0.6)
    (cos_line,) = ax_cos.plot(range(rows), [0.0] * rows, "o-", ms=3, lw=1, color=OKABE_ITO[5])
    marker = ax_cos.axvline(position, color=OKABE_ITO[0], lw=1)
    ax_cos.set_xlim(-0.5, rows - 0.5)
    ax_cos.set_ylim(-1.05, 1.05)
    ax_cos.set_title("cos(p_i, p_j) for every row j", fontsize=8.5)
    ax_cos.set_xlabel("j", fontsize=8)
    for ax in (ax_row, ax_map, ax_cos):
        ax.tick_params(labelsize=7)
    title = fig.text(0.5, 0.975, "", ha="center", va="top", fontsize=8.5)
    # drawn over the (dynamic) heatmap, so they are dynamic too
    fig.set_dynamic(image, *boundaries, *ax_map.spines.values(), outline, row_line, cos_line, marker, title)

    def update(*, position: int = position, table: str = table) -> str:
        table = check_choice("table", table, TABLES)
        i = check_int("position", position, minimum=0)
        if i >= rows:
            raise ValueError(f"position must be in 0..{rows - 1}, got {i}.")
        with single_thread():
            sim = sims[table]
            row = tables[table][i] / scale[table]
            image.set_data(sim.numpy())
            outline.set_y(i - 0.5)
            row_line.set_ydata(row.numpy())
            cos_line.set_ydata(sim[i].numpy())
            marker.set_xdata([i, i])
            neighbours = [f"{float(sim[i, j]):+.2f}" for j in (i - 1, i + 1) if 0 <= j < rows]
            others = [j for j in range(max_len, rows) if j != i]
            untrained = float(sim[i, others].abs().mean()) if others else float("nan")
        kind = "trained row" if i < max_len and table == "after training" else "never-trained row"
        text = (f"{table}: i = {i} ({kind}), max|P| = {scale[table]:.3f}; cos with neighbours "
                f"{', '.join(neighbours)}; mean |cos| with rows ≥ {max_len}: {untrained:.2f}")
        title.set_text(text)
        return text

    return fig, update


def plot_similarity_heatmaps(
    tables: Mapping[str, torch.Tensor], *, trained_rows: Mapping[str, int] | None = None
) -> Figure:
    r"""One heatmap per table of :math:`C_{ij} = \cos(p_i, p_j)` (``RdBu_r``, limits -1..1).

    ``trained_rows`` maps a table's name to its number of trained rows: dashed lines mark where
    the never-trained rows of that enlarged table begin.
    """
    fig = new_figure(8.0, 3.4)
    axes = fig.subplots(1, len(tables), squeeze=False)[0]
    for ax, (name, table) in zip(axes, tables.items()):
        im = ax.imshow(row_cosine_similarity(table).numpy(), cmap=DIVERGING, vmin=-1, vmax=1, interpolation="nearest")
        rows = (trained_rows or {}).get(name)
        if rows is not None and rows < table.shape[0]:
            ax.axhline(rows - 0.5, color="black", lw=0.8, ls="--")
            ax.axvline(rows - 0.5, color="black", lw=0.8, ls="--")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("position j", fontsize=8)
        ax.set_ylabel("position i", fontsize=8)
    fig.colorbar(im, ax=list(axes), shrink=0.85, label="cos(p_i, p_j)")
    return fig


def plot_qkv_change(changes: Mapping[str, Mapping[str, float]]) -> Figure:
    r"""Grouped bars of the relative change :math:`\lVert M' - M\rVert / \lVert M\rVert` of Q, K and V per method."""
    fig = new_figure(6.0, 2.8)
    ax = fig.subplots()
    names = list(changes)
    width = 0.8 / max(1, len(names))
    for k, name in enumerate(names):
        values = [changes[name][m] for m in ("Q", "K", "V")]
        xs = [j + (k - (len(names) - 1) / 2) * width for j in range(3)]
        bars = ax.bar(xs, values, width=width, color=OKABE_ITO[k % len(OKABE_ITO)], label=name)
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(range(3), ["Q", "K", "V"])
    ax.set_ylabel("‖M(with position) − M(without)‖ / ‖M(without)‖", fontsize=8)
    ax.set_title("How much of Q, K, V changes when position is put in", fontsize=9)
    ax.set_ylim(0, 1.15 * max(max(c.values()) for c in changes.values()))
    ax.legend(fontsize=8, loc="upper right")
    return fig
