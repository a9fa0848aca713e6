"""``[tool.hooklint]`` configuration through the CLI."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from _hooklint_cli import BUGGY, CLEAN, check, no_traceback, write

from hooklint.config import find_pyproject


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "src/pkg/buggy.py", BUGGY)
    write(tmp_path, "src/pkg/clean.py", CLEAN)
    return tmp_path


def pyproject(root, body: str, name: str = "pyproject.toml"):
    return write(root, name, textwrap.dedent(body))


def test_config_found_by_walking_up_from_the_first_path(tree, monkeypatch):
    pyproject(tree, '[tool.hooklint]\nignore = ["HL001"]\n')
    monkeypatch.chdir(tree / "src/pkg")
    assert check("buggy.py", "--no-cache").exit_code == 0
    monkeypatch.chdir(tree.parent)
    assert check(str(tree / "src"), "--no-cache").exit_code == 0


def test_nearest_pyproject_with_a_hooklint_table_wins(tree):
    pyproject(tree, '[tool.hooklint]\nignore = ["HL001"]\n')
    pyproject(tree, '[project]\nname = "inner"\n', "src/pyproject.toml")  # no [tool.hooklint]: skipped
    assert check("src", "--no-cache").exit_code == 0
    pyproject(tree, '[tool.hooklint]\nselect = ["HL001"]\n', "src/pkg/pyproject.toml")
    assert check("src/pkg", "--no-cache").exit_code == 1


def test_config_option_overrides_discovery(tree):
    pyproject(tree, '[tool.hooklint]\nignore = ["HL001"]\n')
    pyproject(tree, '[tool.hooklint]\nselect = ["HL001"]\n', "other/custom.toml")
    assert check("src", "--no-cache").exit_code == 0
    assert check("src", "--no-cache", "--config", "other/custom.toml").exit_code == 1


def test_missing_config_file_is_exit_2(tree):
    result = check("src", "--no-cache", "--config", "nope.toml")
    assert result.exit_code == 2
    no_traceback(result)
    assert "nope.toml" in result.stderr


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ('[tool.hooklint]\nselct = ["HL001"]\n', "selct"),
        ('[tool.hooklint]\nselect = "HL001"\n', "select"),
        ('[tool.hooklint]\nselect = ["HL999"]\n', "HL999"),
        ('[tool.hooklint]\nignore = ["E501"]\n', "E501"),
        ("[tool.hooklint]\nextend-select = [1]\n", "extend-select"),
        ('[tool.hooklint]\ntarget-torch = "two"\n', "target-torch"),
        ("[tool.hooklint]\ntarget-torch = 2\n", "target-torch"),
        ('[tool.hooklint]\npreview = "yes"\n', "preview"),
        ('[tool.hooklint]\nexclude = "build"\n', "exclude"),
        ('[tool.hooklint]\nper-file-ignores = ["x"]\n', "per-file-ignores"),
        ('[tool.hooklint.per-file-ignores]\n"tests/*" = ["HL998"]\n', "HL998"),
        ("[tool.hooklint\nselect = 1\n", "invalid TOML"),
    ],
)
def test_bad_config_is_exit_2_naming_key_and_file(tree, body, needle):
    pyproject(tree, body)
    result = check("src", "--no-cache")
    assert result.exit_code == 2
    no_traceback(result)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "pyproject.toml" in lines[0] and needle in lines[0]


def test_per_file_ignores(tree):
    pyproject(tree, '[tool.hooklint.per-file-ignores]\n"src/pkg/buggy.py" = ["HL001"]\n')
    assert check("src", "--no-cache").exit_code == 0
    pyproject(tree, '[tool.hooklint.per-file-ignores]\n"buggy.py" = ["HL0"]\n')
    assert check("src", "--no-cache").exit_code == 0
    pyproject(tree, '[tool.hooklint.per-file-ignores]\n"tests/*" = ["HL001"]\n')
    assert check("src", "--no-cache").exit_code == 1


def test_per_file_ignores_is_relative_to_the_config_not_the_cwd(tree, monkeypatch):
    pyproject(tree, '[tool.hooklint.per-file-ignores]\n"src/pkg/*.py" = ["HL001"]\n')
    monkeypatch.chdir(tree / "src")
    assert check("pkg", "--no-cache").exit_code == 0


def test_exclude_replaces_and_extend_exclude_adds(tree):
    write(tree, "generated/buggy.py", BUGGY)
    pyproject(tree, '[tool.hooklint]\nextend-exclude = ["generated"]\n')
    result = check(".", "--no-cache", "--format", "concise")
    assert "generated/" not in result.stdout and "src/pkg/buggy.py" in result.stdout
    pyproject(tree, '[tool.hooklint]\nexclude = ["src"]\n')
    result = check(".", "--no-cache", "--format", "concise")
    assert "generated/buggy.py" in result.stdout and "src/" not in result.stdout


def test_excluded_file_named_explicitly_is_still_checked(tree):
    pyproject(tree, '[tool.hooklint]\nextend-exclude = ["src"]\n')
    assert check("src/pkg/buggy.py", "--no-cache").exit_code == 1


def test_target_torch_from_config_withholds_fix(tree):
    pyproject(tree, '[tool.hooklint]\ntarget-torch = "2.0"\n')
    result = check("src", "--no-cache", "--fix", "--format", "concise")
    assert result.exit_code == 1
    assert "always_call" in result.stdout and "2.1" in result.stdout and "2.0" in result.stdout
    assert (tree / "src/pkg/buggy.py").read_text() == BUGGY


@pytest.mark.parametrize(
    ("dependency", "fixable"),
    [
        ("torch>=2.4", True),
        ("torch>=2.0", False),
        ("torch>=2.0,<3", False),
        ("torch~=2.3", True),
        ("torch[cuda]>=2.1; python_version>'3.9'", True),
    ],
)
def test_target_torch_inferred_from_project_dependencies(tree, dependency, fixable):
    pyproject(tree, f'[project]\nname = "x"\ndependencies = ["numpy", "torchvision>=0.1", "{dependency}"]\n')
    result = check("src", "--no-cache", "--fix", "--format", "concise")
    assert result.exit_code == (0 if fixable else 1), result.output
    text = (tree / "src/pkg/buggy.py").read_text()
    assert ("always_call=True" in text) is fixable
    if not fixable:
        assert (
            "fix withheld" in result.stdout
            and "torch >= 2.1" in result.stdout
            and "target is 2.0" in result.stdout
        )


def test_target_torch_setting_beats_dependencies_and_option_beats_both(tree):
    pyproject(
        tree, '[project]\nname = "x"\ndependencies = ["torch>=2.0"]\n[tool.hooklint]\ntarget-torch = "2.4"\n'
    )
    assert check("src", "--no-cache", "--format", "concise").stdout.count("HL001 [*]") == 1
    assert (
        check("src", "--no-cache", "--format", "concise", "--target-torch", "2.0").stdout.count("HL001 [*]")
        == 0
    )


def test_bad_target_torch_option(tree):
    result = check("src", "--no-cache", "--target-torch", "latest")
    assert result.exit_code == 2
    no_traceback(result)
    assert "--target-torch" in result.stderr


def test_select_in_config_and_on_the_command_line(tree):
    pyproject(tree, '[tool.hooklint]\nselect = ["HL000"]\n')
    assert check("src", "--no-cache").exit_code == 0
    assert check("src", "--no-cache", "--extend-select", "HL001").exit_code == 1
    assert check("src", "--no-cache", "--select", "HL001").exit_code == 1


# -- hostile pyproject.toml files (issue 11, items 10 and 11) --------------------------------
@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"tool = 5\n", "[tool] must be a table"),
        (b'tool = "x"\n', "[tool] must be a table"),
        (b'tool = "hooklint"\n', "[tool] must be a table"),
        (b"project = 5\n", "[project] must be a table"),
        (b"[tool]\nhooklint = 5\n", "[tool.hooklint] must be a table"),
        (b"tool.hooklint = [1]\n", "[tool.hooklint] must be a table"),
        (b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "too deeply nested"),
        (b'[tool.hooklint]\nselect = ["HL001"]\n# caf\xe9\n', "not UTF-8"),
        (b'[tool.hooklint]\nignore = ["HL\xff"]\n', "not UTF-8"),
        (b"[tool.hooklint]\ntarget-torch = 2.10\n", "target-torch"),
        (b"[tool.hooklint]\ntarget-torch = 2.4\n", "target-torch"),
        (b"[tool.hooklint]\nselect = " + b"[" * 400 + b"]" * 400 + b"\n", "select"),
    ],
)
def test_hostile_pyproject_is_one_line_naming_the_file(tree, body, needle):
    write(tree, "pyproject.toml", body)
    result = check("src", "--no-cache")
    assert result.exit_code == 2, result.output
    no_traceback(result)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 300, lines
    assert "pyproject.toml" in lines[0] and needle in lines[0]


def test_target_torch_float_is_rejected_saying_why(tree):
    pyproject(tree, "[tool.hooklint]\ntarget-torch = 2.10\n")
    message = check("src", "--no-cache").stderr
    assert 'string like "2.4"' in message and "2.10 from 2.1" in message


def test_target_torch_string_keeps_two_digit_minor_versions(tree):
    pyproject(tree, '[tool.hooklint]\ntarget-torch = "1.10"\n')
    result = check("src", "--no-cache", "--format", "concise")
    assert result.exit_code == 1
    assert "target is 1.10" in result.stdout  # 1.10 < 2.1: the always_call fix is withheld
    from hooklint.config import load_config

    assert load_config(pyproject(tree, '[tool.hooklint]\ntarget-torch = "2.10"\n')).target_torch == (2, 10)


def test_a_table_of_the_wrong_type_in_a_parent_pyproject_is_reported(tree):
    write(tree, "pyproject.toml", "tool = 5\n")
    pyproject(tree, '[project]\nname = "inner"\n', "src/pyproject.toml")
    result = check("src/pkg", "--no-cache")
    assert result.exit_code == 2
    no_traceback(result)
    [line] = result.stderr.strip().splitlines()
    assert "[tool] must be a table" in line and "src/pyproject.toml" not in line


def test_unsearchable_parent_directory_is_passed_over(tmp_path, monkeypatch):
    """A directory above the checked path that cannot be searched (EACCES from stat,
    which root never sees, hence the monkeypatch) holds no configuration: the search
    goes on above it instead of raising."""
    outer = tmp_path / "outer"
    inner = outer / "locked" / "pkg"
    inner.mkdir(parents=True)
    (outer / "pyproject.toml").write_text("[tool.hooklint]\nignore = ['HL004']\n")
    locked = outer / "locked" / "pyproject.toml"
    real_is_file = Path.is_file

    def is_file(path):
        if path == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_is_file(path)

    monkeypatch.setattr(Path, "is_file", is_file)
    assert find_pyproject(inner) == outer / "pyproject.toml"


# -- hierarchical configuration (issue 15, item 4) -------------------------------------------
def _codes_by_file(result) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for line in result.stdout.splitlines():
        if ": HL" in line:
            path, rest = line.split(":", 1)[0], line.split(": ", 1)[1]
            found.setdefault(path, set()).add(rest.split()[0])
    return found


def test_each_file_uses_its_closest_configuration(tree):
    pyproject(tree, '[tool.hooklint]\nignore = ["HL001"]\n')
    write(tree, "inner/pkg/buggy.py", BUGGY)
    pyproject(tree, '[tool.hooklint]\nselect = ["HL001"]\n', "inner/pyproject.toml")
    result = check("src", "inner", "--no-cache", "--format", "concise")
    assert _codes_by_file(result) == {"inner/pkg/buggy.py": {"HL001"}}
    # the order of the paths does not matter: the first one no longer decides for all
    assert _codes_by_file(check("inner", "src", "--no-cache", "--format", "concise")) == {
        "inner/pkg/buggy.py": {"HL001"}
    }
    # a directory walk meets the nested project too
    assert _codes_by_file(check(".", "--no-cache", "--format", "concise")) == {
        "inner/pkg/buggy.py": {"HL001"}
    }


def test_missing_path_then_a_configured_directory():
    # `hooklint check missing/ examples/` once used the first path's (the working
    # directory's) settings for examples/ too: 17 findings; examples/pyproject.toml
    # turns preview on, and each of its preview rules' examples is flagged: 24.
    import os

    from _hooklint_cli import PROJECT_ROOT

    cwd = os.getcwd()
    os.chdir(PROJECT_ROOT)
    try:
        both = check("missing/", "examples/", "--no-cache", "--format", "concise", "--quiet")
        alone = check("examples/", "--no-cache", "--format", "concise", "--quiet")
    finally:
        os.chdir(cwd)
    assert both.exit_code == 2 and "missing" in both.stderr
    assert both.stdout == alone.stdout
    assert any(
        " HL006 " in line or " HL014 " in line for line in both.stdout.splitlines()
    )  # preview rules ran


def test_hooklint_toml_is_a_flat_table_and_wins_over_pyproject_in_the_same_directory(tree):
    pyproject(tree, '[tool.hooklint]\nselect = ["HL001"]\n')
    assert check("src", "--no-cache").exit_code == 1
    pyproject(tree, 'ignore = ["HL001"]\n', "hooklint.toml")
    assert check("src", "--no-cache").exit_code == 0
    pyproject(tree, 'selct = ["HL001"]\n', "hooklint.toml")
    result = check("src", "--no-cache")
    assert result.exit_code == 2 and "hooklint.toml" in result.stderr and "selct" in result.stderr


def test_hooklint_toml_infers_target_torch_from_the_pyproject_beside_it(tree):
    pyproject(tree, '[project]\nname = "x"\ndependencies = ["torch>=2.0"]\n')
    pyproject(tree, "preview = false\n", "hooklint.toml")
    result = check("src", "--no-cache", "--format", "concise")
    assert "target is 2.0" in result.stdout


def test_extend_inherits_and_the_extending_file_wins(tree):
    pyproject(tree, 'ignore = ["HL001"]\nextend-exclude = ["generated"]\n', "base/hooklint.toml")
    pyproject(tree, '[tool.hooklint]\nextend = "base/hooklint.toml"\n')
    write(tree, "generated/buggy.py", BUGGY)
    assert check(".", "--no-cache").exit_code == 0  # HL001 ignored, as inherited
    pyproject(tree, '[tool.hooklint]\nextend = "base/hooklint.toml"\nignore = []\n')
    result = check(".", "--no-cache", "--format", "concise")
    assert _codes_by_file(result) == {
        "src/pkg/buggy.py": {"HL001"}
    }  # own ignore replaces; exclude still inherited
    pyproject(tree, '[tool.hooklint]\nextend = "base/hooklint.toml"\nignore = []\nextend-exclude = ["src"]\n')
    assert check(".", "--no-cache").exit_code == 0  # extend-exclude adds to the inherited one


@pytest.mark.parametrize(
    ("files", "needle"),
    [
        ({"pyproject.toml": '[tool.hooklint]\nextend = "nope.toml"\n'}, "no such configuration file"),
        ({"pyproject.toml": "[tool.hooklint]\nextend = 3\n"}, "extend"),
        (
            {
                "pyproject.toml": '[tool.hooklint]\nextend = "a.toml"\n',
                "a.toml": 'extend = "pyproject.toml"\n',
            },
            "cycle",
        ),
        (
            {"pyproject.toml": '[tool.hooklint]\nextend = "a.toml"\n', "a.toml": 'select = ["HL999"]\n'},
            "HL999",
        ),
    ],
)
def test_bad_extend_is_one_line_exit_2(tree, files, needle):
    for name, body in files.items():
        pyproject(tree, body, name)
    result = check("src", "--no-cache")
    assert result.exit_code == 2, result.output
    no_traceback(result)
    [line] = result.stderr.strip().splitlines()
    assert needle in line


def test_config_option_applies_to_every_path(tree):
    write(tree, "inner/pkg/buggy.py", BUGGY)
    pyproject(tree, '[tool.hooklint]\nignore = ["HL001"]\n', "inner/pyproject.toml")
    pyproject(tree, '[tool.hooklint]\nselect = ["HL001"]\n', "ci.toml")
    assert set(_codes_by_file(check(".", "--no-cache", "--format", "concise", "--config", "ci.toml"))) == {
        "inner/pkg/buggy.py",
        "src/pkg/buggy.py",
    }


def test_nested_project_excludes_apply_to_its_files(tree):
    write(tree, "inner/vendored/buggy.py", BUGGY)
    pyproject(tree, '[tool.hooklint]\nextend-exclude = ["vendored"]\n', "inner/pyproject.toml")
    result = check(".", "--no-cache", "--format", "concise")
    assert "inner/vendored" not in result.stdout and "src/pkg/buggy.py" in result.stdout


def test_force_exclude_holds_named_files_to_the_excludes(tree):
    pyproject(tree, '[tool.hooklint]\nextend-exclude = ["src"]\n')
    assert check("src/pkg/buggy.py", "--no-cache").exit_code == 1  # named: checked
    result = check("src/pkg/buggy.py", "--no-cache", "--force-exclude")
    assert result.exit_code == 0 and "All checks passed" in result.output
    write(tree, "build/buggy.py", BUGGY)  # a default exclude
    assert check("build/buggy.py", "--no-cache", "--force-exclude").exit_code == 0
    assert check("build/buggy.py", "--no-cache").exit_code == 1


def test_a_discovered_file_gets_its_directorys_settings_as_any_path_would(tmp_path, monkeypatch):
    """``ConfigResolver.of_file`` (what a run asks of each discovered file) gives what
    asking for the path gives, per directory, without a directory check per file."""
    from hooklint.config import ConfigResolver

    (tmp_path / "pyproject.toml").write_text('[tool.hooklint]\nignore = ["HL001"]\n', encoding="utf-8")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "hooklint.toml").write_text('ignore = ["HL002"]\n', encoding="utf-8")
    files = [tmp_path / "a.py", tmp_path / "sub" / "b.py", tmp_path / "sub" / "deeper" / "c.py"]
    for file in files:
        file.write_text("x = 1\n", encoding="utf-8")
    asked = ConfigResolver()
    expected = [asked(file) for file in files]
    resolver = ConfigResolver()
    checks = []
    original = os.path.isdir
    monkeypatch.setattr(os.path, "isdir", lambda p: checks.append(p) or original(p))
    found = [resolver.of_file(file) for file in files]
    assert [c.ignore for c in found] == [c.ignore for c in expected] == [["HL001"], ["HL002"], ["HL002"]]
    assert not any(str(p).endswith(".py") for p in checks)
    assert resolver.of_file(files[1]) is found[1] is resolver(files[1])
