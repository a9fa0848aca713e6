"""The ``hooklint`` console script: a pre-commit run over files without any hook token
settled without click, the rules or libcst; everything else handed to :mod:`hooklint.cli`.

pre-commit runs ``hooklint check --force-exclude [--fix] FILE...`` on each commit, and
most of the files it names hold no hook token.  For such a file the full run's answer is
known without any rule: only HL000 (the file does not parse) and HL100 (an unused
``# noqa: HL...``) need no token, HL000 cannot be ignored, and HL100 needs a ``noqa``.
:func:`main` settles the run itself when

* the command line is ``check`` with only the options in :data:`_FLAGS` and
  :data:`_CHOICES` and the names of existing regular files (no notebook);
* no configuration file lies on the files' paths, or those that do load and configure
  no registration wrapper (read with :mod:`hooklint.config`, as the CLI reads them;
  ``--force-exclude`` applies their excludes);
* every file reads as ``read_source`` would read it, as UTF-8 (with or without a BOM,
  or a cookie naming it), within ``max-file-size``, holds no part of any rule's token
  (:func:`hooklint.tokens.literal_parts`) nor a ``noqa`` that may name an ``HL``
  code, and CPython parses it (its symbol table: the parser's verdict, cheaper than a
  compile; any error at all sends the file to the CLI, whose answer stands);
* with the result cache on, the run index (:class:`hooklint.cache.RunIndex`, under
  :func:`hooklint.cache.run_key`, as the runner keys it) holds nothing but clean
  entries for them (a warm run reads no file).

It then prints what the CLI prints for a run without findings ("All checks passed!"
unless ``--quiet``), writes the run index the CLI would write, and exits 0.  In every
other case nothing has been written or printed, and the CLI runs from the start (so
its output is the CLI's by construction).  ``tests/test_lazy_imports.py`` runs both on
a matrix of invocations and compares output, exit code and files.
"""

from __future__ import annotations

import os
import sys

from hooklint.quick_parse import parses
from hooklint.tokens import ANY_RULE_TOKENS, literal_parts, mentions_hooklint_code

#: Flags the pre-commit path understands: each leaves a run over clean files clean
#: (``--fix`` fixes nothing there, and keeps the run index unused, as in the CLI).
_FLAGS = frozenset(
    {
        "--no-cache",
        "--quiet",
        "-q",
        "--exit-zero",
        "--force-exclude",
        "--fix",
        "--unsafe-fixes",
        "--show-fixes",
        "--exit-non-zero-on-fix",
    }
)
#: Options with a value, and the values that change nothing in a clean run's output.
_CHOICES = {"--format": ("full", "concise"), "--color": ("auto", "always", "never")}
#: The files :mod:`hooklint.config` looks for in each directory above a file.
_CONFIG_NAMES = (".hooklint.toml", "hooklint.toml", "pyproject.toml")


def main() -> None:
    """The command (``hooklint``, ``python -m hooklint``): exits through
    :class:`SystemExit` with hooklint's exit code (:func:`guarded`)."""
    if not guarded(_settled_here):
        from hooklint.cli import main as cli

        cli()


def script() -> None:
    """The console script and ``python -m hooklint``: :func:`main`, then an exit that
    skips the interpreter's teardown.  After a run over a large tree, freeing every
    module and object one at a time costs 40-100 ms after the report is written; by
    then nothing is left to do but flush the streams (fixed files and caches are
    written atomically before, the workers are joined).  A caller in the same process
    (a test, another tool) calls :func:`main`, which exits with :class:`SystemExit`."""
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            code = code or 2  # only a report that could not be written is lost here
    os._exit(code)


# -- exit codes and stdout, shared with hooklint.cli ------------------------------------
#: What a failed write of the report to stdout raises (no file name attached).
_WRITE_ERRORS = frozenset(
    getattr(__import__("errno"), name)
    for name in ("ENOSPC", "EPIPE", "EIO", "EDQUOT", "EFBIG", "EBADF")
    if hasattr(__import__("errno"), name)
)


