"""Many files: a process pool (``--jobs``) when there are enough candidates, each
worker reading, prefiltering and checking its share; a worker that dies costs one
file.  With cross-file analysis the module summaries a worker computes go to the
others with their next chunk of files (:func:`hooklint.project.store.take_new`), so
that a run without a cache summarises each module about once, not once per worker."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from hooklint.engine.check import check_path, forget_places
from hooklint.engine.prefilter import may_concern_a_rule
from hooklint.engine.settings import FileResult, Settings
from hooklint.files import SourceError, display_path, read_source

#: Below this many candidate files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 8


def worker_count(jobs: int, files: int) -> int:
    """``--jobs``, capped at the number of files and of CPUs."""
    return max(1, min(jobs, files, os.cpu_count() or 1))


def check_paths(
    paths: Sequence[Path], settings: Settings, jobs: int, explicit: Sequence[bool] | None = None
) -> list[FileResult]:
    """Check files, in worker processes when there are enough of them.

    Workers get the paths in small chunks and read, prefilter and lint them
    themselves: reading and prefiltering thousands of files costs as much as linting
    the few that pass, so it is shared out too.  A worker that dies (a crash in the
    native parser, the kernel's OOM killer) costs one file: that file gets a one-line
    error, the files it had not answered for are checked again (alone, to find the
    one it died on), and every other result stands.
    ``explicit[i]``: whether ``paths[i]`` was named on the command line."""
    flags = list(explicit) if explicit is not None else [False] * len(paths)
    forget_places()  # files may have come or gone since the last run in this process
    jobs = worker_count(jobs, len(paths))
    if jobs <= 1 or len(paths) < PARALLEL_THRESHOLD or _few_concern_a_rule(paths, settings):
        return [check_path(str(p), settings, flag) for p, flag in zip(paths, flags)]
    _prepare_worker()  # once, here: the workers share what the parent imported
    tasks = [(i, str(p), flag) for i, (p, flag) in enumerate(zip(paths, flags))]
    chunks = _chunks(tasks, jobs)
    # Workers fork from here: frozen objects are never scanned by their collector, so
    # their pages stay shared instead of being copied on first touch.
    gc.freeze()
    try:
        return _Pool(jobs, settings).run(chunks, len(tasks))
    finally:
        gc.unfreeze()


#: A file larger than this is sent alone, before the others (largest first): the few
#: files that can cost a tenth of a worker's run are shared out while every worker is
#: still busy, instead of ending the run on one worker while the others wait.
BIG_FILE = 192 * 1024


def _chunks(tasks: list, jobs: int) -> list[list]:
    """The order and grouping in which ``tasks`` go to the workers (results keep their
    positions).  Files over :data:`BIG_FILE` come first, one a chunk, largest first;
    the rest keep their path order (files of one package go to one worker in a row,
    which reads their shared base modules once) in chunks of about
    ``len(tasks) / (jobs * 32)`` that shrink towards the end of the run to one file,
    so that the workers finish together (guided self-scheduling).  A file that
    cannot be stat'ed is not big: its own check reports it."""
    sizes = {}
    for task in tasks:
        try:
            sizes[task[0]] = os.stat(task[1]).st_size
        except OSError:
            sizes[task[0]] = -1
    big = sorted((t for t in tasks if sizes[t[0]] > BIG_FILE), key=lambda t: -sizes[t[0]])
    rest = [t for t in tasks if sizes[t[0]] <= BIG_FILE]
    chunks = [[task] for task in big]
    size = max(1, len(tasks) // (jobs * 32))
    start = 0
    while start < len(rest):
        step = max(1, min(size, (len(rest) - start) // (jobs * 4)))
        chunks.append(rest[start : start + step])
        start += step
    return chunks


#: Up to this many files (a pre-commit batch), the parent reads them first to see
#: whether enough of them hold a rule's token to be worth starting workers.
PARENT_SCREEN_LIMIT = 256


def _few_concern_a_rule(paths: Sequence[Path], settings: Settings) -> bool:
    """For a short list of files: fewer than :data:`PARALLEL_THRESHOLD` of them hold any
    rule's token (the rest cost a read and a regex search each: no worker, no libcst)."""
    if len(paths) > PARENT_SCREEN_LIMIT:
        return False
    concerned = 0
    for path in paths:
        try:
            text = read_source(Path(path), settings.max_file_size).text
        except (SourceError, OSError, ValueError):
            continue  # its own check reports it
        if may_concern_a_rule(text, settings):
            concerned += 1
            if concerned >= PARALLEL_THRESHOLD:
                return False
    return True


class _Pool:
    """Worker processes, each fed chunks through its own pipe and answering for its
    files in order, a few at a time (:data:`ANSWER_INTERVAL`).  A worker that dies
    with one file of its chunk unanswered died on that file; with several, each of
    them is checked again alone, so that the one it dies on is found and every other
    result stands."""

    def __init__(self, size: int, settings: Settings) -> None:
        self.size = size
        self.settings = settings
        self.context = _fork_context()
        self.workers: dict = {}  # connection -> [process, the unanswered part of its chunk]
        # Summaries the workers computed, in batches (connection it came from, entries),
        # and how many batches each worker has been sent or has made itself.
        self.summaries: list[tuple[object, list]] = []
        self.summaries_sent: dict = {}

    def run(self, chunks: list, count: int) -> list[FileResult]:
        from collections import deque
        from multiprocessing.connection import wait

        pending = deque(chunks)
        results: list[FileResult | None] = [None] * count
        try:
            for _ in range(min(self.size, len(pending))):
                self._start(pending.popleft())
            while self.workers:
                ready = set(wait(list(self.workers) + [w[0].sentinel for w in self.workers.values()]))
                for connection in list(self.workers):
                    process, chunk = self.workers[connection]
                    if connection not in ready and process.sentinel not in ready:
                        continue
                    dead = process.sentinel in ready
                    try:
                        while connection.poll():
                            answers, summaries = connection.recv()
                            for position, result in answers:
                                results[position] = result
                                chunk.popleft()
                            if summaries:
                                self.summaries.append((connection, summaries))
                    except (EOFError, OSError):
                        dead = True
                    if dead:
                        self._forget(connection)
                        if len(chunk) == 1:  # it died on this file
                            position, name, _ = chunk.popleft()
                            results[position] = FileResult(
                                display_path(Path(name)), error=_death(process.exitcode)
                            )
                        else:  # on one of these: each goes again alone, to find which
                            pending.extendleft([task] for task in reversed(chunk))
                        if pending:
                            self._start(pending.popleft())
                    elif not chunk:  # its chunk is done: the next one, or stop
                        if pending:
                            chunk.extend(pending.popleft())
                            self._send_chunk(connection, list(chunk))
                        else:
                            self._send(connection, None)
                            self._forget(connection)
        finally:
            self.close()
        return results  # type: ignore[return-value]

    def _start(self, chunk) -> None:
        from collections import deque

        parent, child = self.context.Pipe()
        process = self.context.Process(target=_worker_main, args=(child, self.settings), daemon=True)
        process.start()
        child.close()
        self.workers[parent] = [process, deque(chunk)]
        self._send_chunk(parent, list(chunk))

    def _send_chunk(self, connection, chunk: list) -> None:
        """``chunk``, with the summaries the other workers computed since this one's
        last chunk."""
        start = self.summaries_sent.get(connection, 0)
        summaries = [
            entry for origin, batch in self.summaries[start:] if origin is not connection for entry in batch
        ]
        self.summaries_sent[connection] = len(self.summaries)
        self._send(connection, (chunk, summaries))

    def _forget(self, connection) -> None:
        self.summaries_sent.pop(connection, None)
        process, _ = self.workers.pop(connection)
        process.join()
        connection.close()

    @staticmethod
    def _send(connection, message) -> None:
        try:
            connection.send(message)
        except OSError:
            pass  # a dead worker: its sentinel says so

    def close(self) -> None:
        """Stop every worker (on an interrupt, or an error in the parent)."""
        for connection, (process, _) in list(self.workers.items()):
            if process.is_alive():
                process.kill()
            process.join()
            connection.close()
        self.workers.clear()


def _death(exitcode: int | None) -> str:
    import signal

    if exitcode is not None and exitcode < 0:
        try:
            how = f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"killed by signal {-exitcode}"
    else:
        how = f"exited with status {exitcode}"
    return f"the analyzer crashed on this file (worker process {how}); not checked"


#: A worker answers for the files it has checked when its chunk is done, when it has
#: computed module summaries (the other workers get them with their next chunk), or
#: when this many seconds have passed since its last answer: one message per file
#: would wake the parent thousands of times a run, on a core the workers need.
ANSWER_INTERVAL = 0.05


def _worker_main(connection, settings: Settings) -> None:
    """A worker: chunks of ``(position, path, explicit)`` in, each with the summaries
    other workers computed; out, in the chunk's order, ``([(position, FileResult),
    ...], summaries it computed)`` for the files checked since its last answer
    (:data:`ANSWER_INTERVAL`), until it is sent None."""
    import time

    from hooklint.project import store

    _die_with_parent()
    _prepare_worker()
    store.sharing(settings.context.cross_file)
    try:
        while True:
            message = connection.recv()
            if message is None:
                return
            chunk, summaries = message
            store.adopt(summaries)
            answers: list = []
            last = time.monotonic()
            for number, (position, path, explicit) in enumerate(chunk, start=1):
                answers.append((position, check_path(path, settings, explicit)))
                computed = store.take_new()
                now = time.monotonic()
                if computed or number == len(chunk) or now - last >= ANSWER_INTERVAL:
                    connection.send((answers, computed))
                    answers, last = [], now
    except (EOFError, OSError, KeyboardInterrupt):
        return  # the parent is gone or stopping


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when its parent dies (however it dies), so that
    no worker outlives an interrupted or killed run; elsewhere a no-op (workers are
    daemons: a parent that exits normally stops them)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles ^C and stops us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the request took effect
        os._exit(1)


def _prepare_worker() -> None:
    """Import the parser, the analysis and the rules: in the parent before it forks
    the workers (so they share them), and in a worker (a no-op after a fork)."""
    import libcst  # noqa: F401

    import hooklint.analysis.collector  # noqa: F401
    import hooklint.rules

    hooklint.rules.all_rules()


def _fork_context():
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")
