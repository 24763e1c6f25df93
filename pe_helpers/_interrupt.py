"""Ctrl-C on the lab's command line before its ``main`` runs: one line and exit status 130, never a traceback.

:mod:`pe_helpers.cli` imports this module first, before the imports that take seconds (torch). When the process is
the command line (``python -m pe_helpers.cli`` or the ``pe-lab`` script), a ``KeyboardInterrupt`` that reaches the
top level is printed as one line; any other exception keeps Python's own report. Importing ``pe_helpers.cli`` from
a notebook or a test changes nothing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .i18n import _

__all__: list[str] = []


def _one_line(kind: type[BaseException], value: BaseException, traceback: object) -> None:
    if issubclass(kind, KeyboardInterrupt):
        print(_("interrupted: nothing written"), file=sys.stderr, flush=True)
        os._exit(130)
    sys.__excepthook__(kind, value, traceback)


def _is_command_line() -> bool:
    """``python -m pe_helpers.cli`` (runpy sets ``argv[0]`` to the module's file) or the ``pe-lab`` script."""
    first = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path()
    return first.name == "pe-lab" or (first.name == "cli.py" and first.parent.name == "pe_helpers")


if _is_command_line():
    sys.excepthook = _one_line
