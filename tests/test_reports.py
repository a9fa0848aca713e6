"""Every ``--format``, including HL000, against its documented shape."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _hooklint_cli import BUGGY, BUGGY_COLUMN, BUGGY_LINE, FIXED, PROJECT_ROOT, check, write

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
        assert set(item) == {
            "code",
            "name",
            "message",
            "filename",
            "cell",
            "location",
            "end_location",
            "fix",
            "related",
            "url",
        }
        assert item["related"] == [] and item["cell"] is None  # a notebook's cell: tests/test_notebooks.py
        assert item["url"].startswith("https://") and item["url"].endswith(f"/docs/rules/{item['code']}.md")
        assert (PROJECT_ROOT / "docs" / "rules" / f"{item['code']}.md").is_file()
        _location(item["location"])
        _location(item["end_location"])
        assert (item["end_location"]["row"], item["end_location"]["column"]) >= (
            item["location"]["row"],
            item["location"]["column"],
        )
    hl001, hl000 = data
    assert hl001["filename"] == "pkg/buggy.py" and hl001["name"] == "post-hook-without-always-call"
    assert hl001["location"] == {"row": BUGGY_LINE, "column": BUGGY_COLUMN}
    assert hl001["end_location"] == {
        "row": BUGGY_LINE,
        "column": BUGGY_COLUMN + len("module.register_forward_hook(_disable)"),
    }
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
    edits = [
        Edit(
            Location(e["location"]["row"], e["location"]["column"]),
            Location(e["end_location"]["row"], e["end_location"]["column"]),
            e["content"],
        )
        for e in item["fix"]["edits"]
    ]
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
        assert (
            not artifact["uri"].startswith("/")
            and "://" not in artifact["uri"]
            and "\\" not in artifact["uri"]
        )
        assert artifact["uriBaseId"] == "%SRCROOT%"
        region = location["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert (region["endLine"], region["endColumn"]) > (
            region["startLine"],
            region["startColumn"],
        ) or region["endLine"] > region["startLine"]
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (BUGGY_LINE, BUGGY_COLUMN)
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/buggy.py"


SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"


def _validate_sarif(log) -> None:
    """Against the official SARIF 2.1.0 schema (OASIS, errata 01; see tests/data/SOURCES.md)."""
    import jsonschema  # in the test extra: this must run, never skip

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    checker = jsonschema.FormatChecker()
    jsonschema.Draft4Validator(schema, format_checker=checker).validate(log)


def test_sarif_validates_against_the_official_schema(tree):
    write(tree, "grouped.py", GROUPED)
    write(tree, "a#1 b.py", BUGGY)
    log = json.loads(check(".", "--no-cache", "--format", "sarif", "--preview", "--unsafe-fixes").stdout)
    assert len(log["runs"][0]["results"]) >= 4
    _validate_sarif(log)
    # a log the schema rejects is rejected: the validation is not vacuous
    import jsonschema

    broken = json.loads(json.dumps(log))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        _validate_sarif(broken)


def test_sarif_levels_follow_the_tier_and_rules_link_their_docs(tree):
    from hooklint.rules import rules_by_code

    write(tree, "preview.py", "def run(block, x):\n    return block.forward(x)\n")
    log = json.loads(check(".", "--no-cache", "--format", "sarif", "--preview").stdout)
    (run,) = log["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tree.resolve().as_uri() + "/"
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    for code, descriptor in rules.items():
        assert descriptor["helpUri"].endswith(f"/docs/rules/{code}.md")
        assert descriptor["defaultConfiguration"]["level"] == (
            "note" if rules_by_code()[code].preview else "error"
        )
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels["HL001"] == "error" and levels["HL014"] == "note"


def test_sarif_uris_are_percent_encoded_and_absolute_outside_the_root(tree, tmp_path_factory):
    write(tree, "a#1 b%.py", BUGGY)
    outside = write(tmp_path_factory.mktemp("elsewhere"), "x y.py", BUGGY)
    log = json.loads(check("a#1 b%.py", str(outside), "--no-cache", "--format", "sarif").stdout)
    locations = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["locations"][0][
            "physicalLocation"
        ]["artifactLocation"]
        for r in log["runs"][0]["results"]
    }
    assert locations["a%231%20b%25.py"]["uriBaseId"] == "%SRCROOT%"
    absolute = outside.resolve().as_uri()
    assert absolute in locations and "uriBaseId" not in locations[absolute] and "%20" in absolute
    _validate_sarif(log)


def test_sarif_fixes_reproduce_the_fix_and_fingerprints_survive_a_shift(tree):
    from hooklint.engine import apply_edits
    from hooklint.violation import Edit, Location

    (result,) = json.loads(check("pkg/buggy.py", "--no-cache", "--format", "sarif").stdout)["runs"][0][
        "results"
    ]
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "pkg/buggy.py"
    edits = [
        Edit(
            Location(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
            Location(r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
            r["insertedContent"]["text"],
        )
        for r in change["replacements"]
    ]
    assert apply_edits(BUGGY, edits) == FIXED
    write(tree, "pkg/buggy.py", "# a new first line\n\n" + BUGGY)
    (moved,) = json.loads(check("pkg/buggy.py", "--no-cache", "--format", "sarif").stdout)["runs"][0][
        "results"
    ]
    assert moved["locations"][0]["physicalLocation"]["region"]["startLine"] == BUGGY_LINE + 2
    assert moved["partialFingerprints"] == result["partialFingerprints"]


def test_sarif_with_no_results_still_lists_rules(tree):
    log = json.loads(
        check("pkg", "--no-cache", "--format", "sarif", "--select", "HL000", "--ignore", "HL000").stdout
    )
    assert log["runs"][0]["tool"]["driver"]["rules"]


def test_github_workflow_commands(tree):
    lines = check("pkg", "--no-cache", "--format", "github").stdout.splitlines()
    assert len(lines) == 2
    first, second = lines
    assert first.startswith(
        f"::error title=hooklint (HL001),file=pkg/buggy.py,line={BUGGY_LINE},col={BUGGY_COLUMN},endLine={BUGGY_LINE},endColumn="
    )
    assert "::HL001 post-hook undoes" in first
    assert second.startswith("::error title=hooklint (HL000),file=pkg/syntax.py,line=3,")
    for line in lines:
        properties, message = line[len("::error ") :].split("::", 1)
        assert "\n" not in message and "\r" not in message


def test_github_escapes_properties_and_data(tree):
    write(tree, "we,ird:name.py", BUGGY)
    (line,) = check("we,ird:name.py", "--no-cache", "--format", "github").stdout.splitlines()
    assert "file=we%2Cird%3Aname.py," in line


@pytest.mark.parametrize(
    "fmt", ["full", "concise", "json", "json-lines", "sarif", "github", "gitlab", "junit"]
)
def test_syntax_error_is_visible_in_every_format(tree, fmt):
    result = check("pkg/syntax.py", "--no-cache", "--format", fmt)
    assert result.exit_code == 1
    assert "HL000" in result.stdout


def test_full_format_for_multiline_violation(tree):
    write(
        tree,
        "multi.py",
        BUGGY.replace("register_forward_hook(_disable)", "register_forward_hook(\n        _disable,\n    )"),
    )
    result = check("multi.py", "--no-cache")
    # the whole span, with two lines of context either side (as ruff 0.17 draws it)
    assert result.stdout.split("\n", 1)[1].startswith(
        "   |\n"
        "12 |   def install(module):\n"
        "13 |       module.register_forward_pre_hook(_enable)\n"
        "14 | /     module.register_forward_hook(\n"
        "15 | |         _disable,\n"
        "16 | |     )\n"
        "   | |_____^\n"
        "   |\n"
        "help: "
    ), result.stdout


def test_full_format_shows_two_lines_of_context_and_drops_blank_edges(tree):
    result = check("pkg/buggy.py", "--no-cache")
    assert result.stdout.split("\n", 1)[1].startswith(
        "   |\n"
        "12 | def install(module):\n"
        "13 |     module.register_forward_pre_hook(_enable)\n"
        "14 |     module.register_forward_hook(_disable)\n"
        "   |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "   |\n"
        "help: "
    ), result.stdout
    write(
        tree,
        "edges.py",
        "import os\nfrom torch.nn.modules.module import register_module_forward_hook\n\n\nregister_module_forward_hook(print)\n\n\n",
    )
    text = check("edges.py", "--no-cache").stdout
    assert text.split("\n", 1)[1].startswith(
        "  |\n5 | register_module_forward_hook(print)\n  | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  |\n"
    ), text


def test_full_format_from_stdin_shows_the_line(tree):
    result = check("-", "--no-cache", "--stdin-filename", "nowhere.py", input=BUGGY)
    assert "14 |     module.register_forward_hook(_disable)" in result.stdout


def test_full_format_with_tabs_and_unicode(tree):
    write(
        tree,
        "tabs.py",
        BUGGY.replace(
            "    module.register_forward_hook(_disable)",
            "\tmodule.register_forward_hook(_disable)  # \u00fcber",
        ).replace("    module.register_forward_pre_hook", "\tmodule.register_forward_pre_hook"),
    )
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
    assert [r["physicalLocation"]["region"] for r in result["relatedLocations"]] == [
        {"startLine": 4, "startColumn": 18}
    ]
    assert result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "grouped.py"


# -- json-lines, junit, gitlab: parsed as their consumers parse them ---------------------------
def test_json_lines_is_the_json_list_one_object_per_line(tree):
    as_list = json.loads(check("pkg", "--no-cache", "--format", "json").stdout)
    lines = check("pkg", "--no-cache", "--format", "json-lines").stdout.split("\n")
    assert lines[-1] == "" and [json.loads(line) for line in lines[:-1]] == as_list
    write(tree, "clean.py", "x = 1\n")
    assert check("clean.py", "--no-cache", "--format", "json-lines").stdout == ""


def test_junit_parses_with_one_failing_case_per_violation(tree):
    write(
        tree,
        "pkg/two.py",
        BUGGY.replace(
            "def install",
            "def install_twice(module):\n    module.register_forward_pre_hook(_enable)\n    module.register_forward_hook(_disable)\n\n\ndef install",
        ),
    )
    result = check("pkg", "--no-cache", "--format", "junit")
    assert result.exit_code == 1 and "Found" not in result.stdout
    root = ET.fromstring(result.stdout.encode())
    assert root.tag == "testsuites" and root.get("failures") == root.get("tests") == "4"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"pkg/buggy.py", "pkg/syntax.py", "pkg/two.py"}
    cases = suites["pkg/two.py"].findall("testcase")
    assert [c.get("name") for c in cases] == ["hooklint.HL001", "hooklint.HL001"] and suites[
        "pkg/two.py"
    ].get("tests") == "2"
    (case,) = suites["pkg/buggy.py"].findall("testcase")
    assert (case.get("classname"), case.get("line"), case.get("column")) == (
        "pkg/buggy.py",
        str(BUGGY_LINE),
        str(BUGGY_COLUMN),
    )
    failure = case.find("failure")
    assert (
        failure.get("type") == "HL001"
        and failure.get("message")
        and f"line {BUGGY_LINE}, col {BUGGY_COLUMN}" in failure.text
    )


def test_junit_clean_run_is_one_passing_case(tree):
    root = ET.fromstring(check("pkg/clean.py", "--no-cache", "--format", "junit").stdout.encode())
    assert root.get("failures") == "0"
    (case,) = root.iter("testcase")
    assert case.find("failure") is None


def test_junit_escapes_what_xml_cannot_hold(tree):
    from hooklint.report import junit
    from hooklint.violation import Location, Violation

    v = Violation("HL001", "n", 'a <b> & "c" \x0c \x1b', "p&<>.py", Location(1, 1), Location(1, 2))
    root = ET.fromstring(junit.render([v]).encode())
    failure = next(root.iter("failure"))
    assert (
        failure.get("message") == 'a <b> & "c" \ufffd \ufffd'
        and next(root.iter("testsuite")).get("name") == "p&<>.py"
    )


def test_gitlab_code_quality_fields(tree):
    write(tree, "pkg/copy.py", BUGGY)
    write(
        tree,
        "pkg/twice.py",
        BUGGY
        + "\n\ndef install_again(module):\n    module.register_forward_pre_hook(_enable)\n    module.register_forward_hook(_disable)\n",
    )
    result = check("pkg", "--no-cache", "--format", "gitlab", "--preview")
    issues = json.loads(result.stdout)
    assert isinstance(issues, list) and len(issues) == 5
    for issue in issues:  # what GitLab's Code Quality widget requires of each issue
        assert isinstance(issue["description"], str) and issue["description"]
        assert isinstance(issue["check_name"], str) and issue["check_name"].startswith("HL")
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert isinstance(issue["fingerprint"], str) and issue["fingerprint"]
        location = issue["location"]
        assert not location["path"].startswith("/") and "\\" not in location["path"]
        begin = location["positions"]["begin"]
        assert isinstance(begin["line"], int) and begin["line"] >= 1 and begin["column"] >= 1
    fingerprints = [i["fingerprint"] for i in issues]
    assert len(set(fingerprints)) == len(fingerprints)  # GitLab drops duplicates: each finding its own
    by_path = {i["location"]["path"]: i for i in issues if i["check_name"] == "HL001"}
    assert by_path["pkg/buggy.py"]["location"]["positions"]["begin"] == {
        "line": BUGGY_LINE,
        "column": BUGGY_COLUMN,
    }
    assert by_path["pkg/buggy.py"]["severity"] == "major"