def guarded(command) -> bool:
    """Run ``command()`` with hooklint's exit codes (``hooklint.cli``'s command group
    runs its commands through this too): an internal error is exit 2 with one line
    (never 1, which means findings), an interrupt 130, SIGTERM 143.  Returns
    ``command()``'s false answer (it did nothing: the caller goes on), else exits."""
    import _signal  # `signal` without its enum wrappers (and their import)

    def terminated(signum, frame):
        raise SystemExit(128 + signum)

    try:
        previous = _signal.signal(_signal.SIGTERM, terminated)
    except (ValueError, OSError):  # not the main thread
        previous = None
    try:
        if not _run(command):
            return False
    finally:
        if previous is not None:
            _signal.signal(_signal.SIGTERM, previous)
    return True  # not reached: _run exits


def _run(command) -> bool:
    try:
        if not command():
            return False
    except KeyboardInterrupt:
        message("hooklint: interrupted")
        exit_flushed(130)
    except SystemExit as exc:
        exit_flushed(exc.code)
    except BrokenPipeError:
        silence_stdout()
        exit_flushed(2)
    except OSError as exc:
        if exc.filename is None and exc.errno in _WRITE_ERRORS:  # stdout on a full disk, /dev/full...
            message(f"hooklint: error: cannot write the report to stdout: {exc.strerror or exc}")
            silence_stdout()
        elif exc.filename is not None:
            message(f"hooklint: error: {exc.filename}: {exc.strerror or exc}")
        else:
            message(
                f"hooklint: error: {exc.strerror or exc}"
                + ("" if debug() else " (set HOOKLINT_DEBUG=1 for the traceback)")
            )
        if debug():
            import traceback

            traceback.print_exc()
        exit_flushed(2)
    except Exception as exc:  # a bug in hooklint: one line, exit 2
        from hooklint.lexical import first_line

        message(
            f"hooklint: error: internal error: {type(exc).__name__}: {first_line(str(exc))}"
            + ("" if debug() else " (set HOOKLINT_DEBUG=1 for the traceback)")
        )
        if debug():
            import traceback

            traceback.print_exc()
        exit_flushed(2)
    exit_flushed(0)
    return True  # not reached


def debug() -> bool:
    return os.environ.get("HOOKLINT_DEBUG", "") not in ("", "0")


def message(text: str) -> None:
    """One line on stderr, whatever state stderr is in."""
    try:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def silence_stdout() -> None:
    """After a failed write to stdout, keep Python's exit-time flush from failing
    again (a second message and exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def exit_flushed(code) -> None:
    """Exit with ``code``, after flushing stdout: a report that cannot be written
    (stdout is ``/dev/full``, a closed pipe) is one line on stderr and exit 2."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError) as exc:
        message(
            f"hooklint: error: cannot write the report to stdout: {getattr(exc, 'strerror', None) or exc}"
        )
        silence_stdout()
        code = 2
    sys.exit(_exit_code(code))


def _exit_code(code) -> int:
    """A :class:`SystemExit` code as the process's exit status, as ``sys.exit`` reads
    it: None is 0; anything else that is not an int is printed and is 1."""
    if code is None:
        return 0
    if not isinstance(code, int):
        message(str(code))
        return 1
    return code


# -- the pre-commit path -----------------------------------------------------------------
class _Declined(Exception):
    """This run is not one the pre-commit path settles: the CLI runs it."""


def _settled_here() -> bool:
    """Settle the run when it is a clean pre-commit run (see the module's docstring);
    False, having printed and written nothing, when the CLI must run it."""
    options = _options(sys.argv[1:])
    if options is None:
        return False
    try:
        files = _files(options)
        if files is None:
            return False
        if not options["cache"]:
            for path, limit in files:
                _check_clean(path, limit)
        elif not _clean_by_index(options, files):
            return False
    except KeyboardInterrupt:
        message("")  # as click does before its own "interrupted"
        raise
    except Exception:  # _Declined, or anything unforeseen: the CLI's answer stands
        return False
    _print_clean(options)
    return True


