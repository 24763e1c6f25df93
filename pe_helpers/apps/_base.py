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
import sys
from collections.abc import Callable, Mapping

import ipywidgets as widgets
from matplotlib.figure import Figure

from ..figures._base import freeze_layout, render_png

__all__ = ["App", "sweep_values", "factory_kwargs"]


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


def sweep_values(control: widgets.ValueWidget) -> list:
    """The values a generic sweep visits for one control (tests/test_apps_all.py, benchmarks/apps.py).

    IntSlider/FloatSlider (and range-like sliders): min, a middle value on the step grid, max;
    anything with ``options`` (Dropdown, ToggleButtons, SelectionSlider, ...): every option's value;
    Checkbox/ToggleButton: both values. Other widgets: just their current value.
    """
    if isinstance(control, (widgets.Checkbox, widgets.ToggleButton)):
        return [not control.value, control.value]
    options = getattr(control, "options", None)
    if options is not None:
        values = []
        for opt in options:
            value = opt[1] if isinstance(opt, tuple) and len(opt) == 2 else opt
            values.append(value)
        return values
    low, high = getattr(control, "min", None), getattr(control, "max", None)
    if low is not None and high is not None:
        step = getattr(control, "step", None) or 1
        middle = low + round((high - low) / 2 / step) * step
        if isinstance(control.value, int):
            middle = int(middle)
        return list(dict.fromkeys([low, middle, high]))
    return [control.value]


def factory_kwargs(factory: Callable[..., App]) -> dict:
    """Keyword arguments the generic sweeps pass to ``factory`` (usually none).

    An app module may define ``BENCH_KWARGS = {"factory_name": {...}}``: for example a start
    value that makes every control matter (a seed only used by one option), or a smaller
    model so that a build takes less time. The benchmark's baseline uses the same arguments.
    """
    module = sys.modules.get(getattr(factory, "__module__", ""), None)
    hooks = getattr(module, "BENCH_KWARGS", {}) or {}
    return dict(hooks.get(getattr(factory, "__name__", ""), {}))
