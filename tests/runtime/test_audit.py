"""hooklint.runtime.audit (HookAudit) and the pytest plugin."""

from __future__ import annotations

import importlib.util
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

REPORT_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>HLR\d{3}) .+$")


def this_line_plus(offset: int) -> int:
    return sys._getframe(1).f_lineno + offset


def noop(*args):
    return None


def parse(report: str) -> list[tuple[str, int, int, str]]:
    lines = []
    for text in report.splitlines():
        match = REPORT_LINE.match(text)
        assert match, f"not in path:line:col: CODE message form: {text!r}"
        lines.append((match["path"], int(match["line"]), int(match["col"]), match["code"]))
    return lines


class Tracker:
    """Keeps its own handle; the hook is its bound method (module -> hook -> tracker -> handle)."""

    def __init__(self, module: nn.Module) -> None:
        self.calls = 0
        self.handle = module.register_forward_hook(self.hook)

    def hook(self, *args) -> None:
        self.calls += 1


def test_dropped_handle_is_reported_at_the_registering_call():
    model = nn.Linear(2, 2)
    with HookAudit() as audit:
        expected_line = this_line_plus(1)
        model.register_forward_hook(noop)
    try:
        ((path, line, col, code),) = parse(audit.report())
        assert (path.endswith("test_audit.py"), line, col, code) == (
            True,
            expected_line,
            9,
            "HLR001",
        )
        assert "handle was dropped" in audit.report()
        with pytest.raises(HookLeakError, match="live Linear"):
            audit.assert_no_hook_leaks()
    finally:
        model._forward_hooks.clear()


def test_handle_held_by_a_live_object_is_reported_only_in_strict_mode():
    model = nn.Linear(2, 2)
    for strict, expected in ((False, []), (True, ["HLR001", "HLR001"])):
        with HookAudit(strict=strict) as audit:
            handle = model.register_forward_hook(noop)  # a local of this frame
            tracker = Tracker(model)  # a live object keeps the handle
        assert [code for *_, code in parse(audit.report())] == expected
        handle.remove()
        tracker.handle.remove()
    assert "reported in strict mode" in audit.report()


def install_self_removing_hook(module: nn.Module) -> None:
    def self_removing(*args):
        handle.remove()

    handle = module.register_forward_hook(self_removing)  # only the closure keeps it


def test_handle_held_only_by_garbage_the_hook_keeps_alive_is_reported():
    model = nn.Linear(2, 2)
    with HookAudit() as audit:
        Tracker(model)  # dropped tracker: only model._forward_hooks reaches it
        install_self_removing_hook(model)
    report = audit.report()
    model._forward_hooks.clear()
    assert [code for *_, code in parse(report)] == ["HLR001", "HLR001"]
    assert report.count("held only through hooks") == 2


def test_assert_inside_an_active_audit_checks_what_is_registered_now():
    model = nn.Linear(2, 2)
    with HookAudit() as audit:
        model.register_forward_pre_hook(noop)
        with pytest.raises(HookLeakError, match="forward pre-hook"):
            audit.assert_no_hook_leaks()
        model._forward_pre_hooks.clear()
        audit.assert_no_hook_leaks()  # nothing registered any more
    assert audit.findings == []


def test_expect_removed_reports_a_held_handle():
    model = nn.Linear(2, 2)
    with HookAudit() as audit:
        handle = model.register_forward_hook(noop)
        audit.expect_removed(handle)
    handle.remove()
    assert "expected it removed" in audit.report()
    with HookAudit() as audit:
        handle = model.register_forward_hook(noop)
        audit.expect_removed(handle)
        handle.remove()
    assert audit.findings == []


def test_grad_fn_multi_grad_and_state_dict_hooks_are_recorded():
    model = nn.Linear(2, 2)
    x = torch.ones(2, requires_grad=True)
    y = (x * 2).sum()
    with HookAudit() as audit:
        y.grad_fn.register_hook(noop)
        y.grad_fn.register_prehook(noop)
        torch.autograd.graph.register_multi_grad_hook((x,), noop)
        model.register_state_dict_pre_hook(noop)
        model._register_state_dict_hook(noop)
        public_load_pre_hook = hasattr(model, "register_load_state_dict_pre_hook")  # torch >= 2.5
        if public_load_pre_hook:
            model.register_load_state_dict_pre_hook(noop)
        else:
            model._register_load_state_dict_pre_hook(noop)
        model.register_load_state_dict_post_hook(noop)
    report = audit.report()
    assert [code for *_, code in parse(report)] == ["HLR001"] * 7
    for kind in (
        "grad_fn hook",
        "multi-grad hook registered here is still registered on a live Tensor",
        "state-dict pre-hook",
        "state-dict hook",
        "load-state-dict pre-hook",
        "load-state-dict post-hook",
    ):
        assert kind in report
    # one finding per load-state-dict pre-hook: torch's own inner registration is not recorded
    assert report.count("load-state-dict pre-hook") == 1, public_load_pre_hook


