"""Every link in the project's markdown that points into the repository resolves: the
file exists, and a ``#anchor`` names a heading of the target page (GitHub's slugs).

Checked: ``README.md``, ``CONTRIBUTING.md``, ``docs/*.md`` and the generated rule
pages ``docs/rules/*.md``.  Links inside code blocks and inline code are not links.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *ROOT.glob("docs/*.md"), *ROOT.glob("docs/rules/*.md")]
)

_FENCE = re.compile(r"^( {0,3})(```+|~~~+).*?^\1\2[ \t]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
#: ``[text](target)`` and ``![alt](target)``, with an optional title; ``[text]: target`` definitions.
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$", re.M)
_HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code spans."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation removed
    (except ``-`` and ``_``), spaces to ``-``."""
    text = re.sub(r"`([^`]*)`", r"\1", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor of a markdown page: its headings' slugs (the second heading of one
    name gets ``-1``, as on GitHub) and explicit ``<a name=...>`` / ``<a id=...>``."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        base = slug(heading)
        n = counts.get(base, 0)
        found.add(base if n == 0 else f"{base}-{n}")
        counts[base] = n + 1
    found.update(_HTML_ANCHOR.findall(text))
    return found


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """The links of ``page`` into ``root`` that do not resolve, each with the reason."""
    text = page.read_text(encoding="utf-8")
    prose = _prose(text)
    problems = []
    for target in [*_LINK.findall(prose), *_DEFINITION.findall(prose)]:
        if _EXTERNAL.match(target):
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page.resolve()
        if root.resolve() not in (resolved, *resolved.parents):
            problems.append(f"{target}: outside the repository")
        elif not resolved.exists():
            problems.append(f"{target}: no such file")
        elif (
            anchor
            and resolved.suffix == ".md"
            and anchor not in anchors(resolved.read_text(encoding="utf-8"))
        ):
            problems.append(f"{target}: no heading #{anchor} in {resolved.relative_to(root.resolve())}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_into_the_repository_resolve(page):
    assert broken_links(page) == [], f"{page.relative_to(ROOT)} has broken links"


def test_the_pages_checked_include_the_readme_contributing_and_every_rule_page():
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "CONTRIBUTING.md", "docs/rules.md", "docs/rules/HL001.md"} <= names


def test_a_broken_link_a_missing_anchor_and_a_link_in_code_are_told_apart(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text(
        "# Other page\n\n## The `--fix` option, again\n", encoding="utf-8"
    )
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Title\n\n## Same\n\n## Same\n\n"
        "[ok](other.md) [ok](other.md#the---fix-option-again) [ok](#same-1) [ok](#title)\n"
        "[ok](https://example.com/x.md) [gone](missing.md) [no anchor](other.md#nothing)\n"
        "[outside](../../elsewhere.md) `[code](absent.md)`\n\n"
        "```markdown\n[fenced](absent.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page, tmp_path) == [
        "missing.md: no such file",
        "other.md#nothing: no heading #nothing in docs/other.md",
        "../../elsewhere.md: outside the repository",
    ]


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Measuring a rule on real code", "measuring-a-rule-on-real-code"),
        ("The language server: `hooklint server`", "the-language-server-hooklint-server"),
        ("HL005–HL008: hooks that run", "hl005hl008-hooks-that-run"),
        ("Runtime: `hooklint.runtime`", "runtime-hooklintruntime"),
    ],
)
def test_slugs_follow_github(heading, expected):
    assert slug(heading) == expected
