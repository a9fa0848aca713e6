"""What cross-file analysis (hooklint/project) costs: the same runs with and without it.

    python benchmarks/cross_file_speed.py [--runs N] [--torch DIR] [--transformers DIR] [--devset DIR] [--only WHAT]

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

Medians of N runs (default 3).  Not collected by pytest (no ``test_`` prefix).
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
from lint_speed import _timed, default_tree  # noqa: E402

TRANSFORMERS = "transformers==5.24.0"
MODELING = "transformers/models/mamba/modeling_mamba.py"


def _hooklint() -> str:
    found = shutil.which("hooklint", path=str(Path(sys.executable).parent)) or shutil.which("hooklint")
    if found is None:
        sys.exit("hooklint is not installed in this environment")
    return found


def _median(command: list[str], cwd: Path, runs: int, before=None) -> tuple[float, int]:
    walls, peaks = [], []
    for _ in range(runs):
        if before is not None:
            before()
        wall, peak, _ = _timed(command, cwd)
        walls.append(wall)
        peaks.append(peak)
    return statistics.median(walls), max(peaks)


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


def bench_torch(hooklint: str, tree: Path, runs: int) -> None:
    files = sum(1 for _ in tree.rglob("*.py"))
    print(f"torch: {tree} ({files} .py files)")
    base = [hooklint, "check", ".", "--format", "concise", "--quiet", "--exit-zero"]
    for label, extra in (("alone", ["--no-cross-file"]), ("cross-file", [])):
        cache = Path(tempfile.mkdtemp(prefix="hooklint-bench-cache-"))
        _timed(base + extra + ["--cache-dir", str(cache)], tree)  # page cache, and fills the cache
        cold, cold_peak = _median(base + extra + ["--no-cache"], tree, runs)
        warm, _ = _median(base + extra + ["--cache-dir", str(cache)], tree, runs)
        print(f"  {label:10s} cold {cold:6.2f}s (peak {cold_peak / 2**20:.0f} MB)   warm {warm:6.2f}s")
        shutil.rmtree(cache, ignore_errors=True)


def bench_one_file(hooklint: str, tree: Path, runs: int) -> None:
    print(f"one file: {tree / MODELING}")
    base = [hooklint, "check", MODELING, "--format", "concise", "--quiet", "--exit-zero"]
    alone, _ = _median(base + ["--no-cross-file", "--no-cache"], tree, runs)
    uncached, _ = _median(base + ["--no-cache"], tree, runs)
    cache = Path(tempfile.mkdtemp(prefix="hooklint-bench-cache-"))
    _timed(base + ["--cache-dir", str(cache)], tree)  # fills the summaries

    def keep_only_summaries() -> None:
        for entry in cache.iterdir():
            if entry.name != "summaries":
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()

    warm, _ = _median(base + ["--cache-dir", str(cache)], tree, runs, before=keep_only_summaries)
    shutil.rmtree(cache, ignore_errors=True)
    print(f"  alone, no cache {alone:5.2f}s   cross-file: no cache {uncached:5.2f}s ({uncached / alone:.2f}x), "
          f"warm summaries {warm:5.2f}s ({warm / alone:.2f}x)")  # fmt: skip


def bench_memory(hooklint: str, tree: Path) -> None:
    base = [hooklint, "check", ".", "--format", "concise", "--quiet", "--exit-zero", "--no-cache"]
    for label, extra in (("alone", ["--no-cross-file"]), ("cross-file", [])):
        wall, peak, _ = _timed(base + extra, tree)
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
    args = parser.parse_args()
    hooklint = _hooklint()
    if args.only in (None, "torch"):
        bench_torch(hooklint, (args.torch or default_tree()).resolve(), args.runs)
    if args.only in (None, "file"):
        bench_one_file(hooklint, _transformers_tree(args.transformers), args.runs)
    if args.only in (None, "memory"):
        if args.devset.is_dir():
            bench_memory(hooklint, args.devset.resolve())
        else:
            print(f"devset: {args.devset} is not there (python ../shared/accuracy/score.py fetches it)")


if __name__ == "__main__":
    main()
