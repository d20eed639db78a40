"""minigrad's docstrings, as autodoc needs them: plain text turned into reStructuredText that says the same.

The docstrings are written to be read with ``help()`` and in the source: plain text with the math as it
is typed (``|x|``, ``x_k``, ``gy * cos(x)``), ``double backquotes`` around code, indented blocks for
examples and formulas, and ``- `` lists. Parsed as reST, ``|x|`` is a substitution, ``*`` starts
emphasis and an indented line is an error. This module rewrites each docstring before autodoc parses it:

- an indented block (or the indented tail of a paragraph) becomes a literal block, shown as typed;
- lines starting ``- ``, ``* `` or ``1. `` become a list, the lines under an item its continuation;
- in text, ````code````, ```code``` (shown as code too), ``:role:`target```, ``**strong**`` and
  ``*emphasis*`` are kept, and every other character that reST reads as markup is escaped;
- ``>>>`` sessions stay doctest blocks.
"""

import re

MARKER = re.compile(r"(?:[-*+]|\d+[.)])\s+")
KEPT = re.compile(
    r"``.+?``"                                      # ``code``
    r"|:[\w.+-]+:`[^`]+`"                           # :role:`target`
    r"|`[^`\s][^`]*`(?!_)"                          # `code`, shown as ``code``
    r"|(?<![\w*\\])\*\*(?=\S)[^*]+?(?<=\S)\*\*(?![\w*])"    # **strong**
    r"|(?<![\w*\\])\*(?=[^\s*])[^*]+?(?<=[^\s*])\*(?![\w*])"  # *emphasis*
)
MARKUP = re.compile(r"([\\*|_`\[\]<>])")
OPENING, CLOSING = "-:/'\"<([{", "-.,:;!?/'\")]}>"
UNDERLINE = re.compile(r"([=\-~^\"'`#*+:.])\1{3,}\s*")


def escaped(text):
    """``text`` with every reST markup character escaped, except in the spans ``KEPT`` matches."""
    out, at = [], 0
    for span in KEPT.finditer(text):
        out.append(MARKUP.sub(r"\\\1", text[at:span.start()]))
        kept = span.group()
        kept = f"`{kept}`" if kept.startswith("`") and not kept.startswith("``") else kept
        # reST sees markup only after a space or an opening mark, and before a space or a closing one;
        # elsewhere (1..``n``, ``x``s) an escaped space, which shows as nothing, separates it.
        before, after = text[span.start() - 1:span.start()], text[span.end():span.end() + 1]
        opens = not before or before.isspace() or before in OPENING
        closes = not after or after.isspace() or after in CLOSING
        out.append(("" if opens else "\\ ") + kept + ("" if closes else "\\ "))
        at = span.end()
    out.append(MARKUP.sub(r"\\\1", text[at:]))
    line = "".join(out)
    return "\\" + line if UNDERLINE.fullmatch(line) else line


def indent(line):
    return len(line) - len(line.lstrip())


def literal(lines):
    """A literal block: the lines as typed, under ``::``."""
    base = min(indent(line) for line in lines if line.strip())
    return ["::", ""] + ["    " + line[base:] for line in lines] + [""]


def paragraph(lines):
    """Text lines, escaped; a closing ``::`` (reST's own literal marker) is shown as ``:``."""
    text = [escaped(line.strip()) for line in lines]
    if text and text[-1].endswith("::"):
        text[-1] = text[-1][:-1]
    return text + [""]


def item(lines):
    """A list item: its marker, then its text, the lines after the first aligned under it."""
    marker = MARKER.match(lines[0]).group()
    text = [lines[0][len(marker):]] + lines[1:]
    width = len(marker.rstrip()) + 1
    return [marker.rstrip() + " " + escaped(text[0].strip())] + [" " * width + escaped(x.strip()) for x in text[1:]]


def block(lines):
    """One block of lines between blank lines, as reST: a paragraph, list items, then any indented tail."""
    if lines[0].lstrip().startswith(">>>"):
        return lines + [""]
    text, items, tail = [], [], len(lines)
    for k, line in enumerate(lines):
        if indent(line) == 0 and MARKER.match(line):
            items.append([line])
        elif items:
            items[-1].append(line)
        elif indent(line) > 0:
            tail = k
            break
        else:
            text.append(line)
    out = paragraph(text) if text else []
    out += [x for lines_of_item in items for x in item(lines_of_item)] + ([""] if items else [])
    return out + (literal(lines[tail:]) if tail < len(lines) else [])


def blocks(lines):
    """The blocks of lines between blank lines; indented blocks in a row are one (an example with a blank)."""
    found, current = [], []
    for line in lines + [""]:
        if line.strip():
            current.append(line.rstrip())
        elif current:
            if found and indent(current[0]) > 0 and all(indent(x) > 0 for x in found[-1] if x):
                found[-1] += [""] + current
            else:
                found.append(current)
            current = []
    return found


def to_rest(lines):
    """A docstring's lines (as autodoc gives them, dedented) rewritten as reST."""
    return [line for lines_of_block in blocks(lines) for line in block(lines_of_block)]


def rewrite(app, what, name, obj, options, lines):
    """autodoc's hook. A module's docstring is taken as written: it starts at column 0, and autodoc's
    dedent would bring an example that is all it holds under its first line to column 0 too."""
    if what == "module" and isinstance(obj.__doc__, str):
        lines[:] = obj.__doc__.expandtabs().strip("\n").splitlines()
    lines[:] = to_rest(lines)


def setup(app):
    app.connect("autodoc-process-docstring", rewrite)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
