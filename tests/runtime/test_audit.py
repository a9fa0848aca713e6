"""hooklint.runtime.audit (HookAudit) and the pytest plugin."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.utils.parametrize as P
import torch.optim.optimizer as optimizer_globals
from hooklint.runtime.audit import HookAudit, HookLeakError
from hooklint.runtime.hooks import capture_outputs
from torch import nn
from torch.nn.modules.module import register_module_forward_pre_hook as imported_early

pytest_plugins = ["pytester"]

REPORT_LINE = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>HL\d{3}) .+$"
)


def this_line_plus(offset: int) -> int:
    return sys._getframe(1).f_lineno + offset


def noop(*args):
    return None


def parse(report: str) -> list[tuple[str, int, int, str]]:
    lines = []
    for text in report.splitlines():
        match = REPORT_LINE.match(text)
        assert match, f"not in path:line:col: CODE message form: {text!r}"
        lines.append(
            (match["path"], int(match["line"]), int(match["col"]), match["code"])
        )
    return lines


def test_leaked_module_hook_is_reported_at_the_registering_call():
    model = nn.Linear(2, 2)
    with HookAudit() as audit:
        expected_line = this_line_plus(1)
        handle = model.register_forward_hook(noop)
    try:
        ((path, line, col, code),) = parse(audit.report())
        assert (path.endswith("test_audit.py"), line, col, code) == (
            True,
            expected_line,
            18,
            "HL002",
        )
        with pytest.raises(HookLeakError, match="live Linear"):
            audit.assert_no_hook_leaks()
    finally:
        handle.remove()


def test_removed_hooks_and_dead_owners_are_not_reported():
    model = nn.Linear(2, 2)
    with HookAudit() as audit:
        with model.register_forward_hook(noop), capture_outputs(model):
            model(torch.randn(1, 2))
        temporary = nn.Linear(2, 2)
        temporary.register_forward_hook(
            lambda module, *rest: module
        )  # dies with its module
        parameter = nn.Parameter(torch.ones(1))
        parameter.register_hook(noop)
        del temporary, parameter
        with torch.autograd.graph.save_on_cpu():
            pass
    assert audit.findings == []
    audit.assert_no_hook_leaks()


def test_hook_kept_alive_only_by_a_reference_cycle_is_not_reported():
    class SelfCapturing(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_forward_hook(
                lambda *args: self
            )  # module -> hooks -> closure -> module

    def build():
        SelfCapturing()

    with HookAudit() as audit:
        build()
    assert audit.findings == []


def test_tensor_optimizer_global_and_saved_tensor_hooks_are_reported():
    parameter = nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([parameter], lr=0.1)
    saved = torch.autograd.graph.save_on_cpu()
    with HookAudit() as audit:
        handles = [
            parameter.register_hook(noop),
            parameter.register_post_accumulate_grad_hook(noop),
            optimizer.register_step_post_hook(noop),
            torch.nn.modules.module.register_module_forward_hook(noop),
            optimizer_globals.register_optimizer_step_pre_hook(noop),
            imported_early(noop),  # not seen by the recorder, found by difference
        ]
        saved.__enter__()
    saved.__exit__(None, None, None)
    for handle in handles:
        handle.remove()
    codes = [code for *_, code in parse(audit.report())]
    assert sorted(codes) == [
        "HL002",
        "HL002",
        "HL002",
        "HL009",
        "HL009",
        "HL009",
        "HL011",
    ]
    assert "registered through a name imported before the audit" in audit.report()


def test_non_zero_parametrize_cache_counter_is_reported():
    with HookAudit() as audit:
        expected_line = this_line_plus(-1)
        P._cache_enabled += 1
    P._cache_enabled -= 1
    ((_, line, _, code),) = parse(audit.report())
    assert (line, code) == (expected_line, "HL001")


def test_buggy_cache_pair_under_checkpoint_is_reported(gpu_verify):
    experts = gpu_verify.FusedExperts(2, 8, torch.float32)
    x = torch.randn(4, 8, requires_grad=True)
    with HookAudit() as audit:
        handles = gpu_verify.install_original_pair(experts)
        torch.utils.checkpoint.checkpoint(
            experts, x, torch.ones(4, 2), use_reentrant=False
        ).sum().backward()
    counter, P._cache_enabled, P._cache = P._cache_enabled, 0, {}
    for handle in handles:
        handle.remove()
    assert counter == 1  # the early-stopped recomputation skipped the release
    assert sorted(code for *_, code in parse(audit.report())) == [
        "HL001",
        "HL002",
        "HL002",
    ]


def test_nested_audits_both_record_and_recorders_are_uninstalled():
    original_register = nn.Module.register_forward_hook
    model = nn.Linear(2, 2)
    with HookAudit() as outer:
        with HookAudit() as inner:
            handle = model.register_forward_pre_hook(noop)
        handle_after_inner = model.register_forward_hook(noop)
    handle.remove()
    handle_after_inner.remove()
    assert len(inner.findings) == 1 and len(outer.findings) == 2
    assert nn.Module.register_forward_hook is original_register


LEAKY_TESTS = """
    import pytest
    import torch

    MODEL = torch.nn.Linear(2, 2)

    def test_leaks():
        MODEL.register_forward_hook(lambda *args: None)

    def test_clean():
        with MODEL.register_forward_pre_hook(lambda *args: None):
            MODEL(torch.randn(1, 2))

    @pytest.mark.hooklint_audit
    def test_marked_leak():
        MODEL.register_forward_pre_hook(lambda *args: None)

    def test_fixture_leak(hooklint_audit):
        MODEL.register_forward_hook(lambda *args: None)
"""


def test_plugin_fails_only_audited_leaky_tests(pytester):
    pytester.makepyfile(test_leaky=LEAKY_TESTS)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_leaky.py:15:5: HL002 forward pre-hook*",
            "*test_leaky.py:18:5: HL002 forward hook*",
        ]
    )


def test_plugin_option_audits_every_test(pytester):
    pytester.makepyfile(test_leaky=LEAKY_TESTS)
    result = pytester.runpytest_inprocess("--hooklint-audit")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(
        ["*test_leaky.py:7:5: HL002 forward hook registered here*"]
    )


def test_plugin_module_imports_without_torch():
    blocker = textwrap.dedent(
        """
        import sys
        sys.modules["torch"] = None  # any `import torch` now raises ImportError
        import hooklint.runtime.pytest_plugin
        try:
            import hooklint.runtime.hooks
        except ImportError as exc:
            assert 'pip install "hooklint[runtime]"' in str(exc), exc
        else:
            raise AssertionError("hooklint.runtime.hooks imported without torch")
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", blocker],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
