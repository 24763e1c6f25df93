"""*Interact*: one function per slider app, each returning an :class:`~pe_helpers.apps._base.App`.

An ``App`` is an ``ipywidgets.VBox`` with ``.controls`` (name -> widget) and ``.figure``
(the matplotlib Figure it draws). Setting ``app.controls[name].value`` redraws
synchronously. One submodule per notebook; all apps are re-exported here, and
:data:`APPS` lists them by name (the benchmark and the tests sweep it).
"""

from ._base import App  # noqa: F401
from .order import *  # noqa: F401,F403  (notebook 01)
from .learned import *  # noqa: F401,F403  (notebook 02)
from .frequencies import *  # noqa: F401,F403  (notebook 03)
from .rotation import *  # noqa: F401,F403  (notebook 04)
from .mixing import *  # noqa: F401,F403  (notebook 05, section 1)
from .extrapolation import *  # noqa: F401,F403  (notebook 05)
from .rope import *  # noqa: F401,F403  (notebook 06)
from . import order, learned, frequencies, rotation, mixing, extrapolation, rope

#: Every app factory, by name, in notebook order.
APPS = {
    name: getattr(module, name)
    for module in (order, learned, frequencies, rotation, mixing, extrapolation, rope)
    for name in module.__all__
}
