"""pytest plugin: fail tests that leak hooks (see :class:`hooklint.runtime.audit.HookAudit`).

* ``pytest --hooklint-audit`` audits every test;
* ``pytest --hooklint-audit-strict`` also reports hooks whose handle is still held;
* ``@pytest.mark.hooklint_audit`` audits one test;
* the ``hooklint_audit`` fixture audits one test and gives it the live audit.

The audit covers the test's call phase (with the fixture: from the fixture's
setup). A function test is checked after its call, and a leak fails the test.
A unittest-style test (a ``unittest.TestCase`` method) is checked after its
teardown, once pytest has dropped the ``TestCase`` instance and whatever
``setUp`` and the test stored on ``self``; a leak is then a teardown error. The
report is ``path:line:col: CODE message`` with the test's node id, and the
innermost frame in the test's file when the hook was registered in a library.
This module is loaded by every pytest run of an environment where hooklint is
installed, so it imports neither torch nor the audit until an audit is requested.
"""

from __future__ import annotations

import pytest

AUDIT_OPTION = "--hooklint-audit"
STRICT_OPTION = "--hooklint-audit-strict"
MARKER = "hooklint_audit"
_AUDIT_KEY = pytest.StashKey[object]()
_PASSED_KEY = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hooklint")
    group.addoption(
        AUDIT_OPTION,
        action="store_true",
        default=False,
        help="fail every test that leaves hooks registered that nothing can remove (needs hooklint[runtime])",
    )
    group.addoption(
        STRICT_OPTION,
        action="store_true",
        default=False,
        help="like --hooklint-audit, and also report hooks whose handle is still held by a live object",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: fail the test if it leaves hooks registered (hooklint)")
    if _audit_everything(config):
        _audit_module()  # fail at start-up, not in every test, when torch is missing


def _audit_everything(config: pytest.Config) -> bool:
    return bool(config.getoption(AUDIT_OPTION) or config.getoption(STRICT_OPTION))


def _audit_module():
    try:
        from hooklint.runtime import audit
    except ImportError as exc:
        raise pytest.UsageError(str(exc)) from exc
    return audit


def _start_audit(item: pytest.Item):
    audit = _audit_module()
    path, line, _ = item.location
    test_file = str(item.config.rootpath / path)
    origin = audit.SourceLocation(test_file, (line or 0) + 1, 1)
    return audit.HookAudit(
        origin=origin,
        strict=bool(item.config.getoption(STRICT_OPTION)),
        test=item.nodeid,
        test_files=frozenset({test_file, str(item.path)}),
    ).start()


def _wants_audit(item: pytest.Item) -> bool:
    return _audit_everything(item.config) or item.get_closest_marker(MARKER) is not None


def _is_unittest(item: pytest.Item) -> bool:
    try:
        from _pytest.unittest import TestCaseFunction
    except ImportError:  # pragma: no cover - pytest moved it
        return False
    return isinstance(item, TestCaseFunction)


@pytest.fixture
def hooklint_audit(request: pytest.FixtureRequest):
    """The running :class:`HookAudit` of this test; leaks fail the test after its call."""
    audit = _start_audit(request.node)
    request.node.stash[_AUDIT_KEY] = audit
    yield audit
    if request.node.stash.get(_AUDIT_KEY, None) is audit:  # the call phase did not run
        audit.stop()


def _fail_if_leaked(item: pytest.Item, audit, when: str) -> None:
    if audit.stop():
        item.add_report_section(when, "hooklint audit", audit.report())
    if audit.findings and item.stash.get(_PASSED_KEY, False):
        pytest.fail(f"hook leak(s) found by hooklint:\n{audit.report()}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    audit = item.stash.get(_AUDIT_KEY, None)
    if audit is None:
        if not _wants_audit(item):
            return (yield)
        audit = _start_audit(item)
    item.stash[_PASSED_KEY] = False
    if _is_unittest(item):
        item.stash[_AUDIT_KEY] = audit  # checked after teardown has dropped the TestCase
        result = yield
        item.stash[_PASSED_KEY] = True
        return result
    item.stash[_AUDIT_KEY] = None  # stopped here, not by the fixture's teardown
    try:
        result = yield
        item.stash[_PASSED_KEY] = True
    finally:
        _fail_if_leaked(item, audit, "call")
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    # A unittest failure does not raise through pytest_runtest_call (pytest
    # collects it from the TestCase result into this report), so whether the
    # test passed is known only here, before its teardown check.
    report = yield
    if report.when == "call" and item.stash.get(_PASSED_KEY, False):
        item.stash[_PASSED_KEY] = report.passed
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem):
    audit = item.stash.get(_AUDIT_KEY, None)
    if audit is None or not _is_unittest(item):
        return (yield)
    item.stash[_AUDIT_KEY] = None
    try:
        result = yield
    except BaseException:
        audit.stop()  # uninstall the recorders; the teardown error is the report
        raise
    _fail_if_leaked(item, audit, "teardown")
    return result
