"""The slider-app machinery shared by every notebook: :class:`App` and the shared controls.

Design choice: the figure is rendered by matplotlib's Agg backend into PNG bytes and shown
in an :class:`ipywidgets.Image`. Why not an ``Output`` widget? An ``Output`` widget needs
the kernel to capture display messages and re-send a whole new image bundle on every
move, and its behaviour differs between JupyterLab, Notebook 7, VS Code and Voilà
(output capture inside callbacks is the classic source of "nothing happens" reports).
An ``Image`` widget is one synced byte-string trait: it works the same in every front end
that has ipywidgets, needs no extension beyond ipywidgets (no ipympl), and is testable headless.
(ipympl would send only the changed pixels, but needs a front-end extension in every front end; Voilà
and GitHub would show nothing. Bokeh/Plotly redraw in the browser, but every figure here would have to
be written twice.)

* **One render path**: every new control value, from the browser or from Python, is drawn in the
  handler that receives it, at full resolution, under :data:`~pe_helpers.figures._base.DRAW_LOCK` from
  "apply the values" to "PNG encoded". Nothing else draws: no timers, no second resolution. A kernel may
  handle widget messages on a thread of its own (JupyterLab's subshells); the lock makes the draws of two
  threads take turns, and the last value set is drawn last, so what the browser shows at rest is the render
  of the controls' current values.
* **Instant**: ipywidgets' front end sends one update of a slider at a time and, until the kernel is idle
  after it, keeps only the latest of the values that follow. A burst of ten key presses is drawn a few times
  (one per draw's duration), each time with the latest value; the last one drawn is the last value.
* **Visible before running**: an App's stored output carries its current figure as a PNG beside
  the widget view (``_repr_mimebundle_``), so a notebook opened without running shows the figure.
* **Crisp**: the PNG has a pixel for every device pixel the browser shows it on. The first render has
  :data:`~pe_helpers.figures._base.RENDER_SCALE` × the displayed CSS px (what a notebook stores); then each view
  of the app measures its image (:class:`~pe_helpers.apps._pixels.DevicePixels`: displayed width ×
  ``devicePixelRatio``, again after a zoom, a resize or a slide change) and the App renders at the resolution that
  covers the largest view (:meth:`App.fit_device_width`). The image is shown at the figure's display width (max
  100 % of the output).

Layers: *compute* in the tensor modules of :mod:`pe_helpers`; *draw* in :mod:`pe_helpers.figures`;
*interact* here, wiring controls to a builder's ``update``.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence

import ipywidgets as widgets
from matplotlib.figure import Figure

from ..figures._base import (DRAW_LOCK, PNG_TEXTS_KEY, PNG_VALUES_KEY, FigureHandle, app_dpi, dpi_for_width, figure_texts,
                             format_number, freeze_layout, render_png, with_png_text)
from ..i18n import _
from ._pixels import DevicePixels

__all__ = ["App", "Enabled", "BASES", "base_slider", "parse_number"]

#: ``{control: (predicate on the current values, tooltip)}``: the control is disabled while the predicate is false.
Enabled = Mapping[str, tuple[Callable[[dict], bool], str]]


class App(widgets.VBox):
    """A figure driven by controls.

    Attributes:
        controls: name -> control widget; setting ``controls[name].value`` redraws before the assignment returns.
        handle: the builder's :class:`~pe_helpers.figures._base.FigureHandle` (``figure``, named ``artists``, ``update``).
        figure: the matplotlib Figure, built once, whose artists are updated in place.
        artists: the figure's artists by name (what tests read).
        image: the :class:`ipywidgets.Image` showing the latest PNG of ``figure``.
        dpi: the resolution the figure is rendered at (:meth:`fit_device_width` sets it).
        pixels: the invisible widget through which each browser view reports its image's device pixels.
        caption: an :class:`ipywidgets.HTML` readout with the current values (what ``update`` returned).
        renders: how many times the figure has been rendered (tests and benchmarks read it).

    ``figure`` is a :class:`FigureHandle`, or a Figure with ``update`` given separately.
    ``extras``: widgets shown with the controls that are not parameters of ``update`` (a typed-value box).
    ``enabled``: controls that only matter in some states are disabled, with a tooltip saying when they matter.
    """

    def __init__(
        self,
        controls: Mapping[str, widgets.ValueWidget],
        figure: FigureHandle | Figure,
        update: Callable[..., str | None] | None = None,
        *,
        title: str = "",
        values: Callable[[], dict] | None = None,
        extras: Sequence[widgets.Widget] = (),
        enabled: Enabled | None = None,
    ) -> None:
        handle = figure if isinstance(figure, FigureHandle) else FigureHandle(figure, {}, update)
        self.handle = handle
        self.controls: dict[str, widgets.ValueWidget] = dict(controls)
        self.figure = handle.figure
        self.artists = handle.artists
        self._update = handle.update
        self._values = values or (lambda: {name: w.value for name, w in self.controls.items()})
        self._enabled = dict(enabled or {})
        self.renders = 0
        self.title = title
        width_px = getattr(self.figure, "display_width", round(self.figure.get_figwidth() * self.figure.dpi))
        self.image = widgets.Image(format="png", layout=widgets.Layout(width=f"{width_px}px", max_width="100%"))
        self.caption = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.caption.add_class("pe-caption")
        for control in [*self.controls.values(), *extras]:
            _show_whole_labels(control)
        header = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        # A gap between controls: a slider's readout ("1 000 000") otherwise ran into the next control's label.
        box = widgets.HBox([*self.controls.values(), *extras], layout=widgets.Layout(flex_flow="row wrap",
                                                                                    grid_gap="0.25em 1em"))
        self.pixels = DevicePixels(self.fit_device_width)
        super().__init__(children=[*header, box, self.caption, self.image, self.pixels])
        self.add_class("pe-app")
        with DRAW_LOCK:
            self.dpi = app_dpi(self.figure)  # until a view reports its pixels: a deck shows the figure larger
            self.figure.set_dpi(self.dpi)  # before the first update: an update may choose by pixels (interpolation)
            values = self._apply()
            freeze_layout(self.figure)
            self._render(values)
        for w in self.controls.values():
            w.observe(self._on_change, names="value")

    def _on_change(self, change: dict) -> None:
        # No try/except: an exception in a callback must surface (in tests, and in the
        # JupyterLab log console) instead of leaving a stale figure.
        self.refresh()

    def refresh(self) -> None:
        """Apply the current control values to the figure and render it, under the one draw lock."""
        with DRAW_LOCK:
            self._render(self._apply())

    def fit_device_width(self, device_px: int | None) -> None:
        """Render for a view that shows the image ``device_px`` device pixels wide: at the smallest resolution that
        has at least that many (:func:`~pe_helpers.figures._base.dpi_for_width`), if it is not the current one.
        ``None`` (no view open) keeps the resolution."""
        if device_px is None:
            return
        dpi = dpi_for_width(self.figure, device_px)
        with DRAW_LOCK:
            if dpi != self.dpi:
                self.dpi = dpi
                self.figure.set_dpi(dpi)  # before the update, which may choose by pixels (the heatmap's interpolation)
                self._render(self._apply())

    def _apply(self) -> dict:
        values = self._values()
        text = self._update(**values)
        self._show(values, html.escape(text) if text else "")
        return values

    def _show(self, values: dict, caption: str) -> None:
        """The caption (HTML) and which controls are enabled, for ``values``."""
        self.caption.value = caption
        for name, (matters, tooltip) in self._enabled.items():
            control = self.controls[name]
            control.disabled = not matters(values)
            control.tooltip = tooltip

    def _render(self, values: dict) -> None:
        """The figure as PNG into the image; the PNG records ``values`` (:data:`PNG_VALUES_KEY`)."""
        recorded = json.dumps(values, ensure_ascii=True, default=str)
        self.image.value = render_png(self.figure, dpi=self.dpi, text={PNG_VALUES_KEY: recorded})
        self.renders += 1

    def _repr_mimebundle_(self, **kwargs: object) -> tuple[dict, dict]:
        """The widget view, plus the current figure as a PNG (shown at the figure's display width) and a line of
        text, for front ends that cannot show the widget (a notebook opened without running, GitHub, nbviewer)."""
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        metadata = {}
        if self.image.value:
            with DRAW_LOCK:  # the figure's texts as the stored PNG shows them (not written on every move)
                png = with_png_text(self.image.value, PNG_TEXTS_KEY, json.dumps(figure_texts(self.figure), ensure_ascii=False))
            bundle["image/png"] = base64.b64encode(png).decode("ascii")
            metadata["image/png"] = {"width": getattr(self.figure, "display_width", None) or
                                     round(self.figure.get_figwidth() * self.figure.dpi)}
        caption = html.unescape(self.caption.value)
        bundle["text/plain"] = _("{title}: {caption} (run the notebook to move the controls)").format(
            title=self.title or "App", caption=caption)
        return bundle, metadata

    def close(self) -> None:
        """Close the widgets; the figure is not tracked by pyplot, so nothing else leaks."""
        for w in self.controls.values():
            w.close()
        self.image.close()
        self.caption.close()
        self.pixels.close()
        super().close()


def _show_whole_labels(widget: widgets.Widget) -> None:
    """Labels shown whole: ipywidgets cuts a description at about 80 px ("content ×" read "conten…", "type base"
    "type b…") and a toggle button's text at its fixed width ("before W_Q …"); a description is as wide as its text
    and sits right before its control (toggle buttons too: their label above the buttons, with the buttons wrapped to
    the far right of the row, read as two separate controls), a button as wide as its label. Boxes (a typed-value box
    with its message) are looked into."""
    for child in getattr(widget, "children", ()):
        _show_whole_labels(child)
    style = getattr(widget, "style", None)
    if style is None:
        return
    if getattr(widget, "description", "") and hasattr(style, "description_width") and not style.description_width:
        style.description_width = "initial"
    if hasattr(style, "button_width") and not style.button_width:
        style.button_width = "auto"


# --- shared controls ------------------------------------------------------------------------------

#: Bases offered by the base slider (label, value); the paper's 10000 is the default.
BASES = (("10", 10.0), ("100", 100.0), ("1 000", 1000.0), ("10 000", 10000.0), ("100 000", 100000.0),
         ("1 000 000", 1000000.0))

_POWER = re.compile(r"^(\d+(?:\.\d*)?)\s*(?:\^|\*\*)\s*(-?\d+)$")


def parse_number(text: str) -> float:
    """A number as people type it: ``10000``, ``1e4``, ``10 000``, ``10,000``, ``10_000``, ``10^4``, ``10**4``.

    Raises ``ValueError`` naming the text when it is not a number.
    """
    cleaned = re.sub(r"[\s,_\u2009\u202f\u00a0']", "", str(text)).replace("\u00d7", "*")
    power = _POWER.match(cleaned)
    try:
        value = float(power[1]) ** int(power[2]) if power else float(cleaned)
    except (ValueError, OverflowError):
        raise ValueError(_("base must be a number such as 10000, 1e4 or 10 000, got {text!r}.").format(text=text)) from None
    if not math.isfinite(value):
        raise ValueError(_("base must be a finite number, got {text!r}.").format(text=text))
    return value


def base_slider(value: float = 10000.0) -> tuple[widgets.SelectionSlider, widgets.HBox]:
    """The ``base`` control: a slider over :data:`BASES` (factors of 10) and a box to type a base in.

    Returns ``(slider, typed)``: the slider is the control (its value is the base); ``typed`` holds a
    Text box that accepts ``10000``, ``1e4``, ``10 000`` or ``1 000 000`` (Enter or leaving the box)
    and moves the slider, or shows in red why a value is refused, and a message line.
    """
    options = dict((v, k) for k, v in BASES)
    if value not in options:
        allowed = ", ".join(f"{v:g}" for _, v in BASES)
        raise ValueError(_("base must be one of {allowed} for this app, got {value!r}.").format(allowed=allowed, value=value))
    slider = widgets.SelectionSlider(options=BASES, value=float(value), description="base",
                                     continuous_update=True, tooltip=_("base: 10 … 1 000 000, by factors of 10"))
    box = widgets.Text(value=options[float(value)], description=_("type base"), continuous_update=False,
                       tooltip=_("type 10000, 1e4 or 10 000 and press Enter"),
                       layout=widgets.Layout(width="14em"))
    message = widgets.HTML(layout=widgets.Layout(min_width="1em"))

    def typed(change: dict) -> None:
        try:
            number = parse_number(change["new"])
            if number not in options:
                allowed = ", ".join(label for label, _ in BASES)
                raise ValueError(_("base must be one of {allowed}, got {value}.").format(allowed=allowed, value=format_number(number)))
        except ValueError as err:
            message.value = f"<span style='color:#D55E00'>{html.escape(str(err))}</span>"
            return
        message.value = ""
        slider.value = number

    def moved(change: dict) -> None:
        box.value = options[change["new"]]
        message.value = ""

    box.observe(typed, names="value")
    slider.observe(moved, names="value")
    return slider, widgets.HBox([box, message])
