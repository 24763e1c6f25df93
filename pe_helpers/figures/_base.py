"""The one figure toolkit: classroom sizes, palettes, one figure class, named artists, PNG rendering, layout.

Every ``build_*`` function in :mod:`pe_helpers.figures` returns a :class:`FigureHandle`: the
``figure`` (drawn once), its ``artists`` by name (what tests and apps read), and ``update(**params)``,
which changes those artists *in place* (``set_data``, ``set_array``, ``set_text``), never building a
new figure, and returns a one-line caption. Static ``plot_*`` functions return a :class:`CachedFigure`
(which shows itself as a crisp PNG in a notebook).

Sizes: a figure is designed for :data:`DISPLAY_WIDTH_PX` CSS pixels, the output area of a
notebook in a 1280 px window, at :data:`DISPLAY_DPI` CSS px per inch, and rendered at
:data:`RENDER_SCALE` times that (crisp on HiDPI projectors and when zoomed). Every text is at least
:data:`MIN_FONT_PT` points, which is :data:`MIN_FONT_CSS_PX` CSS px at that width;
:func:`min_font_css_px` measures it for any figure.

Figures are made with :class:`matplotlib.figure.Figure` directly (not ``pyplot``), so an app's
figure is never auto-displayed twice by ``%matplotlib inline`` and never leaks into pyplot's list.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import os
import struct
import threading
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.text import Text

from ..i18n import _, font_family
from ._stamps import StampingRenderer, TextStamps

__all__ = [
    "single_thread",
    "one_thread",
    "OKABE_ITO",
    "DIVERGING",
    "SEQUENTIAL",
    "DISPLAY_WIDTH_PX",
    "DISPLAY_DPI",
    "RENDER_SCALE",
    "SLIDE_APP_HEIGHT_PX",
    "DRAW_LOCK",
    "app_dpi",
    "dpi_for_width",
    "MIN_FONT_PT",
    "MIN_SLIDE_TEXT_PX",
    "NOTEBOOK_FONT_PT",
    "SLIDE_FONT_PT",
    "PRESENT",
    "MIN_FONT_CSS_PX",
    "Updater",
    "FigureHandle",
    "CachedFigure",
    "new_figure",
    "use_package_fonts",
    "static_figure",
    "freeze_layout",
    "settle_layout",
    "legible",
    "min_font_pt",
    "min_font_css_px",
    "misplaced_texts",
    "PNG_MIN_FONT_KEY",
    "PNG_VALUES_KEY",
    "PNG_TEXTS_KEY",
    "figure_texts",
    "render_rgba",
    "render_png",
    "with_png_text",
    "encode_png",
    "symmetric_limits",
    "format_number",
]

#: Okabe & Ito (2008) colour-blind-safe palette for lines and markers.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: Diverging colormap for signed values (use with symmetric limits, see :func:`symmetric_limits`).
DIVERGING = "RdBu_r"
#: Sequential colormap for values of one sign (attention weights, accuracies): perceptually uniform, CVD-safe.
SEQUENTIAL = "cividis"

#: CSS px a figure is designed for: a JupyterLab output area in a 1280 px window is about 1000–1100 px.
DISPLAY_WIDTH_PX = 1000
#: CSS px per inch of figure size when displayed (a 10-inch figure is shown 1000 CSS px wide).
DISPLAY_DPI = 100
#: Rendered pixels per displayed CSS px of a figure as made: the device pixels of a screen with ``devicePixelRatio`` 2
#: (a HiDPI laptop), and twice those of a 1× screen or projector, which leaves room for the browser's zoom. A static
#: figure and a notebook's stored image keep it; an app in a browser renders for the pixels its views report
#: (:func:`dpi_for_width`).
RENDER_SCALE = 2
#: An app renders at the resolution its browser view needs (:func:`dpi_for_width`), in steps of this many dpi (a
#: quarter of a CSS px per px at :data:`DISPLAY_DPI`), so a window resized by a few pixels does not redraw it.
DPI_STEP = DISPLAY_DPI / 4
#: The fewest pixels an app renders at: one per CSS px of its designed width (a 1× screen at 100 % zoom).
MIN_APP_DPI = DISPLAY_DPI
#: The most: four per CSS px (a DPR-2 screen zoomed to 200 %, or a deck scaled up on a HiDPI screen); a 10-inch
#: figure is then 4000 px wide, 28 MB of RGBA while it is drawn.
MAX_APP_DPI = 4 * DISPLAY_DPI
#: The smallest text any figure may carry, in CSS px at :data:`DISPLAY_WIDTH_PX`.
MIN_FONT_CSS_PX = 14.0
#: Present mode: ``make present`` (:mod:`pe_helpers.present`) sets ``PE_PRESENT=1`` for its Voilà kernels.
PRESENT = os.environ.get("PE_PRESENT") == "1"
#: The smallest text in a notebook, in points at :data:`DISPLAY_DPI` (14 px = 10.08 pt; 10.5 pt leaves a margin).
NOTEBOOK_FONT_PT = 10.5
#: The same on a slide. A figure is shown smaller there than in a notebook (the 1280 × 720 slide's height limits it,
#: then reveal.js scales the slide to the screen): measured in the decks at 1920 × 1080, 10.5 pt came out at
#: 18.5–22 px for the apps and 13.5 pt at 23.8 px for the mixing app. 14 pt gives every figure at least
#: :data:`MIN_SLIDE_TEXT_PX` (tests/browser/test_slides.py asserts it).
SLIDE_FONT_PT = 14.0
#: The smallest text any figure draws, read at each draw (:func:`legible`): a test may set it to :data:`SLIDE_FONT_PT`.
MIN_FONT_PT = SLIDE_FONT_PT if PRESENT else NOTEBOOK_FONT_PT
#: The height a deck shows an app's figure at, in CSS px (the pe-slides theme, ``pe.css``: ``.pe-app img``).
SLIDE_APP_HEIGHT_PX = 440
#: The smallest figure text on a slide shown at 1920 × 1080, in screen px (the guide's 24 px at 1080p).
MIN_SLIDE_TEXT_PX = 24.0
#: Default width of every figure, in inches: the whole output width.
FIGURE_WIDTH_IN = DISPLAY_WIDTH_PX / DISPLAY_DPI

Updater = Callable[..., "str | None"]


#: One lock for every draw of every figure: an app's update, its draw and its PNG encoding run under it, so a figure
#: is never changed by one thread while another draws it (a kernel may handle widget messages on a thread of its own,
#: and matplotlib's text and font caches are shared between figures).
DRAW_LOCK = threading.RLock()


class CachedFigure(Figure):
    """The toolkit's one figure class: partial redraws for apps, a crisp PNG in notebooks, legible text.

    * **Partial redraw** (matplotlib's blitting recipe, on its public API): ``fig.set_dynamic(*artists)`` names
      the artists an ``update`` changes; they become ``animated``, so a full draw leaves them out. :func:`render_rgba`
      paints everything else once into a background (``canvas.copy_from_bbox``), and each later render restores it
      in one memory copy (``canvas.restore_region``) and draws the dynamic artists on top, in the order given
      (``fig.draw_artist``). After changing anything *not* dynamic (limits, tick labels, colorbars) call
      ``fig.invalidate_background()``. Use a fixed layout (:func:`settle_layout`) before ``set_dynamic``.
    * **Texts stamped**: the texts of the dynamic artists are drawn through the figure's :attr:`text_stamps`
      (:mod:`pe_helpers.figures._stamps`): a text is rasterised once and its pixels composited on later renders.
    * **Legible**: every full draw first raises any text below :data:`MIN_FONT_PT` to it (:func:`legible`).
    * **Shown before anything runs**: ``_repr_mimebundle_`` is a PNG at :data:`RENDER_SCALE` × its
      displayed size, with the displayed width in the metadata (JupyterLab, Notebook 7, GitHub, nbviewer).
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.dynamic: list = []
        #: The painted background and the pixel size it was painted at (None: paint it at the next render).
        self.background: tuple[tuple[int, int], object] | None = None
        #: The smallest visible text in points at the last full draw (:func:`min_font_pt`).
        self.smallest_text_pt: float | None = None
        #: The pixels of the texts it drew, composited again when the same text comes back (:mod:`._stamps`).
        self.text_stamps = TextStamps()
        self._stamping: StampingRenderer | None = None

    def stamping(self, renderer) -> StampingRenderer:  # noqa: ANN001 - any Agg renderer
        """``renderer`` with texts drawn through :attr:`text_stamps` (one wrapper per renderer): what the dynamic
        artists are drawn with on every render."""
        if self._stamping is None or self._stamping.renderer is not renderer:
            self._stamping = StampingRenderer(renderer, self.text_stamps)
        return self._stamping

    @property
    def display_width(self) -> int:
        """CSS px this figure is shown at (its width in inches × :data:`DISPLAY_DPI`)."""
        return round(self.get_figwidth() * DISPLAY_DPI)

    def set_dynamic(self, *artists: object) -> None:
        """Mark ``artists`` as the ones redrawn on every render (they become ``animated``); each is drawn once."""
        for artist in artists:
            if any(artist is known for known in self.dynamic):
                continue
            artist.set_animated(True)
            self.dynamic.append(artist)
        self.invalidate_background()

    def invalidate_background(self) -> None:
        """Forget the painted background: the next render paints everything once more."""
        self.background = None

    def draw(self, renderer) -> None:  # noqa: ANN001 - matplotlib's signature
        """A full draw: texts raised to :data:`MIN_FONT_PT`, constrained layout run once more than matplotlib does
        (one pass alone left slide-sized titles and labels partly off the figure), then matplotlib's own draw.
        A saved image (``savefig``) shows the dynamic artists too; a draw for :func:`render_rgba` leaves them out."""
        legible(self)
        engine = self.get_layout_engine()
        if isinstance(engine, ConstrainedLayoutEngine):
            engine.execute(self)
        saving = [a for a in self.dynamic if a.get_animated()] if self.canvas.is_saving() else []
        for artist in saving:
            artist.set_animated(False)
        try:
            super().draw(renderer)
        finally:
            for artist in saving:
                artist.set_animated(True)
        self.smallest_text_pt = min_font_pt(self)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> tuple[dict, dict]:
        data = {"image/png": base64.b64encode(render_png(self, texts=True)).decode("ascii"),
                "text/plain": f"<figure {self.display_width} px wide>"}
        return data, {"image/png": {"width": self.display_width}}


@dataclass(eq=False)
class FigureHandle:
    """What a figure builder returns: the figure, its artists by name, and the ``update`` that edits them.

    ``handle["tip_q"]`` is ``handle.artists["tip_q"]``. Tests and apps read artists by name, never by
    their position in ``ax.lines``. ``update(**params)`` returns the one-line caption.
    """

    figure: CachedFigure
    artists: Mapping[str, object] = field(default_factory=dict)
    update: Updater | None = None

    def __getitem__(self, name: str) -> object:
        return self.artists[name]

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> tuple[dict, dict]:
        return self.figure._repr_mimebundle_(include, exclude)


def app_dpi(fig: Figure, *, present: bool | None = None) -> float:
    """The dpi an app's figure is made with: :data:`RENDER_SCALE` px per CSS px where it is shown.

    In a notebook that is the figure's own dpi (:data:`DISPLAY_DPI` × :data:`RENDER_SCALE`). A deck shows an app's
    figure :data:`SLIDE_APP_HEIGHT_PX` high whatever its size (wider than in a notebook for a short figure), so there
    (``present``, default :data:`PRESENT`) the dpi gives that height :data:`RENDER_SCALE` px per CSS px too.
    """
    present = PRESENT if present is None else present
    if not present:
        return fig.dpi
    return max(fig.dpi, math.ceil(RENDER_SCALE * SLIDE_APP_HEIGHT_PX / fig.get_figheight()))


def dpi_for_width(fig: Figure, device_px: float) -> float:
    """The dpi that gives ``fig`` at least ``device_px`` pixels across: ``px / width_in``, rounded up to a multiple of
    :data:`DPI_STEP`, within [:data:`MIN_APP_DPI`, :data:`MAX_APP_DPI`].

    A width given as ``round(width_in × dpi)`` (a PNG's) gives that dpi back: half a pixel is allowed for the rounding.
    """
    if isinstance(device_px, bool) or not isinstance(device_px, (int, float)) or not math.isfinite(device_px) \
            or device_px <= 0:
        raise ValueError(_("device_px must be a positive number of pixels, got {value!r}.").format(value=device_px))
    return _dpi_for(fig.get_figwidth(), device_px)


def _dpi_for(width_in: float, device_px: float) -> float:
    """:func:`dpi_for_width` for a figure ``width_in`` inches wide (a browser test knows a PNG, not its figure)."""
    steps = math.ceil((device_px - 0.5) / width_in / DPI_STEP - 1e-9)
    return min(max(steps * DPI_STEP, MIN_APP_DPI), MAX_APP_DPI)


def new_figure(width: float = FIGURE_WIDTH_IN, height: float = 3.6, *, layout: str | None = "constrained",
               dpi: float | None = None) -> CachedFigure:
    """A :class:`CachedFigure` with its own Agg canvas, ``width`` inches wide (default: the whole output).

    ``layout="constrained"`` lays it out on the first draw (apps then call :func:`settle_layout`);
    ``layout=None`` for figures that place their axes with ``add_axes``. ``dpi`` defaults to
    :data:`DISPLAY_DPI` × :data:`RENDER_SCALE`.
    """
    use_package_fonts()
    _png_in_ipython()
    fig = CachedFigure(figsize=(width, height), dpi=dpi or DISPLAY_DPI * RENDER_SCALE, layout=layout)
    FigureCanvasAgg(fig)
    return fig


def _png_in_ipython() -> None:
    """In a running IPython, show a :class:`CachedFigure` as :func:`render_png` draws it.

    ``%matplotlib inline`` registers its own PNG formatter for every ``Figure`` (cropped with
    ``bbox_inches="tight"``, without our legibility metadata), and IPython lets a formatter registered for a
    type win over ``_repr_mimebundle_``; registering the subclass makes IPython pick ours (its lookup walks
    the MRO). Done when a figure is made, so the order of ``%matplotlib inline`` and the imports is free.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return
    shell = get_ipython()
    formatter = getattr(getattr(shell, "display_formatter", None), "formatters", {}).get("image/png")
    if formatter is not None and formatter.type_printers.get(CachedFigure) is not _ipython_png:
        formatter.for_type(CachedFigure, _ipython_png)


def _ipython_png(fig: CachedFigure) -> str:
    return base64.b64encode(render_png(fig, texts=True)).decode("ascii")


def use_package_fonts() -> None:
    """Draw text with :func:`pe_helpers.i18n.font_family`: DejaVu Sans, then the bundled CJK font per glyph.

    Set in matplotlib's ``rcParams`` (tick labels are made at draw time and read it then), so Chinese
    labels and the characters of 我喜欢你 render, without a missing-glyph warning, on any machine.
    """
    import matplotlib

    family = font_family()
    if matplotlib.rcParams["font.family"] != family:
        matplotlib.rcParams["font.family"] = family


def static_figure(nrows: int = 1, ncols: int = 1, *, height: float = 3.8, width: float = FIGURE_WIDTH_IN,
                  **subplot_kw: object) -> tuple[CachedFigure, object]:
    """``(fig, axes)`` like ``plt.subplots``, but a toolkit figure: full width, legible, crisp, not in pyplot."""
    fig = new_figure(width, height)
    return fig, fig.subplots(nrows, ncols, **subplot_kw)


def legible(fig: Figure, min_pt: float | None = None) -> None:
    """Raise every text of ``fig`` (titles, labels, tick labels, legends, annotations) to at least ``min_pt``
    (default: :data:`MIN_FONT_PT` as it is now)."""
    min_pt = MIN_FONT_PT if min_pt is None else min_pt
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for which, ticks in (("major", axis.get_major_ticks()), ("minor", axis.get_minor_ticks())):
                # ticks made later take the axis's tick settings, which the existing ticks show
                if not ticks or ticks[0].label1.get_fontsize() < min_pt:
                    axis.set_tick_params(which=which, labelsize=min_pt)
    for text in fig.findobj(Text):
        if text.get_fontsize() < min_pt:
            text.set_fontsize(min_pt)


def _points(size: object) -> float:
    from matplotlib.font_manager import FontProperties

    return FontProperties(size=size).get_size_in_points()


def min_font_pt(fig: Figure) -> float:
    """The smallest visible text of ``fig`` in points (hidden tick labels, empty and transparent texts skipped).

    Reads the figure as last drawn (render it first, :func:`render_rgba`, so tick labels exist).
    """
    hidden = {id(label) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
              if not (ax.axison and axis.get_visible())
              for tick in axis.get_major_ticks() + axis.get_minor_ticks() for label in (tick.label1, tick.label2)}
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and t.get_alpha() != 0 and id(t) not in hidden]
    return min(sizes) if sizes else float("inf")


def min_font_css_px(fig: Figure, displayed_width: float | None = None) -> float:
    """The smallest visible text of ``fig`` in CSS px when the figure is shown ``displayed_width`` px wide.

    Default width: the figure's own display width (:attr:`CachedFigure.display_width`), capped at
    :data:`DISPLAY_WIDTH_PX` (images scale down with ``max-width: 100%``). Draws the figure first,
    so tick labels exist.
    """
    with DRAW_LOCK:
        _blit(fig)
    if displayed_width is None:
        own = getattr(fig, "display_width", round(fig.get_figwidth() * DISPLAY_DPI))
        displayed_width = min(own, DISPLAY_WIDTH_PX)
    css_per_pixel = displayed_width / (fig.get_figwidth() * fig.dpi)
    return min_font_pt(fig) * fig.dpi / 72 * css_per_pixel


def _drawn_texts(fig: Figure, *, draw: bool = True) -> list[tuple[Text, object]]:
    """Every text a draw of ``fig`` paints, with its extent in pixels (tick labels of ticks outside the view,
    hidden, empty and transparent texts left out). Draws the figure first unless ``draw=False``."""
    if draw:
        with DRAW_LOCK:
            _blit(fig)
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    skipped = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            drawn = {id(tick) for tick in _ticks_drawn(axis)} if ax.axison and axis.get_visible() else set()
            skipped |= {id(label) for tick in axis.get_major_ticks() + axis.get_minor_ticks() if id(tick) not in drawn
                        for label in (tick.label1, tick.label2)}
    return [(t, t.get_window_extent(renderer)) for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and t.get_alpha() != 0 and id(t) not in skipped]


def _ticks_drawn(axis: object) -> list:
    """The ticks a draw of ``axis`` paints: one per location of its locators, inside the view interval (the axis's
    tick lists may hold more ticks than locations, and locations outside the view)."""
    transform = axis.get_transform()
    low, high = sorted(transform.transform(np.asarray(axis.get_view_interval(), dtype=float)))
    margin = 1e-10 * max(high - low, 1e-300)
    drawn = []
    for ticks, locs in ((axis.get_major_ticks, axis.get_majorticklocs()), (axis.get_minor_ticks, axis.get_minorticklocs())):
        locs = np.asarray(locs, dtype=float)
        if not len(locs):
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            where = transform.transform(locs)
        drawn += [tick for tick, at in zip(ticks(len(locs)), where) if low - margin <= at <= high + margin]
    return drawn


def misplaced_texts(fig: Figure, *, tolerance_px: float = 1.0, draw: bool = True) -> list[str]:
    """What a reader cannot read whole in ``fig``: texts that run off the figure, and pairs of texts that overlap.

    One line per problem, naming the text(s); ``[]`` when every title, label, tick label, legend entry and
    annotation is inside the figure and clear of every other (overlaps of at most ``2 × tolerance_px`` px
    either way are let through: touching boxes are not covered glyphs). Draws the figure first; ``draw=False``
    reads it as last drawn (right after :func:`min_font_css_px`, which draws it).
    """
    texts = _drawn_texts(fig, draw=draw)
    width, height = fig.bbox.width, fig.bbox.height
    out = [f"{t.get_text()!r} runs off the figure ({b.x0:.0f}..{b.x1:.0f} × {b.y0:.0f}..{b.y1:.0f} px of "
           f"{width:.0f} × {height:.0f})" for t, b in texts
           if b.x0 < -tolerance_px or b.y0 < -tolerance_px or b.x1 > width + tolerance_px or b.y1 > height + tolerance_px]
    for i, (t, a) in enumerate(texts):
        for u, b in texts[i + 1:]:
            across, up = min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0)
            if across > 2 * tolerance_px and up > 2 * tolerance_px:
                out.append(f"{t.get_text()!r} and {u.get_text()!r} overlap ({across:.0f} × {up:.0f} px)")
    return out


def freeze_layout(fig: Figure) -> None:
    """Run the layout engine once, then switch it off so later redraws only paint.

    Constrained layout is the slowest part of a redraw; after the first draw the axes
    positions stay where they are, which is what a slider app wants anyway. The layout pass paints
    nothing (matplotlib's ``draw_without_rendering``: texts are measured, no pixel is written), about a
    fifth of an app's build time; the first render paints everything once.
    """
    fig.draw_without_rendering()  # two passes of the engine (CachedFigure._full_draw)
    if isinstance(fig, CachedFigure):
        fig.invalidate_background()  # the pass painted nothing: no background to keep from it
    fig.set_layout_engine("none")


def settle_layout(fig: Figure) -> None:
    """Lay ``fig`` out once, switch the layout engine off, and pin every axis label and title where it is.

    Pinned labels and titles are not re-measured on each draw (matplotlib otherwise measures
    every tick label to place them), which makes a slider redraw markedly cheaper. Call it
    with the figure showing its *widest* tick labels, so later values still fit.
    """
    freeze_layout(fig)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            text = axis.label
            x, y = ax.transAxes.inverted().transform(text.get_transform().transform(text.get_position()))
            axis.set_label_coords(x, y)
        if ax.get_title():  # pinned where it is, keeping its own font (set_title alone would reset it)
            title = ax.title
            ax.set_title(ax.get_title(), y=title.get_position()[1], fontsize=title.get_fontsize(),
                         fontweight=title.get_fontweight(), color=title.get_color())


#: The PNG text chunk (``tEXt``) that carries a figure's smallest text in points, next to its dpi (``pHYs``):
#: a browser test reads both and the image's displayed width to get the smallest text in CSS px.
PNG_MIN_FONT_KEY = "pe:min-font-pt"
#: The ``tEXt`` chunk of an app's PNG that holds the control values it shows, as ASCII JSON: a page can be checked
#: against a fresh render of exactly those values, and against what its controls read.
PNG_VALUES_KEY = "pe:values"
#: The ``iTXt`` chunk (UTF-8) of a figure's PNG as a notebook stores it: every text the figure shows (titles, labels,
#: tick labels, legend entries, annotations) as a JSON list, so a stored notebook can be checked for what a reader
#: reads in its figures without drawing them again (``tests/test_chinese_edition_scan.py``).
PNG_TEXTS_KEY = "pe:texts"


def _blit(fig: Figure) -> memoryview:
    """Draw ``fig`` at its own dpi (blitting a :class:`CachedFigure`'s dynamic artists); its canvas's RGBA buffer."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    dynamic = getattr(fig, "dynamic", None)
    if not dynamic:
        canvas.draw()
        return canvas.buffer_rgba()
    size = canvas.get_width_height(physical=True)
    if fig.background is None or fig.background[0] != size:
        canvas.draw()  # the dynamic artists are animated: a full draw leaves them out
        fig.background = (size, canvas.copy_from_bbox(fig.bbox))
    else:
        canvas.restore_region(fig.background[1])
    renderer = fig.stamping(canvas.get_renderer())
    for artist in dynamic:
        if artist.get_visible():
            artist.draw(renderer)
    return canvas.buffer_rgba()


def render_rgba(fig: Figure) -> np.ndarray:
    """Draw ``fig`` with Agg at its own dpi and return a copy of its pixels, ``[h, w, 4]`` uint8.

    A :class:`CachedFigure` with dynamic artists is blitted (see its docstring): the background is painted once per
    pixel size, later renders restore it and draw the dynamic artists on top. Any other figure is drawn whole.
    Runs under :data:`DRAW_LOCK`.
    """
    with DRAW_LOCK:
        return np.array(_blit(fig))


def figure_texts(fig: Figure) -> list[str]:
    """Every visible, non-empty text of ``fig`` as last drawn (titles, labels, tick labels, legend entries, notes)."""
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def render_png(fig: Figure, *, dpi: float | None = None, text: Mapping[str, str] | None = None,
               texts: bool = False) -> bytes:
    """``fig`` drawn (as :func:`render_rgba` draws it) and encoded as PNG (:func:`encode_png`).

    ``dpi``: the resolution of this render (default: the figure's own). The figure keeps it afterwards, so the next
    render at the same dpi blits over the background painted at it; nothing else changes a figure's dpi.

    The PNG records the figure's dpi (``pHYs``) and its smallest text in points (:data:`PNG_MIN_FONT_KEY`),
    so what a page displays can be checked for legibility (tests/browser) without the figure object; ``text``
    adds more text entries (an app's control values, :data:`PNG_VALUES_KEY`); ``texts=True`` adds the figure's
    texts (:data:`PNG_TEXTS_KEY`), for a PNG a notebook stores (an app's moves leave them out: they cost a walk
    of every artist). Runs under :data:`DRAW_LOCK`, from the draw to the last byte.
    """
    if dpi is not None and (isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not math.isfinite(dpi)
                            or not 0 < dpi <= MAX_APP_DPI):
        raise ValueError(_("dpi must be a number in (0, {most:g}], got {value!r}.").format(most=MAX_APP_DPI, value=dpi))
    with DRAW_LOCK:
        if dpi is not None and dpi != fig.dpi:
            fig.set_dpi(dpi)
        rgba = np.asarray(_blit(fig))
        smallest = getattr(fig, "smallest_text_pt", None)
        smallest = smallest if smallest is not None else min_font_pt(fig)
        extra = {PNG_TEXTS_KEY: json.dumps(figure_texts(fig), ensure_ascii=False)} if texts else {}
        return encode_png(rgba, dpi=fig.dpi, text={PNG_MIN_FONT_KEY: f"{smallest:.2f}", **(text or {}), **extra})


def with_png_text(png: bytes, key: str, value: str) -> bytes:
    """``png`` with one more text entry (written before its image data): for a PNG already encoded."""
    png = bytes(png)  # an Image widget's value is a memoryview
    at = 8  # after the signature, chunk by chunk: length, type, data, CRC
    while png[at + 4:at + 8] != b"IDAT":
        at += 12 + struct.unpack(">I", png[at:at + 4])[0]
    return png[:at] + _text_chunk(key, value) + png[at:]


def _text_chunk(key: str, value: str) -> bytes:
    """A ``tEXt`` chunk for Latin-1 text, else an uncompressed ``iTXt`` chunk (UTF-8), as the PNG standard has it."""
    try:
        return _png_chunk(b"tEXt", key.encode("latin-1") + b"\0" + value.encode("latin-1"))
    except UnicodeEncodeError:
        return _png_chunk(b"iTXt", key.encode("latin-1") + b"\0\0\0\0\0" + value.encode("utf-8"))


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def encode_png(rgba: np.ndarray, *, dpi: float, text: Mapping[str, str] = {}) -> bytes:  # noqa: B006 - read only
    """An ``[h, w, 4]`` uint8 RGBA image as PNG: filter "None" on every row, zlib level 1, ``pHYs`` and text chunks
    (``tEXt``, or ``iTXt`` for text beyond Latin-1: a Chinese figure's texts).

    Why not Pillow, which the rest of the toolkit uses: Pillow's PNG writer always chooses a filter per row
    (adaptive filtering) and has no option to skip it; at 2000 × 880 px that took 37 ms here, this takes 14 ms
    (files 10–35 % larger, pixels identical: tests/test_apps_toolkit.py decodes both). Matplotlib's own
    ``savefig`` goes through Pillow too. The alpha channel is kept (copying RGB out of RGBA cost more than
    compressing the constant alpha).
    """
    if rgba.dtype != np.uint8 or rgba.ndim != 3 or rgba.shape[2] != 4:
        raise ValueError(_("rgba must be a uint8 array of shape [h, w, 4], got {dtype} {shape}.").format(
            dtype=rgba.dtype, shape=tuple(rgba.shape)))
    height, width = rgba.shape[:2]
    rows = np.empty((height, width * 4 + 1), np.uint8)
    rows[:, 0] = 0  # filter type None
    rows[:, 1:] = rgba.reshape(height, width * 4)
    per_metre = round(dpi / 0.0254)
    chunks = [_png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)),
              _png_chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1))]
    chunks += [_text_chunk(key, value) for key, value in text.items()]
    chunks += [_png_chunk(b"IDAT", zlib.compress(rows, 1)), _png_chunk(b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


def symmetric_limits(values: object, floor: float = 1e-12) -> tuple[float, float]:
    """``(-m, m)`` with ``m = max|values|``, so zero sits at the centre of a diverging colormap."""
    import torch

    t = torch.as_tensor(values)
    m = max(float(t.abs().max()) if t.numel() else 0.0, floor)
    return -m, m


def format_number(x: float, digits: int = 4) -> str:
    """A number as people read it: ``1 000 000``, ``47 120``, ``6.283``, ``0.0001`` (never ``4.712e+04``).

    Whole parts get groups of three (as the apps' readouts show them); at most ``digits`` significant digits; tiny values keep
    scientific form only below 1e-4.
    """
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    if x != 0 and abs(x) < 1e-4:
        return f"{x:.{max(digits - 1, 0)}e}"
    if abs(x) >= 10 ** (digits - 1) or float(x).is_integer():
        return f"{round(x):,}".replace(",", " ")
    return f"{x:.{digits}g}"


def label(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    """Title and axis labels in one call (they say what is plotted, with the equation or units)."""
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


@contextmanager
def single_thread() -> Iterator[None]:
    """Run torch on one thread inside the block (the previous count is restored after).

    An app's tensors are small, so waking torch's thread pool costs more than it saves, and
    on a busy 2-core machine each parallel op can stall for milliseconds.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def one_thread(update: Callable[..., str]) -> Callable[..., str]:
    """Decorator: run a figure's ``update`` inside :func:`single_thread`, so slider moves stay fast and steady."""

    @functools.wraps(update)
    def wrapped(**params: object) -> str:
        with single_thread():
            return update(**params)

    return wrapped
