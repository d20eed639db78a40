"""The course's notebooks as pages of the site, and what its commands print.

The lessons live in ``notebooks/`` and the exercises in ``exercises/``, outside the Sphinx source
folder, where MyST-NB cannot read them. At the start of each build, ``copy_notebooks`` copies every
``*.ipynb`` found there into ``docs/lessons/`` and ``docs/exercises/`` (generated, git-ignored): a
notebook added, renamed or removed is picked up by the next build, and a copy is rewritten only when
its notebook changed, so Sphinx rebuilds only the pages that did. The notebooks are not changed:
``link_notebook`` puts under each page's title a box with the notebook to download and the page it
pairs with (a lesson's exercise, an exercise's lesson), paired by the number the file names start with.

``command-output`` shows what a command prints, run at build time, so that a page never drifts from it.
"""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"lessons": ROOT / "notebooks", "exercises": ROOT / "exercises"}  # page folder: notebook folder
PAIRS = {"lessons": ("exercises", "Exercise"), "exercises": ("lessons", "Lesson")}


def copy_notebooks(app):
    """Make each page folder hold exactly the notebooks of its notebook folder."""
    for folder, source in FOLDERS.items():
        notebooks = sorted(source.glob("*.ipynb"))
        if not notebooks:
            raise ExtensionError(f"course: no notebooks in {source}; the site's {folder}/ pages come from there")
        target = Path(app.srcdir) / folder
        target.mkdir(exist_ok=True)
        for stale in set(target.glob("*.ipynb")) - {target / nb.name for nb in notebooks}:
            stale.unlink()
        for nb in notebooks:
            copy = target / nb.name
            if not copy.exists() or copy.read_bytes() != nb.read_bytes():
                shutil.copyfile(nb, copy)  # a fresh mtime: Sphinx reads the page again


def number(name):
    """The number a notebook's file name starts with (13 for 13_forward_and_reverse_mode), or None."""
    match = re.match(r"\d+", name)
    return int(match.group()) if match else None


def partners(app, folder, name):
    """The pages of the other folder whose file names start with the same number as ``name``."""
    other = PAIRS[folder][0]
    n = number(name)
    found = sorted(Path(app.srcdir, other).glob("*.ipynb"))
    return [f"{other}/{nb.stem}" for nb in found if n is not None and number(nb.stem) == n]


def doc_link(docname, target):
    """A reference to the page ``target``, shown as its title."""
    ref = addnodes.pending_xref("", refdomain="std", reftype="doc", reftarget=f"/{target}", refdoc=docname,
                                refexplicit=False, refwarn=True)
    ref += nodes.inline("", target, classes=["xref", "std", "std-doc"])
    return ref


def notebook_box(app, docname):
    """The box under a notebook page's title: its file to download, and the pages it pairs with."""
    folder, _, name = docname.partition("/")
    download = addnodes.download_reference("", "", reftarget=f"/{docname}.ipynb", refdoc=docname,
                                           refexplicit=True, reftype="download", refdomain="")
    download += nodes.literal("", f"{name}.ipynb")
    first = nodes.paragraph("", "Download the notebook ")
    first += [download, nodes.Text(" and open it in JupyterLab to run it.")]
    other, label = PAIRS[folder]
    links = partners(app, folder, name)
    second = nodes.paragraph("", f"{label}{'s' if len(links) > 1 else ''}: " if links else "")
    for k, target in enumerate(links):
        second += [nodes.Text("; ")] if k else []
        second += doc_link(docname, target)
    if not links:
        second += nodes.Text(f"No {other[:-1]} goes with this {folder[:-1]}.")
    box = nodes.admonition("", classes=["note", "notebook-links"])
    box += [nodes.title("", "Notebook"), first, second]
    return box


def is_notebook_page(docname):
    return docname.partition("/")[0] in FOLDERS


def link_notebook(app, doctree):
    """Put the notebook box under the title of each lesson and exercise page."""
    docname = app.env.docname
    if not is_notebook_page(docname):
        return
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is not None and isinstance(section[0], nodes.title):
        section.insert(1, notebook_box(app, docname))
    else:
        doctree.insert(0, notebook_box(app, docname))


def reread_pairs(app, env, added, changed, removed):
    """A notebook added or removed changes the pairs: an incremental build reads every notebook page again."""
    if any(is_notebook_page(docname) for docname in added | removed):
        return sorted(docname for docname in env.found_docs if is_notebook_page(docname))
    return []


class CommandOutput(SphinxDirective):
    """``command-output``: a command of the course (``python ...``), run at build time, and what it prints.

    ``python`` stands for the interpreter that runs the build, in the repository's root; a command that
    fails fails the build, so a page never shows a command that does not work.
    """

    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        command = self.arguments[0]
        words = shlex.split(command)
        if words[0] != "python":
            raise self.error(f"command-output runs python commands only, got {command!r}")
        done = subprocess.run([sys.executable, *words[1:]], capture_output=True, text=True, cwd=ROOT, timeout=120)
        if done.returncode != 0:
            raise self.error(f"{command} failed with code {done.returncode}:\n{done.stderr[-2000:]}")
        text = f"$ {command}\n{done.stdout.rstrip()}"
        return [nodes.literal_block(text, text, language="text")]


def setup(app):
    app.connect("builder-inited", copy_notebooks)
    # before Sphinx's collector of downloads (priority 500), which copies the files the box links to
    app.connect("doctree-read", link_notebook, priority=400)
    app.connect("env-get-outdated", reread_pairs)
    app.add_directive("command-output", CommandOutput)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
