"""A run over files without any hook token imports neither libcst nor a rule
(issue 15: a pre-commit run must cost next to nothing).  Checked by what the process
has imported at the end, not by timing."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from hooklint.rules import all_rules
from hooklint.rules.base import ANY_RULE_TOKENS

_RUN = textwrap.dedent(
    """
    import json, sys
    from hooklint.cli import main
    report = sys.argv[1]
    sys.argv = ["hooklint", "check", "--no-cache", "--format", "concise", *sys.argv[2:]]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    loaded = sorted(m for m in sys.modules if m == "libcst" or m.startswith(("libcst.", "hooklint.rules.hl", "hooklint.analysis")))
    with open(report, "w") as out:
        json.dump({"code": code, "loaded": loaded}, out)
    """
)


def _check(tmp_path, *args):
    report = tmp_path / "report.json"
    run = subprocess.run([sys.executable, "-c", _RUN, str(report), *args], cwd=tmp_path, capture_output=True, text=True)
    result = json.loads(report.read_text())
    return result["code"], result["loaded"], run.stdout


def test_a_file_without_a_hook_token_loads_no_parser_and_no_rule(tmp_path):
    (tmp_path / "plain.py").write_text("import torch\n\n\ndef scale(x):\n    return torch.relu(x) * 2\n")
    code, loaded, _ = _check(tmp_path, "plain.py")
    assert code == 0
    assert loaded == []


def test_a_file_with_a_hook_token_is_parsed_and_linted(tmp_path):
    (tmp_path / "hooked.py").write_text(
        "def attach(model, store):\n"
        "    model.register_forward_hook(lambda m, i, o: store.append(o))\n"
    )
    code, loaded, stdout = _check(tmp_path, "hooked.py")
    assert "libcst" in loaded and any(m.startswith("hooklint.rules.hl") for m in loaded)
    assert code == 1 and "HL002" in stdout


def test_a_broken_file_without_a_token_is_still_reported_without_libcst(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    code, loaded, stdout = _check(tmp_path, "broken.py")
    assert code == 1 and "HL000" in stdout
    assert loaded == []


def test_many_files_without_a_token_start_no_worker_and_load_nothing(tmp_path):
    names = []
    for index in range(12):  # above the engine's threshold for a process pool
        (tmp_path / f"m{index}.py").write_text(f"VALUE_{index} = {index}\n")
        names.append(f"m{index}.py")
    code, loaded, _ = _check(tmp_path, "--jobs", "2", *names)
    assert code == 0
    assert loaded == []


def test_any_rule_tokens_holds_every_rules_prefilter_tokens():
    # A text holding a rule's token must hold one of ANY_RULE_TOKENS: the same token, or
    # one inside it ("register_module_forward" is in "register_module_forward_pre_hook").
    missing = {
        (rule.code, token)
        for rule in all_rules()
        for token in rule.prefilter
        if not any(any_token in token for any_token in ANY_RULE_TOKENS)
    }
    assert missing == set()
