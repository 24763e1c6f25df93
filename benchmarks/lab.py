"""Training speed of the extrapolation lab: steps per second and total time per encoding.

Usage (from the repository root)::

    .venv/bin/python benchmarks/lab.py                      # default settings (those of notebook 05)
    .venv/bin/python benchmarks/lab.py --steps 300 --encodings sinusoidal,rope

For each trained encoding (``learned-extended`` reuses the ``learned`` model), one after the
other in this process: the training wall time, steps per second, and the evaluation time
(accuracy at every copy length 1..4L). Then the whole lab as notebook 05 runs it
(:func:`pe_helpers.extrapolation.run_lab`, all five encodings, models trained side by side in threads),
and its total. The first training of a process pays one-off warm-up costs (first kernel
calls); a warm-up run of 20 steps is done first and not counted.

Numbers depend on the machine and on what else runs on it: they are a report, not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from pe_helpers import extrapolation as lab  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encodings", type=lab.parse_encodings, default=lab.TRAINED_ENCODINGS)
    parser.add_argument("--steps", type=int, default=lab.TrainConfig().steps)
    parser.add_argument("--no-lab", action="store_true", help="skip the whole-lab (threaded) run")
    args = parser.parse_args(argv)
    cfg = lab.TrainConfig(steps=args.steps)
    lab.train("none", progress="none", steps=20, warmup=5)  # warm-up, not counted

    print(f"settings: {cfg}")
    print(f"{'encoding':>17} {'steps':>6} {'train s':>8} {'steps/s':>8} {'eval s':>7} {'in-dist':>8}")
    serial_total = 0.0
    for encoding in args.encodings:
        trained = lab.train(encoding, config=cfg, progress="none")
        start = time.perf_counter()
        acc = lab.accuracy_by_length(trained)
        eval_s = time.perf_counter() - start
        in_dist = sum(acc[n] for n in range(1, cfg.train_len + 1)) / cfg.train_len
        serial_total += trained.seconds + eval_s
        print(f"{encoding:>17} {cfg.steps:6d} {trained.seconds:8.2f} {trained.steps_per_second:8.0f} "
              f"{eval_s:7.2f} {in_dist:8.3f}")
    print(f"{'one after another':>17} {'':6} {serial_total:8.2f} s in all (training + evaluation)")
    if not args.no_lab:
        start = time.perf_counter()
        results = lab.run_lab(steps=args.steps, progress="none")
        total = time.perf_counter() - start
        print(f"run_lab (all five encodings, threads, as in notebook 05): {total:.2f} s "
              f"({len(lab.TRAINED_ENCODINGS) * cfg.steps / total:.0f} steps/s over all models)")
        print(results.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