def test_hooks_torch_registers_for_itself_are_not_recorded():
    model = nn.Linear(2, 2)
    with HookAudit() as audit:
        with model.register_full_backward_hook(noop):
            output = model(torch.randn(3, 2, requires_grad=True))  # torch hooks grad_fn and tensors
            output.sum().backward(retain_graph=True)
    assert audit.findings == []
    assert output.grad_fn is not None  # the graph torch hooked is still alive


def test_one_finding_per_site_with_the_count_and_the_test_file_frame(tmp_path):
    library = tmp_path / "some_library.py"
    library.write_text(
        "def instrument(module, hook):\n    for _ in range(8):\n        module.register_forward_hook(hook)\n"
    )
    spec = importlib.util.spec_from_file_location("some_library", library)
    some_library = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(some_library)
    model = nn.Linear(2, 2)
    with HookAudit(test="test_x") as audit:
        expected_line = this_line_plus(1)
        some_library.instrument(model, noop)
    model._forward_hooks.clear()
    (finding,) = audit.findings
    assert (finding.location.path, finding.location.line, finding.count) == (
        str(library),
        3,
        8,
    )
    assert finding.test_frame.path == __file__
    assert finding.test_frame.line == expected_line
    assert str(finding).endswith(f"(8 registrations); called from {finding.test_frame}; in test test_x")


def test_removed_hooks_and_dead_owners_are_not_reported():
    model = nn.Linear(2, 2)
    with HookAudit() as audit:
        with model.register_forward_hook(noop), capture_outputs(model):
            model(torch.randn(1, 2))
        temporary = nn.Linear(2, 2)
        temporary.register_forward_hook(lambda module, *rest: module)  # dies with its module
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
            self.register_forward_hook(lambda *args: self)  # module -> hooks -> closure -> module

    def build():
        SelfCapturing()

    with HookAudit() as audit:
        build()
    assert audit.findings == []


def test_tensor_optimizer_global_and_saved_tensor_hooks_are_reported():
    parameter = nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([parameter], lr=0.1)
    saved = torch.autograd.graph.save_on_cpu()
    with HookAudit(strict=True) as audit:  # the handles are kept, to remove them below
        handles = [
            parameter.register_hook(noop),
            parameter.register_post_accumulate_grad_hook(noop),
            optimizer.register_step_post_hook(noop),
            optimizer.register_state_dict_pre_hook(noop),
            torch.nn.modules.module.register_module_forward_hook(noop),
            optimizer_globals.register_optimizer_step_pre_hook(noop),
            imported_early(noop),  # not seen by the recorder, found by difference
        ]
        saved.__enter__()
    saved.__exit__(None, None, None)
    for handle in handles:
        handle.remove()
    codes = [code for *_, code in parse(audit.report())]
    assert sorted(codes) == ["HLR001"] * 4 + ["HLR003"] * 3 + ["HLR004"]
    assert "registered through a name imported before the audit" in audit.report()


def test_non_zero_parametrize_cache_counter_is_reported():
    with HookAudit() as audit:
        expected_line = this_line_plus(-1)
        P._cache_enabled += 1
    P._cache_enabled -= 1
    ((_, line, _, code),) = parse(audit.report())
    assert (line, code) == (expected_line, "HLR002")


def test_buggy_cache_pair_under_checkpoint_is_reported(gpu_verify):
    experts = gpu_verify.FusedExperts(2, 8, torch.float32)
    x = torch.randn(4, 8, requires_grad=True)
    with HookAudit(strict=True) as audit:
        handles = gpu_verify.install_original_pair(experts)
        torch.utils.checkpoint.checkpoint(experts, x, torch.ones(4, 2), use_reentrant=False).sum().backward()
    counter, P._cache_enabled, P._cache = P._cache_enabled, 0, {}
    for handle in handles:
        handle.remove()
    assert counter == 1  # the early-stopped recomputation skipped the release
    assert sorted(code for *_, code in parse(audit.report())) == [
        "HLR001",
        "HLR001",
        "HLR002",
    ]


