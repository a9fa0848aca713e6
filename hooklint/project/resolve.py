"""Names, imports and classes resolved within the project root, over summaries.

The *project root* of a checked file is the directory of the nearest
``pyproject.toml`` at or above it; without one, the directory above the outermost
package (``__init__.py`` chain) that holds the file.  Absolute imports are looked up
under the root (and ``root/src``) and under that package chain's parent; relative
imports from the importing module's package.  ``import a.b [as c]``,
``from a import b as c``, ``from . import b``, star imports, package ``__init__``
re-exports (followed up to :data:`MAX_DEPTH` modules) and dotted bases
(``nn.Module``) are followed.  Anything that leads outside the root — torch,
transformers, a module that is not there — stays unknown: :meth:`FileView.method`
and friends return None, and an unknown name never produces a finding.

Classes are linearised depth-first, left to right, each class once (the order
``super()`` and attribute lookup follow for the single and mixin inheritance
these libraries use; full C3 only differs for diamonds that override the same
method on both sides).

A :class:`FileView` belongs to one checked file and records every other module
whose summary it read (path and content digest): the file's result depends on
them (:meth:`FileView.dependencies`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from hooklint.guarded_regex import Guarded, not_after_word
from hooklint.lexical import word_before
from hooklint.project import store

#: Names no star import can bind in effect (a module that shadows one is not followed).
_BUILTIN_NAMES = frozenset(dir(__import__("builtins")))
#: How many modules an import or re-export chain, or a class hierarchy, is followed.
MAX_DEPTH = 8
#: Star imports are searched only this many modules into a chain: a name that is not
#: found would otherwise read every module a package re-exports with ``*``.
MAX_STAR_DEPTH = 3


#: A name that is called (only a call of an imported name reaches another file's
#: helper: ``module.helper(...)`` is not followed); an attribute that is called.  Both
#: are searched in the reversed text (:func:`_words_called_in`), where they start with the
#: literal ``(``: the regex engine then jumps from one parenthesis to the next.
_CALLED_WORD_REVERSED = re.compile(r"\([\s\\]*(\w+)")
_CALLED_ATTRIBUTE_REVERSED = re.compile(r"\([\s\\]*(\w+)[\s\\]*\.")


def _words_called_in(text: str, attributes: bool = False) -> set[str]:
    r"""Every word ``text`` follows with ``(`` (``\b(\w+)[\s\\]*\(``), or with
    ``attributes`` every word after a ``.`` that it follows with ``(``
    (``\.[\s\\]*(\w+)[\s\\]*\(``): the same sets, ten times faster than those
    regexes (each must try every position of the text)."""
    pattern = _CALLED_ATTRIBUTE_REVERSED if attributes else _CALLED_WORD_REVERSED
    return {word[::-1] for word in pattern.findall(text[::-1])}


# These start with a literal; ``\b`` before it is tested on each match
# (:class:`~hooklint.guarded_regex.Guarded`): a leading ``\b`` keeps the regex engine
# from searching for the literal, ten times slower.
_STAR_IMPORT = Guarded(r"import[\s\\(]*\*", not_after_word)
_COMMENT = re.compile(r"#[^\n]*")
_WORD = re.compile(r"\w+")


_DEF_NAME = Guarded(r"(?:def|class)[\s\\]+(\w+)", not_after_word)
#: ``X.apply(self.m)``: ``Module.apply`` calls the method ``m`` (a setup method that may
#: keep handles on ``self``).
_APPLIED_METHOD = re.compile(r"\.apply\(\s*self\s*\.\s*(\w+)\s*\)")


def _star_import(text: str) -> bool:
    return _STAR_IMPORT.search(text) is not None


def _def_names(text: str) -> frozenset:
    r"""Every name written after a ``def`` or ``class`` keyword (as
    ``\b(?:def|class)[\s\\]+(\w+)`` finds them): a class may hold hook code in its methods."""
    return frozenset(_DEF_NAME.findall(text))


_known_texts: dict[str, tuple[tuple[int, int], tuple | None]] = {}


def _text_facts(path: str) -> tuple[str, bool, bool, frozenset, frozenset, tuple] | None:
    """``(digest, holds a star import, holds a hook token, words of its import
    statements, names it may define with hook code, its import statements)`` of the
    module at ``path``, read once per process and file version; None when it cannot
    be read.  The fifth is every name written after ``def`` when the text holds a
    hook token (a superset of its hooky functions), else empty; the last, the text of
    each ``import`` keyword's statement from the start of its line
    (:func:`_import_statements`)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    stamp = (status.st_mtime_ns, status.st_size)
    known = _known_texts.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    found = store.source_text(path)
    if found is not None:
        from hooklint.project.summary import has_hook_text

        digest, text = found
        star = _star_import(text)
        hook_text = has_hook_text(text)
        defined = _def_names(text) if hook_text else frozenset()
        words, statements = _import_statements(text)
        found = (digest, star, hook_text, words, defined, statements)
    if len(_known_texts) > 4096:
        _known_texts.clear()
    _known_texts[path] = (stamp, found)
    return found


def _import_words(text: str) -> frozenset:
    """The words of every ``import`` keyword's statement (to the closing parenthesis
    of its list or over backslash continuations, comments left out): a superset of
    the names the module's imports bind (a keyword inside a string only adds words)."""
    return _import_statements(text)[0]


def _import_statements(text: str) -> tuple[frozenset, tuple[str, ...]]:
    """:func:`_import_words`, and the text of each ``import`` keyword's statement
    from the start of its line to its end (the ``from a.b`` before the keyword
    included), for :func:`_import_sources`."""
    words: set[str] = set()
    statements: list[str] = []
    start = text.find("import")
    while start >= 0:
        after = start + len("import")
        if not word_before(text, start) and not (after < len(text) and word_before(text, after + 1)):
            position, depth = start, 0
            while position < len(text):
                end = text.find("\n", position)
                end = len(text) if end < 0 else end
                code = text[position:end]
                if "#" in code:
                    code = _COMMENT.sub("", code)
                words.update(_WORD.findall(code))
                depth += code.count("(") - code.count(")")
                if depth <= 0 and not code.rstrip().endswith("\\"):
                    break
                position = end + 1
            statements.append(text[text.rfind("\n", 0, start) + 1 : end])
        start = text.find("import", after)
    return frozenset(words), tuple(statements)


def _import_sources(statements: tuple[str, ...], name: str) -> list[tuple[str, str, int]] | None:
    """What the import statements among ``statements`` (:func:`_import_statements`)
    that mention ``name`` may bind it to: ``(module, attribute, level)`` for each
    ``from module import attribute [as name]`` (``import a.b [as name]`` binds a
    module: not listed); None when a statement that mentions it cannot be read
    alone (its line starts inside a string, or with a ``try:``): then anything.
    Every such statement counts, also one inside a function or under an ``if``: a
    superset of the outline's top-level imports."""
    import ast

    found: list[tuple[str, str, int]] = []
    for statement in statements:
        if name not in statement or name not in _WORD.findall(statement):
            continue
        try:
            tree = ast.parse(statement.strip())
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name == "*":
                        return None
                    if (alias.asname or alias.name) == name:
                        found.append((node.module or "", alias.name, node.level))
    return found


def _class_spans(tree, text: str) -> dict[str, tuple[int, int]]:
    """The lines of each top-level class (the last definition of a name wins, as in
    the outline); empty when the text does not parse."""
    from hooklint.project.summary import _top_level

    if tree is None:
        from hooklint.engine import python_ast

        try:
            tree = python_ast(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {}
    import ast

    return {
        node.name: (node.lineno, node.end_lineno or node.lineno)
        for node in _top_level(tree.body)
        if isinstance(node, ast.ClassDef)
    }


@dataclass(frozen=True)
class Ref:
    """A resolved name: the module file, what it is (``module``, ``class``,
    ``function``, ``method``), its qualified name there and its summary entry."""

    path: str
    kind: str
    name: str
    entry: dict | None = None

    @property
    def line(self) -> int:
        return self.entry.get("line", 1) if self.entry else 1


def project_root(path: Path) -> Path:
    directory = path.parent
    for candidate in (directory, *directory.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    return package_root(path)


def package_root(path: Path) -> Path:
    """The directory above the outermost package that holds ``path``."""
    directory = path.parent
    while (directory / "__init__.py").is_file() and directory.parent != directory:
        directory = directory.parent
    return directory


#: What the file system said, shared by the views of one run (each checked file has
#: its own view, and most resolve the same imports): a directory's project root,
#: import roots and the root's real path; real paths; the files modules are in.
#: :func:`forget_places` empties them when a run starts (files may have come or gone).
_directory_places: dict[str, tuple[Path, list[Path], str, tuple]] = {}
_real_paths: dict[str, str] = {}
_module_files: dict[tuple, str | None] = {}


def forget_places() -> None:
    """Forget what the file system said (at the start of a run, or of an editor's check)."""
    _directory_places.clear()
    _real_paths.clear()
    _module_files.clear()


def _within(path: Path | str, real_root: str) -> bool:
    return os.path.join(_realpath(str(path)), "").startswith(real_root)


def _realpath(path: str) -> str:
    """``os.path.realpath(path)``, once per path and run (a file that is no symbolic
    link is its directory's real path and its name)."""
    real = _real_paths.get(path)
    if real is None:
        head, name = os.path.split(path)
        if name in ("", ".", "..") or os.path.islink(path):
            real = os.path.realpath(path)
        else:
            directory = _real_paths.get(head)
            if directory is None:
                directory = _real_paths[head] = os.path.realpath(head)
            real = os.path.join(directory, name)
        _real_paths[path] = real
    return real


class FileView:
    """What one checked file can see of the rest of its project."""

    def __init__(self, path: str, text: str, cache_dir: str | None = None, raw: bytes | None = None) -> None:
        self.path = os.path.abspath(path)
        self.text = text
        self.cache_dir = cache_dir
        #: The file's bytes when ``text`` is what the file holds (not an editor's buffer).
        self.raw = raw
        self._place: tuple[Path, list[Path], str, tuple] | None = None
        self._outline: dict | None = None
        self._used: dict[str, str] = {}
        self._lookups: dict[tuple[str, str], Ref | None] = {}
        self._hook_lookups: dict[tuple[str, str], Ref | None] = {}
        self._may_hook: dict[tuple[str, str], bool] = {}
        self._helpers: tuple[str, ...] | None = None
        self._mros: dict[str, tuple[list[Ref], object]] = {}
        self._tree = None
        self._spans = None
        self._called: set[str] | None = None
        self._foreign: dict[int, tuple] = {}
        self._inside_ids: dict[int, set[int]] = {}

    # -- where modules are ----------------------------------------------------------
    def _where(self) -> tuple[Path, list[Path], str, tuple]:
        """``(project root, import roots, the root's real path with a separator, the
        last two as the key of :data:`_module_files`)``, the same for every file of a
        directory."""
        if self._place is None:
            directory = os.path.dirname(self.path)
            place = _directory_places.get(directory)
            if place is None:
                root = project_root(Path(self.path))
                real_root = os.path.join(os.path.realpath(root), "")
                roots: list[Path] = []
                for candidate in (root, root / "src", package_root(Path(self.path))):
                    if candidate not in roots and candidate.is_dir() and _within(candidate, real_root):
                        roots.append(candidate)
                key = (real_root, *map(str, roots))
                place = _directory_places[directory] = (root, roots, real_root, key)
            self._place = place
        return self._place

    @property
    def root(self) -> Path:
        return self._where()[0]

    def _import_roots(self) -> list[Path]:
        return self._where()[1]

    def _inside(self, path: Path | str) -> bool:
        return _within(path, self._where()[2])

    def module_file(self, module: str, level: int, importer: str) -> str | None:
        """The file of ``module`` as imported from ``importer`` (``level``: the dots of
        a relative import), when it is in the project."""
        key = (module, level, os.path.dirname(importer) if level else "", self._where()[3])
        if key not in _module_files:
            _module_files[key] = self._module_file(module, level, importer)
        return _module_files[key]

    def _module_file(self, module: str, level: int, importer: str) -> str | None:
        parts = [p for p in module.split(".") if p]
        if level:
            base = os.path.dirname(importer)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            if not parts:
                return None
            bases = [str(root) for root in self._import_roots()]
        for base in bases:  # os.path, not pathlib: this runs for every import resolved
            target = os.path.join(base, *parts)
            for candidate in (os.path.join(target, "__init__.py"), target + ".py" if parts else None):
                if candidate is not None and os.path.isfile(candidate) and self._inside(candidate):
                    return os.path.abspath(candidate)
        return None

    def use_tree(self, tree, spans=None) -> None:
        """CPython's AST of the checked file, as the engine parsed it, and its comments
        and strings as the engine scanned them (:func:`hooklint.lexical.scan`): its
        outline is read from them instead of a second parse and scan."""
        self._tree = tree
        self._spans = spans

    # -- summaries ------------------------------------------------------------------
    def summary(self, path: str, full: bool = False) -> dict | None:
        if path == self.path and not full:
            if self._outline is None:
                self._outline = self._kept_outline()
            if self._outline is None:
                from hooklint.project.summary import outline_of

                self._outline = outline_of(self.text, self._tree, self._spans)
                store.remember(self.path, self.text, self._outline)
            return self._outline
        found = store.load(path, self.cache_dir, full)
        if found is None:
            return None
        self._used[path] = found.digest
        return found.data

    def facts_of(self, ref: Ref) -> dict | None:
        """The full summary entry (wrapper, removes) of a function or method that
        ``ref`` names; None when its code holds no hook token."""
        if not ref.entry or not ref.entry.get("hooky") or ref.path == self.path:
            return None
        data = self.summary(ref.path, full=True)
        if data is None:
            return None
        if ref.kind == "method":
            class_name, _, name = ref.name.rpartition(".")
            entry = data["classes"].get(class_name, {}).get("methods", {}).get(name)
        else:
            entry = data["functions"].get(ref.name)
        # The outline read from the text may mark a def the parse does not (a name
        # defined twice): the full summary's mark decides.
        return entry if entry is not None and entry.get("hooky") else None

    def note_foreign(self, node, where) -> None:
        """Record that the def ``node`` (of another module's facts) is at ``where``."""
        self._foreign[id(node)] = (node, where)

    def elsewhere(self, node):
        """The place of the other file's def that holds ``node``, when it is one whose
        body this file's analysis read; else None."""
        from hooklint.analysis.walk import descendants

        for def_id, (def_node, where) in self._foreign.items():
            inside = self._inside_ids.get(def_id)
            if inside is None:
                inside = self._inside_ids[def_id] = {id(n) for n in descendants(def_node)} | {def_id}
            if id(node) in inside:
                return where
        return None

    def dependencies(self) -> dict[str, str]:
        """The other modules whose summaries this file's analysis read: path → digest."""
        return dict(self._used)

    # -- names ----------------------------------------------------------------------
    def lookup(self, path: str, name: str, depth: int = 0, hook_code: bool = False) -> Ref | None:
        """What ``name`` is in the module at ``path``.  ``hook_code``: only a function
        that may hold hook code matters (anything else may come back as None): a
        module the name passes through is parsed only when its text says it may bind
        the name to one (:meth:`_may_define_hook_code`)."""
        key = (path, name)
        if key in self._lookups:
            return self._lookups[key]
        lookups = self._hook_lookups if hook_code else self._lookups
        if hook_code and key in lookups:
            return lookups[key]
        lookups[key] = None  # an import cycle resolves to nothing
        found = self._lookup(path, name, depth, hook_code)
        lookups[key] = found
        return found

    def _lookup(self, path: str, name: str, depth: int, hook_code: bool = False) -> Ref | None:
        if hook_code and path != self.path and not self._may_define_hook_code(path, name):
            return None
        data = self.summary(path)
        if data is None or depth > MAX_DEPTH:
            return None
        if name in data["classes"]:
            return Ref(path, "class", name, data["classes"][name])
        if name in data["functions"]:
            return Ref(path, "function", name, data["functions"][name])
        imported = data["imports"].get(name)
        if imported is not None:
            return self._imported(path, imported, depth, hook_code)
        if os.path.basename(path) == "__init__.py":  # ``from pkg import submodule``
            target = self.module_file(name, 1, path)
            if target is not None:
                return Ref(target, "module", name)
        if depth >= MAX_STAR_DEPTH:
            return None
        for key, (module, _, level) in data["imports"].items():
            if key.startswith("*"):
                target = self.module_file(module, level, path)
                found = self.lookup(target, name, depth + 1, hook_code) if target else None
                if found is not None:
                    return found
        return None

    def _imported(self, path: str, imported: list, depth: int, hook_code: bool = False) -> Ref | None:
        module, attr, level = imported
        target = self.module_file(module, level, path)
        if target is None:
            return None
        if attr is None:
            return Ref(target, "module", module)
        return self.lookup(target, attr, depth + 1, hook_code)

    def member(self, module: Ref, name: str, depth: int = 0) -> Ref | None:
        """``module.name``: a name the module defines or imports, or its submodule."""
        return self.lookup(module.path, name, depth)

    def dotted(self, path: str, dotted: str, depth: int = 0) -> Ref | None:
        """``a.b.C`` as written in the module at ``path``."""
        first, *rest = dotted.split(".")
        found = self.lookup(path, first, depth)
        for part in rest:
            if found is None or found.kind != "module":
                return None  # attributes of classes and functions are not followed
            found = self.member(found, part, depth + 1)
        return found

    # -- classes --------------------------------------------------------------------
    def mro(self, class_name: str) -> list[Ref]:
        """The checked file's class ``class_name`` and its bases, resolved."""
        return list(self._classes(class_name))

    def _classes(self, class_name: str):
        """``mro(class_name)`` one class at a time: a base is resolved only when the
        walk reaches it (a method found in the first classes reads no module beyond
        them); what was resolved is kept for the next walk."""
        known = self._mros.get(class_name)
        if known is None:
            known = self._mros[class_name] = ([], self._mro(class_name))
        order, rest = known
        yield from order
        for ref in rest:
            order.append(ref)
            yield ref

    def _mro(self, class_name: str):
        start = self.lookup(self.path, class_name)
        seen: set[tuple[str, str]] = set()

        def visit(ref: Ref, depth: int):
            key = (ref.path, ref.name)
            if key in seen or depth > MAX_DEPTH:
                return
            seen.add(key)
            yield ref
            for base in ref.entry.get("bases", ()) if ref.entry else ():
                found = self.dotted(ref.path, base)
                if found is not None and found.kind == "class":
                    yield from visit(found, depth + 1)

        if start is not None and start.kind == "class":
            yield from visit(start, 0)

    def method(self, class_name: str, name: str, after_own: bool = False) -> Ref | None:
        """The method ``name`` that ``self.name`` reaches from the checked file's class
        ``class_name``, when it is defined in another file (a definition in this file
        is the file's own analysis: None).  ``after_own``: what ``super().name``
        reaches (the class's own definition skipped)."""
        for index, ref in enumerate(self._classes(class_name)):
            if after_own and index == 0:
                continue
            entry = ref.entry["methods"].get(name) if ref.entry else None
            if entry is not None:
                if ref.path == self.path:
                    return None
                return Ref(ref.path, "method", f"{ref.name}.{name}", entry)
        return None

    def helper_names(self) -> tuple[str, ...]:
        """The names by which the checked file reaches other files' registration
        wrappers and removal helpers (methods of its classes' bases, imported
        functions): the fast path keeps the code that calls them, as it keeps
        registrations."""
        if self._helpers is None:
            outline = self.summary(self.path) or {}
            self._helpers = self._helpers_reached(outline, self._called_methods(outline))
            # The outline and the class spans are read: the file's AST is not needed
            # again, and is freed now rather than found by the collector later.
            self._tree = self._spans = None
        return self._helpers

    def reaches_no_helper(self) -> bool:
        """Whether, decided from the file's text without parsing it, no name the file
        calls reaches another file's wrapper or removal helper: then
        :meth:`helper_names` is empty.  Only for a file whose outline its text gives
        (:func:`~hooklint.project.summary.outline_from_text`, as :func:`summarise` reads it: with
        ``hooky`` marks that include the parse's when the file has hook text, which
        other files read and the full summary confirms), and with every class taken
        to call every attribute name the file calls (a superset of the names each
        class's own lines call: more names looked up, never fewer).  False when it
        cannot be decided so: the caller parses the file and asks
        :meth:`helper_names`."""
        if self._helpers is not None:
            return not self._helpers
        if self._tree is not None or self._outline is not None:
            return False
        outline = self._kept_outline()
        if outline is None:
            from hooklint.project.summary import outline_from_text

            outline = outline_from_text(self.text)
            if outline is None:
                return False
            store.remember(self.path, self.text, outline)
        self._outline = outline  # what summary(self.path) would read: the same outline
        called = _words_called_in(self.text, attributes=True)
        if self._helpers_reached(outline, dict.fromkeys(outline["classes"], called) if called else {}):
            return False
        self._helpers = ()
        return True

    def _kept_outline(self) -> dict | None:
        """The outline of this file that the process computed from its bytes while
        resolving another file's imports (a summary of the same content: its marks, read
        by other files, include the parse's), or None."""
        return store.known_outline(self.path, self.raw) if self.raw is not None else None

    def _helpers_reached(self, outline: dict, called_methods: dict[str, set[str]]) -> tuple[str, ...]:
        """The helper names reached from ``outline`` (the checked file's) by the
        attribute names ``called_methods`` gives each class and by its imported names
        that the text calls."""
        names: set[str] = set()
        for class_name, called in called_methods.items():
            names.update(self._inherited_helpers(class_name, called))
        called_words = self._called_words()
        imports = outline.get("imports", {})
        candidates = [local for local in imports if not local.startswith("*")]
        stars = [(module, level) for key, (module, _, level) in imports.items() if key.startswith("*")]
        if stars:
            # ``from .patch import *``: a name called here that the module does not
            # bind itself may come from there (builtins aside)
            bound = set(imports) | set(outline.get("functions", {})) | set(outline.get("classes", {}))
            unbound = called_words - bound - _BUILTIN_NAMES
            offered = self._star_offers(stars)
            candidates += sorted(unbound if offered is None else unbound & offered)
        for local in candidates:
            if local not in called_words:
                continue  # never called here: not looked up
            # Each module of the import chain is read only if its text says it may
            # bind the name to a function with hook code.
            found = self.lookup(self.path, local, hook_code=True)
            if found is None or found.path == self.path:
                continue
            if (found.kind == "function" and self._is_helper(found)) or (
                found.kind == "class" and self.removable_construction(found) is not None
            ):
                names.add(local)
        return tuple(sorted(names))

    def _inherited_helpers(self, class_name: str, called: set[str]) -> set[str]:
        """The names of ``called`` by which ``self.m(...)``/``super().m(...)`` in the
        checked file's class ``class_name`` reaches another file's helper: what
        :meth:`method` with ``after_own`` gives for each name, found in one walk of the
        bases (the first base after the class that defines ``m``), which stops once
        every name is found: only the bases up to those of the names called are read."""
        found: set[str] = set()
        remaining = set(called)
        for index, ref in enumerate(self._classes(class_name)):
            if not remaining:
                break
            if index == 0 or not ref.entry:
                continue
            methods = ref.entry["methods"]
            defined = remaining.intersection(methods)
            remaining -= defined
            if ref.path == self.path:
                continue  # a definition in this file is the file's own analysis
            for name in sorted(defined):
                if self._is_helper(Ref(ref.path, "method", f"{ref.name}.{name}", methods[name])):
                    found.add(name)
        return found

    def _star_offers(self, stars: list) -> set[str] | None:
        """The names the modules of the checked file's star imports may bind to a
        function with hook code, read from their texts (:func:`_text_facts`): the names
        they define where they hold hook text, and the words of their own imports;
        None (any name) when one of them has a star import of its own.  A name outside
        this set is one :meth:`_may_define_hook_code` would rule out there."""
        offered: set[str] = set()
        for module, level in stars:
            target = self.module_file(module, level, self.path)
            found = _text_facts(target) if target is not None else None
            if found is None:
                continue  # outside the project, or unreadable: it binds nothing looked up
            digest, star, _, import_words, defined, _ = found
            if star:
                return None
            self._used[target] = digest  # the file's result rests on this text
            offered |= defined | import_words
        return offered

    def _may_define_hook_code(self, path: str, name: str) -> bool:
        """False when the module at ``path`` cannot bind ``name`` to a function that
        holds hook code, read from the texts of it and of the modules its imports of
        ``name`` name, without parsing any: a module (a package ``__init__`` too) with
        no star import, where ``name`` is not written after a ``def`` or the text
        holds no registration or removal token, and whose import statements that
        mention ``name`` bind it to a module, to a module outside the project, or to
        an attribute of which the same holds, a module at a time (up to
        :data:`MAX_DEPTH`; an import cycle adds nothing).  Such a module defines
        ``name`` without hook code (a hooky function, one that calls a hooky function
        of its module included, is a ``def`` of a module with a token), binds it as a
        class, a value or a submodule (``from pkg import submodule``), or lacks it: no
        wrapper or removal helper either way.  Asked at every module an import chain
        passes through, before that module is parsed."""
        key = (path, name)
        known = self._may_hook.get(key)
        if known is None:
            read: dict[str, str] = {}
            known = self._may_hook[key] = self._may_bind_hook_code(path, name, 0, set(), read)
            if not known:
                self._used.update(read)  # the answer rests on these files' texts
        return known

    def _may_bind_hook_code(self, path: str, name: str, depth: int, seen: set, read: dict) -> bool:
        if (path, name) in seen:
            return False  # a cycle: what else the chain binds decides
        seen.add((path, name))
        found = _text_facts(path)
        if found is None or depth > MAX_DEPTH:
            return True
        digest, star, hook_text, import_words, defined, statements = found
        if star or (hook_text and name in defined):
            return True
        read[path] = digest
        if name not in import_words:
            return False
        sources = _import_sources(statements, name)
        if sources is None:
            return True
        for module, attr, level in sources:
            target = self.module_file(module, level, path)
            if target is not None and self._may_bind_hook_code(target, attr, depth + 1, seen, read):
                return True
        return False

    def _is_helper(self, ref: Ref) -> bool:
        """Whether ``ref`` (another file's function or method) is a registration
        wrapper or a removal helper: only those are evidence for the fast path."""
        entry = self.facts_of(ref)
        return bool(
            entry
            and (
                entry.get("wrapper")
                or entry.get("removes")
                or entry.get("returns_handles")
                or entry.get("fills")
            )
        )

    def removable_construction(self, ref: Ref) -> frozenset[str] | None:
        """For another file's class, the ``self.*`` stores its own ``__init__`` keeps
        every handle it registers in, when its own ``remove()`` method removes them and
        its ``__del__`` does not (``cap = Capture(model)`` then ``cap.remove()``: the
        object holds the hooks as a handle does); None otherwise."""
        methods = ref.entry.get("methods", {}) if ref.entry else {}
        # Both must hold hook code (the outline's mark) before the module's hook facts
        # are computed: without it ``fills`` or ``removed`` below is empty.
        if not all(methods.get(name, {}).get("hooky") for name in ("__init__", "remove")):
            return None

        def facts(name: str) -> dict:
            entry = methods.get(name)
            method = Ref(ref.path, "method", f"{ref.name}.{name}", entry) if entry is not None else None
            return (self.facts_of(method) or {}) if method is not None else {}

        fills = set(facts("__init__").get("fills", ()))
        removed = set(facts("remove").get("removes", {}).get("attrs", ()))
        if not fills or not fills <= removed:
            return None
        if fills & set(facts("__del__").get("removes", {}).get("attrs", ())):
            return None  # dropping the object removes its hooks
        return frozenset(fills)

    def constructed(self, dotted: str) -> Ref | None:
        """A class the checked file imports from another module of the project."""
        return self._imported_as(dotted, "class")

    def _called_words(self) -> set[str]:
        """Every name the text follows with ``(``."""
        if self._called is None:
            self._called = _words_called_in(self.text)
        return self._called

    def _called_methods(self, outline: dict) -> dict[str, set[str]]:
        """For each class of the checked file, the names its code calls as an
        attribute (``.m(``: a superset of ``self.m(``, ``cls.m(`` and ``super().m(``)."""
        spans = _class_spans(self._tree, self.text)
        lines = self.text.splitlines(keepends=True)
        found: dict[str, set[str]] = {}
        for class_name in outline.get("classes", {}):
            span = spans.get(class_name)
            text = "".join(lines[span[0] - 1 : span[1]]) if span else self.text
            called = _words_called_in(text, attributes=True) | set(_APPLIED_METHOD.findall(text))
            if called:
                found[class_name] = called
        return found

    def function(self, dotted: str) -> Ref | None:
        """A function the checked file imports (``helper`` or ``hooks.helper``) from
        another module of the project."""
        return self._imported_as(dotted, "function")

    def _imported_as(self, dotted: str, kind: str) -> Ref | None:
        """What ``dotted`` names in the checked file, when it is a ``kind`` of another module."""
        found = self.dotted(self.path, dotted)
        if found is None or found.kind != kind or found.path == self.path:
            return None
        return found

    def shown(self, ref: Ref) -> str:
        """The path of ``ref``'s module as reports show it."""
        from hooklint.files import display_path

        return display_path(Path(ref.path))
