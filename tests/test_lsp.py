"""``hooklint server`` as an editor uses it: a subprocess spoken to over stdio with
pygls' language client (pygls is in the ``test`` extra: this never skips)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from _hooklint_cli import BUGGY, BUGGY_COLUMN, BUGGY_LINE, FIXED, check, hooklint, write
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from hooklint.report.urls import rule_url

#: HL013 (on by default) too, which the workspace's configuration ignores.
STALE_IMPORT = "from torch.nn.utils.parametrize import _cache\n"
UNSAFE = "def watch(layer, record):\n    layer.register_backward_hook(record)\n"  # HL007: an unsafe fix
TIMEOUT = 30
NOTEBOOK_FUNCTION = """\
def collect(model, batches):
    found = []
    def keep(module, inputs, output):
        found.append(output)
    model.register_forward_hook(keep)
    for batch in batches:
        %time model(batch)
    return found"""


def _apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 positions, the client's default) as an editor does."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        before = sum(len(line) for line in lines[: position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units, index = 0, 0
        while units < position.character and index < len(line):
            units += 2 if ord(line[index]) > 0xFFFF else 1
            index += 1
        return before + index

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


class Editor:
    """A language client that keeps every published diagnostic, in order."""

    def __init__(self) -> None:
        self.client = LanguageClient("hooklint-test", "1")
        self.published: asyncio.Queue = asyncio.Queue()
        self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(
            lambda ls, params: self.published.put_nowait(params)
        )
        self.messages: list[str] = []
        self.client.feature(types.WINDOW_SHOW_MESSAGE)(
            lambda ls, params: self.messages.append(params.message)
        )
        self.client.feature(types.WINDOW_LOG_MESSAGE)(lambda ls, params: self.messages.append(params.message))

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        while True:
            params = await asyncio.wait_for(self.published.get(), TIMEOUT)
            if params.uri == uri:
                return params.diagnostics

    async def open(self, uri: str, text: str) -> list[types.Diagnostic]:
        item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        return await self.diagnostics(uri)

    async def actions(self, uri: str, diagnostic: types.Diagnostic, only=None) -> list[types.CodeAction]:
        params = types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=only),
        )
        return await asyncio.wait_for(self.client.text_document_code_action_async(params), TIMEOUT)


async def _session(workspace: Path) -> dict:
    """Open, fix, change, hover: what the test asserts, gathered in one server run."""
    editor = Editor()
    client = editor.client
    seen: dict = {}
    await client.start_io(sys.executable, "-m", "hooklint", "server", cwd=str(workspace))
    try:
        capabilities = types.ClientCapabilities(
            notebook_document=types.NotebookDocumentClientCapabilities(
                synchronization=types.NotebookDocumentSyncClientCapabilities()
            )
        )
        initialized = await asyncio.wait_for(
            client.initialize_async(
                types.InitializeParams(
                    capabilities=capabilities,
                    root_uri=from_fs_path(str(workspace)),
                    workspace_folders=[types.WorkspaceFolder(uri=from_fs_path(str(workspace)), name="ws")],
                )
            ),
            TIMEOUT,
        )
        seen["capabilities"] = initialized.capabilities
        client.initialized(types.InitializedParams())

        # A buggy file: one diagnostic (HL013 is ignored by the workspace's config).
        uri = from_fs_path(str(workspace / "pkg" / "buggy.py"))
        text = STALE_IMPORT + BUGGY
        seen["opened"] = diagnostics = await editor.open(uri, text)
        [hl001] = [d for d in diagnostics if d.code == "HL001"]
        seen["actions"] = actions = await editor.actions(uri, hl001)
        seen["hover"] = await asyncio.wait_for(
            client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri), position=hl001.range.start
                )
            ),
            TIMEOUT,
        )
        seen["hover_elsewhere"] = await asyncio.wait_for(
            client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=1, character=0),
                )
            ),
            TIMEOUT,
        )
        seen["fix_all"] = await editor.actions(uri, hl001, only=[types.CodeActionKind.SourceFixAll])
        # The editor applies the quick fix and sends the new text.
        [quick_fix] = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
        fixed = _apply(text, quick_fix.edit.changes[uri])
        seen["fixed_text"] = fixed
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
            )
        )
        seen["after_fix"] = await editor.diagnostics(uri)

        # An unsafe fix is offered, marked as such, and never preferred.
        unsafe_uri = from_fs_path(str(workspace / "pkg" / "grads.py"))
        [hl007] = await editor.open(unsafe_uri, UNSAFE)
        seen["unsafe"] = (hl007, await editor.actions(unsafe_uri, hl007))

        # A notebook, through the notebook document sync: diagnostics per cell.
        notebook_uri = from_fs_path(str(workspace / "analysis.ipynb"))
        cells = [
            (types.NotebookCellKind.Markup, "# Activations"),
            (
                types.NotebookCellKind.Code,
                "%matplotlib inline\nstore = []\ndef capture(module, inputs, output):\n    store.append(output)",
            ),
            (types.NotebookCellKind.Code, 'tag = "\U0001f525"; model.register_forward_hook(capture)\n!ls'),
            (types.NotebookCellKind.Code, NOTEBOOK_FUNCTION),
        ]
        cell_uris = [
            f"vscode-notebook-cell:{workspace.as_posix()}/analysis.ipynb#cell{i}" for i in range(len(cells))
        ]
        client.notebook_document_did_open(
            types.DidOpenNotebookDocumentParams(
                notebook_document=types.NotebookDocument(
                    uri=notebook_uri,
                    notebook_type="jupyter-notebook",
                    version=1,
                    cells=[
                        types.NotebookCell(kind=kind, document=cell_uri)
                        for (kind, _), cell_uri in zip(cells, cell_uris)
                    ],
                ),
                cell_text_documents=[
                    types.TextDocumentItem(
                        uri=cell_uri,
                        language_id="python" if kind == types.NotebookCellKind.Code else "markdown",
                        version=1,
                        text=source,
                    )
                    for (kind, source), cell_uri in zip(cells, cell_uris)
                ],
            )
        )
        published = {}
        while len(published) < 3:
            params = await asyncio.wait_for(editor.published.get(), TIMEOUT)
            published[params.uri] = params.diagnostics
        seen["notebook"] = (cell_uris, published)
        [in_function] = published[cell_uris[3]]
        seen["cell_actions"] = await editor.actions(cell_uris[3], in_function)

        # A broken configuration: said once, and no diagnostics for its files.
        broken_uri = from_fs_path(str(workspace / "broken" / "x.py"))
        seen["broken"] = await editor.open(broken_uri, BUGGY)

        await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
        client.exit(None)
    finally:
        await client.stop()
    seen["messages"] = editor.messages
    return seen


def test_an_editor_session_end_to_end(tmp_path):
    write(tmp_path, "pyproject.toml", '[tool.hooklint]\nignore = ["HL013"]\n')
    write(tmp_path, "pkg/buggy.py", "# the editor's buffer differs from the file\n")
    write(tmp_path, "broken/pyproject.toml", "[tool.hooklint]\nselect = 3\n")
    seen = asyncio.run(_session(tmp_path))
    assert seen["capabilities"].notebook_document_sync is not None

    # Diagnostics: the buffer's, with the workspace's configuration.
    [diagnostic] = seen["opened"]
    assert (diagnostic.code, diagnostic.source, diagnostic.severity) == (
        "HL001",
        "hooklint",
        types.DiagnosticSeverity.Warning,
    )
    line = BUGGY_LINE  # one line of STALE_IMPORT above, 0-based below
    assert diagnostic.range.start == types.Position(line=line, character=BUGGY_COLUMN - 1)
    assert diagnostic.range.end == types.Position(
        line=line, character=BUGGY_COLUMN - 1 + len("module.register_forward_hook(_disable)")
    )
    write(tmp_path, "other/pyproject.toml", "[tool.hooklint]\n")
    unconfigured = check(
        "--no-cache",
        "--format",
        "concise",
        "--config",
        str(tmp_path / "other/pyproject.toml"),
        "-",
        "--stdin-filename",
        "x.py",
        input=STALE_IMPORT + BUGGY,
    )
    assert "HL013" in unconfigured.stdout  # so the server did read the workspace's `ignore`

    # The quick fix, applied by the editor, gives the fixed code, which lints clean.
    [quick_fix] = [a for a in seen["actions"] if a.kind == types.CodeActionKind.QuickFix]
    assert quick_fix.is_preferred and "HL001" in quick_fix.title and "unsafe" not in quick_fix.title
    assert seen["fixed_text"] == STALE_IMPORT + FIXED
    assert list(seen["after_fix"]) == []
    [fix_all] = seen["fix_all"]
    assert fix_all.kind == "source.fixAll.hooklint"
    assert (
        _apply(STALE_IMPORT + BUGGY, fix_all.edit.changes[next(iter(fix_all.edit.changes))])
        == STALE_IMPORT + FIXED
    )

    # Hover on the finding: the rule's documentation; elsewhere, nothing.
    hover = seen["hover"]
    assert hover is not None and hover.contents.kind == types.MarkupKind.Markdown
    assert "HL001" in hover.contents.value and "## What it does" in hover.contents.value
    assert f"]({rule_url('HL001')})" in hover.contents.value  # a link to the rule's page
    assert diagnostic.code_description.href == rule_url("HL001")
    assert seen["hover_elsewhere"] is None

    # An unsafe fix says so.
    hl007, actions = seen["unsafe"]
    assert hl007.code == "HL007"
    [unsafe] = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert "(unsafe fix)" in unsafe.title and not unsafe.is_preferred

    # The notebook: the finding on its cell, in that cell's lines, in UTF-16 columns.
    cell_uris, published = seen["notebook"]
    assert list(published[cell_uris[1]]) == []
    [finding] = published[cell_uris[2]]
    assert finding.code == "HL002"
    assert finding.range.start == types.Position(
        line=0, character=len('tag = "\U0001f525"; '.encode("utf-16-le")) // 2
    )
    # A cell's quick fix edits that cell, in its own lines, and keeps the magic.
    [cell_fix] = [a for a in seen["cell_actions"] if a.kind == types.CodeActionKind.QuickFix]
    assert list(cell_fix.edit.changes) == [cell_uris[3]]
    assert _apply(NOTEBOOK_FUNCTION, cell_fix.edit.changes[cell_uris[3]]) == NOTEBOOK_FUNCTION.replace(
        "    model.register_forward_hook(keep)\n    for batch in batches:\n        %time model(batch)\n",
        "    with model.register_forward_hook(keep):\n        for batch in batches:\n            %time model(batch)\n",
    )

    assert list(seen["broken"]) == []
    errors = [m for m in seen["messages"] if "error" in m.lower() or "hooklint:" in m]
    assert len(errors) == 1 and "broken" in errors[0] and "select" in errors[0], seen["messages"]


def test_server_without_pygls_is_one_line_and_exit_2(monkeypatch):
    for name in ("pygls", "pygls.lsp", "pygls.lsp.server", "lsprotocol", "lsprotocol.types"):
        monkeypatch.setitem(sys.modules, name, None)  # `import` raises ImportError
    result = hooklint("server")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "hooklint: error: `hooklint server` needs pygls: pip install 'hooklint[lsp]'"
    ]
