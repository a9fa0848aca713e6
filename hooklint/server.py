"""``hooklint server``: a language server (LSP over stdio, with pygls).

What an editor gets, as from ``ruff server``:

* diagnostics when a Python file or a Jupyter notebook is opened, changed or saved
  (the buffer as it is, unsaved edits included), with the settings of the nearest
  ``pyproject.toml`` with ``[tool.hooklint]`` above the file, as ``hooklint check``
  finds them (re-read when that file changes);
* a quick fix per finding that has a fix (an unsafe one says so and is never the
  preferred action), and ``source.fixAll.hooklint``, every safe fix of a file;
* on hover over a finding, its rule's documentation (``hooklint explain``) and a link
  to its page (``docs/rules/HLxxx.md``), which each diagnostic's code links to too;
* notebooks through the LSP's notebook document sync: the code cells are linted as
  one module (:mod:`hooklint.notebook`) and each cell gets its own diagnostics.

Positions are converted to the encoding the client chose (UTF-16 by default, the
LSP's; hooklint counts code points).  pygls is an optional dependency
(``hooklint[lsp]``); without it ``hooklint server`` says so in one line.
"""

from __future__ import annotations

import os
from pathlib import Path

from hooklint.lexical import split_lines
from hooklint.violation import SAFE, Location, Violation

PYTHON_SUFFIXES = (".py", ".pyi")
FIX_ALL = "source.fixAll.hooklint"


class PyglsMissing(RuntimeError):
    """pygls is not installed; the message says how to install it."""


def serve() -> None:
    """Run the server on stdin/stdout until the client says exit."""
    build_server().start_io()


def build_server():
    try:
        from lsprotocol import types
        from pygls.lsp.server import LanguageServer
    except ImportError:
        raise PyglsMissing("`hooklint server` needs pygls: pip install 'hooklint[lsp]'") from None
    from hooklint import __version__

    server = LanguageServer(
        "hooklint",
        __version__,
        text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        notebook_document_sync=types.NotebookDocumentSyncOptions(
            notebook_selector=[
                types.NotebookDocumentFilterWithCells(
                    cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook"
                )
            ],
            save=True,
        ),
    )
    session = _Session(server, types)

    for method in (
        types.TEXT_DOCUMENT_DID_OPEN,
        types.TEXT_DOCUMENT_DID_CHANGE,
        types.TEXT_DOCUMENT_DID_SAVE,
    ):
        server.feature(method)(lambda ls, params: session.lint_document(params.text_document.uri))
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(lambda ls, params: session.forget(params.text_document.uri))
    for method in (
        types.NOTEBOOK_DOCUMENT_DID_OPEN,
        types.NOTEBOOK_DOCUMENT_DID_CHANGE,
        types.NOTEBOOK_DOCUMENT_DID_SAVE,
    ):
        server.feature(method)(lambda ls, params: session.lint_notebook(params.notebook_document.uri))
    server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)(
        lambda ls, params: [session.forget(cell.uri) for cell in params.cell_text_documents]
    )
    server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
    )(lambda ls, params: session.code_actions(params))
    server.feature(types.TEXT_DOCUMENT_HOVER)(lambda ls, params: session.hover(params))
    return server


