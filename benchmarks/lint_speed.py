"""hooklint vs ruff on one tree: cold (no cache), warm (cache), and ruff's flake8-bugbear.

    python benchmarks/lint_speed.py [TREE] [--runs N] [--jobs N] [--baseline OLD_TREE]

TREE defaults to the installed torch package's directory (found without importing
torch).  Reports the median wall time of N runs of each, the ratios to ruff, and
hooklint's peak memory (max RSS of the hooklint process and its workers, from
``resource.getrusage(RUSAGE_CHILDREN)`` of a fresh child per measurement), and the
median CPU time (user + system, workers included, from the same call: on a machine
shared with other work, the steadier figure for comparing two versions).

``--baseline OLD_TREE`` also times another hooklint cold, in the same rounds:
``OLD_TREE`` holds its ``hooklint`` package (with ``fixes`` and ``runtime`` moved
inside it), e.g. an old commit's ``git archive``; it runs as ``python -m hooklint`` (without the
working directory on ``sys.path``) with ``OLD_TREE`` first on ``PYTHONPATH`` (not through this environment's console
script, whose entry point an old tree may not have), and the benchmark stops unless
``hooklint`` imports from ``OLD_TREE`` there.  Every timed command must exit 0
(all run with ``--exit-zero``): a command that fails is never timed as a result.

Goals (issue 2): cold <= 4x ruff (aim 2x), warm <= 0.5x ruff, peak <= 300 MB.
Not collected by pytest (no ``test_`` prefix).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def default_tree() -> Path:
    spec = importlib.util.find_spec("torch")  # finds, does not import
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed; pass a TREE")
    return Path(list(spec.submodule_search_locations)[0])


#: The commands' environment: bytecode is written and read, as an installed package
#: has its ``.pyc`` files (with PYTHONDONTWRITEBYTECODE set, each run would compile
#: hooklint's sources first).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _timed(command: list[str], cwd: Path, env: dict | None = None) -> tuple[float, int, str, float]:
    """Wall seconds, peak RSS in bytes (of the child and its children), stdout, and CPU
    seconds (user + system, of the child and its children)."""
    # A tiny wrapper process measures its own children, so peaks of earlier runs do
    # not leak into this one (RUSAGE_CHILDREN is a high-water mark per process).
    wrapper = (
        "import resource, subprocess, sys, time, json\n"
        "start = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "wall = time.perf_counter() - start\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "peak = usage.ru_maxrss * 1024\n"
        "cpu = usage.ru_utime + usage.ru_stime\n"
        "print(json.dumps([wall, peak, p.returncode, len(p.stdout), cpu]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", wrapper, *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env=env or _ENV,
    )
    wall, peak, returncode, size, cpu = json.loads(out.stdout)
    if returncode != 0:  # every command runs with --exit-zero: anything else is a failure
        raise SystemExit(f"{' '.join(command[:3])} failed with exit code {returncode}")
    return wall, peak, f"exit {returncode}, {size} bytes of output", cpu


#: ``python -m hooklint`` without the working directory on ``sys.path``: run from the
#: tree, whose packages (torch's ``multiprocessing``) would shadow the standard library.
_RUN_HOOKLINT = (
    "import runpy, sys; sys.path.pop(0); runpy.run_module('hooklint', run_name='__main__', alter_sys=True)"
)


def _check_baseline(old_tree: Path, env: dict, cwd: Path) -> None:
    """Stop unless ``hooklint`` imports from ``old_tree`` with ``env`` (else the
    "baseline" would time this environment's hooklint)."""
    found = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.pop(0); import hooklint; print(hooklint.__file__)"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
    )
    where = Path(found.stdout.strip()).resolve() if found.returncode == 0 else None
    if where is None or old_tree not in where.parents:
        sys.exit(
            f"--baseline: hooklint does not import from {old_tree} (it imports {where or found.stderr.strip()})"
        )


