"""Shared helpers for the CLI-level tests: sample sources and a CliRunner wrapper."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from hooklint.cli import main

PROJECT_ROOT = Path(__file__).resolve().parents[1]

BUGGY = textwrap.dedent(
    """\
    import torch.nn.utils.parametrize as P


    def _enable(module, inputs):
        P._cache_enabled += 1


    def _disable(module, inputs, output):
        P._cache_enabled -= 1


    def install(module):
        module.register_forward_pre_hook(_enable)
        module.register_forward_hook(_disable)
    """
)
#: Where HL001 points in BUGGY: the post-hook registration.
BUGGY_LINE, BUGGY_COLUMN = 14, 5

FIXED = BUGGY.replace("P._cache_enabled -= 1", "P._cache_enabled = max(0, P._cache_enabled - 1)").replace(
    "register_forward_hook(_disable)", "register_forward_hook(_disable, always_call=True)"
)

CLEAN = textwrap.dedent(
    """\
    def log_shapes(module, inputs, output):
        print(type(module).__name__, output.shape)


    def install(model):
        return [m.register_forward_hook(log_shapes) for m in model.modules()]
    """
)


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None = None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def hooklint(*args: str, input: str | bytes | None = None, env: dict | None = None) -> Result:
    """Run ``hooklint ARGS`` in-process (in the current directory)."""
    runner = CliRunner()
    result = runner.invoke(main, [str(a) for a in args], input=input, env=env, catch_exceptions=True)
    exception = result.exception if not isinstance(result.exception, SystemExit) else None
    return Result(result.exit_code, result.stdout, result.stderr, exception)


def check(*args: str, **kwargs) -> Result:
    return hooklint("check", *args, **kwargs)


def run_subprocess(
    args: list[str], cwd: Path, env: dict | None = None, input: bytes | None = None, stdout=subprocess.PIPE
) -> subprocess.CompletedProcess:
    """``python -m hooklint ARGS`` in ``cwd``; its stdout captured unless ``stdout``
    says where it goes (an open file), its stderr captured."""
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "hooklint", *args],
        cwd=cwd,
        env=full_env,
        input=input,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=300,
    )


def write(root: Path, relative: str, text: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def no_traceback(result) -> None:
    text = result.output if isinstance(result, Result) else (result.stdout + result.stderr).decode()
    assert "Traceback" not in text
    if isinstance(result, Result):
        assert result.exception is None, repr(result.exception)