class _Session:
    """The server's state: each document's latest findings (positions in that
    document: a notebook's in its cells) and the settings read per configuration file."""

    def __init__(self, server, types) -> None:
        self.server = server
        self.types = types
        self.findings: dict[str, list[Violation]] = {}
        self._settings: dict = {}
        self._error: str | None = None

    # -- settings ------------------------------------------------------------------
    def settings_for(self, path: Path):
        """The check settings for the file at ``path`` (cached per configuration
        file, and read again when that file changes); None after a configuration
        error, which is shown to the user."""
        from hooklint.config import ConfigError, find_pyproject, load_config
        from hooklint.runner import CheckRequest, build_settings

        try:
            pyproject = find_pyproject(path if path.parent.exists() else Path.cwd())
            stamp = _stamp(pyproject)
            cached = self._settings.get(pyproject)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            settings = build_settings(CheckRequest(paths=[path], config=load_config(pyproject)))
        except (ConfigError, ValueError) as exc:
            if str(exc) != self._error:  # once, not on every keystroke
                self.show(f"hooklint: {exc}", self.types.MessageType.Error)
            self._error = str(exc)
            return None
        self._error = None
        self._settings[pyproject] = (stamp, settings)
        return settings

    def show(self, message: str, kind) -> None:
        self.server.window_show_message(self.types.ShowMessageParams(type=kind, message=message))

    # -- diagnostics ---------------------------------------------------------------
    def lint_document(self, uri: str) -> None:
        workspace = self.server.workspace
        if workspace.get_notebook_document(cell_uri=uri) is not None:
            notebook = workspace.get_notebook_document(cell_uri=uri)
            return self.lint_notebook(notebook.uri)
        document = workspace.get_text_document(uri)
        path = _path(uri)
        if not (path.name.endswith(PYTHON_SUFFIXES) or document.language_id == "python"):
            return None
        violations = self._check(document.source, path)
        self.publish(uri, document.source, violations, document.version)
        return None

    def lint_notebook(self, uri: str) -> None:
        from hooklint.notebook import from_cells

        workspace = self.server.workspace
        notebook_document = workspace.get_notebook_document(notebook_uri=uri)
        if notebook_document is None:
            return
        code_cells = {}
        for number, cell in enumerate(notebook_document.cells, start=1):
            if cell.kind == self.types.NotebookCellKind.Code:
                code_cells[number] = workspace.get_text_document(cell.document)
        notebook = from_cells([(number, document.source) for number, document in code_cells.items()])
        violations = self._check(notebook.code, _path(uri), notebook)
        for number, document in code_cells.items():
            mine = [v for v in violations if v.cell == number]
            self.publish(document.uri, document.source, mine, document.version)

    def _check(self, text: str, path: Path, notebook=None) -> list[Violation]:
        from hooklint.engine import check_text

        settings = self.settings_for(path)
        if settings is None:
            return []
        try:
            result = check_text(text, str(path), settings, notebook)
        except Exception as exc:  # a bug in hooklint: say so, keep serving
            from hooklint.engine import internal_error

            self.server.window_log_message(
                self.types.LogMessageParams(
                    type=self.types.MessageType.Error, message=f"hooklint: {path}: {internal_error(exc)}"
                )
            )
            return []
        return result.violations

    def publish(self, uri: str, text: str, violations: list[Violation], version) -> None:
        self.findings[uri] = violations
        lines = split_lines(text, keepends=True)
        diagnostics = [self.diagnostic(v, lines) for v in violations]
        self.server.text_document_publish_diagnostics(
            self.types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def forget(self, uri: str) -> None:
        self.findings.pop(uri, None)
        self.server.text_document_publish_diagnostics(
            self.types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )

    def diagnostic(self, v: Violation, lines: list[str]):
        from hooklint.report.urls import rule_url

        types = self.types
        severity = types.DiagnosticSeverity.Error if v.code == "HL000" else types.DiagnosticSeverity.Warning
        return types.Diagnostic(
            range=self.range(lines, v.start, v.end),
            message=v.message,
            severity=severity,
            code=v.code,
            code_description=types.CodeDescription(href=rule_url(v.code)),
            source="hooklint",
            data={"fix": v.fix.applicability if v.fix is not None and v.fix.edits else None},
        )

    def range(self, lines: list[str], start: Location, end: Location):
        types = self.types
        server_range = types.Range(
            start=types.Position(line=start.line - 1, character=start.column - 1),
            end=types.Position(line=end.line - 1, character=end.column - 1),
        )
        return self.server.workspace.position_codec.range_to_client_units(lines, server_range)

    # -- requests ------------------------------------------------------------------
    def _at(self, uri: str, client_range) -> tuple[list[Violation], list[str], tuple, tuple]:
        """The findings of ``uri`` overlapping ``client_range``, the document's
        lines, and the range as 0-based ``(line, code point)`` pairs."""
        document = self.server.workspace.get_text_document(uri)
        lines = split_lines(document.source, keepends=True)
        wanted = self.server.workspace.position_codec.range_from_client_units(lines, client_range)
        low, high = (wanted.start.line, wanted.start.character), (wanted.end.line, wanted.end.character)
        found = [
            v
            for v in self.findings.get(uri, [])
            if (v.start.line - 1, v.start.column - 1) <= high and low <= (v.end.line - 1, v.end.column - 1)
        ]
        return found, lines, low, high

    def code_actions(self, params):
        types = self.types
        uri = params.text_document.uri
        only = params.context.only
        wants = lambda kind: only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)  # noqa: E731
        found, lines, _, _ = self._at(uri, params.range)
        actions = []
        if wants(types.CodeActionKind.QuickFix):
            for v in found:
                if v.fix is None or not v.fix.edits:
                    continue
                unsafe = v.fix.applicability != SAFE
                edits = [
                    types.TextEdit(range=self.range(lines, e.start, e.end), new_text=e.content)
                    for e in v.fix.edits
                ]
                actions.append(
                    types.CodeAction(
                        title=f"hooklint ({v.code}): {v.fix.message}" + (" (unsafe fix)" if unsafe else ""),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[self.diagnostic(v, lines)],
                        edit=types.WorkspaceEdit(changes={uri: edits}),
                        is_preferred=not unsafe,
                    )
                )
        if wants(FIX_ALL) and self.server.workspace.get_notebook_document(cell_uri=uri) is None:
            fix_all = self._fix_all(uri, lines)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    def _fix_all(self, uri: str, lines: list[str]):
        """Every safe fix of a file, as ``--fix`` applies them, as one edit."""
        from dataclasses import replace

        from hooklint.engine import check_text

        types = self.types
        text = "".join(lines)
        path = _path(uri)
        settings = self.settings_for(path)
        if settings is None or not any(v.is_fixable(False) for v in self.findings.get(uri, [])):
            return None
        fixed = check_text(text, str(path), replace(settings, fix=True, unsafe_fixes=False)).fixed_text
        if fixed is None or fixed == text:
            return None
        whole = types.Range(
            start=types.Position(line=0, character=0), end=types.Position(line=len(lines), character=0)
        )
        return types.CodeAction(
            title="hooklint: apply every safe fix",
            kind=FIX_ALL,
            edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole, new_text=fixed)]}),
        )

    def hover(self, params):
        from hooklint.report.urls import rule_url
        from hooklint.rules import find_rule

        types = self.types
        here = types.Range(start=params.position, end=params.position)
        found, lines, low, _ = self._at(params.text_document.uri, here)
        found = [v for v in found if low < (v.end.line - 1, v.end.column - 1) or v.start == v.end]
        if not found:
            return None
        parts = []
        for code in dict.fromkeys(v.code for v in found):
            rule = find_rule(code)
            if rule is not None:
                parts.append(
                    f"**{rule.code} `{rule.name}`**\n\n{rule.documentation()}\n\n[{rule.code} on the web]({rule_url(rule.code)})"
                )
        first = found[0]
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)),
            range=self.range(lines, first.start, first.end),
        )


def _path(uri: str) -> Path:
    """The file a document URI names (an untitled buffer: a name in the working directory)."""
    from pygls.uris import to_fs_path

    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else Path(os.getcwd()) / Path(uri.rsplit("/", 1)[-1] or "untitled.py").name


def _stamp(path: Path | None):
    if path is None:
        return None
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size)
