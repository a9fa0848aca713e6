"""HL009 global-hook-not-removed beyond its VALID/INVALID examples: a module-level
``try``/``finally``, and the example files under ``examples/``."""

from __future__ import annotations

import pytest
from _checks import LIFETIME_RULES, check_example_files, findings


def test_hl009_module_level_with_finally_is_clean():
    assert (
        findings(
            """
        from torch.nn.modules.module import register_module_forward_hook
        handle = register_module_forward_hook(print)
        try:
            main()
        finally:
            handle.remove()
        """,
            ("HL009",),
        )
        == []
    )


@pytest.mark.parametrize("code", ["HL009"])
def test_example_files(code):
    check_example_files(code, LIFETIME_RULES)
