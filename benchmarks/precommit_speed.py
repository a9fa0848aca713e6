"""What a pre-commit run of ``hooklint check`` costs, against what it must stay under
(issue 15, item 3) and against ruff on the same files.

    python benchmarks/precommit_speed.py [--runs N] [--files N] [--file PATH]

Two figures, each the median over N runs of a fresh process (CPU time: user + system
of the process and its children, from ``os.wait4``; wall time alongside):

1. *Files without any hook token* (``--files`` of them, default 20: the first such
   files of the installed torch package, sorted by path, copied to a temporary
   directory): ``hooklint check --no-cache FILES`` against a bare ``python -c pass``
   of the same interpreter.  Goal: <= 2x.  Shown with it, the floor that any exact
   run has to pay: the same interpreter reading the files and having CPython's parser
   accept each one (``_symtable.symtable``, cheaper than a compile; HL000 must be
   reported for every named file, as ruff does), and nothing else.
2. *One 5,000-line file with hooks*: ``hooklint check --no-cache FILE`` against
   ``python -c "import libcst; libcst.parse_module(text)"`` (libcst's own import plus
   a parse of that file).  Goal: <= 1.25x.  Measured on two files: a realistic one
   (``--file``; default: the torch source with a registration call nearest 5,000
   lines) and the worst case, ``benchmarks/big_hook_file.py``'s text (hooks in every
   class, helpers followed from each: most of the file is analysed).

To time another hooklint, put its tree first: ``PYTHONPATH=OLD_TREE python
benchmarks/precommit_speed.py`` (the ``hooklint`` script imports from it; a tree from
before the console script's pre-commit path, ``hooklint.entry``, runs its CLI).
The commands of one figure run alternately, so that all of them see the same load.
The files get no configuration (the temporary directory holds no ``pyproject.toml``);
ruff runs with ``--isolated`` and its default rules.  Not collected by pytest.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from big_hook_file import generate  # noqa: E402

#: Text that every rule token contains one of (``hooklint.rules.base.ANY_RULE_TOKENS``),
#: written out so that this script runs against any hooklint (``PYTHONPATH=OLD_TREE``).
_ANY_TOKEN = re.compile(r"register_|always_call|saved_tensors_hooks|save_on_cpu|parametrize|\.forward\(")
_REGISTRATION = re.compile(r"\.register_\w*hook\(")


def _torch_tree() -> Path:
    spec = importlib.util.find_spec("torch")  # finds, does not import
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed: pass --file, and files for figure 1 cannot be chosen")
    return Path(list(spec.submodule_search_locations)[0])


def _tokenless_files(tree: Path, count: int) -> list[Path]:
    found = []
    for path in sorted(tree.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if text.strip() and not _ANY_TOKEN.search(text):
            found.append(path)
            if len(found) == count:
                break
    return found


def _realistic_file(tree: Path) -> Path:
    best = None
    for path in tree.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if _REGISTRATION.search(text):
            distance = abs(text.count("\n") - 5000)
            if best is None or distance < best[0] or (distance == best[0] and str(path) < str(best[1])):
                best = (distance, path)
    if best is None:
        sys.exit("no torch source registers a hook: pass --file")
    return best[1]


#: Figure 1's floor: read each file and have CPython's parser accept it (a symbol table
#: needs the parse and no code generation), as the cheapest exact HL000 check does.
_FLOOR = "import sys, _symtable\nfor name in sys.argv[1:]:\n    _symtable.symtable(open(name, 'rb').read(), name, 'exec')"


#: The commands' environment: bytecode is written and read (an installed package has
#: its ``.pyc`` files; a run that compiles hooklint's sources each time measures that).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cost(command: list[str], cwd: Path) -> tuple[float, float]:
    """CPU seconds (user + system, the process and what it waited for) and wall seconds."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_ENV)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    errors = process.stderr.read().decode(errors="replace") if process.stderr else ""
    process.stderr.close() if process.stderr else None
    if process.returncode not in (0, 1):
        sys.exit(f"{' '.join(command[:3])} ... failed (exit {process.returncode}): {errors.strip()[-300:]}")
    return usage.ru_utime + usage.ru_stime, wall


def _measure(commands: dict[str, list[str]], cwd: Path, runs: int) -> dict[str, tuple[float, float]]:
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for command in commands.values():  # one unmeasured run each: the OS's caches
        _cost(command, cwd)
    for _ in range(runs):
        for name, command in commands.items():
            samples[name].append(_cost(command, cwd))
    return {
        name: (statistics.median(c for c, _ in values), statistics.median(w for _, w in values))
        for name, values in samples.items()
    }


