"""Notebook 02, "Learned position vectors", apps: slide the position i and see the learned row p_i and its similarity to every other row."""

from __future__ import annotations

import ipywidgets as widgets

from .._validate import require_choice, require_int
from ..figures.learned import build_position_row_figure, table_label
from ..learned import TABLES, app_tables, train_running_max
from ._base import App
from ..i18n import _

__all__ = ["learned_position_app"]


def learned_position_app(
    *, position: int = 3, table: str = "after training", max_len: int = 16, extra_rows: int = 8
) -> App:
    r"""Row :math:`p_i` of a table trained on the running-maximum task, and :math:`\cos(p_i, p_j)` for every ``j``.

    Controls: ``position`` (0 .. max_len + extra_rows - 1; rows from ``max_len`` on were added
    by ``.extended`` and never trained) and ``table`` (after / before training). The first
    call trains the tiny model (about a second, :func:`~pe_helpers.learned.train_running_max`);
    later calls reuse it.
    """
    max_len = require_int("max_len", max_len, minimum=2)
    extra_rows = require_int("extra_rows", extra_rows, minimum=0)
    position = require_int("position", position, minimum=0)
    if position >= max_len + extra_rows:
        raise ValueError(
            _("position must be in 0..{top} (max_len + extra_rows - 1), got {value}.").format(
                top=max_len + extra_rows - 1, value=position)
        )
    table = require_choice("table", table, TABLES)
    tables = app_tables(train_running_max(max_len=max_len), extra_rows)
    handle = build_position_row_figure(tables, trained_rows=max_len, position=position, table=table)
    controls = {
        "position": widgets.IntSlider(value=position, min=0, max=max_len + extra_rows - 1,
                                      description=_("position i"), continuous_update=True),
        "table": widgets.ToggleButtons(options=[(table_label(t), t) for t in TABLES], value=table, description=_("table")),
    }
    return App(controls, handle, title=_("A learned position table, one row at a time"))
