"""The lab's command line refuses every bad input before training, naming the flag; Ctrl-C gives one line.

Each case runs ``main(argv)`` with ``run_lab`` replaced by a function that fails the test, so a refusal that came
only after training would show; the Ctrl-C cases run the real command in a child process and interrupt it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pe_helpers import cli

SMALL = ["--encodings", "none", "--tasks", "copy", "--train-len", "2", "--test-len", "4", "--steps", "2",
         "--warmup", "1", "--d-model", "8", "--heads", "2", "--progress", "none"]
ROOT = Path(__file__).resolve().parent.parent


def _refused(argv: list[str], capsys, monkeypatch, *, mock: bool = True) -> str:
    if mock:
        monkeypatch.setattr(cli, "run_lab", lambda *a, **k: pytest.fail("trained before refusing the arguments"))
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("same", ["lab.png", "sub/../lab.png", "lab.json"])
def test_the_same_path_for_json_and_figure_is_refused(tmp_path, capsys, monkeypatch, same) -> None:
    (tmp_path / "sub").mkdir()
    err = _refused([*SMALL, "--save-json", str(tmp_path / same.split("/")[-1]), "--out", str(tmp_path / same)],
                   capsys, monkeypatch)
    assert "--out" in err and "--save-json" in err and "same file" in err
    assert list(tmp_path.iterdir()) == [tmp_path / "sub"]


def test_a_json_path_that_the_figure_directory_would_hold_is_refused(tmp_path, capsys, monkeypatch) -> None:
    err = _refused([*SMALL, "--save-json", str(tmp_path / "out"), "--out", str(tmp_path / "out")], capsys, monkeypatch)
    assert "--out" in err and "--save-json" in err and "inside the other" in err


def test_a_directory_out_whose_figure_is_the_json_is_refused(tmp_path, capsys, monkeypatch) -> None:
    err = _refused([*SMALL, "--save-json", str(tmp_path / "extrapolation.png"), "--out", str(tmp_path)],
                   capsys, monkeypatch)
    assert "same file" in err


@pytest.mark.parametrize("seeds", [str(2**63), str(2**64), "0," + str(2**70), str(2**32)])
def test_a_seed_beyond_the_range_names_the_flag(seeds, capsys, monkeypatch) -> None:
    err = _refused([*SMALL, "--seeds", seeds], capsys, monkeypatch)
    assert "--seeds" in err and "Overflow" not in err and "4294967295" in err


@pytest.mark.parametrize("flag, value", [("--vocab", "1000000000"), ("--d-model", "1000000"), ("--mlp-ratio", "100000000"),
                                         ("--batch-size", "100000000"), ("--layers", "100000000"),
                                         ("--train-len", "10000000"), ("--test-len", "10000000")])
def test_a_huge_size_is_refused_by_the_budget_naming_its_flag(flag, value, capsys, monkeypatch) -> None:
    start = time.perf_counter()  # --test-len is checked by run_lab itself, before it builds any model
    err = _refused([*SMALL, flag, value], capsys, monkeypatch, mock=flag != "--test-len")
    assert flag in err and "memory budget" in err
    assert time.perf_counter() - start < 5, "refused at once, before allocating"


@pytest.mark.parametrize("flag", ["--out", "--save-json"])
@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_path_is_refused(flag, value, capsys, monkeypatch) -> None:
    err = _refused([*SMALL, flag, value], capsys, monkeypatch)
    assert flag in err and "empty" in err


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only directories")
@pytest.mark.parametrize("flag", ["--out", "--save-json"])
def test_a_writable_file_in_a_read_only_directory_is_refused(tmp_path, capsys, monkeypatch, flag) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    target = locked / ("lab.png" if flag == "--out" else "lab.json")
    target.write_text("old")
    target.chmod(0o600)
    locked.chmod(0o500)
    try:
        err = _refused([*SMALL, flag, str(target)], capsys, monkeypatch)
    finally:
        locked.chmod(0o700)
    assert flag in err and "cannot create files in" in err
    assert target.read_text() == "old"


@pytest.mark.parametrize("flag", ["--out", "--save-json"])
def test_a_directory_without_write_permission_is_refused_even_for_a_writable_file(tmp_path, capsys, monkeypatch,
                                                                                    flag) -> None:
    """The same check as above, for a user (root) whom the file system lets write anywhere: ``os.access`` says no."""
    import pe_helpers._validate as validate

    locked = tmp_path / "locked"
    locked.mkdir()
    target = locked / ("lab.png" if flag == "--out" else "lab.json")
    target.write_text("old")
    real_access = os.access
    monkeypatch.setattr(validate.os, "access", lambda p, mode: False if Path(p) == locked else real_access(p, mode))
    err = _refused([*SMALL, flag, str(target)], capsys, monkeypatch)
    assert flag in err and "cannot create files in" in err and target.read_text() == "old"


@pytest.mark.parametrize("argv, flag", [(["--length-weight", "1e308"], "--length-weight"), (["--workers", "100000"], "--workers"),
                                        (["--threads", "100000"], "--threads"), (["--steps", "10000000000000"], "--steps")])
def test_other_out_of_range_settings_name_their_flag(argv, flag, capsys, monkeypatch) -> None:
    err = _refused([*SMALL, *argv], capsys, monkeypatch, mock=flag != "--workers")  # --workers is run_lab's own check
    assert flag in err


def test_heads_that_do_not_split_the_width_name_both_flags(capsys, monkeypatch) -> None:
    err = _refused([*SMALL, "--d-model", "30", "--heads", "4"], capsys, monkeypatch)
    assert "--d-model" in err and "--heads" in err


def test_ctrl_c_after_the_json_says_what_was_written(tmp_path, capsys, monkeypatch) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("pe_helpers.figures.extrapolation.accuracy_figure", interrupted)
    code = cli.main([*SMALL, "--save-json", str(tmp_path / "lab.json"), "--out", str(tmp_path / "lab.png")])
    err = capsys.readouterr().err
    assert code == 130 and "already written" in err and "lab.json" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "lab.png").exists()


@pytest.mark.parametrize("delay", [0.3, 1.5, 3.0])
def test_ctrl_c_at_any_time_prints_one_line_and_exits_130(tmp_path, delay) -> None:
    """Interrupted while Python starts, while torch is imported, and while training: never a traceback."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    argv = [sys.executable, "-m", "pe_helpers.cli", *SMALL, "--steps", "100000", "--out", str(tmp_path / "x.png")]
    child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    time.sleep(delay)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    if delay < 0.5 and "interrupted" not in err:  # the signal came while Python itself started, before any of our code
        pytest.skip(f"interrupted during the interpreter's start-up (exit {child.returncode})")
    assert "Traceback" not in err, err
    assert child.returncode == 130, (child.returncode, err)
    assert len(err.strip().splitlines()) == 1 and "interrupted" in err, err
    assert not list(tmp_path.iterdir()), "nothing written"
