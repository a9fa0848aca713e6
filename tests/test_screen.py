"""hooklint.screen: the small text a file is first linted on, and the engine's
screen-then-confirm path."""

from __future__ import annotations

import ast
import textwrap

import pytest

import hooklint.engine as engine
from hooklint.rules import all_rules, find_rule
from hooklint.rules.base import RuleContext
from hooklint.screen import screening_source

RULES = [r for r in all_rules() if r.code != "HL000" and r.screenable]
SEEDS = engine.seed_regex(engine.prefilter_tokens(RULES) + engine.SEED_TOKENS)


def screen(source: str) -> str:
    source = textwrap.dedent(source)
    screened, numbers = screening_source(source, ast.parse(source), SEEDS)
    original = source.splitlines()
    assert numbers == sorted(numbers) and len(numbers) == len(screened.splitlines())
    for number, line in zip(numbers, screened.splitlines()):  # columns stay put
        assert line == original[number - 1] or line.strip() == "pass"
    ast.parse(screened)  # and it is still Python
    return screened


def test_keeps_the_seed_and_the_hooks_it_names_and_drops_the_rest():
    screened = screen(
        """
        import os
        import torch.nn.utils.parametrize as P

        TABLE = {"a": 1, "b": 2}

        def unrelated(x):
            return x * 2

        def record(module, args, output):
            STORE.append(output)

        class Model:
            def helper(self):
                return 1

            def _pre(self, module, args):
                P._cache_enabled += 1

            def attach(self, layer):
                layer.register_forward_pre_hook(self._pre)
                layer.register_forward_hook(record)
        """
    )
    for kept in ("as P", "def record", "STORE.append", "def _pre", "def attach", "class Model"):
        assert kept in screened
    for dropped in ("def unrelated", "def helper", "TABLE", "import os"):
        assert dropped not in screened


def test_tokens_in_strings_and_comments_do_not_seed():
    screened = screen(
        '''
        def explain():
            """Call register_forward_hook(...) to see it."""
            # register_forward_hook here is only a comment
            return "register_forward_hook is not supported"

        def real(m, h):
            m.register_forward_hook(h)
        '''
    )
    assert "def explain" not in screened and "def real" in screened


def test_an_f_string_registration_seeds():
    screened = screen(
        """
        def attach(module, kind, hook):
            return getattr(module, f"register_{kind}_hook")(hook)
        """
    )
    assert "def attach" in screened


def test_callers_of_an_in_file_wrapper_and_what_they_pass_are_kept():
    screened = screen(
        """
        class Mixin:
            def add(self, module, fn):
                self._handles.append(module.register_forward_hook(fn))

        class Quantizer(Mixin):
            def _capture(self, module, args, output):
                self.cache.append(output)

            def calibrate(self, model):
                self.add(model.layer, self._capture)

            def unrelated(self):
                return 2
        """
    )
    assert "def calibrate" in screened and "def _capture" in screened
    assert "def unrelated" not in screened


def test_import_aliases_of_registration_functions_seed():
    screened = screen(
        """
        from torch.nn.modules.module import register_module_forward_hook as on_forward

        def noisy(module, args, output):
            print(output)

        def install():
            on_forward(noisy)
        """
    )
    assert "def install" in screened and "def noisy" in screened


def test_a_callable_object_named_by_a_seed_keeps_init_and_call():
    screened = screen(
        """
        class Recorder:
            def __init__(self):
                self.outputs = []

            def __call__(self, module, args, output):
                self.outputs.append(output)

            def summary(self):
                return len(self.outputs)

        def attach(model):
            model.register_forward_hook(Recorder())
        """
    )
    assert "def __init__" in screened and "def __call__" in screened and "def summary" not in screened


def test_nested_classes_are_screened_method_by_method():
    screened = screen(
        """
        class Outer:
            class Inner:
                def far(self):
                    return 1

                def hooked(self, m, h):
                    m.register_forward_hook(h)
        """
    )
    assert "def hooked" in screened and "def far" not in screened


def test_module_level_registration_keeps_all_module_level_code():
    screened = screen(
        """
        import torch

        handle = model.register_forward_hook(record)
        run(model)  # may raise: the removal below is not exception-safe
        handle.remove()
        """
    )
    assert "run(model)" in screened and "handle.remove()" in screened


def test_nothing_in_code_leaves_nothing():
    assert screen("# register_forward_hook\nx = 1\n") == ""


