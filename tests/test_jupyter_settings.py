"""pe_helpers.jupyter_settings: arrow keys on a focused slider reach the slider in Notebook 7.

The browser half (Notebook 7 moves an app with the keyboard, and arrow keys still move between cells) is
tests/browser/test_jupyterlab.py::test_notebook7_runs_a_notebook_and_the_keyboard_moves_its_apps.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pe_helpers import jupyter_settings as js

ARROWS = {"ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"}


def _installed_schema() -> dict:
    path = js.settings_dir().parent / "schemas" / "@jupyterlab" / "notebook-extension" / "tracker.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_arrow_shortcut_of_the_installed_notebook_is_kept_out_of_widgets() -> None:
    schema = _installed_schema()
    defaults = [s for s in schema["jupyter.lab.shortcuts"] if len(s["keys"]) == 1 and s["keys"][0] in ARROWS]
    assert {s["keys"][0] for s in defaults} == ARROWS, "JupyterLab's notebook binds the four arrow keys"
    found = js.widget_safe_shortcuts(schema)
    disabled = [s for s in found if s.get("disabled")]
    added = [s for s in found if not s.get("disabled")]
    for default in defaults:  # each default is disabled exactly as declared, and comes back scoped
        plain = {k: default[k] for k in ("command", "keys", "selector")}
        assert {**plain, "disabled": True} in disabled, plain
        assert {**plain, "selector": plain["selector"] + js.WIDGET_SCOPE} in added, plain
    assert len(found) == 2 * len(defaults)


def test_other_shortcuts_are_left_alone() -> None:
    schema = {"jupyter.lab.shortcuts": [
        {"command": "a", "keys": ["Shift ArrowDown"], "selector": ".jp-Notebook :focus"},  # a chord, not a plain arrow
        {"command": "b", "keys": ["ArrowDown"], "selector": ".jp-Notebook.jp-mod-editMode"},  # not about focus
        {"command": "c", "keys": ["J"], "selector": ".jp-Notebook :focus"},
    ]}
    assert js.widget_safe_shortcuts(schema) == []


def test_install_writes_the_overrides_file(tmp_path: Path) -> None:
    settings = tmp_path / "lab" / "settings"
    schema = tmp_path / "lab" / "schemas" / "@jupyterlab" / "notebook-extension" / "tracker.json"
    schema.parent.mkdir(parents=True)
    schema.write_text(json.dumps(_installed_schema()), encoding="utf-8")
    path = js.install(settings)
    assert path == settings / "overrides.d" / js.FILE_NAME
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written == {"@jupyterlab/shortcuts-extension:shortcuts": {"shortcuts": js.widget_safe_shortcuts(_installed_schema())},
                       "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}


def test_install_without_jupyterlab_names_the_missing_schema(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no JupyterLab notebook schema at .*tracker.json"):
        js.install(tmp_path / "settings")


def test_this_environment_has_the_settings_installed() -> None:
    """`make` installs them (tools/bootstrap-venv.sh); JupyterLab and Notebook 7 read them from here."""
    path = js.settings_dir() / "overrides.d" / js.FILE_NAME
    assert path.is_file(), f"{path} is missing: run python -m pe_helpers.jupyter_settings"
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["@jupyterlab/shortcuts-extension:shortcuts"]["shortcuts"] == js.widget_safe_shortcuts(_installed_schema())
    # no "official Jupyter news?" pop-up over the figures: JupyterLab's own schema accepts these values
    schema = json.loads((path.parents[2] / "schemas" / "@jupyterlab" / "apputils-extension" / "notification.json").read_text())
    for key, value in written["@jupyterlab/apputils-extension:notification"].items():
        allowed = [choice["const"] for choice in schema["properties"][key].get("oneOf", [])] or [value]
        assert value in allowed, (key, value, allowed)
