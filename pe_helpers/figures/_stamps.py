"""Text drawn once, stamped after: the pixels of each text a figure redraws, kept and composited again.

Why: text is most of an app's redraw. For every title, readout and tick label it redraws, matplotlib lays the string
out and FreeType rasterises each glyph again (0.7–1.2 ms a text at 1×, 20–28 such texts per slider move), although
the same strings come back at the same places: ticks that did not move, a token in the slot it had before.

How, on matplotlib's public renderer API (:class:`~matplotlib.backend_bases.RendererBase`): a figure's draw is given
a :class:`StampingRenderer`, which passes every call to the canvas's renderer except ``draw_text``. A text is drawn
by matplotlib itself (``draw_text``) onto a transparent :class:`~matplotlib.backends.backend_agg.RendererAgg` of its
own, cropped to its pixels, kept in the figure's :class:`TextStamps`, and composited onto the canvas with
``draw_image``. A later draw of the same string, font, colour, angle and sub-pixel position composites the kept pixels
without laying out or rasterising anything. (Matplotlib's own ``PathEffectRenderer`` wraps a renderer the same way.)

Exactness: Agg blends a glyph into a pixel as its colour with alpha ``coverage × alpha``. Onto a transparent pixel
that blend stores the colour unchanged with that alpha, and ``draw_image`` blends the stored pixel with the same
formula (matplotlib's plain-RGBA blender), so a stamp gives the canvas the pixels the glyph gives it drawn straight.
Where two glyphs of one string share an anti-aliased edge pixel, they are blended with each other first, which may
differ from drawing them one after the other by one level in 255 (a few pixels per figure). Only the texts an app
redraws are stamped (its dynamic artists', on every render, from the first); the kept background and a saved image
(``savefig``) draw their texts straight, so a saved image may differ from an app's render there, by that one level.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import RendererAgg

from .._validate import require_int

__all__ = ["Stamp", "TextStamps", "StampingRenderer", "STAMP_BUDGET_BYTES"]

#: The most bytes of text pixels one figure keeps; the least recently drawn texts go first. An app's texts take
#: 0.5–2 MB at 1–2 px per CSS px, so the budget holds several sizes and every token in every slot.
STAMP_BUDGET_BYTES = 16 * 2**20
#: Room around a text's measured extent on its own canvas, in px: glyphs overhang their advance (anti-aliased edges).
_PAD = 4
#: The most texts a figure remembers to draw straight (a bounded set of keys: forgotten all at once when full).
_STRAIGHT_KEYS = 4096

#: A text's pixels (RGBA rows bottom-up, as ``draw_image`` takes them; 0 × 0 for a blank text), and the column and
#: row of their top-left corner from the pixel the text is anchored in.
Stamp = tuple[np.ndarray, int, int]


class TextStamps:
    """A figure's kept texts, by what decides their pixels; at most ``budget`` bytes, least recently used out first.

    ``hits`` and ``misses`` count lookups (tests and benchmarks read them); ``straight`` holds the keys of texts that
    cannot be stamped (see :class:`StampingRenderer`), so they are not tried again on every render.
    """

    def __init__(self, budget: int = STAMP_BUDGET_BYTES) -> None:
        self.budget = require_int("budget", budget, minimum=0)
        self.bytes = 0
        self.hits = 0
        self.misses = 0
        self._kept: OrderedDict[tuple, Stamp] = OrderedDict()
        self.straight: set[tuple] = set()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, key: tuple) -> Stamp | None:
        """The stamp kept under ``key``, now the most recently used; ``None`` if none is."""
        stamp = self._kept.get(key)
        if stamp is None:
            self.misses += 1
            return None
        self.hits += 1
        self._kept.move_to_end(key)
        return stamp

    def draw_straight(self, key: tuple) -> None:
        """Remember that the text under ``key`` is drawn straight."""
        if len(self.straight) >= _STRAIGHT_KEYS:
            self.straight.clear()
        self.straight.add(key)

    def put(self, key: tuple, stamp: Stamp) -> None:
        """Keep ``stamp`` under ``key``, dropping the least recently used until the budget holds (a stamp larger than
        the whole budget is not kept)."""
        if stamp[0].nbytes > self.budget:
            return
        self._kept[key] = stamp
        self.bytes += stamp[0].nbytes
        while self.bytes > self.budget:
            _, dropped = self._kept.popitem(last=False)
            self.bytes -= dropped[0].nbytes


class StampingRenderer:
    """The renderer a figure's draw is given: ``renderer`` for everything, :class:`TextStamps` for ``draw_text``.

    A clipped text is drawn straight (its clip could cut a stamp differently from its glyphs), as is a text whose own
    canvas would be larger than the budget or whose glyphs reach that canvas's edge; each text is drawn the same way
    at every draw.
    """

    def __init__(self, renderer: RendererAgg, stamps: TextStamps) -> None:
        self.renderer = renderer
        self.stamps = stamps

    def __getattr__(self, name: str) -> object:
        return getattr(self.renderer, name)

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):  # noqa: ANN001 - matplotlib's signature
        """``RendererBase.draw_text``: the text's kept pixels composited at its place (drawn and kept first if new)."""
        clipped = gc.get_clip_rectangle() is not None or gc.get_clip_path()[0] is not None
        if clipped or ismath == "TeX" or not (math.isfinite(x) and math.isfinite(y)):
            return self.renderer.draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
        # Agg places glyphs x across and (height - y) down, to 1/64 px; the whole pixels of those only shift them
        down = self.renderer.height - y
        across_px, down_px = math.floor(x), math.floor(down)
        shaping = repr((mtext.get_fontfeatures(), mtext.get_language())) if mtext is not None else ""
        hinting = (matplotlib.rcParams["text.hinting"], matplotlib.rcParams["text.hinting_factor"])
        key = (s, prop, angle, bool(ismath), shaping, hinting, tuple(gc.get_rgb()), gc.get_alpha(),
               gc.get_forced_alpha(), bool(gc.get_antialiased()), self.renderer.dpi, x - across_px, down - down_px)
        if key in self.stamps.straight:
            return self.renderer.draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
        stamp = self.stamps.get(key)
        if stamp is None:
            kept_key = (*key[:1], prop.copy(), *key[2:])  # a copy: the text's own font may change later
            stamp = self._draw_alone(gc, x - across_px, down - down_px, s, prop, angle, ismath, mtext)
            if stamp is None:
                self.stamps.draw_straight(kept_key)
                return self.renderer.draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
            self.stamps.put(kept_key, stamp)
        pixels, column, row = stamp
        if not pixels.size:
            return None
        height = int(self.renderer.height)
        plain = self.renderer.new_gc()  # no clip, alpha 1: the stamp's own alpha is the glyphs' coverage × alpha
        try:
            self.renderer.draw_image(plain, across_px + column, height - (height - down_px + row) - pixels.shape[0],
                                     pixels)
        finally:
            plain.restore()
        return None

    def _draw_alone(self, gc, across: float, down: float, s, prop, angle, ismath, mtext) -> Stamp | None:  # noqa: ANN001
        """``s`` drawn onto a transparent canvas of its own, anchored ``(across, down)`` past a whole pixel; ``None``
        if that canvas would be larger than the budget, or the glyphs reach its edge (the text is then drawn straight).

        The canvas reaches as far as the text's measured box, rotated, on every side of the anchor.
        """
        width, height, descent = self.renderer.get_text_width_height_descent(s, prop, ismath)
        turn = math.radians(angle)
        corners = [(u * math.cos(turn) - v * math.sin(turn), u * math.sin(turn) + v * math.cos(turn))
                   for u in (0.0, width) for v in (-descent, height)]
        half_w = math.ceil(max(abs(c[0]) for c in corners)) + _PAD
        half_h = math.ceil(max(abs(c[1]) for c in corners)) + _PAD
        w, h = 2 * half_w + 2, 2 * half_h + 2
        if 4 * w * h > self.stamps.budget:
            return None
        alone = RendererAgg(w, h, self.renderer.dpi)
        own = alone.new_gc()
        try:
            own.copy_properties(gc)
            own.set_clip_rectangle(None)
            own.set_clip_path(None)
            alone.draw_text(own, half_w + across, half_h - down, s, prop, angle, ismath=ismath, mtext=mtext)
        finally:
            own.restore()
        rgba = np.asarray(alone.buffer_rgba())
        painted = rgba[..., 3] != 0
        rows, columns = np.flatnonzero(painted.any(1)), np.flatnonzero(painted.any(0))
        if not len(rows):
            return np.zeros((0, 0, 4), np.uint8), 0, 0
        r0, r1, c0, c1 = rows[0], rows[-1] + 1, columns[0], columns[-1] + 1
        if r0 == 0 or c0 == 0 or r1 == h or c1 == w:
            return None
        # Agg anchors a text in row int(height) - floor(height - y): here ``half_h``, on the canvas int(height) - down_px
        return rgba[r0:r1, c0:c1][::-1].copy(), int(c0) - half_w, int(r0) - half_h