def test_a_finding_only_the_screen_sees_is_not_reported():
    """The screen drops ``release`` (nothing there names a hook, and it is no lifecycle
    partner of ``attach``), so on the screen the capture hook looks never removed; the
    confirming lint sees the removal."""
    source = textwrap.dedent(
        """
        class Tracer:
            def _capture(self, module, args, output):
                self.outputs.append(output.detach())

            def attach(self, model):
                self._handle = model.register_forward_hook(self._capture)

            def release(self):
                self._handle.remove()
        """
    )
    HL002 = find_rule("HL002")
    screened, _ = screening_source(source, ast.parse(source), SEEDS)
    assert "self._handle.remove()" not in screened
    outcome = engine._findings(screened, [HL002], RuleContext())
    assert [rule.code for rule, _ in outcome[1]] == ["HL002"]
    assert engine.lint_text(source, "t.py", [HL002], RuleContext()) == []
    assert engine.lint_text(source, "t.py", [HL002], RuleContext(), skip_irrelevant=False) == []


@pytest.mark.parametrize("rule", [r for r in all_rules() if not r.screenable], ids=lambda r: r.code)
def test_rules_that_cannot_be_screened_turn_screening_off(rule, monkeypatch):
    monkeypatch.setattr("hooklint.screen.screening_source", lambda *a: pytest.fail("screened"))
    engine.lint_text("m.register_forward_hook(h)\n", "t.py", [rule], RuleContext())


def test_findings_nothing_dropped_can_clear_are_reported_from_the_screen(monkeypatch):
    """HL007's evidence is the registration's name: no second, fuller parse."""
    source = textwrap.dedent(
        """
        def unrelated():
            return 1

        def attach(model, hook):
            model.register_backward_hook(hook)
            model.register_backward_hook(hook)  # noqa: HL007
        """
    )
    HL007 = find_rule("HL007")
    full = engine.lint_text(source, "t.py", [HL007], RuleContext(), skip_irrelevant=False)
    monkeypatch.setattr("hooklint.sparse.relevant_source", lambda *a: pytest.fail("parsed again"))
    screened = engine.lint_text(source, "t.py", [HL007], RuleContext())
    assert screened == full and [(v.code, v.start.line) for v in screened] == [("HL007", 6)]
    assert screened[0].fix is not None and screened[0].source_line == "    model.register_backward_hook(hook)"


def test_a_class_kept_by_name_alone_stays_valid():
    screened = screen(
        """
        class Plain:
            def method(self):
                return 1

        def attach(model):
            model.register_forward_hook(Plain)
        """
    )
    assert "class Plain" in screened and "def method" not in screened


def test_a_token_inside_a_longer_name_does_not_seed():
    screened = screen(
        """
        class Graph:
            def names(self):
                return self.saved_tensors_hooks_subgraph_names

            def state(self, m, h):
                m._register_state_dict_hook(h)
        """
    )
    assert "def names" not in screened and "def state" in screened


def test_a_token_that_ends_another_functions_name_does_not_seed():
    # `inline_saved_tensors_hooks(` is its own function, not torch's context manager;
    # a name's leading underscores still belong to a token (`_disable_saved_tensors_hooks(`),
    # but not to a registration API's name, which is exact (`m._register_hook(` is
    # another method; `m._register_state_dict_hook(` is torch's).
    screened = screen(
        """
        def inline(graph):
            return inline_saved_tensors_hooks(graph)

        def maybe(m, h):
            return maybe_register_hook(m, h)

        def private(m, h):
            return m.__register_hook(h)

        def other(m, h):
            return m._register_hook(h)

        def torchs(m, h):
            return m._register_state_dict_hook(h)

        def forbid(m):
            _disable_saved_tensors_hooks("no saving here").__enter__()
        """
    )
    assert "def inline" not in screened and "def maybe" not in screened
    assert "def private" not in screened and "def other" not in screened
    assert "def torchs" in screened and "def forbid" in screened


def test_only_a_use_of_a_token_seeds_not_a_mention():
    """A registration is a call (or ``always_call=``, or an f-string name); a table
    that mentions ``Tensor.register_hook`` registers nothing."""
    screened = screen(
        """
        def overrides():
            return {Tensor.register_hook: lambda self, hook: -1}

        def pair(m, a, b):
            m.register_forward_pre_hook(a)
            m.register_forward_hook(b, always_call=True)
        """
    )
    assert "def overrides" not in screened and "def pair" in screened


def test_a_registration_method_bound_to_a_name_seeds_one_in_a_table_does_not():
    """``attach = m.register_forward_hook`` (or either branch of a conditional) is
    called later under the name: a use.  The same method as an item of a list or a
    call's argument is a mention."""
    screened = screen(
        """
        def pick(m, forward):
            attach = m.register_forward_hook if forward else m.register_backward_hook
            return attach

        def bound(m):
            attach = m.register_full_backward_hook
            return attach

        def listed():
            return [Tensor.register_hook, Module.register_forward_hook]

        def passed(m):
            return functools.partial(m.register_forward_hook, prepend=True)
        """
    )
    assert "def pick" in screened and "def bound" in screened
    assert "def listed" not in screened and "def passed" not in screened


