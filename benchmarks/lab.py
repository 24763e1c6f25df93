"""Speed of the extrapolation lab: steps per second per scheme, the CLI's default set, and notebook 05.

Usage (from the repository root)::

    .venv/bin/python benchmarks/lab.py                    # all three reports
    .venv/bin/python benchmarks/lab.py --only schemes     # steps/s per scheme and task, one after another
    .venv/bin/python benchmarks/lab.py --only cli         # `python -m pe_helpers.cli` default set (budget 60 s)
    .venv/bin/python benchmarks/lab.py --only notebook    # execute notebook 05 top to bottom (budget 20 s)
    .venv/bin/python benchmarks/lab.py --only train-now   # what 05's "train now" button trains
    .venv/bin/python benchmarks/lab.py --optimizer        # the flat-buffer Adam against torch.optim.Adam

Each report is printed beside its budget (the baseline: notebook 05 took 31-36 s and
four schemes 29 s before this version). Numbers depend on the machine and on what else runs on it:
they are a report, not a test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pe_helpers import extrapolation as lab  # noqa: E402

BUDGETS = {"cli": 60.0, "notebook": 20.0}
BASELINES = {"cli": "29 s (four schemes, copy only, v1)", "notebook": "31-36 s (v1)"}


def schemes() -> None:
    cfg = lab.TrainConfig()
    lab.train("none", steps=20, warmup=5)  # warm-up, not counted
    print(f"settings: {cfg}")
    print(f"{'task':>9} {'scheme':>11} {'train s':>8} {'steps/s':>8}")
    for task in lab.TASKS:
        for encoding in lab.TRAINED_ENCODINGS:
            trained = lab.train(encoding, task=task, config=cfg)
            print(f"{task:>9} {encoding:>11} {trained.seconds:8.2f} {trained.steps_per_second:8.0f}")


def _timed(argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg", "PE_PROGRESS": "0"}
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def cli() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        seconds = _timed([sys.executable, "-m", "pe_helpers.cli", "--out", tmp, "--progress", "none"])
    print(f"CLI default set ({','.join(__import__('pe_helpers.cli').cli.DEFAULT_ENCODINGS)}; both tasks; one seed): "
          f"{seconds:.1f} s (budget {BUDGETS['cli']:.0f} s; baseline {BASELINES['cli']})")


def notebook() -> None:
    """Notebook 05 top to bottom with nbclient (kernel start included), each cell under a time limit."""
    import nbformat
    from nbclient import NotebookClient

    os.environ.update(PYTHONPATH=str(ROOT), MPLBACKEND="Agg", PE_PROGRESS="0")  # the kernel inherits these
    path = next((ROOT / "notebooks").glob("05_*.ipynb"))
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    print(f"notebook 05, all cells (nbclient, kernel start included): {seconds:.1f} s "
          f"(budget {BUDGETS['notebook']:.0f} s; baseline {BASELINES['notebook']})")


def train_now() -> None:
    """What 05's "train now" button trains: seed 0 of none, learned, rope on look-back, reference settings."""
    cfg = lab.reference_config()["config"].as_dict()
    cfg.pop("seed")
    results = lab.run_lab(("none", "learned", "rope"), tasks=("lookback",), seeds=(0,), progress=False, **cfg)
    print(f"notebook 05 'train now' (none, learned, rope on look-back, one seed): {results.total_seconds:.1f} s "
          f"(trained live in v1 on every Run All)")


def optimizer() -> None:
    """The flat-buffer Adam against torch.optim.Adam(foreach=True) on the same training."""
    import torch
    from torch.nn import functional as F

    cfg = lab.TrainConfig()
    for name in ("flat", "torch"):
        model = lab.init_model("rope", cfg)
        data = torch.Generator().manual_seed(1)
        opt = lab.training.Adam(model.parameters()) if name == "flat" else \
            torch.optim.Adam(model.parameters(), lr=cfg.lr, foreach=True)
        start = time.perf_counter()
        with lab.training._fixed_threads(1):  # internals: this benchmark times one training loop
            for n in lab.training._training_lengths(cfg, data):
                batch = lab.task_batch("copy", cfg.batch_size, n, n, generator=data)
                loss = F.cross_entropy(model.logits_at(batch.inputs, batch.loss_mask), batch.targets[batch.loss_mask])
                opt.zero_grad()
                loss.backward()
                opt.step(cfg.lr) if name == "flat" else opt.step()
        print(f"Adam {name:>5}: {time.perf_counter() - start:6.2f} s for {cfg.steps} steps (rope, copy)")


PARTS = {"schemes": schemes, "cli": cli, "notebook": notebook, "train-now": train_now}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=tuple(PARTS), action="append")
    parser.add_argument("--optimizer", action="store_true", help="compare the two Adam implementations")
    args = parser.parse_args(argv)
    if args.optimizer:
        optimizer()
        return 0
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    for part in args.only or tuple(PARTS):
        PARTS[part]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
