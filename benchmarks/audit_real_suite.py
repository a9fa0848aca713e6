"""The pytest audit on a real test suite: opacus 1.6.0's own tests.

    python benchmarks/audit_real_suite.py                # the GradSampleModule test files
    python benchmarks/audit_real_suite.py --all          # every file in opacus/tests
    python benchmarks/audit_real_suite.py --tests opacus/tests/grad_sample_module_test.py

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
``import torchvision`` needs; none of these tests calls them. Exit status 1 when
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
PLANTED = '''

_HOOKLINT_PLANTED_MODEL = nn.Linear(4, 2)


class HooklintPlantedLeakTest(unittest.TestCase):
    def test_planted_leak(self):
        _HOOKLINT_PLANTED_MODEL.register_forward_hook(lambda *args: None)  # handle dropped
'''
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


def sdist() -> Path | None:
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = CACHE / f"opacus-{VERSION}.tar.gz"
    if not archive.exists():
        download = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             f"opacus=={VERSION}", "-d", str(CACHE)],
            capture_output=True, text=True, check=False,
        )
        if download.returncode != 0 or not archive.exists():
            return None
    return archive


def prepare(archive: Path, work: Path) -> Path:
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    root = work / f"opacus-{VERSION}"
    (root / "conftest.py").write_text(TORCHVISION_SHIM)
    with (root / PLANTED_FILE).open("a") as planted:
        planted.write(PLANTED)
    return root


def outcomes(junit: Path) -> dict[str, str]:
    """node id -> passed | failed | error | skipped, plus the failure text under 'id:text'."""
    result = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "")
        path, _, klass = module.rpartition(".")
        test_id = f"{path.replace('.', '/')}.py::{klass}::{case.get('name')}" if path else f"{module}::{case.get('name')}"
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


def run(root: Path, tests: list[str], audit: bool) -> tuple[float, dict[str, str], str]:
    junit = root / ("audit.xml" if audit else "plain.xml")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               f"--junitxml={junit}", *tests]
    if audit:
        command.append("--hooklint-audit")
    started = time.perf_counter()
    finished = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if not junit.exists():
        raise SystemExit(f"pytest did not run:\n{finished.stdout[-3000:]}\n{finished.stderr[-3000:]}")
    return seconds, outcomes(junit), finished.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every test file in opacus/tests")
    parser.add_argument("--tests", nargs="+", help="test paths inside the sdist")
    args = parser.parse_args(argv)
    archive = sdist()
    if archive is None:
        print(json.dumps({"skipped": f"could not download opacus=={VERSION}"}))
        return 0
    tests = ["opacus/tests"] if args.all else list(args.tests or DEFAULT_TESTS)
    if PLANTED_FILE not in tests and not args.all:
        tests.append(PLANTED_FILE)
    work = Path(tempfile.mkdtemp(prefix="hooklint-realsuite-"))
    try:
        root = prepare(archive, work)
        plain_seconds, plain, plain_summary = run(root, tests, audit=False)
        audit_seconds, audited, audit_summary = run(root, tests, audit=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    planted = next(t for t in audited if t.endswith(PLANTED_TEST))
    bad = ("failed", "error")
    false_failures = sorted(
        t for t, state in audited.items()
        if state in bad and not t.endswith(":text") and t != planted and plain.get(t) not in bad
    )
    planted_text = audited.get(f"{planted}:text", "")
    report = {
        "opacus": VERSION,
        "tests": tests,
        "plain": plain_summary,
        "audit": audit_summary,
        "tests_run": sum(1 for t in plain if not t.endswith(":text")),
        "plain_failures": sorted(t for t, s in plain.items() if s in bad),
        "false_failures": false_failures,
        "false_failure_reports": {t: audited.get(f"{t}:text", "")[:400] for t in false_failures[:5]},
        "planted_leak_found": audited[planted] in bad and "HLR001" in planted_text and "test_planted_leak" in planted_text,
        "planted_leak_report": planted_text.strip().splitlines()[-1:] if planted_text else [],
        "seconds": {"plain": round(plain_seconds, 1), "audit": round(audit_seconds, 1)},
        "overhead_ratio": round(audit_seconds / plain_seconds, 3),
    }
    print(json.dumps(report, indent=2))
    return 0 if report["planted_leak_found"] and not false_failures else 1


if __name__ == "__main__":
    sys.exit(main())