def _print(title: str, medians: dict[str, tuple[float, float]]) -> None:
    print(title)
    for name, (cpu, wall) in medians.items():
        print(f"  {name:<34} CPU median {cpu * 1000:7.1f} ms   wall median {wall * 1000:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--files", type=int, default=20, help="files without a hook token, for figure 1")
    parser.add_argument("--file", type=Path, help="the realistic file with hooks, for figure 2")
    args = parser.parse_args()
    python = sys.executable
    hooklint = shutil.which("hooklint", path=str(Path(python).parent))
    hooklint_command = [hooklint] if hooklint else [python, "-m", "hooklint"]
    package = importlib.util.find_spec("hooklint")
    if package is not None and package.origin and not (Path(package.origin).parent / "entry.py").exists():
        hooklint_command = [
            python,
            "-c",
            "from hooklint.cli import main; main()",
        ]  # an older tree first on PYTHONPATH: its CLI
    ruff = shutil.which("ruff", path=str(Path(python).parent)) or shutil.which("ruff")
    check = [*hooklint_command, "check", "--no-cache", "--quiet", "--exit-zero"]
    ruff_check = [ruff, "check", "--no-cache", "--isolated", "--quiet", "--exit-zero"] if ruff else None

    work = Path(tempfile.mkdtemp(prefix="hooklint-precommit-"))
    try:
        tree = _torch_tree() if args.file is None or args.files else None
        plain = []
        for index, source in enumerate(_tokenless_files(tree, args.files) if tree else []):
            target = work / "plain" / f"{index:02d}_{source.name}"
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(source, target)
            plain.append(str(target.relative_to(work)))
        lines = sum((work / p).read_text(encoding="utf-8", errors="replace").count("\n") for p in plain)
        print(f"{python}; {args.runs} runs of each command, alternately; CPU = user + system")
        verdicts = []
        if plain:
            commands = {
                "python -c pass": [python, "-c", "pass"],
                "python: read + parse (the floor)": [python, "-c", _FLOOR, *plain],
                "hooklint check": check + plain,
            }
            if ruff_check:
                commands["ruff check"] = ruff_check + plain
            medians = _measure(commands, work, args.runs)
            _print(f"\n1. {len(plain)} files without any hook token ({lines} lines, from {tree}):", medians)
            ratio = medians["hooklint check"][0] / medians["python -c pass"][0]
            verdicts.append(ratio <= 2)
            floor = medians["python: read + parse (the floor)"][0] / medians["python -c pass"][0]
            print(f"  floor / python -c pass = {floor:.2f}x")
            print(f"  hooklint / python -c pass = {ratio:.2f}x (goal <= 2)", end="")
            print(
                f"   hooklint / ruff = {medians['hooklint check'][0] / medians['ruff check'][0]:.2f}x"
                if ruff_check
                else ""
            )

        realistic = args.file or _realistic_file(tree)  # type: ignore[arg-type]
        shutil.copyfile(realistic, work / "realistic.py")
        (work / "worst.py").write_text(generate(5000), encoding="utf-8")
        for name, label in (
            ("realistic.py", f"realistic: {realistic}"),
            ("worst.py", "worst case: benchmarks/big_hook_file.py's text"),
        ):
            size = (work / name).read_text(encoding="utf-8").count("\n")
            parse = f"import libcst; libcst.parse_module(open({name!r}, encoding='utf-8').read())"
            commands = {
                "python: import libcst + parse": [python, "-c", parse],
                "hooklint check": check + [name],
            }
            if ruff_check:
                commands["ruff check"] = ruff_check + [name]
            medians = _measure(commands, work, args.runs)
            _print(f"\n2. one file with hooks, {size} lines ({label}):", medians)
            ratio = medians["hooklint check"][0] / medians["python: import libcst + parse"][0]
            if name == "realistic.py":
                verdicts.append(ratio <= 1.25)
            print(
                f"  hooklint / (libcst import + parse) = {ratio:.2f}x (goal <= 1.25{'' if name == 'realistic.py' else '; not a goal'})",
                end="",
            )
            print(
                f"   hooklint / ruff = {medians['hooklint check'][0] / medians['ruff check'][0]:.1f}x"
                if ruff_check
                else ""
            )
        print("\ngoals met" if all(verdicts) else "\nGOALS NOT MET")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
