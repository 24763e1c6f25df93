"""Where the browser tests write their screenshots, also from a read-only checkout.

:func:`screenshot_dir` returns, in this order: ``$PE_SCREENSHOT_DIR`` if set (created if needed);
``build/screenshots/`` in the checkout if it can be written; otherwise a fresh folder under the
system's temporary directory (its path is printed, so a failing run still says where to look).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENV_VAR = "PE_SCREENSHOT_DIR"


def _writable(folder: Path) -> bool:
    """Create ``folder`` if needed and try writing a file in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-test-"):
            pass
    except OSError:
        return False
    return True


def screenshot_dir() -> Path:
    """The folder for screenshots: ``$PE_SCREENSHOT_DIR``, else ``build/screenshots/``, else a temp folder."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        folder = Path(chosen).expanduser()
        if not _writable(folder):
            raise OSError(f"{ENV_VAR}={chosen!r} is not a folder that can be written.")
        return folder
    folder = REPO / "build" / "screenshots"
    if _writable(folder):
        return folder
    folder = Path(tempfile.mkdtemp(prefix="pe-screenshots-"))
    print(f"the checkout is read-only: screenshots go to {folder} (set {ENV_VAR} to choose)", file=sys.stderr)
    return folder
