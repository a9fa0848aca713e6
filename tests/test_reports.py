"""Every ``--format``, including HL000, against its documented shape."""

from __future__ import annotations

import json

import pytest

from _hooklint_cli import BUGGY, BUGGY_COLUMN, BUGGY_LINE, check, write

SYNTAX = "import torch\n\ndef broken(:\n    module.register_forward_hook(f)\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "pkg/buggy.py", BUGGY)
    write(tmp_path, "pkg/syntax.py", SYNTAX)
    return tmp_path


def _location(value):
    assert set(value) == {"row", "column"}
    assert all(isinstance(v, int) and v >= 1 for v in value.values())


def test_json_schema(tree):
    result = check("pkg", "--no-cache", "--format", "json")
    data = json.loads(result.stdout)
    assert [d["code"] for d in data] == ["HL001", "HL000"]  # ordered by path
    for item in data:
        assert set(item) == {"code", "name", "message", "filename", "cell", "location", "end_location", "fix", "related"}
        assert item["related"] == [] and item["cell"] is None  # a notebook's cell: tests/test_notebooks.py
        _location(item["location"])
        _location(item["end_location"])
        assert (item["end_location"]["row"], item["end_location"]["column"]) >= (item["location"]["row"], item["location"]["column"])
    hl001, hl000 = data
    assert hl001["filename"] == "pkg/buggy.py" and hl001["name"] == "post-hook-without-always-call"
    assert hl001["location"] == {"row": BUGGY_LINE, "column": BUGGY_COLUMN}
    assert hl001["end_location"] == {"row": BUGGY_LINE, "column": BUGGY_COLUMN + len("module.register_forward_hook(_disable)")}
    fix = hl001["fix"]
    assert set(fix) == {"applicability", "message", "edits"} and fix["applicability"] == "safe"
    for edit in fix["edits"]:
        assert set(edit) == {"content", "location", "end_location"}
        _location(edit["location"])
        _location(edit["end_location"])
    assert ", always_call=True" in [e["content"] for e in fix["edits"]]
    assert hl000["name"] == "syntax-error" and hl000["fix"] is None and hl000["filename"] == "pkg/syntax.py"
    assert hl000["location"]["row"] == 3


def test_json_edits_reproduce_the_fix(tree):
    from hooklint.engine import apply_edits
    from hooklint.violation import Edit, Location

    item = json.loads(check("pkg/buggy.py", "--no-cache", "--format", "json").stdout)[0]
    edits = [Edit(Location(e["location"]["row"], e["location"]["column"]), Location(e["end_location"]["row"], e["end_location"]["column"]), e["content"]) for e in item["fix"]["edits"]]
    fixed = apply_edits(BUGGY, edits)
    check("pkg/buggy.py", "--no-cache", "--fix")
    assert fixed == (tree / "pkg/buggy.py").read_text()


def test_json_empty_is_an_empty_list(tree):
    result = check("pkg", "--no-cache", "--format", "json", "--ignore", "HL001", "--select", "HL001")
    assert json.loads(result.stdout) == [] and result.exit_code == 0


def _sarif(tree):
    return json.loads(check("pkg", "--no-cache", "--format", "sarif").stdout)


def test_sarif_shape_for_github_code_scanning(tree):
    log = _sarif(tree)
    assert log["version"] == "2.1.0" and "sarif" in log["$schema"]
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "hooklint" and driver["version"]
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    assert "HL000" in ids and "HL001" in ids and len(ids) == len(set(ids))
    for rule in rules:
        assert rule["shortDescription"]["text"]
        assert rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert "## Why is this bad?" in rules[ids.index("HL001")]["help"]["markdown"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["HL001", "HL000"]
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["message"]["text"]
        assert result["level"] in ("error", "warning", "note")
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert not artifact["uri"].startswith("/") and "://" not in artifact["uri"] and "\\" not in artifact["uri"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        region = location["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert (region["endLine"], region["endColumn"]) > (region["startLine"], region["startColumn"]) or region["endLine"] > region["startLine"]
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (BUGGY_LINE, BUGGY_COLUMN)
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/buggy.py"


def test_sarif_validates_against_a_minimal_schema(tree):
    # The official SARIF schema is not available offline; this checks the subset of it
    # GitHub's upload relies on, with jsonschema when it is installed.
    jsonschema = pytest.importorskip("jsonschema")
    location = {"type": "object", "required": ["physicalLocation"], "properties": {"physicalLocation": {
        "type": "object", "required": ["artifactLocation", "region"], "properties": {
            "artifactLocation": {"type": "object", "required": ["uri"], "properties": {"uri": {"type": "string", "format": "uri-reference"}}},
            "region": {"type": "object", "required": ["startLine"], "properties": {
                k: {"type": "integer", "minimum": 1} for k in ("startLine", "startColumn", "endLine", "endColumn")}}}}}}
    schema = {
        "type": "object", "required": ["version", "runs"],
        "properties": {
            "version": {"const": "2.1.0"},
            "runs": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["tool", "results"], "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {"type": "object", "required": ["name", "rules"], "properties": {
                    "rules": {"type": "array", "items": {"type": "object", "required": ["id", "shortDescription", "help"]}}}}}},
                "results": {"type": "array", "items": {"type": "object", "required": ["ruleId", "message", "locations"], "properties": {
                    "message": {"type": "object", "required": ["text"]},
                    "level": {"enum": ["none", "note", "warning", "error"]},
                    "locations": {"type": "array", "items": location}}}},
            }}},
        },
    }
    jsonschema.validate(_sarif(tree), schema)


