"""A submitted file, read with suspicion: its code cells, or why it has none.

Only a regular file is read (not a link, a FIFO or a device), and at most
MAX_BYTES of it. JSON nested too deep to parse is an error like any other;
nbformat 3 is read as well as 4; saved outputs are never looked at.
The result is a list of code cells, (place among all cells, source),
whatever the file held.
"""

import json
import os
import stat

MAX_BYTES = 50_000_000


class NotANotebook(ValueError):
    """The file cannot be graded; the message says why, for the student's notes."""


def read_cells(path):
    """The assignment its metadata names (or None), then (k, source) for each code cell (k counts every
    cell); raises NotANotebook."""
    try:
        info = os.lstat(path)
    except OSError as e:
        raise NotANotebook(f"it cannot be read ({e.strerror})") from None
    if stat.S_ISLNK(info.st_mode):
        raise NotANotebook("a symbolic link: links are not followed")
    if not stat.S_ISREG(info.st_mode):
        raise NotANotebook("not a regular file (a FIFO, a device or a socket?)")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise NotANotebook("not a regular file")
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise NotANotebook(f"it cannot be read ({e.strerror})") from None
    if len(data) > MAX_BYTES:
        raise NotANotebook(f"larger than {MAX_BYTES / 1e6:g} MB")
    return cells_of(data.decode("utf-8", errors="replace"))


def cells_of(text):
    """read_cells's list for a notebook's text; raises NotANotebook."""
    try:
        nb = json.loads(text)
    except (ValueError, RecursionError) as e:  # (RecursionError: "[" nested 100,000 deep)
        where = f" (line {e.lineno}, column {e.colno}: {e.msg})" if isinstance(e, json.JSONDecodeError) else ""
        raise NotANotebook(f"not valid JSON{where}") from None
    if not isinstance(nb, dict):
        raise NotANotebook("valid JSON but not a notebook (no list of cells)")
    if isinstance(nb.get("worksheets"), list):  # nbformat 3: the cells are in worksheets, the code in "input"
        cells = [c for w in nb["worksheets"] if isinstance(w, dict) and isinstance(w.get("cells"), list)
                 for c in w["cells"]]
        key = "input"
    elif isinstance(nb.get("cells"), list):
        cells, key = nb["cells"], "source"
    else:
        raise NotANotebook("valid JSON but not a notebook (no list of cells)")
    declared = nb.get("metadata", {}).get("minigrad", {}) if isinstance(nb.get("metadata"), dict) else {}
    declared = declared.get("assignment") if isinstance(declared, dict) else None
    sources = [declared if isinstance(declared, str) else None]
    for k, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get(key, "")
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if isinstance(source, str) and source.strip():
            sources.append((k, source))
    return sources

