"""N simulated students through the real ``make hub``: what a class costs, measured.

    .venv/bin/python benchmarks/hub_load.py --students 1 4 8      # one run per N, each on a fresh hub

Each run starts the hub as the lecturer does (``python -m pe_helpers.hub serve``, the full course) and then N
students, their starts staggered by ``--stagger`` seconds. Each student, over HTTP and websockets only
(:mod:`pe_helpers.testing.hub`):

1. logs in through the login form and has their server spawned (time: **spawn**);
2. opens notebook 03 as a session (a kernel in their own copy) and runs its code cells, timed one by one (**cell**);
3. moves the heatmap app's ``seq_len`` slider five times with the widget message a browser sends, each time until
   the new image arrives (**app update**);
4. calls a checker on the package's own function (``check_sinusoidal``).

``--threads 1 2`` runs each N with one and with two torch threads per kernel (the hub's default is one).
Reported per N: spawn p50/p95, cell and app-update p50/p95, errors, and at the end, with the students still
connected: the CPU seconds and peak resident memory of each student's server and kernels (``/proc``), and the
hub's and the proxy's memory. The sizing table in TEACHING.md is derived from these figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from pe_helpers.testing import hub as th  # noqa: E402

NOTEBOOK = "03_sinusoidal_frequencies.ipynb"
MOVES = 5
_TICKS = os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (``/proc/*/stat``)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def _usage(pids: list[int]) -> tuple[float, float]:
    """(CPU seconds, peak RSS in MB: VmHWM) summed over ``pids``."""
    cpu = peak = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / _TICKS
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak += int(line.split()[1]) / 1024
        except OSError:
            continue
    return cpu, peak


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Result:
    def __init__(self) -> None:
        self.spawn: list[float] = []
        self.cells: list[float] = []
        self.updates: list[float] = []
        self.errors: list[str] = []
        self.lock = threading.Lock()


def _student(running: th.HubProcess, name: str, password: str, result: Result, done: threading.Event) -> None:
    try:
        s = th.Student(running.url, name, password)
        s.login()
        spawn = s.spawn()

        async def work() -> None:
            kernel = s.kernel(f"pe-notebooks/{NOTEBOOK}")
            await kernel.connect()
            cells, updates = [], []
            for code in th.notebook_code(REPO / "notebooks" / NOTEBOOK):
                t = time.perf_counter()
                await kernel.execute(code)
                cells.append(time.perf_counter() - t)
            await kernel.execute("from pe_helpers.apps import frequency_heatmap_app\nbench_app = frequency_heatmap_app()\n"
                                 "display(bench_app)")
            slider = kernel.find_comm("IntSliderModel", description="seq_len")
            image = kernel.find_comm("ImageModel")  # the app just displayed
            for value in (128, 256, 64, 512, 32)[:MOVES]:
                t = time.perf_counter()
                await kernel.move(slider, value, image)
                updates.append(time.perf_counter() - t)
            await kernel.execute("from pe_helpers import sinusoidal\nfrom pe_helpers.checks import check_sinusoidal\n"
                                 "assert check_sinusoidal(sinusoidal, quiet=True)")
            with result.lock:
                result.spawn.append(spawn)
                result.cells += cells
                result.updates += updates
            done.wait()  # stay connected (server and kernel alive) until the usage is read
            await kernel.close()

        asyncio.run(work())
    except Exception as err:  # noqa: BLE001 - every failure is counted and shown
        with result.lock:
            result.errors.append(f"{name}: {err!r}"[:300])
        done.wait()


def run(n: int, stagger: float, base: Path, threads: int = 1) -> dict:
    running = th.start_hub(base / f"hub-{n}-{threads}", students=n, edition="full",
                           env={"PE_HUB_THREADS": str(threads)})
    try:
        passwords = th.passwords(running.run_dir)
        result, done, workers = Result(), threading.Event(), []
        t0 = time.monotonic()
        for i in range(1, n + 1):
            name = f"student{i:02d}"
            t = threading.Thread(target=_student, args=(running, name, passwords[name], result, done))
            t.start()
            workers.append(t)
            time.sleep(stagger)
        while sum(1 for _ in result.spawn) + len(result.errors) < n or \
                len(result.updates) + MOVES * len(result.errors) < MOVES * n:
            if time.monotonic() - t0 > 1800:
                result.errors.append("timeout")
                break
            time.sleep(1)
        time.sleep(2)  # the last checker call
        wall = time.monotonic() - t0
        pids = _tree(running.process.pid)
        per_student = []
        for i in range(1, n + 1):
            home = str(running.run_dir / "users" / f"student{i:02d}")
            servers = [p for p in pids if "jupyterhub-singleuser" in _cmdline(p)
                       and Path(f"/proc/{p}/cwd").exists() and os.readlink(f"/proc/{p}/cwd").startswith(home)]
            tree = sorted({q for p in servers for q in _tree(p)})
            per_student.append(_usage(tree))
        hub_pids = [p for p in pids if "-m jupyterhub " in _cmdline(p) + " " and "singleuser" not in _cmdline(p)]
        proxy_pids = [p for p in pids if "configurable-http-proxy" in _cmdline(p)]
        done.set()
        for t in workers:
            t.join(120)
        return {"n": n, "wall": wall, "result": result, "per_student": per_student,
                "hub_mb": _usage(hub_pids)[1], "proxy_mb": _usage(proxy_pids)[1]}
    finally:
        running.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--stagger", type=float, default=2.0, help="seconds between two students' starts")
    parser.add_argument("--threads", type=int, nargs="+", default=[1],
                        help="torch threads per kernel (OMP_NUM_THREADS); the hub's default is 1")
    args = parser.parse_args()
    if not (REPO / "deploy" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy").exists():
        print("configurable-http-proxy is missing: make hub installs it", file=sys.stderr)
        return 2
    print(f"machine: {os.cpu_count()} cores; load {os.getloadavg()[0]:.2f} before")
    print(f"{'N':>3} | {'thr':>3} | {'spawn p50/p95 s':>15} | {'cell p50/p95 s':>14} | {'app p50/p95 ms':>15} | "
          f"{'CPU-s/student':>13} | {'MB/student':>10} | {'hub MB':>6} | {'proxy MB':>8} | errors")
    with tempfile.TemporaryDirectory(prefix="pe-hub-load-") as tmp:
        for n, threads in [(n, t) for n in args.students for t in args.threads]:
            r = run(n, args.stagger, Path(tmp), threads)
            res = r["result"]
            cpu = statistics.mean(c for c, _ in r["per_student"]) if r["per_student"] else float("nan")
            mb = statistics.mean(m for _, m in r["per_student"]) if r["per_student"] else float("nan")
            print(f"{n:>3} | {threads:>3} | {_pct(res.spawn, .5):6.1f} / {_pct(res.spawn, .95):6.1f} | "
                  f"{_pct(res.cells, .5):5.2f} / {_pct(res.cells, .95):5.2f} | "
                  f"{1000 * _pct(res.updates, .5):6.0f} / {1000 * _pct(res.updates, .95):6.0f} | "
                  f"{cpu:13.1f} | {mb:10.0f} | {r['hub_mb']:6.0f} | {r['proxy_mb']:8.0f} | {len(res.errors)}",
                  flush=True)
            for e in res.errors[:5]:
                print("   ", e)
    print(f"load {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
