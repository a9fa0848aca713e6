"""HL011 saved-tensors-hooks-not-exited beyond its VALID/INVALID examples: an exit
through an alias in another hook, and the example files under ``examples/``."""

from __future__ import annotations

import pytest
from _checks import LIFETIME_RULES, check_example_files, findings


def test_hl011_alias_exit_in_another_hook_is_not_never_exited():
    assert (
        findings(
            """
        import torch
        def install(module):
            cx = None
            def pre(m, args):
                ctx = torch.autograd.graph.saved_tensors_hooks(pack, unpack)
                ctx.__enter__()
                nonlocal cx
                cx = ctx
            def post(m, args, out):
                cx.__exit__()
            module.register_forward_pre_hook(pre)
            module.register_forward_hook(post)
        """,
            ("HL011",),
        )
        == []
    )


@pytest.mark.parametrize("code", ["HL011"])
def test_example_files(code):
    check_example_files(code, LIFETIME_RULES)
