"""Shared drawing pieces: a figure that is built once, a colour-blind-safe palette, PNG rendering.

Every ``build_*`` function in :mod:`pe_helpers.figures` returns ``(figure, update)``:
``figure`` is a :class:`matplotlib.figure.Figure` drawn once, and ``update(**params)``
changes its artists *in place* (``set_data``, ``set_array``, ``set_text``), never
building a new figure, and returns a one-line caption (or ``None``).

Figures are made with :class:`matplotlib.figure.Figure` directly (not ``pyplot``), so an
app's figure is never auto-displayed twice by ``%matplotlib inline`` and never leaks into
pyplot's figure list.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image as PILImage

__all__ = [
    "single_thread",
    "one_thread",
    "OKABE_ITO",
    "DIVERGING",
    "SEQUENTIAL",
    "Updater",
    "new_figure",
    "CachedFigure",
    "new_cached_figure",
    "freeze_layout",
    "render_png",
    "symmetric_limits",
]

#: Okabe & Ito (2008) colour-blind-safe palette for lines and markers.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: Diverging colormap for signed values (use with symmetric limits, see :func:`symmetric_limits`).
DIVERGING = "RdBu_r"
#: Sequential colormap for values of one sign (attention weights, accuracies): perceptually uniform, CVD-safe.
SEQUENTIAL = "cividis"

Updater = Callable[..., "str | None"]


def new_figure(width: float = 8.0, height: float = 3.6, *, dpi: int = 90) -> Figure:
    """A figure with its own Agg canvas and constrained layout (frozen after the first draw by apps)."""
    fig = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


class CachedFigure(Figure):
    """A Figure that repaints only its *dynamic* artists over a cached background (Agg blitting).

    ``fig.set_dynamic(*artists)`` names the artists an ``update`` changes (images, lines,
    texts, and the spines drawn over an image). Everything else is painted once into a
    background that later draws restore in one memory copy, then the dynamic artists are
    drawn on top, in the order given. After changing anything *not* dynamic (limits, tick
    labels, colorbars), call ``fig.invalidate_background()``. Saving (``savefig``, the
    notebook's static display) always draws every artist. Use a fixed layout (add_axes or
    freeze_layout) so artists do not move after the background is taken.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._dynamic: list = []
        self._background: object = None
        self._background_key: tuple | None = None

    def set_dynamic(self, *artists: object) -> None:
        """Mark ``artists`` as the ones redrawn on every render (they become ``animated``)."""
        for artist in artists:
            artist.set_animated(True)
            self._dynamic.append(artist)
        self.invalidate_background()

    def invalidate_background(self) -> None:
        """Forget the cached background: the next render paints everything once more."""
        self._background = None

    def draw(self, renderer) -> None:  # noqa: ANN001 - matplotlib's signature
        canvas = self.canvas
        cached_path = self._dynamic and not canvas.is_saving() and renderer is getattr(canvas, "renderer", None)
        if not cached_path:
            if canvas.is_saving():  # a saved image shows everything, dynamic artists included
                for artist in self._dynamic:
                    artist.set_animated(False)
                try:
                    super().draw(renderer)
                finally:
                    for artist in self._dynamic:
                        artist.set_animated(True)
            else:
                super().draw(renderer)
            return
        key = (renderer.width, renderer.height, self.get_layout_engine() is None)
        if self._background is None or self._background_key != key:
            super().draw(renderer)  # animated (dynamic) artists are skipped here
            self._background = canvas.copy_from_bbox(self.bbox)
            self._background_key = key
        else:
            canvas.restore_region(self._background)
        for artist in self._dynamic:
            if artist.get_visible():
                artist.draw(renderer)
        self.stale = False


def new_cached_figure(width: float = 8.0, height: float = 3.6, *, dpi: int = 90) -> CachedFigure:
    """A :class:`CachedFigure` with its own Agg canvas and no layout engine (place axes with ``add_axes``)."""
    fig = CachedFigure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def freeze_layout(fig: Figure) -> None:
    """Run the layout engine once, then switch it off so later redraws only paint.

    Constrained layout is the slowest part of a redraw; after the first draw the axes
    positions stay where they are, which is what a slider app wants anyway.
    """
    fig.canvas.draw()
    fig.set_layout_engine("none")


def render_png(fig: Figure) -> bytes:
    """Draw ``fig`` with Agg and encode it as PNG (fast compression: this runs on every slider move)."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    width, height = canvas.get_width_height(physical=True)
    image = PILImage.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    out = io.BytesIO()
    image.convert("RGB").save(out, format="PNG", compress_level=1)
    return out.getvalue()


def symmetric_limits(values: object, floor: float = 1e-12) -> tuple[float, float]:
    """``(-m, m)`` with ``m = max|values|``, so zero sits at the centre of a diverging colormap."""
    import torch

    t = torch.as_tensor(values)
    m = max(float(t.abs().max()) if t.numel() else 0.0, floor)
    return -m, m


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
