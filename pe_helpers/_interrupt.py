"""Ctrl-C on the lab's command line before its ``main`` runs: one line and exit status 130, never a traceback.

:mod:`pe_helpers.cli` imports this module first, before the imports that take seconds (torch). When the process is
the command line (``python -m pe_helpers.cli`` or the ``pe-lab`` script), a ``KeyboardInterrupt`` that reaches the
top level is printed as one line; any other exception keeps Python's own report. Importing ``pe_helpers.cli`` from
a notebook or a test changes nothing.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from .i18n import _

__all__: list[str] = []

#: Seconds after Ctrl-C by which the process is gone, whatever the interrupt broke (an import it cut in half).
GRACE_SECONDS = 10.0
_interrupted = False


def _say_and_exit() -> None:
    print(_("interrupted: nothing written"), file=sys.stderr, flush=True)
    os._exit(130)


def _on_sigint(signum: int, frame: object) -> None:
    """Ctrl-C: remember it, arm the grace timer, and raise KeyboardInterrupt as Python would."""
    global _interrupted
    _interrupted = True
    signal.signal(signal.SIGALRM, lambda *_: _say_and_exit())
    signal.setitimer(signal.ITIMER_REAL, GRACE_SECONDS)
    raise KeyboardInterrupt


def _defer(signum: int, frame: object) -> None:
    """Ctrl-C while the command line's imports run: remember it (an import cut in half can crash torch's loader)."""
    global _interrupted
    _interrupted = True


def imports_done() -> None:
    """Called once the command line's imports are done: a deferred Ctrl-C ends the process now, with its one line;
    from here on Ctrl-C raises KeyboardInterrupt, which the command line handles."""
    if not _is_command_line():
        return
    if _interrupted:
        _say_and_exit()
    signal.signal(signal.SIGINT, _on_sigint)


def disarm() -> None:
    """The command line handled the interrupt itself (and says so): no grace timer."""
    signal.setitimer(signal.ITIMER_REAL, 0)


def _one_line(kind: type[BaseException], value: BaseException, traceback: object) -> None:
    # An interrupt inside an import can surface as another error (a RuntimeError from __set_name__, a ValueError
    # from a half-initialised module): after Ctrl-C, every error that reaches the top level is the interrupt.
    if issubclass(kind, KeyboardInterrupt) or _interrupted:
        _say_and_exit()
    sys.__excepthook__(kind, value, traceback)


def _is_command_line() -> bool:
    """``python -m pe_helpers.cli`` (runpy sets ``argv[0]`` to the module's file) or the ``pe-lab`` script."""
    first = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    return first.name == "pe-lab" or (first.name == "cli.py" and first.parent.name == "pe_helpers")


if _is_command_line():
    sys.excepthook = _one_line
    signal.signal(signal.SIGINT, _defer)