def test_nested_audits_both_record_and_recorders_are_uninstalled():
    original_register = nn.Module.register_forward_hook
    original_function_hook = vars(torch.autograd.Function).get("_register_hook")
    model = nn.Linear(2, 2)
    with HookAudit() as outer:
        with HookAudit() as inner:
            model.register_forward_pre_hook(noop)
        model.register_forward_hook(noop)
    model._forward_hooks.clear()
    model._forward_pre_hooks.clear()
    assert len(inner.findings) == 1 and len(outer.findings) == 2
    assert nn.Module.register_forward_hook is original_register
    assert vars(torch.autograd.Function).get("_register_hook") is original_function_hook


def test_runtime_codes_are_explained_without_torch():
    program = textwrap.dedent(
        """
        import sys
        sys.modules["torch"] = None
        from click.testing import CliRunner
        from hooklint.cli import main
        result = CliRunner().invoke(main, ["explain", "HLR001"])
        assert result.exit_code == 0, result.output
        print(result.output)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# HLR001 leaked-hook")
    assert "HL002" in result.stdout  # the static rule that catches it


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

    HELD = []

    def test_kept_handle():
        HELD.append(MODEL.register_forward_hook(lambda *args: None))
"""


def test_plugin_fails_only_audited_leaky_tests(pytester):
    pytester.makepyfile(test_leaky=LEAKY_TESTS)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_leaky.py:15:5: HLR001 forward pre-hook*; in test test_leaky.py::test_marked_leak",
            "*test_leaky.py:18:5: HLR001 forward hook*; in test test_leaky.py::test_fixture_leak",
        ]
    )


def test_plugin_option_audits_every_test(pytester):
    pytester.makepyfile(test_leaky=LEAKY_TESTS)
    result = pytester.runpytest_inprocess("--hooklint-audit")
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines(["*test_leaky.py:7:5: HLR001 forward hook registered here*"])
    strict = pytester.runpytest_inprocess("--hooklint-audit-strict")
    strict.assert_outcomes(passed=1, failed=4)
    strict.stdout.fnmatch_lines(["*test_leaky.py:23:17: HLR001 *strict mode*"])


UNITTEST_TESTS = """
    import unittest
    import torch

    MODEL = torch.nn.Linear(2, 2)

    class Wrapper:
        def __init__(self, module):
            self.module = module
            self.hooks = [module.register_forward_hook(self.capture)]

        def capture(self, *args):
            pass

    class KeepsOnSelf(unittest.TestCase):
        def setUp(self):
            self.model = torch.nn.Linear(2, 2)
            self.model.register_forward_hook(lambda *args: None)  # dropped, dies with self

        def test_wrapper_on_self(self):
            self.wrapped = Wrapper(self.model)
            self.model(torch.randn(1, 2))

    class Leaks(unittest.TestCase):
        def test_dropped_on_a_global_model(self):
            MODEL.register_forward_hook(lambda *args: None)

        def test_wrapper_dropped(self):
            Wrapper(MODEL)
"""


def test_plugin_checks_unittest_tests_after_teardown(pytester):
    pytester.makepyfile(test_unit=UNITTEST_TESTS)
    result = pytester.runpytest_inprocess("--hooklint-audit")
    result.assert_outcomes(passed=3, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*test_unit.py:25:9: HLR001 forward hook *dropped*; in test test_unit.py::Leaks::test_dropped_on_a_global_model",
            "*test_unit.py:9:23: HLR001 forward hook *held only through hooks*; in test test_unit.py::Leaks::test_wrapper_dropped",
        ]
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


FAILING_UNITTEST = """
    import unittest
    import torch

    MODEL = torch.nn.Linear(2, 2)

    class Fails(unittest.TestCase):
        def test_fails_and_leaks(self):
            MODEL.register_forward_hook(lambda *args: None)
            self.assertEqual(1, 2)

        def test_leaks_and_passes(self):
            MODEL.register_forward_hook(lambda *args: None)
"""


def test_plugin_does_not_fail_a_failed_unittest_test_again(pytester):
    pytester.makepyfile(test_fails=FAILING_UNITTEST)
    result = pytester.runpytest_inprocess("--hooklint-audit")
    result.assert_outcomes(passed=1, failed=1, errors=1)  # the error is the passing test's teardown
    result.stdout.fnmatch_lines(
        [
            "FAILED test_fails.py::Fails::test_fails_and_leaks*",
            "ERROR test_fails.py::Fails::test_leaks_and_passes*",
        ]
    )
    result.stdout.no_fnmatch_line("ERROR test_fails.py::Fails::test_fails_and_leaks*")