def _options(arguments: list[str]) -> dict | None:
    """The options of ``check ARGS`` when the pre-commit path knows each of them; None
    otherwise (another command, an option it does not know, standard input, no file)."""
    if not arguments or arguments[0] != "check":
        return None
    flags: set[str] = set()
    paths: list[str] = []
    chosen = {"--format": "full"}
    rest = iter(arguments[1:])
    for argument in rest:
        if argument in _FLAGS:
            flags.add(argument)
        elif argument.startswith("-"):
            name, equals, value = argument.partition("=")
            if name not in _CHOICES:
                return None  # an option it does not handle, ``--``, or ``-`` (standard input)
            if not equals:
                value = next(rest, None)
            if value not in _CHOICES[name]:
                return None  # the CLI says what is wrong with it
            chosen[name] = value
        elif argument:
            paths.append(argument)
        else:
            return None
    if not paths:
        return None
    fix = "--fix" in flags
    return {
        "paths": paths,
        "quiet": bool(flags & {"--quiet", "-q"}),
        "force_exclude": "--force-exclude" in flags,
        "cache": not (fix or "--no-cache" in flags),  # a fix run neither reads nor writes the run index
    }


def _files(options: dict) -> list[tuple[str, int]] | None:
    """``(absolute path, max-file-size)`` of each file the run checks, sorted as the
    runner sorts them; None when a path is not a regular file or a notebook, or the
    configuration asks for more than the pre-commit path knows.  Configuration files
    are read only when one lies on a file's path."""
    import stat

    named: dict[str, None] = {}
    for path in options["paths"]:
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return None  # missing, unreadable, a dangling link: the CLI reports it
        if not stat.S_ISREG(info.st_mode) or path.endswith(".ipynb"):
            return None
        named[os.path.abspath(path)] = None
    options["configs"] = None
    if _configuration_on_the_way(named):
        configs = _configs(options)
        if configs is None:
            return None
    else:  # the defaults: the working directory is the root, nothing excluded but the defaults
        configs = None
    from hooklint.excludes import DEFAULT_MAX_FILE_SIZE, is_excluded

    files = []
    for absolute in sorted(named, key=lambda p: p.split(os.sep)):  # as Path objects sort
        if configs is None:
            excludes, root, limit = [], os.getcwd(), DEFAULT_MAX_FILE_SIZE
        else:
            config = configs(absolute)
            if config.registration_wrappers:
                return None  # their names are tokens too
            excludes = (list(config.exclude) if config.exclude else []) + list(config.extend_exclude)
            root, limit = config.root, _limit(config, DEFAULT_MAX_FILE_SIZE)
        if options["force_exclude"] and is_excluded(absolute, excludes, root):
            continue
        files.append((absolute, limit))
    options["files"] = files
    return files


def _limit(config, default: int) -> int:
    """``max-file-size`` as the runner reads it (no ``--max-file-size`` here)."""
    return config.max_file_size if config.max_file_size is not None else default


def _configuration_on_the_way(paths) -> bool:
    """Whether a configuration file, or any ``pyproject.toml``, is in a directory at
    or above one of ``paths`` (as :class:`hooklint.config.ConfigResolver` looks)."""
    seen: set[str] = set()
    for path in paths:
        directory = os.path.dirname(path)
        while directory not in seen:
            seen.add(directory)
            if any(os.path.isfile(os.path.join(directory, name)) for name in _CONFIG_NAMES):
                return True
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
    return False


