"""The slider-app machinery shared by every notebook: :class:`App` and the shared controls.

Design choice: the figure is rendered by matplotlib's Agg backend into PNG bytes and shown
in an :class:`ipywidgets.Image`. Why not an ``Output`` widget? An ``Output`` widget needs
the kernel to capture display messages and re-send a whole new image bundle on every
move, and its behaviour differs between JupyterLab, Notebook 7, VS Code and Voilà
(output capture inside callbacks is the classic source of "nothing happens" reports).
An ``Image`` widget is one synced byte-string trait: it works the same in every front end
that has ipywidgets, needs no extension beyond ipywidgets (no ipympl), and is testable headless.

* **Instant**: a value set from Python (a test, a notebook cell) redraws synchronously, so the
  next line can read the artists. Values from the browser are *coalesced* by ipywidgets' front end: it
  sends one update of a slider at a time and, until the kernel is idle after it, keeps only the latest
  of the values that follow. The App draws inside the handler of each update, so a burst of ten key
  presses is drawn a few times (one per draw's duration), each time with the latest value.
  That draw is a *preview* (:data:`~pe_helpers.figures._base.PREVIEW_SCALE`, a quarter of the pixels,
  somewhat faster to draw and send; benchmarks/browser_latency.py measures it); once no value has come for
  :data:`SHARPEN_AFTER_S`, the same figure is rendered again at full resolution. While the kernel then
  waits, the App *prefetches* the previews one key press away (the control just moved, one step each way,
  :data:`PREFETCH_AFTER_S` after the move), so the next arrow-key press shows its figure without drawing; a jump
  (PageUp, a click on the track, a typed value) draws as before. (ipympl would
  send only the changed pixels, but needs a front-end extension in every front end; Voilà and
  GitHub would show nothing. Bokeh/Plotly redraw in the browser, but every figure here would
  have to be written twice. So: Agg, fewer pixels while moving.)
* **Visible before running**: an App's stored output carries its current figure as a PNG beside
  the widget view (``_repr_mimebundle_``), so a notebook opened without running shows the figure.
* **Crisp**: the PNG has :data:`~pe_helpers.figures._base.RENDER_SCALE` × the displayed pixels; the
  image is shown at the figure's display width (max 100 % of the output).

Layers: *compute* in the tensor modules of :mod:`pe_helpers`; *draw* in :mod:`pe_helpers.figures`;
*interact* here, wiring controls to a builder's ``update``.
"""

from __future__ import annotations

import base64
import html
import math
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence

import ipywidgets as widgets
from matplotlib.figure import Figure

from ..figures._base import FigureHandle, format_number, freeze_layout, render_png
from ..i18n import _

__all__ = ["App", "Enabled", "BASES", "SHARPEN_AFTER_S", "PREFETCH_AFTER_S", "base_slider", "parse_number"]

#: Seconds without a new value from the browser after which a previewed figure is rendered at full resolution.
#: The preview is already sharp at a device pixel ratio of 1 (most projectors); the full render (50–120 ms on
#: this 2-core machine) waits until the hand has left the key, so it does not delay the next press.
SHARPEN_AFTER_S = 0.3
_clock = time.monotonic  # the kernel loop's timers count in this clock's seconds (a test replaces it)
#: ``PE_APP_PREVIEW=0`` in the kernel's environment: every value from the browser is drawn at full resolution
#: at once, no preview (what a lecturer may prefer on a fast machine; benchmarks/browser_latency.py's baseline).
PREVIEW = os.environ.get("PE_APP_PREVIEW", "1").strip() != "0"
#: Seconds after a value from the browser is shown before the App renders the previews one step away from it.
#: Not at once: the rest of a burst of key presses (a few ms apart) arrives first and cancels the prefetch, so a
#: burst is not delayed by drawing values it has already passed. Turned off with the previews (``PE_APP_PREVIEW=0``).
PREFETCH_AFTER_S = 0.05
#: Prefetch on (``PE_APP_PREFETCH=0`` in the kernel's environment turns it off alone; it needs the previews).
PREFETCH = PREVIEW and os.environ.get("PE_APP_PREFETCH", "1").strip() != "0"
#: Prefetched previews kept (the neighbours of the shown values; each is a preview PNG of about 100–200 kB).
PREFETCH_KEEP = 4

#: ``{control: (predicate on the current values, tooltip)}``: the control is disabled while the predicate is false.
Enabled = Mapping[str, tuple[Callable[[dict], bool], str]]


