"""The slider-app machinery shared by every notebook.

Design choice: the figure is rendered by matplotlib's Agg backend into PNG bytes and shown
in an :class:`ipywidgets.Image`. Why not an ``Output`` widget? An ``Output`` widget needs
the kernel to capture display messages and re-send a whole new image bundle on every
move, and its behaviour differs between JupyterLab, Notebook 7, VS Code and Voilà
(output capture inside callbacks is the classic source of "nothing happens" reports).
An ``Image`` widget is one synced byte-string trait: it works the same in every front end
that has ipywidgets, needs no extension beyond ipywidgets (no ipympl), updates
synchronously from Python (a test sets ``control.value`` and reads the figure's artists
immediately after), and is trivially testable headless.

Layers: *compute* lives in the tensor modules of :mod:`pe_helpers`; *draw* in
:mod:`pe_helpers.figures` (a figure built once plus an ``update`` that edits artists in
place); *interact* here, wiring controls to that ``update``.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping

import ipywidgets as widgets
from matplotlib.figure import Figure

from ..figures._base import freeze_layout, render_png

__all__ = ["App"]


class App(widgets.VBox):
    """A figure driven by controls.

    Attributes:
        controls: name -> control widget; setting ``controls[name].value`` redraws synchronously.
        figure: the matplotlib Figure, built once, whose artists are updated in place.
        image: the :class:`ipywidgets.Image` showing the latest PNG of ``figure``.
        caption: an :class:`ipywidgets.HTML` readout with the current values (what ``update`` returned).
        renders: how many times the figure has been rendered (tests and benchmarks read it).
    """

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        figure: Figure,
        update: Callable[..., str | None],
        *,
        title: str = "",
        values: Callable[[], dict] | None = None,
    ) -> None:
        self.controls: dict[str, widgets.ValueWidget] = dict(controls)
        self.figure = figure
        self._update = update
        self._values = values or (lambda: {name: w.value for name, w in self.controls.items()})
        self.renders = 0
        width_px = int(figure.get_figwidth() * figure.dpi)
        self.image = widgets.Image(format="png", layout=widgets.Layout(width=f"{width_px}px", max_width="100%"))
        self.caption = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.caption.add_class("pe-caption")
        header = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        box = widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__(children=[*header, box, self.caption, self.image])
        self.add_class("pe-app")
        self._apply()
        freeze_layout(self.figure)
        self._render()
        for w in self.controls.values():
            w.observe(self._on_change, names="value")

    def _on_change(self, change: dict) -> None:
        # No try/except: an exception in a callback must surface (in tests, and in the
        # JupyterLab log console) instead of leaving a stale figure.
        self.refresh()

    def _apply(self) -> None:
        text = self._update(**self._values())
        self.caption.value = html.escape(text) if text else ""

    def refresh(self) -> None:
        """Apply the current control values to the figure and re-render the image."""
        self._apply()
        self._render()

    def _render(self) -> None:
        self.image.value = render_png(self.figure)
        self.renders += 1

    def close(self) -> None:
        """Close the widgets; the figure is not tracked by pyplot, so nothing else leaks."""
        for w in self.controls.values():
            w.close()
        self.image.close()
        self.caption.close()
        super().close()
