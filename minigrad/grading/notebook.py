"""A submitted file, read with suspicion: only a regular file, at most MAX_BYTES, parsed by nbformat.

nbformat reads any version and upgrades it to 4; whatever it cannot read,
or JSON nested too deep to parse, is NotANotebook. It does not validate a
version-4 notebook against its schema (which would log each departure): a
notebook is read wherever its code cells can be, and its outputs never are.
"""

import os
import stat

import nbformat

from minigrad.grading.verdict import MAX_VALUES, cap, json_values

MAX_BYTES = 50_000_000


class NotANotebook(ValueError):
    """The file cannot be graded; the message says why, for the student's notes."""


def read_cells(path):
    """(the assignment its metadata names or None, the source of each cell: "" for all but code cells);
    raises NotANotebook."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            raise NotANotebook("a symbolic link: links are not followed")
        if stat.S_ISDIR(info.st_mode):
            raise NotANotebook("a folder named like a notebook: hand in the notebook file itself")
        if not stat.S_ISREG(info.st_mode):
            raise NotANotebook("not a regular file (a FIFO, a device or a socket?)")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # (swapped since the lstat)
                raise NotANotebook("not a regular file")
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise NotANotebook(f"it cannot be read ({e.strerror})") from None
    if len(data) > MAX_BYTES:
        raise NotANotebook(f"larger than {MAX_BYTES / 1e6:g} MB")
    if json_values(data) > MAX_VALUES:
        raise NotANotebook(f"more than {MAX_VALUES:,} JSON values (outputs, or metadata?): clear its outputs "
                           "(Edit > Clear Outputs of All Cells), save, and hand it in again")
    try:
        nb = nbformat.convert(nbformat.reader.reads(data.decode("utf-8", errors="replace")), 4)
    except (nbformat.reader.NotJSONError, RecursionError):
        raise NotANotebook("not valid JSON, or nested too deep to read") from None
    except Exception as e:  # (nbformat's upgrade of JSON that is no notebook fails in many ways)
        raise NotANotebook(f"valid JSON but not a notebook ({cap(e, 200)})") from None
    metadata = nb.get("metadata")
    declared = metadata.get("minigrad") if isinstance(metadata, dict) else None
    declared = declared.get("assignment") if isinstance(declared, dict) else None
    if not isinstance(nb.get("cells"), list):
        raise NotANotebook("valid JSON but not a notebook (no list of cells)")
    cells = [c.source if isinstance(c, dict) and c.get("cell_type") == "code" and isinstance(c.get("source"), str)
             else "" for c in nb.cells]
    return declared if isinstance(declared, str) else None, cells