# -- strings and comments are found exactly (hooklint.lexical.scan, not regexes) ----------
SWALLOWED = '''\
from torch.nn.modules.module import register_module_forward_hook


def capture(module, args, output):
    print(output)


def install():
    """Install the hook.
    # prepare"""
    register_module_forward_hook(capture)
    usage = """
    # prepare"""
    return usage
'''


def test_comment_like_lines_inside_strings_do_not_swallow_code():
    # A line ``# prepare"""`` ends a string: dropping it as a comment made the first
    # string run on to the second and swallow the registration (the file passed).
    screened = screen(SWALLOWED)
    assert "register_module_forward_hook(capture)" in screened
    assert screened.count('# prepare"""') == 2
    rules = [r for r in all_rules() if r.code != "HL000" and not r.preview]
    violations = engine.lint_text(SWALLOWED, "swallow.py", rules, RuleContext())
    assert [(v.code, v.start.line) for v in violations] == [("HL009", 11)]


def test_blank_lines_inside_strings_stay_in_the_sparse_text():
    import hooklint.lexical as lexical

    text = 'def f(m, h):\n    """a\n\n    b"""\n\n    m.register_forward_hook(h)\n'
    code, numbers = engine._without_blank_lines(text, lexical.lex(text))
    assert numbers == [1, 2, 3, 4, 6]
    assert code == 'def f(m, h):\n    """a\n\n    b"""\n    m.register_forward_hook(h)\n'


TRICKY = [
    'x = "# not a comment"  # a comment with "quotes"\n',
    "s = '''a\n# inside\n''' + r'\\'' + b\"\\\\\" + rb'x' + Rb\"\\\"\" # c\n",
    'if"x":pass\nelif"y":pass\n',
    "f\"{a!r:>{width}} {{literal}} {b['k']:{'#'}}\"\n",
    "f'''{x}\n# not a comment\n{y!s}'''\n",
    'a = "line \\\ncontinued" ; b = 1 \\\n    + 2\n',
    "u = u'x'; br = br'\\\\'; fr = fr'{x}\\{{'\n",
    "t = '\\N{BULLET} {x}'; f'\\N{BULLET} {x}'\n",
    "d = {'#': 1}['#']  # done\n",
    "def f():\n    '''doc\n    # prepare'''\n    return '\"'\n",
]


def _tokenize_spans(text: str):
    """Comments and strings as the tokenizer reads them; an f-string (which Python
    >= 3.12 tokenizes in parts) as one span from its start to its end."""
    import io
    import tokenize

    from hooklint.lexical import line_starts

    starts = line_starts(text)
    fstring_start, fstring_end = getattr(tokenize, "FSTRING_START", -1), getattr(tokenize, "FSTRING_END", -1)
    spans, depth, begin = [], 0, 0
    for kind, _, (line, column), (end_line, end_column), _ in tokenize.generate_tokens(
        io.StringIO(text).readline
    ):
        if kind == fstring_start:
            if depth == 0:
                begin = starts[line - 1] + column
            depth += 1
        elif kind == fstring_end:
            depth -= 1
            if depth == 0:
                spans.append((begin, starts[end_line - 1] + end_column))
        elif depth == 0 and kind in (tokenize.COMMENT, tokenize.STRING):
            spans.append((starts[line - 1] + column, starts[end_line - 1] + end_column))
    return spans


def _scan_spans(text: str):
    from hooklint.lexical import scan

    return [(span.start, span.end) for span in scan(text)]


@pytest.mark.parametrize("text", TRICKY)
def test_scan_finds_the_strings_and_comments_the_tokenizer_finds(text):
    ast.parse(text)
    assert _scan_spans(text) == _tokenize_spans(text)


def test_scan_agrees_with_the_tokenizer_on_hooklints_own_source():
    from pathlib import Path

    import hooklint

    root = Path(hooklint.__file__).parent.parent
    files = [
        p
        for folder in ("hooklint", "fixes", "tests", "examples", "benchmarks")
        for p in sorted(root.glob(f"{folder}/**/*.py"))
    ]
    assert len(files) > 40
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert _scan_spans(text) == _tokenize_spans(text), path