def _configs(options: dict):
    """The CLI's :class:`hooklint.config.ConfigResolver`, the first path's settings
    loaded first (as the CLI does); None when any configuration is in error (the CLI
    reports it)."""
    from pathlib import Path

    from hooklint.config import ConfigError, ConfigResolver

    resolver = ConfigResolver(None)
    try:
        resolver(Path(options["paths"][0]))
        for path in options["paths"]:
            resolver(Path(os.path.abspath(path)))
    except (ConfigError, OSError, ValueError):
        return None
    options["configs"] = resolver
    return lambda path: resolver(Path(path))


def _read(path: str, limit: int) -> str:
    """The file's text, where ``hooklint.files.read_source`` reads the same text without
    a word (a regular file within ``limit`` bytes, no NUL byte, UTF-8 with or without a
    BOM, no encoding cookie); else :class:`_Declined`."""
    import stat

    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise _Declined
            raw = handle.read(limit + 1)
    except OSError:
        raise _Declined from None
    if len(raw) > limit or b"\x00" in raw:
        raise _Declined
    if b"coding" in raw[: raw.find(b"\n", raw.find(b"\n") + 1) + 1 or len(raw)]:  # a cookie, maybe
        import io
        import tokenize

        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except SyntaxError:
            raise _Declined from None
        if encoding not in ("utf-8", "utf-8-sig"):
            raise _Declined
    try:
        return (raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw).decode("utf-8")
    except UnicodeDecodeError:
        raise _Declined from None


def _check_clean(path: str, limit: int) -> None:
    """Nothing to report for ``path``: no part of a token, no ``noqa`` that may name an
    ``HL`` code, and CPython parses it; else :class:`_Declined`."""
    text = _read(path, limit)
    if any(part in text for part in _PARTS):
        raise _Declined
    if mentions_hooklint_code(text):
        raise _Declined  # HL100 may apply
    if not parses(text, path):
        raise _Declined


_PARTS = literal_parts(ANY_RULE_TOKENS)


def _clean_by_index(options: dict, files: list[tuple[str, int]]) -> bool:
    """With the result cache on: each file clean by the run index (under the key the
    runner computes for its settings) or checked clean here; the index is written as the
    runner writes it.  False, with nothing written, when a file is not clean."""
    from pathlib import Path
    from types import SimpleNamespace

    from hooklint.cache import RunIndex, run_key
    from hooklint.config import Config
    from hooklint.excludes import DEFAULT_MAX_FILE_SIZE

    resolver = options["configs"]
    paths = [Path(p) for p in options["paths"]]
    first = resolver(paths[0]) if resolver is not None else Config()
    groups: dict[int, tuple[object, list]] = {}
    for path, limit in files:
        config = resolver(Path(path)) if resolver is not None else first
        groups.setdefault(id(config), (config, []))[1].append((path, limit))
    cache_dir = first.root / ".hooklint_cache"
    indexes = []
    for config, members in groups.values():
        # What the runner's key reads of its request (no option the pre-commit path takes changes it).
        request = SimpleNamespace(config=config, paths=paths, select=None, extend_select=[], ignore=[])
        index = RunIndex(str(cache_dir), run_key(request, _limit(config, DEFAULT_MAX_FILE_SIZE)))
        for path, limit in members:
            try:
                info = os.stat(path)
            except OSError:
                return False
            if info.st_size > limit:
                return False
            stamp = (info.st_mtime_ns, info.st_size)
            found = index.lookup(path, stamp)
            if found is None:
                _check_clean(path, limit)
                index.record(path, stamp, [])
            elif found:
                return False  # findings recorded: the CLI reports them
        indexes.append(index)
    for index in indexes:
        index.save()
    return True


def _print_clean(options: dict) -> None:
    """What the CLI prints for a run without findings, problems or fixes."""
    if options["quiet"] or sys.stdout is None:  # (both formats allowed report nothing, then the summary)
        return
    try:
        sys.stdout.write("All checks passed!\n")
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()  # as click, for a closed pipe: exit 1
        raise SystemExit(1) from None
