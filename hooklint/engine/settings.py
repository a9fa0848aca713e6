"""What a check of one file is given (:class:`Settings`, the same in every worker
process) and what it gives back (:class:`FileResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hooklint.files import DEFAULT_MAX_FILE_SIZE
from hooklint.rules.base import RuleContext
from hooklint.violation import Violation


@dataclass(frozen=True)
class Settings:
    """Everything a worker process needs to check a file (picklable)."""

    rule_codes: tuple[str, ...]
    context: RuleContext = field(default_factory=RuleContext)
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: str = "."
    cache_dir: str | None = None
    max_file_size: int | None = DEFAULT_MAX_FILE_SIZE

    def fingerprint(self, rules) -> str:
        """Everything besides a file's content that decides its result, for the
        content cache's key: hooklint's code, ``rules`` (those that apply to the
        file's path, after per-file-ignores: two files with the same content may get
        different results), the rule context and the fix options."""
        from hooklint.cache import code_fingerprint

        codes = tuple(rule.code for rule in rules)
        return repr((code_fingerprint(), codes, self.context, self.fix, self.unsafe_fixes, self.diff))


@dataclass
class FileResult:
    path: str
    violations: list[Violation] = field(default_factory=list)
    #: A one-line problem that kept the file from being checked (or written).
    error: str | None = None
    fixed: int = 0
    original: str | None = None
    fixed_text: str | None = None
    fix_failures: list[str] = field(default_factory=list)
    #: The code of each fix applied (``--show-fixes``).
    fixed_codes: list[str] = field(default_factory=list)
    #: Other files whose summaries the result rests on: path → content digest.
    dependencies: dict[str, str] = field(default_factory=dict)
