"""``[tool.hooklint]`` configuration through the CLI."""

from __future__ import annotations

import textwrap

import pytest

from _hooklint_cli import BUGGY, CLEAN, check, no_traceback, write


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
        ('[tool.hooklint]\nextend-select = [1]\n', "extend-select"),
        ('[tool.hooklint]\ntarget-torch = "two"\n', "target-torch"),
        ('[tool.hooklint]\ntarget-torch = 2\n', "target-torch"),
        ('[tool.hooklint]\npreview = "yes"\n', "preview"),
        ('[tool.hooklint]\nexclude = "build"\n', "exclude"),
        ('[tool.hooklint]\nper-file-ignores = ["x"]\n', "per-file-ignores"),
        ('[tool.hooklint.per-file-ignores]\n"tests/*" = ["HL998"]\n', "HL998"),
        ('[tool.hooklint\nselect = 1\n', "invalid TOML"),
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
    [("torch>=2.4", True), ("torch>=2.0", False), ("torch>=2.0,<3", False), ("torch~=2.3", True), ("torch[cuda]>=2.1; python_version>'3.9'", True)],
)
def test_target_torch_inferred_from_project_dependencies(tree, dependency, fixable):
    pyproject(tree, f'[project]\nname = "x"\ndependencies = ["numpy", "torchvision>=0.1", "{dependency}"]\n')
    result = check("src", "--no-cache", "--fix", "--format", "concise")
    assert result.exit_code == (0 if fixable else 1), result.output
    text = (tree / "src/pkg/buggy.py").read_text()
    assert ("always_call=True" in text) is fixable
    if not fixable:
        assert "fix withheld" in result.stdout and "torch >= 2.1" in result.stdout and "target is 2.0" in result.stdout


def test_target_torch_setting_beats_dependencies_and_option_beats_both(tree):
    pyproject(tree, '[project]\nname = "x"\ndependencies = ["torch>=2.0"]\n[tool.hooklint]\ntarget-torch = "2.4"\n')
    assert check("src", "--no-cache", "--format", "concise").stdout.count("HL001 [*]") == 1
    assert check("src", "--no-cache", "--format", "concise", "--target-torch", "2.0").stdout.count("HL001 [*]") == 0


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