def _kernel_loop() -> object | None:
    """The running kernel's event loop (``add_callback``), or ``None`` outside a kernel (tests, scripts)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return None
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None)
    loop = getattr(kernel, "io_loop", None)
    return loop if hasattr(loop, "add_callback") else None


class App(widgets.VBox):
    """A figure driven by controls.

    Attributes:
        controls: name -> control widget; setting ``controls[name].value`` from Python redraws synchronously.
        handle: the builder's :class:`~pe_helpers.figures._base.FigureHandle` (``figure``, named ``artists``, ``update``).
        figure: the matplotlib Figure, built once, whose artists are updated in place.
        artists: the figure's artists by name (what tests read).
        image: the :class:`ipywidgets.Image` showing the latest PNG of ``figure``.
        caption: an :class:`ipywidgets.HTML` readout with the current values (what ``update`` returned).
        renders: how many times the figure has been rendered, previews included (tests and benchmarks read it).
        prefetches: previews rendered ahead for the values one key press away; ``prefetch_hits``: how many of
            them were shown (the figure's artists follow the shown values once the loop has run the next callback).
        previewing: True while the image shows a preview that is still to be sharpened.

    ``figure`` is a :class:`FigureHandle`, or (older builders) a Figure with ``update`` given separately.
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
        self._loop: object | None = None
        self._sharpen_at: float | None = None  # when the shown preview is due to be sharpened (loop time)
        self.renders = 0
        # Prefetch (values from the browser only): the control last moved and which way, the previews rendered
        # ahead {values key: (png, caption)}, a counter that cancels a prefetch when newer values come, and
        # whether the figure's artists lag behind the shown image (after a prefetched preview was shown).
        self._names = {id(w): name for name, w in self.controls.items()}
        self._moved: tuple[str, int] | None = None
        self._prefetched: dict[tuple, tuple[bytes, str]] = {}
        self._generation = 0
        self._stale = False
        self.prefetches = 0
        self.prefetch_hits = 0
        self.title = title
        width_px = getattr(self.figure, "display_width", round(self.figure.get_figwidth() * self.figure.dpi))
        self.image = widgets.Image(format="png", layout=widgets.Layout(width=f"{width_px}px", max_width="100%"))
        self.caption = widgets.HTML(layout=widgets.Layout(min_height="1.6em"))
        self.caption.add_class("pe-caption")
        for control in [*self.controls.values(), *extras]:
            _show_whole_labels(control)
        header = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        box = widgets.HBox([*self.controls.values(), *extras], layout=widgets.Layout(flex_flow="row wrap"))
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
        from_browser = bool(getattr(change.get("owner"), "_property_lock", None))
        loop = _kernel_loop() if from_browser else None
        if loop is None:
            self.refresh()
            return
        name = self._names.get(id(change.get("owner")))
        way = _direction(change.get("owner"), change.get("old"), change.get("new"))
        self._moved = (name, way) if name is not None and way else None
        # Drawn now, inside the handler of the comm message: ipywidgets' front end sends one update of a widget at
        # a time and holds the later ones (keeping only the latest) until the kernel is idle after it, so while
        # this draws, the rest of a burst piles up there and comes as one value. (A loop callback let the kernel
        # go idle first: the next value came at once and waited behind this draw, then was drawn in turn, stale
        # by then: 5 previews for 10 presses, measured in benchmarks/browser_latency.py.)
        self._loop = loop
        self._flush()

    def _flush(self) -> None:
        values = self._values()
        shown = self._prefetched.get(_key(values)) if PREFETCH else None
        if shown is not None:  # drawn ahead while the kernel waited: show it, the artists follow in a callback
            png, text = shown
            self._show(values, text)
            self.image.value = png
            self._stale = True
            self.prefetch_hits += 1
        else:
            self._apply()
            self._render(preview=PREVIEW)
        if not PREVIEW:
            return
        self._generation += 1
        if PREFETCH and self._moved is not None:
            generation = self._generation
            self._loop.call_later(PREFETCH_AFTER_S, lambda: self._prefetch(generation))
        first = self._sharpen_at is None
        self._sharpen_at = _clock() + SHARPEN_AFTER_S
        if first:  # one timer at a time; it looks again when it fires if more values came meanwhile
            self._loop.call_later(SHARPEN_AFTER_S, self._sharpen)

    def _sharpen(self) -> None:
        if self._sharpen_at is None:  # a value set from Python drew at full resolution meanwhile
            return
        left = self._sharpen_at - _clock()
        if left > 0:  # still moving: look again later
            self._loop.call_later(max(left, 0.02), self._sharpen)
            return
        if self._stale:
            self._apply()
        self._render()

    def _neighbours(self) -> list[dict]:
        """The values one key press away from the shown ones, on the control last moved: its direction first."""
        if self._moved is None:
            return []
        name, way = self._moved
        control = self.controls[name]
        values = self._values()
        return [{**values, name: v} for v in _steps(control, way)] if not control.disabled else []

    def _prefetch(self, generation: int, todo: list[dict] | None = None) -> None:
        """Render the preview of one neighbour (:meth:`_neighbours`), then schedule the next: one at a time, so
        that a key press that arrives meanwhile waits for at most one preview. Newer values cancel it."""
        if generation != self._generation or self._loop is None:
            return
        if todo is None:
            todo = self._neighbours()
            keep = {_key(v) for v in todo}
            self._prefetched = {k: v for k, v in self._prefetched.items() if k in keep}
        if not todo:
            return
        ahead, *rest = todo
        key = _key(ahead)
        if key not in self._prefetched:
            text = self._update(**ahead)
            png = render_png(self.figure, preview=True)
            self._update(**self._values())  # the artists show the current values again
            self._stale = False
            self._prefetched[key] = (png, html.escape(text) if text else "")
            while len(self._prefetched) > PREFETCH_KEEP:
                self._prefetched.pop(next(iter(self._prefetched)))
            self.prefetches += 1
        if rest:
            self._loop.call_later(0.005, lambda: self._prefetch(generation, rest))
        elif self._stale:
            self._update(**self._values())
            self._stale = False

    @property
    def previewing(self) -> bool:
        return self._sharpen_at is not None

    def _apply(self) -> None:
        values = self._values()
        text = self._update(**values)
        self._stale = False
        self._show(values, html.escape(text) if text else "")

    def _show(self, values: dict, caption: str) -> None:
        """The caption (HTML) and which controls are enabled, for ``values``."""
        self.caption.value = caption
        for name, (matters, tooltip) in self._enabled.items():
            control = self.controls[name]
            control.disabled = not matters(values)
            control.tooltip = tooltip

    def refresh(self) -> None:
        """Apply the current control values to the figure and re-render the image (prefetched previews are dropped:
        whatever called this may have changed what the figure shows)."""
        self._prefetched.clear()
        self._generation += 1
        self._apply()
        self._render()

    def _render(self, *, preview: bool = False) -> None:
        self.image.value = render_png(self.figure, preview=preview)
        self.renders += 1
        if not preview:
            self._sharpen_at = None

    def _repr_mimebundle_(self, **kwargs: object) -> tuple[dict, dict]:
        """The widget view, plus the current figure as a PNG (shown at the figure's display width) and a line of
        text, for front ends that cannot show the widget (a notebook opened without running, GitHub, nbviewer)."""
        bundle = dict(super()._repr_mimebundle_(**kwargs) or {})
        metadata = {}
        if self.image.value:
            bundle["image/png"] = base64.b64encode(self.image.value).decode("ascii")
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
        super().close()


def _show_whole_labels(widget: widgets.Widget) -> None:
    """Labels shown whole: ipywidgets cuts a description at about 80 px ("content ×" read "conten…", "type base"
    "type b…") and a toggle button's text at its fixed width ("before W_Q …"); a description is as wide as its text
    (toggle buttons keep theirs above the buttons), a button as its label. Boxes (a typed-value box with its message)
    are looked into."""
    for child in getattr(widget, "children", ()):
        _show_whole_labels(child)
    style = getattr(widget, "style", None)
    if style is None:
        return
    beside = not isinstance(widget, widgets.ToggleButtons)  # toggle buttons keep their label above the buttons
    if beside and getattr(widget, "description", "") and hasattr(style, "description_width") and not style.description_width:
        style.description_width = "initial"
    if hasattr(style, "button_width") and not style.button_width:
        style.button_width = "auto"


def _key(values: Mapping[str, object]) -> tuple:
    """A hashable key for control values; floats to 9 decimals (the browser's 1.1 is Python's 1.0 + 0.1)."""
    return tuple((name, round(v, 9) if isinstance(v, float) else v) for name, v in sorted(values.items()))


def _options(control: widgets.ValueWidget) -> list:
    return [o[1] if isinstance(o, tuple) else o for o in control.options]


def _direction(control: object, old: object, new: object) -> int:
    """+1 or -1: which way a slider moved (by option index for a selection slider); 0 for anything else."""
    try:
        if isinstance(control, widgets.SelectionSlider):
            options = _options(control)
            old, new = options.index(old), options.index(new)
        elif not isinstance(control, (widgets.IntSlider, widgets.FloatSlider)):
            return 0
        return (new > old) - (new < old)
    except (ValueError, TypeError):
        return 0


def _steps(control: widgets.ValueWidget, way: int) -> list:
    """The values one key press away from ``control.value``: the ``way`` side first, then the other (in range)."""
    if isinstance(control, widgets.SelectionSlider):
        options = _options(control)
        i = options.index(control.value)
        return [options[j] for j in (i + way, i - way) if 0 <= j < len(options)]
    step, value = control.step, control.value
    found = []
    for d in (way, -way):
        v = value + d * step
        v = round(v, 9) if isinstance(control, widgets.FloatSlider) else v
        if control.min <= v <= control.max:
            found.append(v)
    return found


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
