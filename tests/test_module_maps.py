"""The module maps a newcomer reads first (the docstrings of ``hooklint.engine`` and
``hooklint.analysis``) name every module of their package, and nothing that is gone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import hooklint

PACKAGE = Path(hooklint.__file__).parent


def _mapped(package: str) -> set[str]:
    text = (PACKAGE / package / "__init__.py").read_text(encoding="utf-8")
    docstring = text.split('"""')[1]
    # A map line is four or more spaces, a module name, two or more spaces, its job.
    return set(re.findall(r"^ {4,}([a-z_]+) {2,}\S", docstring, flags=re.MULTILINE))


@pytest.mark.parametrize("package", ["engine", "analysis"])
def test_the_map_names_every_module_and_only_those(package):
    modules = {p.stem for p in (PACKAGE / package).glob("*.py") if p.stem != "__init__"}
    mapped = _mapped(package)
    assert modules - mapped == set(), "modules the map does not name"
    assert mapped - modules == set(), "the map names modules that do not exist"
