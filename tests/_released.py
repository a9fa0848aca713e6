"""Released packages from the package index, for acceptance tests on real code.

``released("bitsandbytes", "0.49.2")`` downloads that release once (``pip download
--no-deps``), unpacks its Python sources into a cache directory and returns that
directory.  The cache is ``$HOOKLINT_TEST_CACHE`` or ``~/.cache/hooklint-tests``.
When the index cannot be reached the calling test is skipped with pip's reason; any
other failure of pip (a release that is gone, a bad archive) fails the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

import pytest

CACHE_ENV = "HOOKLINT_TEST_CACHE"

#: The wheel to fetch: one fixed platform, so every machine reads the same files
#: (only the pure-Python sources are used).
PLATFORM = "manylinux_2_24_x86_64"

#: Words in pip's output that mean the index was not reached, not that it said no.
_UNREACHABLE = (
    "connection broken by",
    "NewConnectionError",
    "ProxyError",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "Max retries exceeded",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "SSLError",
)


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "hooklint-tests"


def index_unreachable(pip_output: str) -> bool:
    return any(marker in pip_output for marker in _UNREACHABLE)


def _download(name: str, version: str, into: Path) -> Path:
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--platform", PLATFORM, "--ignore-requires-python", "--retries", "1", "--timeout", "20",
        "--disable-pip-version-check", "--no-input", "-d", str(into), f"{name}=={version}",
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.skip(f"pip download {name}=={version} timed out (index unreachable?)")
    output = done.stdout + done.stderr
    if done.returncode != 0:
        last = output.strip().splitlines()[-1] if output.strip() else f"exit {done.returncode}"
        if index_unreachable(output):
            pytest.skip(f"package index unreachable for {name}=={version}: {last}")
        pytest.fail(f"pip download {name}=={version} failed:\n{output}")
    wheels = sorted(into.glob("*.whl"))
    if len(wheels) != 1:
        pytest.fail(
            f"pip download {name}=={version} left {[p.name for p in into.iterdir()]}, expected one wheel"
        )
    return wheels[0]


def _unpack_sources(wheel: Path, into: Path) -> None:
    """Extract the ``.py`` members of ``wheel`` (never outside ``into``)."""
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.infolist():
            parts = PurePosixPath(member.filename).parts
            if (
                not member.filename.endswith(".py")
                or member.is_dir()
                or ".." in parts
                or member.filename.startswith("/")
            ):
                continue
            target = into.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(member))


def released(name: str, version: str, cache: Path | None = None) -> Path:
    """The unpacked Python sources of ``name==version`` (downloaded on first use)."""
    root = cache if cache is not None else cache_root()
    final = root / f"{name}-{version}"
    if final.is_dir():
        return final
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}-{version}-", dir=root))
    try:
        wheel = _download(name, version, work / "download")
        unpacked = work / "sources"
        unpacked.mkdir()
        _unpack_sources(wheel, unpacked)
        try:
            unpacked.rename(final)  # atomic: a half-unpacked release is never seen
        except OSError:
            if not final.is_dir():  # not a concurrent run that got there first
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final
