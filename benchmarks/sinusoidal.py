"""Benchmark: pe_helpers.sinusoidal against the seed's reference implementation, in one run.

Run:  .venv/bin/python benchmarks/sinusoidal.py [--repeats 7]

For each shape, the median wall time of each implementation over the repeats, the speed
ratio (reference time / ours: >= 1.0 means no slower), and for both the maximum absolute
error against a float64 transcription of the formula at every position below 2**20.
Goal: ratio >= 1.0 with our error <= 1e-6.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from pe_helpers import sinusoidal

SHAPES = ((8192, 1024), (65536, 512))
PRECISION_LEN, PRECISION_DIM = 2**20, 64


def seed_reference(seq_len: int, dim: int, base: float = 10000.0) -> torch.Tensor:
    """The seed's code, verbatim (section 三.3): float32 angles."""
    position = torch.arange(seq_len).float().unsqueeze(1)  # [seq_len, 1]
    index = torch.arange(0, dim, 2).float()  # [dim / 2]
    inv_freq = base ** (-index / dim)  # [dim / 2]

    angles = position * inv_freq  # [seq_len, dim / 2]
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe


def float64_truth(seq_len: int, dim: int, base: float = 10000.0) -> torch.Tensor:
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    omega = torch.tensor(base, dtype=torch.float64) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    pe = torch.empty(seq_len, dim, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * omega), torch.cos(pos * omega)
    return pe


def paired_medians(a, b, *args, repeats: int) -> tuple[float, float]:
    """Median seconds of ``a(*args)`` and ``b(*args)``, timed alternately so machine load hits both alike."""
    a(*args), b(*args)  # warm-up
    times_a, times_b = [], []
    for _ in range(repeats):
        for fn, times in ((a, times_a), (b, times_b)):
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
    return statistics.median(times_a), statistics.median(times_b)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads\n")
    print(f"{'shape':>14} | {'seed ref (ms)':>13} | {'pe_helpers (ms)':>15} | {'ratio ref/ours':>14}")
    print("-" * 66)
    ratios = []
    for n, d in SHAPES:
        ref, ours = paired_medians(seed_reference, sinusoidal, n, d, repeats=args.repeats)
        ratios.append(ref / ours)
        print(f"{f'({n}, {d})':>14} | {ref * 1e3:13.1f} | {ours * 1e3:15.1f} | {ref / ours:14.2f}")
    truth = float64_truth(PRECISION_LEN, PRECISION_DIM)
    err_ours = (sinusoidal(PRECISION_LEN, PRECISION_DIM).double() - truth).abs().max().item()
    err_ref = (seed_reference(PRECISION_LEN, PRECISION_DIM).double() - truth).abs().max().item()
    print(f"\nmax |error| vs float64, all positions < 2**20 (d={PRECISION_DIM}):")
    print(f"  seed reference: {err_ref:.2e}\n  pe_helpers:     {err_ours:.2e}  (bound 1e-6)")
    ok = min(ratios) >= 1.0 and err_ours <= 1e-6
    print(f"\ngoal (ratio >= 1.0 on both shapes, error <= 1e-6): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
