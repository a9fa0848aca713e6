"""pytest plugin: fail tests that leak hooks (see :class:`hooklint.runtime.audit.HookAudit`).

* ``pytest --hooklint-audit`` audits every test;
* ``@pytest.mark.hooklint_audit`` audits one test;
* the ``hooklint_audit`` fixture audits one test and gives it the live audit.

The audit covers the test's call phase (with the fixture: from the fixture's
setup). A leak fails the test with the ``path:line:col: CODE message`` report.
This module is loaded by every pytest run of an environment where hooklint is
installed, so it imports neither torch nor the audit until an audit is requested.
"""

from __future__ import annotations

import pytest

AUDIT_OPTION = "--hooklint-audit"
MARKER = "hooklint_audit"
_AUDIT_KEY = pytest.StashKey[object]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("hooklint").addoption(
        AUDIT_OPTION,
        action="store_true",
        default=False,
        help="fail every test that leaves hooks registered (needs hooklint[runtime])",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: fail the test if it leaves hooks registered (hooklint)"
    )
    if config.getoption(AUDIT_OPTION):
        _audit_module()  # fail at start-up, not in every test, when torch is missing


def _audit_module():
    try:
        from hooklint.runtime import audit
    except ImportError as exc:
        raise pytest.UsageError(str(exc)) from exc
    return audit


def _start_audit(item: pytest.Item):
    audit = _audit_module()
    path, line, _ = item.location
    origin = audit.SourceLocation(str(item.config.rootpath / path), (line or 0) + 1, 1)
    return audit.HookAudit(origin=origin).start()


def _wants_audit(item: pytest.Item) -> bool:
    return (
        item.config.getoption(AUDIT_OPTION)
        or item.get_closest_marker(MARKER) is not None
    )


@pytest.fixture
def hooklint_audit(request: pytest.FixtureRequest):
    """The running :class:`HookAudit` of this test; leaks fail the test after its call."""
    audit = _start_audit(request.node)
    request.node.stash[_AUDIT_KEY] = audit
    yield audit
    if request.node.stash.get(_AUDIT_KEY, None) is audit:  # the call phase did not run
        audit.stop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    audit = item.stash.get(_AUDIT_KEY, None)
    if audit is None:
        if not _wants_audit(item):
            return (yield)
        audit = _start_audit(item)
    item.stash[_AUDIT_KEY] = None  # stopped here, not by the fixture's teardown
    try:
        result = yield
    finally:
        if audit.stop():
            item.add_report_section("call", "hooklint audit", audit.report())
    if audit.findings:  # only reached when the test itself passed
        pytest.fail(f"hook leak(s) found by hooklint:\n{audit.report()}", pytrace=False)
    return result
