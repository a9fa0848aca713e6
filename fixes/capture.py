"""Fixes for HL002 (capture hooks that outlive their use).

* :func:`with_block` (safe): register, run, read all happen in one function, so the
  statements that need the hook go under ``with <registration>:``; a loop that
  registers on many modules goes under ``with contextlib.ExitStack() as stack:`` and
  each handle into ``stack.enter_context(...)``.
* :func:`keyed_removal` (unsafe): the capture is consumed in another method of the
  class (the llm-compressor AutoRound shape).  Each handle is kept in a dict keyed like
  the capture store (declared the way the class declares the store), and removed right
  before the captured data for that key is first read.

Both only name nodes and text; the engine resolves positions.
"""

from __future__ import annotations

import re

import libcst as cst
from hooklint.fixes.edits import (
    IndentLines,
    InsertAfter,
    InsertBefore,
    InsertLineAfter,
    InsertLinesBefore,
    Replace,
    WrapLines,
    is_docstring,
)

from hooklint.analysis.captures import Capture, store_reads
from hooklint.analysis.facts import ModuleFacts, Registration
from hooklint.analysis.lifetime import word_count
from hooklint.analysis.names import dotted_name
from hooklint.analysis.walk import descendants

_STATEMENTS = (cst.SimpleStatementLine, cst.BaseCompoundStatement)


# -- helpers ------------------------------------------------------------------------------
def _block_of(root: cst.CSTNode, statement: cst.CSTNode):
    """The statement list (``IndentedBlock.body`` or ``Module.body``) holding ``statement``."""
    candidates = [root] if isinstance(root, (cst.Module, cst.IndentedBlock)) else []
    candidates += [n for n in descendants(root) if isinstance(n, cst.IndentedBlock)]
    for block in candidates:
        for index, item in enumerate(block.body):
            if item is statement:
                return block.body, index
    return None, None


def _mentions(facts: ModuleFacts, node: cst.CSTNode, names: list[str]) -> bool:
    code = facts.code(node)
    return any(word_count(code, n) for n in names)


def _runs_something(facts: ModuleFacts, node: cst.CSTNode, stores: list[str]) -> bool:
    """Whether a statement (or one nested in it) calls something and does not read the
    stores: a simple statement that reads them (``return torch.cat(feats)``) is a read."""
    simple = [node] if isinstance(node, cst.SimpleStatementLine) else []
    simple += [n for n in descendants(node) if isinstance(n, cst.SimpleStatementLine)]
    for statement in simple:
        if _mentions(facts, statement, stores):
            continue
        if any(isinstance(n, cst.Call) for n in descendants(statement)):
            return True
    if isinstance(node, (cst.For, cst.While, cst.If, cst.With)):
        header = {cst.For: "iter", cst.While: "test", cst.If: "test"}.get(type(node))
        parts = [getattr(node, header)] if header else [item.item for item in node.items]
        for part in parts:
            if not _mentions(facts, part, stores) and (
                isinstance(part, cst.Call) or any(isinstance(n, cst.Call) for n in descendants(part))
            ):
                return True
    return False


def _contextlib(facts: ModuleFacts) -> tuple[str, list]:
    """How to spell ``contextlib.ExitStack`` here, and the import edit it needs."""
    for bound, origin in facts.imports.items():
        if origin == "contextlib.ExitStack":
            return bound, []
    for bound, origin in facts.imports.items():
        if origin == "contextlib":
            return f"{bound}.ExitStack", []
    top = [node for node, site in facts.import_statements if not site.frames]
    if top:
        return "contextlib.ExitStack", [InsertAfter(top[-1], "\nimport contextlib")]
    body = facts.module.body
    first = body[0] if body else None
    if first is None:
        return "contextlib.ExitStack", []
    if is_docstring(first) and len(body) > 1:
        first = body[1]
    return "contextlib.ExitStack", [InsertBefore(first, "import contextlib\n\n")]


def _has_multiline_string(facts: ModuleFacts, nodes) -> bool:
    return any('"""' in facts.code(n) or "'''" in facts.code(n) for n in nodes)


