"""The pytest audit on a real test suite: opacus 1.6.0's own tests.

    python benchmarks/audit_real_suite.py                # the GradSampleModule test files
    python benchmarks/audit_real_suite.py --all          # every file in opacus/tests
    python benchmarks/audit_real_suite.py --tests opacus/tests/grad_sample_module_test.py
    python benchmarks/audit_real_suite.py --all --hypothesis-max-examples 10 -- --timeout 900

It downloads opacus' sdist (``pip download --no-deps --no-binary :all:
opacus==1.6.0``, cached in ``~/.cache/hooklint-realsuite``), extracts it into a
temporary directory and plants one deliberate leak: a unittest test appended to
``grad_sample_module_test.py`` that registers a forward hook on a module-level
model and drops the handle. It then runs the selected tests twice with the
current interpreter, plainly and with ``--hooklint-audit``, and prints one JSON
object:

* ``false_failures``: tests that fail or error with the audit and pass without
  it, other than the planted one (the Must is 0);
* ``planted_leak_found``: the planted test fails with an ``HLR001`` report that
  names it;
* ``seconds`` and ``overhead_ratio`` (audit / plain wall time, one run each).

opacus is imported from the extracted sdist; the interpreter needs torch,
numpy, scipy, opt-einsum and torchvision (install opacus' dependencies with
``--no-deps`` so as not to pull another torch). When torchvision's C extension
cannot load (a CUDA torchvision beside a CPU torch), a ``conftest.py`` in the
temporary tree declares the two operator schemas (``nms``, ``qnms``) that
``import torchvision`` needs; none of these tests calls them.

``--hypothesis-max-examples N`` makes that ``conftest.py`` load a hypothesis
profile with ``max_examples=N`` and ``derandomize=True`` (opacus' ``@settings``
set only deadlines and health checks, so the profile applies to every
``@given`` test, and both runs draw the same examples): every test still runs,
each property test on N examples instead of hypothesis' 100. Arguments after
``--`` go to both pytest runs unchanged (e.g. ``--timeout 900`` with
pytest-timeout installed). ``--parallel`` starts the plain and the audited run
at once, each in its own copy of the tree, so that both share whatever load the
machine has; either way ``cpu_seconds`` and ``cpu_overhead_ratio`` (user +
system time of each pytest process) stand beside the wall times. ``--keep DIR``
copies both runs' junit XML and output there. Exit status 1 when
there is a false failure or the planted leak is missed, 0 otherwise, and 0 with
``{"skipped": ...}`` when the sdist cannot be downloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

VERSION = "1.6.0"
CACHE = Path(os.environ.get("HOOKLINT_REALSUITE_CACHE", "~/.cache/hooklint-realsuite")).expanduser()
# The test files that build GradSampleModule wrappers (the previous false alarms).
DEFAULT_TESTS = (
    "opacus/tests/grad_sample_module_test.py",
    "opacus/tests/grad_sample_hooks_test.py",
    "opacus/tests/grad_sample_module_fast_gradient_clipping_test.py",
    "opacus/tests/grad_sample_hooks_fast_gradient_clipping_test.py",
    "opacus/tests/gradient_accumulation_test.py",
    "opacus/tests/batch_memory_manager_test.py",
)
PLANTED_FILE = "opacus/tests/grad_sample_module_test.py"
PLANTED_TEST = "HooklintPlantedLeakTest::test_planted_leak"
PLANTED = """

_HOOKLINT_PLANTED_MODEL = nn.Linear(4, 2)


class HooklintPlantedLeakTest(unittest.TestCase):
    def test_planted_leak(self):
        _HOOKLINT_PLANTED_MODEL.register_forward_hook(lambda *args: None)  # handle dropped
"""
TORCHVISION_SHIM = '''
"""Written by hooklint's audit_real_suite.py: lets a CUDA torchvision import beside a CPU torch."""
import importlib.util
import os

import torch

