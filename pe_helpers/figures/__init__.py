"""*Draw*: figures built once, each with an ``update`` that edits its artists in place.

Every ``build_*`` returns a :class:`~pe_helpers.figures._base.FigureHandle` (figure, named artists, update).
One submodule per notebook; all public names are re-exported here.
"""

from ._base import *  # noqa: F401,F403
from .order import *  # noqa: F401,F403  (notebook 01)
from .learned import *  # noqa: F401,F403  (notebook 02)
from .frequencies import *  # noqa: F401,F403  (notebook 03)
from .rotation import *  # noqa: F401,F403  (notebook 04)
from .mixing import *  # noqa: F401,F403  (notebook 05, section 1)
from .extrapolation import *  # noqa: F401,F403  (notebook 05)
from .rope import *  # noqa: F401,F403  (notebook 06)