def test_sarif_with_no_results_still_lists_rules(tree):
    log = json.loads(check("pkg", "--no-cache", "--format", "sarif", "--select", "HL000", "--ignore", "HL000").stdout)
    assert log["runs"][0]["tool"]["driver"]["rules"]


def test_github_workflow_commands(tree):
    lines = check("pkg", "--no-cache", "--format", "github").stdout.splitlines()
    assert len(lines) == 2
    first, second = lines
    assert first.startswith(f"::error title=hooklint (HL001),file=pkg/buggy.py,line={BUGGY_LINE},col={BUGGY_COLUMN},endLine={BUGGY_LINE},endColumn=")
    assert "::HL001 forward hook" in first
    assert second.startswith("::error title=hooklint (HL000),file=pkg/syntax.py,line=3,")
    for line in lines:
        properties, message = line[len("::error "):].split("::", 1)
        assert "\n" not in message and "\r" not in message


def test_github_escapes_properties_and_data(tree):
    write(tree, "we,ird:name.py", BUGGY)
    (line,) = check("we,ird:name.py", "--no-cache", "--format", "github").stdout.splitlines()
    assert "file=we%2Cird%3Aname.py," in line


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "sarif", "github"])
def test_syntax_error_is_visible_in_every_format(tree, fmt):
    result = check("pkg/syntax.py", "--no-cache", "--format", fmt)
    assert result.exit_code == 1
    assert "HL000" in result.stdout


def test_full_format_for_multiline_violation(tree):
    write(tree, "multi.py", BUGGY.replace("register_forward_hook(_disable)", "register_forward_hook(\n        _disable,\n    )"))
    result = check("multi.py", "--no-cache")
    assert "14 |     module.register_forward_hook(" in result.stdout
    assert "^^^" in result.stdout


def test_full_format_with_tabs_and_unicode(tree):
    write(tree, "tabs.py", BUGGY.replace("    module.register_forward_hook(_disable)", "\tmodule.register_forward_hook(_disable)  # \u00fcber").replace("    module.register_forward_pre_hook", "\tmodule.register_forward_pre_hook"))
    result = check("tabs.py", "--no-cache")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "tabs.py:14:2: HL001" in result.stdout


GROUPED = """\
def probe(model, x, note):
    hooks = []
    hooks.append(model.encoder.register_forward_hook(note))
    hooks.append(model.decoder.register_forward_hook(note))
    model(x)
    for h in hooks:
        h.remove()
"""


@pytest.mark.parametrize("cache", ["--no-cache", None])
def test_one_finding_per_bug_lists_the_other_sites_as_related(tmp_path, monkeypatch, cache):
    # Two registrations of one hook into one store, removed outside `finally`: one HL004
    # at the first, the second as a related location (in JSON, SARIF, and from the cache).
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "grouped.py", GROUPED)
    args = ["grouped.py"] + ([cache] if cache else [])
    for _ in range(2):  # the second run answers from the cache when it is on
        data = json.loads(check(*args, "--format", "json").stdout)
        assert [(d["code"], d["location"], d["related"]) for d in data] == [
            ("HL004", {"row": 3, "column": 18}, [{"row": 4, "column": 18}])
        ]
    sarif = json.loads(check(*args, "--format", "sarif").stdout)
    (result,) = sarif["runs"][0]["results"]
    assert [r["physicalLocation"]["region"] for r in result["relatedLocations"]] == [{"startLine": 4, "startColumn": 18}]
    assert result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "grouped.py"