# -- the safe fix ---------------------------------------------------------------------------
def with_block(
    facts: ModuleFacts, registration: Registration, captured: list[Capture], kind: str, kept: tuple[str, ...]
):
    """Edits that scope the hook to a ``with`` block in its function, or None."""
    function = registration.site.function
    statement = registration.site.statement
    if function is None or not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if kind == "discarded":
        if not (isinstance(small, cst.Expr) and small.value is registration.call):
            return None
        header = f"with {facts.code(registration.call)}:"
    elif kind == "kept" and len(kept) == 1 and re.fullmatch(r"\w+", kept[0]):
        if not (
            isinstance(small, cst.Assign) and small.value is registration.call and len(small.targets) == 1
        ):
            return None
        header = f"with {facts.code(registration.call)} as {kept[0]}:"
    else:
        return None
    loops = registration.site.loops
    anchor: cst.CSTNode = statement
    if loops:
        if kind != "discarded" or any(f.kind != "for" for f in loops):
            return None
        anchor = loops[0].node  # the outermost loop in the function
    block, index = _block_of(function.body, anchor)
    if block is None:
        return None
    stores = sorted({c.store for c in captured})
    rest = list(block[index + 1 :])
    if not any(_mentions(facts, s, stores) for s in rest):
        return None  # the capture is not read here: the hook is meant to outlive the function
    last = None
    for position, following in enumerate(rest):
        if _runs_something(facts, following, stores):
            last = position
    if last is None:
        return None
    body = rest[: last + 1]
    if _has_multiline_string(facts, [anchor, *body]):
        return None
    unit = facts.module.default_indent
    if not loops:
        return [Replace(small, header), IndentLines(body[0], body[-1], unit)]
    names = {n.value for n in descendants(function) if isinstance(n, cst.Name)}
    stack = "stack" if "stack" not in names else "hook_stack"
    exit_stack, imports = _contextlib(facts)
    return [
        WrapLines(anchor, body[-1], f"with {exit_stack}() as {stack}:", unit),
        InsertBefore(registration.call, f"{stack}.enter_context("),
        InsertAfter(registration.call, ")"),
        *imports,
    ]


# -- the unsafe fix ---------------------------------------------------------------------------
def keyed_removal(facts: ModuleFacts, registration: Registration, capture: Capture, module_param: str | None):
    """Edits that keep each handle keyed like the store and remove it before the
    store's entry for that key is first read in another method, or None."""
    class_def = registration.site.class_def
    statement = registration.site.statement
    if class_def is None or capture.key is None or module_param is None:
        return None
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if not (isinstance(small, cst.Expr) and small.value is registration.call):
        return None
    store = capture.store
    if not store.startswith("self.") or store.count(".") != 1:
        return None
    key = dotted_name(capture.key)
    receiver = registration.receiver_code
    if key is None or receiver is None or dotted_name(registration.receiver) is None:
        return None
    head, dot, rest = key.partition(".")
    if head != module_param:
        return None
    key_at_registration = receiver + dot + rest
    class_name = class_def.name.value
    hook_function = registration.hook.function if registration.hook is not None else None
    skip = {id(registration.site.function)}
    if hook_function is not None:
        skip.add(id(hook_function.node))
    read = next(iter(store_reads(facts, class_name, store, skip)), None)
    if read is None:
        return None
    node, read_key, method = read
    if dotted_name(read_key) is None:
        return None
    consumer = _statement_containing(method, node)
    if consumer is None:
        return None
    class_code = facts.code(class_def)
    handles = "_capture_hooks" if "_capture_hooks" not in class_code else "_capture_hook_handles"
    declaration = _declaration(facts, class_def, store[len("self.") :], handles)
    if declaration is None:
        return None
    read_code = facts.code(read_key)
    unit = facts.module.default_indent
    return [
        InsertBefore(registration.call, f"self.{handles}[{key_at_registration}] = "),
        declaration,
        InsertLinesBefore(
            consumer,
            (f"if {read_code} in self.{handles}:", f"{unit}self.{handles}.pop({read_code}).remove()"),
        ),
    ]


def _statement_containing(method: cst.FunctionDef, node: cst.CSTNode) -> cst.CSTNode | None:
    found = None
    for current in descendants(method.body):
        if isinstance(current, _STATEMENTS) and any(d is node for d in descendants(current)):
            found = current
    return found


def _declaration(facts: ModuleFacts, class_def: cst.ClassDef, attribute: str, handles: str):
    """A line declaring the handle dict next to where the class declares ``attribute``."""
    body = class_def.body.body if isinstance(class_def.body, cst.IndentedBlock) else ()
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        small = statement.body[0]
        if (
            isinstance(small, cst.AnnAssign)
            and isinstance(small.target, cst.Name)
            and small.target.value == attribute
        ):
            if small.value is None:
                return InsertLineAfter(statement, f"{handles}: dict")
            return InsertLineAfter(statement, f"{handles}: dict = {facts.code(small.value)}")
        if isinstance(small, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == attribute for t in small.targets
        ):
            return InsertLineAfter(statement, f"{handles} = {facts.code(small.value)}")
    for statement in body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
            for current in descendants(statement.body, into_functions=False):
                if not isinstance(current, cst.SimpleStatementLine):
                    continue
                small = current.body[0]
                targets = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, cst.AnnAssign):
                    targets = [small.target]
                if any(facts.code(t) == f"self.{attribute}" for t in targets):
                    return InsertLineAfter(current, f"self.{handles} = {{}}")
    return None
