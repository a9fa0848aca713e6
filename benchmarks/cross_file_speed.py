"""What cross-file analysis (hooklint/project) costs: the same runs with and without it.

    python benchmarks/cross_file_speed.py [--runs N] [--hooklint BIN] [--torch DIR] [--transformers DIR] [--devset DIR] [--only WHAT] [--baseline OLD_TREE]

* torch's own sources (default: the installed torch, found without importing it):
  cold (``--no-cache``: summaries computed in memory, per worker) and warm (a
  cache directory filled by an earlier run), each with and without ``--no-cross-file``.
  Goals: cold <= 1.25x, warm unchanged.
* one ``transformers`` modeling file that registers hooks (``models/mamba/modeling_mamba.py``),
  checked alone inside its project, as pre-commit does: without any cache (the
  modules it imports summarised on demand), and with warm summaries (a cache holding
  the summaries but not this file's result), against the same file with
  ``--no-cross-file`` and no cache.  Goals: warm summaries <= 1.2x, no cache <= 2x.
  The release (``transformers==5.24.0``) is fetched once with ``pip download --no-deps``
  into ``~/.cache/hooklint-bench`` unless ``--transformers`` names an unpacked tree.
* peak memory (max RSS of the hooklint process and its workers) over the development
  set's tree (default ``~/.cache/hooklint-devset/src``).  Goal: <= 300 MB.

``--baseline OLD_TREE`` also times another hooklint in the same rounds (its torch
runs cold and warm, its run on the one file without a cache) and gives the ratios to
it: with a ``git archive`` of the commit before cross-file analysis (3279854), the
issue's own goals, which compare with the cold time, warm time and single-file time
of that day (``--no-cross-file`` of this tree is the stricter yardstick: it has every
later speed-up).  It runs as ``python -m hooklint`` with ``OLD_TREE`` first on
``PYTHONPATH`` (``fixes`` and ``runtime`` moved inside its ``hooklint``), and the
benchmark stops unless ``hooklint`` imports from there.

Medians of N runs (default 3), the runs with and without cross-file analysis
alternated so that both see the same load; each ratio is given for wall time and for
CPU time (user + system of hooklint and its workers: steadier on a shared machine).
Not collected by pytest (no ``test_`` prefix).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from lint_speed import Baseline, _timed, default_tree  # noqa: E402

TRANSFORMERS = "transformers==5.24.0"
MODELING = "transformers/models/mamba/modeling_mamba.py"


def _hooklint() -> str:
    found = shutil.which("hooklint", path=str(Path(sys.executable).parent)) or shutil.which("hooklint")
    if found is None:
        sys.exit("hooklint is not installed in this environment")
    return found


def _timed_cpu(command: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of ``command`` and its children."""
    wall, _peak, _output, cpu = _timed(command, cwd, env)
    return wall, cpu


