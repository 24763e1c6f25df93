"""tests/browser/_paths.screenshot_dir: build/screenshots, or a temp folder in a read-only checkout, or $PE_SCREENSHOT_DIR."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location("_paths", Path(__file__).parent / "browser" / "_paths.py")
paths = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(paths)


def test_env_var_wins(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PE_SCREENSHOT_DIR", str(tmp_path / "shots"))
    assert paths.screenshot_dir() == tmp_path / "shots" and (tmp_path / "shots").is_dir()


def test_build_folder_when_writable(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("PE_SCREENSHOT_DIR", raising=False)
    monkeypatch.setattr(paths, "REPO", tmp_path)
    assert paths.screenshot_dir() == tmp_path / "build" / "screenshots"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to a read-only folder")
def test_temp_folder_when_read_only(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("PE_SCREENSHOT_DIR", raising=False)
    repo = tmp_path / "checkout"
    repo.mkdir()
    repo.chmod(0o555)
    monkeypatch.setattr(paths, "REPO", repo)
    try:
        folder = paths.screenshot_dir()
        assert not folder.is_relative_to(repo) and folder.is_dir()
    finally:
        repo.chmod(0o755)


def test_temp_folder_when_build_is_not_a_folder(tmp_path, monkeypatch) -> None:
    """Works as root too: build/ is a file, so build/screenshots cannot be made."""
    monkeypatch.delenv("PE_SCREENSHOT_DIR", raising=False)
    (tmp_path / "build").write_text("not a folder")
    monkeypatch.setattr(paths, "REPO", tmp_path)
    folder = paths.screenshot_dir()
    assert not folder.is_relative_to(tmp_path) and folder.is_dir()