def test_fstrings_stay_code_and_other_strings_are_blanked():
    from hooklint.lexical import lex

    lexed = lex(
        'getattr(m, f"register_{kind}_hook")(h)  # register_forward_hook(\nx = "register_forward_hook("\n'
        "getattr(m, 'register_forward_hook')(h)\nwarn('register_forward_hook failed')\n"
    )
    assert lexed.code([1]).rstrip() == 'getattr(m, f"register_{kind}_hook")(h)'
    assert lexed.code([2]).rstrip() == "x ="
    # a string that names a registration method is code too (the facts read it so)
    assert lexed.code([3]).rstrip() == "getattr(m, 'register_forward_hook')(h)"
    assert lexed.code([4]).rstrip() == "warn(" + " " * len("'register_forward_hook failed'") + ")"
    assert not lexed.droppable(0) and not lexed.droppable(1)


# -- the scans' fast forms match what the one-regex forms match -------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = st.sampled_from(
    [
        "self.",
        "cls.",
        "myself.",
        "x",
        "_",
        "é",
        "2",
        " ",
        "\n",
        "\r\n",
        "(",
        ")",
        ".",
        "register_hook",
        "add_hook",
        "attach_hook",
        "install_hook",
        "register_forward_hook",
        "always_call",
        "=",
        "wrap",
        "Wrap.apply",
        "helper",
        "def ",
        "  ",
    ]
)
_CODE = st.lists(_PIECES, max_size=40).map("".join)


def _lines_of(code: str):
    from hooklint.lexical import lex
    from hooklint.screen import _Lines

    return _Lines(lex(code))


@settings(max_examples=400, deadline=None)
@given(_CODE)
def test_matched_lines_are_the_lines_of_the_combined_regex(code):
    from hooklint.screen import _SETUP_CALL, NamePattern, _matched_lines

    lines = _lines_of(code)
    combined = NamePattern(SEEDS.pattern + "|" + _SETUP_CALL)
    expected = {lines.number_at(m.start()) for m in combined.finditer(lines.code_text)}
    assert _matched_lines(lines, SEEDS) == expected


@settings(max_examples=400, deadline=None)
@given(_CODE)
def test_lines_matching_patterns_are_the_lines_of_their_alternation(code):
    import re

    from hooklint.screen import _lines_matching

    patterns = [r"\bwrap\b", r"\bhelper\b", r"Wrap\.apply\b", r"\bx_\b", r"\bself\b"]
    lines = _lines_of(code)
    regex = re.compile("|".join(patterns))
    expected = {lines.number_at(m.start()) for m in regex.finditer(lines.code_text)}
    assert _lines_matching(lines, patterns) == expected


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", " ", "\n", "\r", "\r\n", "\x0c", "\x0b", "\x85", "\u2028", "\x1c"]), max_size=12
    ).map("".join)
)
def test_split_lines_breaks_only_where_the_tokenizer_does(text):
    import re

    from hooklint.lexical import split_lines

    assert split_lines(text) == re.split(r"\r\n|\r|\n", text)
    assert split_lines(text, keepends=True) == re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text)


@settings(max_examples=600, deadline=None)
@given(_CODE)
def test_use_ends_are_the_ends_of_the_combined_regex(code):
    # where the seeds' registrations end: the arguments their hooks are read from
    from hooklint.screen import _SETUP_CALL, NamePattern, _hook_names, _registration_arguments, _use_ends

    lines = _lines_of(code)
    text = lines.code_text
    combined = NamePattern(SEEDS.pattern + "|" + _SETUP_CALL)
    assert _use_ends(text, SEEDS) == {m.end() for m in combined.finditer(text)}
    ends = _use_ends(text, SEEDS)
    assert _hook_names(text, ends) == _hook_names(text, combined)
    assert set(_registration_arguments(text, ends)) == set(_registration_arguments(text, combined))


def test_use_ends_of_a_setup_call_and_a_registration():
    from hooklint.screen import _use_ends

    text = "self.register_hooks(m)\nm.register_forward_hook(f)\nself.installer (x)\n"
    assert sorted(_use_ends(text, SEEDS)) == [len("self.register_hooks"), text.index("(f)")]


@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", " ", "\n", "\r", "\r\n", "\x0c", "\x0b", "\x85", "\u2028", "\x1c"]), max_size=14
    ).map("".join)
)
def test_line_starts_are_just_past_each_line_break(text):
    from hooklint.lexical import LINE_BREAK, line_starts

    assert line_starts(text) == [0] + [m.end() for m in LINE_BREAK.finditer(text)]


def test_line_starts_of_a_few_texts():
    from hooklint.lexical import line_starts

    assert line_starts("") == [0]
    assert line_starts("a") == [0]
    assert line_starts("a\n") == [0, 2]
    assert line_starts("a\r\nb\rc\u2028d") == [0, 3, 5]