class Baseline:
    """Another hooklint (``--baseline OLD_TREE``: a tree holding its ``hooklint``
    package, e.g. an old commit's ``git archive``), run as ``python -m hooklint`` with
    the tree first on ``PYTHONPATH``; it stops the benchmark unless ``hooklint``
    imports from there (run from ``cwd``)."""

    def __init__(self, tree: Path, cwd: Path) -> None:
        self.env = dict(
            _ENV, PYTHONPATH=os.pathsep.join([str(tree), *filter(None, [_ENV.get("PYTHONPATH")])])
        )
        _check_baseline(tree, self.env, cwd)

    def command(self, arguments: list[str]) -> list[str]:
        return [sys.executable, "-c", _RUN_HOOKLINT, *arguments]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tree", nargs="?", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=None, help="hooklint --jobs (default: its own default)")
    parser.add_argument(
        "--baseline", type=Path, metavar="OLD_TREE", help="another hooklint's source tree, timed cold too"
    )
    args = parser.parse_args()
    tree = (args.tree or default_tree()).resolve()
    hooklint = shutil.which("hooklint", path=str(Path(sys.executable).parent)) or shutil.which("hooklint")
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if hooklint is None:
        sys.exit("hooklint is not installed in this environment")
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    cache = Path(tempfile.mkdtemp(prefix="hooklint-bench-cache-"))
    # The tree may be read-only (site-packages) and holds no [tool.hooklint]: run from it,
    # with the cache elsewhere; --exit-zero and --quiet keep the output small.
    base = [hooklint, "check", ".", "--format", "concise", "--quiet", "--exit-zero", *jobs]
    files = sum(1 for _ in tree.rglob("*.py"))
    print(f"tree: {tree} ({files} .py files); {args.runs} runs each; cpus: {os.cpu_count()}")

    results: dict[str, list[tuple[float, int, float]]] = {
        "hooklint cold": [],
        "hooklint warm": [],
        "ruff --select B": [],
        "baseline cold": [],
    }
    old_env = None
    if args.baseline is not None:
        baseline = Baseline(args.baseline.resolve(), tree)
        old_env, old_base = baseline.env, baseline.command(base[1:])
    notes = {}
    _timed(base + ["--cache-dir", str(cache)], tree)  # warm the OS page cache and our cache
    if old_env is not None:
        _timed(old_base + ["--no-cache"], tree, old_env)  # and the baseline's bytecode
    for _ in range(args.runs):
        wall, peak, note, cpu = _timed(base + ["--no-cache"], tree)
        results["hooklint cold"].append((wall, peak, cpu))
        notes["hooklint cold"] = note
        wall, peak, note, cpu = _timed(base + ["--cache-dir", str(cache)], tree)
        results["hooklint warm"].append((wall, peak, cpu))
        notes["hooklint warm"] = note
        if ruff:
            wall, peak, note, cpu = _timed(
                [ruff, "check", "--select", "B", "--no-cache", "--exit-zero", "--quiet", "--isolated", "."],
                tree,
            )
            results["ruff --select B"].append((wall, peak, cpu))
            notes["ruff --select B"] = note
        if old_env is not None:
            wall, peak, note, cpu = _timed(old_base + ["--no-cache"], tree, old_env)
            results["baseline cold"].append((wall, peak, cpu))
            notes["baseline cold"] = note
    shutil.rmtree(cache, ignore_errors=True)

    medians = {name: statistics.median(w for w, _, _ in runs) for name, runs in results.items() if runs}
    cpus = {name: statistics.median(c for _, _, c in runs) for name, runs in results.items() if runs}
    peaks = {name: max(p for _, p, _ in runs) for name, runs in results.items() if runs}
    for name, median in medians.items():
        print(
            f"{name:<18} median {median:7.3f} s   CPU {cpus[name]:7.3f} s   "
            f"peak RSS {peaks[name] / 2**20:7.1f} MB   ({notes[name]})"
        )
    if "ruff --select B" in medians:
        ruff_time = medians["ruff --select B"]
        cold = medians["hooklint cold"] / ruff_time
        warm = medians["hooklint warm"] / ruff_time
        peak_mb = max(peaks["hooklint cold"], peaks["hooklint warm"]) / 2**20
        print(
            f"cold / ruff = {cold:.2f}x (must <= 4, aim <= 2)   warm / ruff = {warm:.2f}x (must <= 0.5)   "
            f"hooklint peak = {peak_mb:.0f} MB (must <= 300)"
        )
        ok = cold <= 4 and warm <= 0.5 and peak_mb <= 300
        print("goals met" if ok else "GOALS NOT MET")
    else:
        print("ruff not installed: no ratios")
    if "baseline cold" in medians:
        print(
            f"cold / baseline cold = {medians['hooklint cold'] / medians['baseline cold']:.2f}x wall, "
            f"{cpus['hooklint cold'] / cpus['baseline cold']:.2f}x CPU"
        )


if __name__ == "__main__":
    main()