def _paired(
    commands: dict[str, list[str]], cwd: Path, runs: int, before=None, envs: dict | None = None
) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each command, the commands run in turn ``runs``
    times (``envs``: the environment of some of them)."""
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    for _ in range(runs):
        for label, command in commands.items():
            if before is not None:
                before()
            times[label].append(_timed_cpu(command, cwd, (envs or {}).get(label)))
    return {
        label: (statistics.median(w for w, _ in found), statistics.median(c for _, c in found))
        for label, found in times.items()
    }


def _ratio(found: dict[str, tuple[float, float]], label: str, base: str) -> str:
    (wall, cpu), (base_wall, base_cpu) = found[label], found[base]
    return f"{wall:6.2f}s wall ({wall / base_wall:.2f}x), {cpu:6.2f}s CPU ({cpu / base_cpu:.2f}x)"


def _transformers_tree(given: Path | None) -> Path:
    if given is not None:
        return given.resolve()
    root = Path.home() / ".cache" / "hooklint-bench" / TRANSFORMERS.replace("==", "-")
    if (root / MODELING).is_file():
        return root
    download = Path(tempfile.mkdtemp(prefix="hooklint-bench-dl-"))
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d",
                    str(download), TRANSFORMERS], check=True)  # fmt: skip
    (wheel,) = download.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.endswith(".py") and ".." not in member and not member.startswith("/"):
                archive.extract(member, root)
    shutil.rmtree(download, ignore_errors=True)
    return root


def bench_torch(hooklint: str, tree: Path, runs: int, baseline: Baseline | None = None) -> None:
    files = sum(1 for _ in tree.rglob("*.py"))
    print(f"torch: {tree} ({files} .py files)")
    arguments = ["check", ".", "--format", "concise", "--quiet", "--exit-zero"]
    base = [hooklint, *arguments]
    labels = ("alone", "cross", "baseline") if baseline else ("alone", "cross")
    caches = {label: Path(tempfile.mkdtemp(prefix="hooklint-bench-cache-")) for label in labels}
    commands = {"alone": base + ["--no-cross-file"], "cross": base}
    envs = {}
    if baseline is not None:
        commands["baseline"], envs["baseline"] = baseline.command(arguments), baseline.env
    for label, command in commands.items():  # page cache, bytecode, and fills the caches
        _timed(command + ["--cache-dir", str(caches[label])], tree, envs.get(label))
    cold = _paired({label: c + ["--no-cache"] for label, c in commands.items()}, tree, runs, envs=envs)
    warm = _paired(
        {label: c + ["--cache-dir", str(caches[label])] for label, c in commands.items()},
        tree,
        runs,
        envs=envs,
    )
    for cache in caches.values():
        shutil.rmtree(cache, ignore_errors=True)
    print(f"  cold (--no-cache): alone {cold['alone'][0]:6.2f}s wall, {cold['alone'][1]:6.2f}s CPU; "
          f"cross-file {_ratio(cold, 'cross', 'alone')}")  # fmt: skip
    print(f"  warm (cache dir):  alone {warm['alone'][0]:6.2f}s wall, {warm['alone'][1]:6.2f}s CPU; "
          f"cross-file {_ratio(warm, 'cross', 'alone')}")  # fmt: skip
    if baseline is not None:
        print(f"  cold, the baseline {cold['baseline'][0]:6.2f}s wall, {cold['baseline'][1]:6.2f}s CPU; "
              f"cross-file {_ratio(cold, 'cross', 'baseline')}")  # fmt: skip
        print(f"  warm, the baseline {warm['baseline'][0]:6.2f}s wall, {warm['baseline'][1]:6.2f}s CPU; "
              f"cross-file {_ratio(warm, 'cross', 'baseline')}")  # fmt: skip


def bench_one_file(hooklint: str, tree: Path, runs: int, baseline: Baseline | None = None) -> None:
    print(f"one file: {tree / MODELING}")
    arguments = ["check", MODELING, "--format", "concise", "--quiet", "--exit-zero"]
    base = [hooklint, *arguments]
    cache = Path(tempfile.mkdtemp(prefix="hooklint-bench-cache-"))
    _timed(base + ["--cache-dir", str(cache)], tree)  # fills the summaries

    def keep_only_summaries() -> None:
        for entry in cache.iterdir():
            if entry.name != "summaries":
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()

    commands = {
        "alone": base + ["--no-cross-file", "--no-cache"],
        "uncached": base + ["--no-cache"],
        "warm": base + ["--cache-dir", str(cache)],
    }
    envs = {}
    if baseline is not None:
        commands["baseline"], envs["baseline"] = baseline.command(arguments + ["--no-cache"]), baseline.env
        _timed(commands["baseline"], tree, baseline.env)  # its bytecode
    found = _paired(commands, tree, runs, before=keep_only_summaries, envs=envs)
    shutil.rmtree(cache, ignore_errors=True)
    print(f"  alone, no cache {found['alone'][0]:5.2f}s wall, {found['alone'][1]:5.2f}s CPU")
    print(f"  cross-file, no cache:       {_ratio(found, 'uncached', 'alone')}")
    print(f"  cross-file, warm summaries: {_ratio(found, 'warm', 'alone')}")
    if baseline is not None:
        print(f"  the baseline, no cache {found['baseline'][0]:5.2f}s wall, {found['baseline'][1]:5.2f}s CPU")
        print(f"  cross-file, no cache:       {_ratio(found, 'uncached', 'baseline')}")
        print(f"  cross-file, warm summaries: {_ratio(found, 'warm', 'baseline')}")


def bench_memory(hooklint: str, tree: Path) -> None:
    base = [hooklint, "check", ".", "--format", "concise", "--quiet", "--exit-zero", "--no-cache"]
    for label, extra in (("alone", ["--no-cross-file"]), ("cross-file", [])):
        wall, peak, _output, _cpu = _timed(base + extra, tree)
        print(f"devset {tree}: {label:10s} {wall:6.1f}s, peak {peak / 2**20:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--torch", type=Path, default=None)
    parser.add_argument("--transformers", type=Path, default=None, help="an unpacked transformers release")
    parser.add_argument("--devset", type=Path, default=Path.home() / ".cache" / "hooklint-devset" / "src")
    parser.add_argument("--only", choices=("torch", "file", "memory"), default=None)
    parser.add_argument(
        "--hooklint", default=None, help="the hooklint command to time (default: this environment's)"
    )
    parser.add_argument(
        "--baseline", type=Path, metavar="OLD_TREE", help="another hooklint's source tree, timed as well"
    )
    args = parser.parse_args()
    hooklint = args.hooklint or _hooklint()
    baseline = Baseline(args.baseline.resolve(), Path.cwd()) if args.baseline else None
    if args.only in (None, "torch"):
        bench_torch(hooklint, (args.torch or default_tree()).resolve(), args.runs, baseline)
    if args.only in (None, "file"):
        bench_one_file(hooklint, _transformers_tree(args.transformers), args.runs, baseline)
    if args.only in (None, "memory"):
        if args.devset.is_dir():
            bench_memory(hooklint, args.devset.resolve())
        else:
            print(f"devset: {args.devset} is not there (python ../shared/accuracy/score.py fetches it)")


if __name__ == "__main__":
    main()
