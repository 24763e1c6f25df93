"""How many device pixels an app's image covers in the browser, so the kernel renders exactly enough of them.

A figure is sharp when its PNG has at least one pixel for every device pixel the browser shows it on: the image's
displayed width in CSS px × the page's ``devicePixelRatio`` (2 on a HiDPI laptop, 1 on most projectors; the
browser's zoom changes it, and a reveal.js deck scales its slides on top). ipywidgets tells the kernel none of this,
so :class:`DevicePixels` is a small front-end piece (an `anywidget <https://anywidget.dev>`_ module, which
JupyterLab, Notebook 7 and Voilà load like any widget): each view of it measures the app image beside it,
``ceil(getBoundingClientRect().width × devicePixelRatio)``, and sends that number to the kernel when it changes (a
zoom, a window resize, a slide coming into view), 150 ms after the last change. The kernel keeps the largest number
over the views that are open (one app can be shown in two windows) and the app renders at that width.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable

import anywidget
import traitlets

__all__: list[str] = []

#: The view's code: measure the image in the same app, report its device pixels, clean up when the view goes.
_ESM = """
const QUIET_MS = 150;

function render({ model, el }) {
  el.style.display = "none";
  el.classList.add("pe-device-pixels");
  const view = model.get("_view_prefix") + Math.random().toString(36).slice(2, 10);
  let sent = null, timer = null, media = null, resizes = null, image = null, tries = 0;

  const measure = () => {
    const app = el.closest(".pe-app");
    image = app ? app.querySelector("img") : null;
    if (!image) {  // the app's other views are still being attached: look again, for ten seconds at most
      if (++tries < 40) timer = setTimeout(measure, 250);
      return;
    }
    if (!resizes) { resizes = new ResizeObserver(later); resizes.observe(image); }
    const width = image.getBoundingClientRect().width;
    if (!(width > 0)) return;  // hidden: a slide not shown, a collapsed output
    const px = Math.ceil(width * window.devicePixelRatio);
    if (px !== sent) { sent = px; el.dataset.devicePx = px; model.send({ view, px }); }
  };
  const later = () => { clearTimeout(timer); timer = setTimeout(measure, QUIET_MS); };
  const onRatio = () => { watchRatio(); later(); };
  const watchRatio = () => {
    media = window.matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
    media.addEventListener("change", onRatio, { once: true });
  };
  watchRatio();
  window.addEventListener("resize", later);
  later();
  return () => {
    clearTimeout(timer);
    window.removeEventListener("resize", later);
    if (media) media.removeEventListener("change", onRatio);
    if (resizes) resizes.disconnect();
    try { model.send({ view, px: 0 }); } catch (err) { /* the app was closed first: nobody to tell */ }
  };
}

export default { render };
"""


class DevicePixels(anywidget.AnyWidget):
    """An invisible widget that tells the kernel how many device pixels wide its app's image is shown.

    ``on_width(px)`` is called with the largest width over the open views whenever that changes (``px`` is ``None``
    when no view is open). Messages that are not ``{"view": str, "px": number >= 0}`` are ignored: the front end is
    not trusted to send only those.
    """

    _esm = _ESM
    _view_prefix = traitlets.Unicode().tag(sync=True)

    def __init__(self, on_width: Callable[[int | None], None]) -> None:
        super().__init__(_view_prefix=secrets.token_hex(2) + "-")
        self._on_width = on_width
        self.views: dict[str, int] = {}
        self.on_msg(self._received)

    @property
    def width(self) -> int | None:
        """The largest device-pixel width over the open views, or ``None`` when none has reported."""
        return max(self.views.values(), default=None)

    def _received(self, _widget: object, content: object, _buffers: object) -> None:
        if not isinstance(content, dict):
            return
        view, px = content.get("view"), content.get("px")
        if not isinstance(view, str) or len(view) > 64 or isinstance(px, bool) or not isinstance(px, (int, float)):
            return
        if not math.isfinite(px) or px < 0:
            return
        before = self.width
        if px == 0:
            self.views.pop(view, None)
        elif view in self.views or len(self.views) < 64:
            self.views[view] = int(math.ceil(px))
        if self.width != before:
            self._on_width(self.width)
