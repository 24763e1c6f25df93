"""Jupyter settings this collection installs into its environment: an arrow key on a focused slider moves the slider,
and no "official Jupyter news?" pop-up covers the figures.

Why (measured in Chromium): in **Notebook 7** an arrow key pressed on a focused slider moved the selection
between cells instead of the slider. Notebook 7 starts its Lumino application without ``bubblingKeydown``, so its
shortcut handler sees every key press in the *capture* phase, before the page's elements; JupyterLab starts with
``bubblingKeydown: true`` and the slider takes the key first. The shortcuts that take it are the notebook's command-mode
arrow keys (``notebook:move-cursor-up`` on ``ArrowUp``, …), whose selector
``.jp-Notebook.jp-mod-commandMode:not(.jp-mod-readWrite) :focus`` also matches a slider handle focused inside a cell's
output. Lumino's own escape hatch, a ``data-lm-suppress-shortcuts`` attribute, only helps on the focused element itself
or between it and the element the selector matches: here both are the slider handle, which ipywidgets draws, so a
Python package cannot set it.

What: every such shortcut of the installed JupyterLab (read from its ``@jupyterlab/notebook-extension`` schema, so a
newer JupyterLab's bindings are followed) is disabled and added again with ``:not(.jupyter-widgets *)`` at the end of
its selector: the arrow keys still move between cells everywhere except inside a widget. The result is written to
``<JupyterLab app dir>/settings/overrides.d/pe-notebooks.json``, which JupyterLab and Notebook 7 read as default
settings (jupyterlab_server's ``overrides.d``); a user's own shortcut settings still win.

Second, :data:`QUIET_NOTIFICATIONS`: JupyterLab 4 asks on first start whether to fetch Jupyter news, in a toast over
the notebook's outputs (seen on the figures of ``make lab`` in class); the answer "no", and no update check, are set
as defaults, so nothing is fetched off the machine either.

Installed by ``make lab`` / ``make test`` (tools/bootstrap-venv.sh), Binder (``postBuild``), and by conda users with
``python -m pe_helpers.jupyter_settings`` (README). Why not a JupyterLab extension: it would need a JavaScript build
and a front-end package for a change that settings can make. Why not setuptools ``data-files``: an editable install
(``pip install -e .``, what every set-up here does) does not copy them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .i18n import _

__all__ = ["FILE_NAME", "WIDGET_SCOPE", "QUIET_NOTIFICATIONS", "widget_safe_shortcuts", "settings_dir", "install"]

#: The file written into ``overrides.d``.
FILE_NAME = "pe-notebooks.json"
#: Appended to a shortcut's selector: not when the focused element is inside a Jupyter widget.
WIDGET_SCOPE = ":not(.jupyter-widgets *)"
_ARROWS = {"ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"}
_PLUGIN = "@jupyterlab/shortcuts-extension:shortcuts"
#: The notification settings written beside the shortcuts: no news, no update check, so no pop-up asks.
QUIET_NOTIFICATIONS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}


def settings_dir() -> Path:
    """``<app dir>/settings``: where JupyterLab and Notebook 7 read ``overrides.d`` (``jupyterlab.commands.get_app_dir``,
    ``$JUPYTERLAB_DIR`` or ``<sys.prefix>/share/jupyter/lab``)."""
    try:
        from jupyterlab.commands import get_app_dir
    except ImportError:  # pragma: no cover - jupyterlab is a dependency
        return Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings"
    return Path(get_app_dir()) / "settings"


def widget_safe_shortcuts(schema: dict) -> list[dict]:
    """For each plain arrow-key shortcut of the notebook ``schema`` whose selector ends with ``:focus``: the shortcut
    disabled, and the same shortcut with :data:`WIDGET_SCOPE` appended to its selector."""
    found = []
    for shortcut in schema.get("jupyter.lab.shortcuts", []):
        keys, selector = shortcut.get("keys", []), shortcut.get("selector", "")
        if len(keys) == 1 and keys[0] in _ARROWS and selector.endswith(":focus"):
            base = {"command": shortcut["command"], "keys": list(keys), "selector": selector}
            found += [{**base, "disabled": True}, {**base, "selector": selector + WIDGET_SCOPE}]
    return found


def install(target: Path | None = None) -> Path:
    """Write the overrides (see the module docstring) into ``target`` (default :func:`settings_dir`) ``/overrides.d``.

    Raises ``FileNotFoundError`` naming the schema when the installed JupyterLab has no notebook-extension schema.
    """
    target = settings_dir() if target is None else Path(target)
    schema_path = target.parent / "schemas" / "@jupyterlab" / "notebook-extension" / "tracker.json"
    if not schema_path.is_file():
        raise FileNotFoundError(_("no JupyterLab notebook schema at {path}: is jupyterlab installed in this "
                                  "environment?").format(path=schema_path))
    shortcuts = widget_safe_shortcuts(json.loads(schema_path.read_text(encoding="utf-8")))
    path = target / "overrides.d" / FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({_PLUGIN: {"shortcuts": shortcuts}, **QUIET_NOTIFICATIONS}, indent=1) + "\n",
                    encoding="utf-8")
    return path


if __name__ == "__main__":
    written = install()
    print(f"pe-notebooks: arrow keys on a focused slider go to the slider in Notebook 7 ({written})")
