"""Exercise checkers, called inline by the student: ``check_sinusoidal(my_fn)``.

Each checker runs the student's function on several inputs (in a child process, under a time
limit), compares it with the reference, and explains the mismatch in one line of plain words,
naming common mistakes. It returns a truthy :class:`CheckResult` on success and never shows the
student a raw stack trace. The shared loop is :func:`pe_helpers.checks._base.run_exercise`.
"""

from ._base import CheckResult, expect_error  # noqa: F401
from .frequencies import *  # noqa: F401,F403  (notebook 03)
from .rotation import *  # noqa: F401,F403  (notebook 04)
from .order import *  # noqa: F401,F403  (notebook 01)
from .learned import *  # noqa: F401,F403  (notebook 02)
from .rope import *  # noqa: F401,F403  (notebook 06)
from .mixing import *  # noqa: F401,F403  (notebook 05, section 1)
from .extrapolation import *  # noqa: F401,F403  (notebook 05)