_spec = importlib.util.find_spec("torchvision")
if _spec is not None:
    _library = os.path.join(os.path.dirname(_spec.origin), "_C.so")
    try:
        torch.ops.load_library(_library)
    except (OSError, RuntimeError):
        _TORCHVISION_SCHEMAS = torch.library.Library("torchvision", "DEF")
        for _name in ("nms", "qnms"):
            _TORCHVISION_SCHEMAS.define(f"{_name}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
'''
HYPOTHESIS_PROFILE = """
from hypothesis import settings as _hypothesis_settings

_hypothesis_settings.register_profile("hooklint-realsuite", max_examples={max_examples}, derandomize=True)
_hypothesis_settings.load_profile("hooklint-realsuite")
"""


def sdist() -> Path | None:
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = CACHE / f"opacus-{VERSION}.tar.gz"
    if not archive.exists():
        download = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"opacus=={VERSION}",
                "-d",
                str(CACHE),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if download.returncode != 0 or not archive.exists():
            return None
    return archive


def prepare(archive: Path, work: Path, max_examples: int | None = None) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    root = work / f"opacus-{VERSION}"
    conftest = TORCHVISION_SHIM
    if max_examples is not None:
        conftest += HYPOTHESIS_PROFILE.format(max_examples=max_examples)
    (root / "conftest.py").write_text(conftest)
    with (root / PLANTED_FILE).open("a") as planted:
        planted.write(PLANTED)
    return root


def outcomes(junit: Path) -> dict[str, str]:
    """node id -> passed | failed | error | skipped, plus the failure text under 'id:text'."""
    result = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "")
        path, _, klass = module.rpartition(".")
        test_id = (
            f"{path.replace('.', '/')}.py::{klass}::{case.get('name')}"
            if path
            else f"{module}::{case.get('name')}"
        )
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                state = "failed" if child.tag == "failure" else child.tag
                if state != "skipped":  # an error at teardown after a pass still is an error
                    result[f"{test_id}:text"] = (child.get("message") or "") + (child.text or "")
                if state == "error" or result.get(test_id) != "error":
                    result[test_id] = state
        result.setdefault(test_id, state)
    return result


@dataclass
class Run:
    """One pytest run of the selected tests in its own copy of the sdist."""

    root: Path
    audit: bool
    process: subprocess.Popen
    started: float

    @property
    def junit(self) -> Path:
        return self.root / ("audit.xml" if self.audit else "plain.xml")

    def finish(self) -> tuple[float, float, dict[str, str], str]:
        """Wall seconds, CPU seconds (user + system, with reaped children), outcomes, pytest's last line."""
        _, _, usage = os.wait4(self.process.pid, 0)
        self.process.returncode = 0  # reaped here, not by Popen
        seconds = time.perf_counter() - self.started
        output = self.junit.with_suffix(".out").read_text()
        if not self.junit.exists():
            raise SystemExit(f"pytest did not run:\n{output[-3000:]}")
        last = output.strip().splitlines()[-1] if output.strip() else ""
        return seconds, usage.ru_utime + usage.ru_stime, outcomes(self.junit), last


def start(root: Path, tests: list[str], audit: bool, extra: list[str]) -> Run:
    junit = root / ("audit.xml" if audit else "plain.xml")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--junitxml={junit}",
        *extra,
        *tests,
    ]
    if audit:
        command.append("--hooklint-audit")
    with junit.with_suffix(".out").open("w") as output:
        process = subprocess.Popen(command, cwd=root, stdout=output, stderr=subprocess.STDOUT)
    return Run(root, audit, process, time.perf_counter())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every test file in opacus/tests")
    parser.add_argument("--tests", nargs="+", help="test paths inside the sdist")
    parser.add_argument(
        "--hypothesis-max-examples",
        type=int,
        metavar="N",
        help="run each hypothesis test on N derandomized examples (default: hypothesis' 100)",
    )
    parser.add_argument(
        "--parallel",
        action="store_true",
        help="start both runs at once (each in its own copy), so that they share the same load",
    )
    parser.add_argument(
        "--keep", type=Path, metavar="DIR", help="copy both runs' junit XML and pytest output into DIR"
    )
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to both pytest runs")
    args = parser.parse_args(argv)
    archive = sdist()
    if archive is None:
        print(json.dumps({"skipped": f"could not download opacus=={VERSION}"}))
        return 0
    tests = ["opacus/tests"] if args.all else list(args.tests or DEFAULT_TESTS)
    if PLANTED_FILE not in tests and not args.all:
        tests.append(f"{PLANTED_FILE}::{PLANTED_TEST}")
    work = Path(tempfile.mkdtemp(prefix="hooklint-realsuite-"))
    try:
        trees = {  # one copy per run: each writes its own caches and reports
            audit: prepare(archive, work / ("audit" if audit else "plain"), args.hypothesis_max_examples)
            for audit in (False, True)
        }
        if args.parallel:
            runs = [start(trees[audit], tests, audit, args.pytest_args) for audit in (False, True)]
            results = [one.finish() for one in runs]
        else:
            results = [
                start(trees[audit], tests, audit, args.pytest_args).finish() for audit in (False, True)
            ]
        (
            (plain_seconds, plain_cpu, plain, plain_summary),
            (audit_seconds, audit_cpu, audited, audit_summary),
        ) = results
    finally:
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            for tree in (work / "plain", work / "audit"):
                for report in tree.glob(f"opacus-{VERSION}/*.[xo][mu][lt]"):
                    shutil.copy(report, args.keep / report.name)
        shutil.rmtree(work, ignore_errors=True)
    planted = next(t for t in audited if t.endswith(PLANTED_TEST))
    bad = ("failed", "error")
    false_failures = sorted(
        t
        for t, state in audited.items()
        if state in bad and not t.endswith(":text") and t != planted and plain.get(t) not in bad
    )
    planted_text = audited.get(f"{planted}:text", "")
    report = {
        "opacus": VERSION,
        "tests": tests,
        "hypothesis_max_examples": args.hypothesis_max_examples,
        "pytest_args": args.pytest_args,
        "plain": plain_summary,
        "audit": audit_summary,
        "tests_run": sum(1 for t in plain if not t.endswith(":text")),
        "plain_failures": sorted(t for t, s in plain.items() if s in bad),
        "false_failures": false_failures,
        "false_failure_reports": {t: audited.get(f"{t}:text", "")[:400] for t in false_failures[:5]},
        "planted_leak_found": audited[planted] in bad
        and "HLR001" in planted_text
        and "test_planted_leak" in planted_text,
        "planted_leak_report": planted_text.strip().splitlines()[-1:] if planted_text else [],
        "parallel": args.parallel,
        "seconds": {"plain": round(plain_seconds, 1), "audit": round(audit_seconds, 1)},
        "overhead_ratio": round(audit_seconds / plain_seconds, 3),
        "cpu_seconds": {"plain": round(plain_cpu, 1), "audit": round(audit_cpu, 1)},
        "cpu_overhead_ratio": round(audit_cpu / plain_cpu, 3),
    }
    print(json.dumps(report, indent=2))
    return 0 if report["planted_leak_found"] and not false_failures else 1


if __name__ == "__main__":
    sys.exit(main())
