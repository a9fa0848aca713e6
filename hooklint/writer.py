"""Writing files in a tree that may hold planted links: the one atomic writer.

Both the cache and ``--fix`` write through :func:`replace_atomically`: the bytes go
to a new temporary file that ``tempfile.mkstemp`` creates next to the target
(``O_CREAT | O_EXCL | O_NOFOLLOW``, under a random name: whatever already exists at a
name, a symlink included, is never opened, and another name is tried), which then
replaces the target by ``os.replace`` (a rename: a symlink at the target is replaced,
never written through).  A failure removes the temporary file and leaves the target
as it was.

:func:`write_fixed_source` is what ``--fix`` does with a file (README, "Autofix"):

* a symlink: the file it points to is fixed, atomically; the link stays a link;
* a file with more than one hard link: not written (replacing it would split the
  links, writing it in place could leave it half-written), a one-line problem;
* a read-only file (no write bit, or not writable by this user): not written;
* a file that is not a regular file, or that changed since it was read: not written;
* otherwise the new file gets the old one's permission bits, owner and group (a file
  whose owner cannot be kept is not written).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable  # not typing's: reading a cache file needs neither typing nor tempfile
from pathlib import Path

#: Opening for a read that neither follows a symlink at the last component nor blocks
#: on a FIFO or a device.
_READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


class WriteRefused(Exception):
    """A file ``--fix`` will not write; the message is the one-line reason."""


def replace_atomically(
    path: Path,
    data: bytes,
    *,
    like: os.stat_result | None = None,
    durable: bool = False,
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Replace ``path`` with a file holding ``data``, through a new temporary file in
    the same directory.  ``like``: give the new file that file's owner, group and
    permission bits (else it is private to the user, as ``mkstemp`` makes it).
    ``durable``: flush it to disk before the rename.  ``before_replace`` runs just
    before the rename and may raise to cancel it.  Raises OSError (or what
    ``before_replace`` raises); the target is then untouched."""
    prefix = f".{path.name[:64]}."  # file names are at most 255 bytes
    import tempfile

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".hooklint.tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            if like is not None:
                _take_over(out.fileno(), like)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _take_over(descriptor: int, like: os.stat_result) -> None:
    """Owner and group first (a change of owner clears the set-id bits), then the mode."""
    current = os.fstat(descriptor)
    if (current.st_uid, current.st_gid) != (like.st_uid, like.st_gid) and hasattr(os, "fchown"):
        try:
            os.fchown(descriptor, like.st_uid, like.st_gid)
        except PermissionError:
            raise WriteRefused(
                "owned by another user or group, which a rewrite cannot keep; not written"
            ) from None
    if hasattr(os, "fchmod"):
        os.fchmod(descriptor, stat.S_IMODE(like.st_mode))


def read_regular(path: Path) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file, opened without following a symlink at its last
    component or blocking on a FIFO; OSError (ELOOP for a symlink) or WriteRefused."""
    descriptor = os.open(path, _READ_FLAGS)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise WriteRefused("not a regular file; not written")
        chunks = []
        while chunk := os.read(descriptor, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks), status
    finally:
        os.close(descriptor)


def write_fixed_source(path: Path, original: str, fixed: str) -> str | None:
    """Write the fixed text of ``path`` (read as ``original``) in the file's own
    encoding and BOM, by the rules in this module's docstring.  Returns a one-line
    problem, or None."""
    from hooklint.files import SourceError, decode_source

    try:
        real = Path(os.path.realpath(path, strict=True))
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    try:
        raw, status = read_regular(real)
        if status.st_nlink > 1:
            raise WriteRefused(f"has {status.st_nlink} hard links, which a rewrite would split; not written")
        if not status.st_mode & 0o222 or not os.access(real, os.W_OK):
            raise WriteRefused("read-only file; not written")
        source = decode_source(real, raw)
        if source.text != original:
            raise WriteRefused("changed on disk since it was read; not written")

        def unchanged() -> None:
            again, now = read_regular(real)
            if again != raw or (now.st_dev, now.st_ino) != (status.st_dev, status.st_ino):
                raise WriteRefused("changed on disk while writing; not written")

        replace_atomically(real, source.encode(fixed), like=status, durable=True, before_replace=unchanged)
    except (WriteRefused, SourceError) as exc:
        return str(exc)
    except UnicodeEncodeError as exc:
        return f"the fixed text cannot be encoded as {exc.encoding}; not written"
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    return None
