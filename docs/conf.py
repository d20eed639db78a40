"""Sphinx configuration: the course (lessons, exercises, API reference) as a website that works offline.

Build with ``python -m sphinx -W -b html docs docs/_build/html``. The notebooks are rendered as saved
(nothing is executed); ``_ext/course.py`` copies them in from ``notebooks/`` and ``exercises/``.
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS / "_ext"), str(DOCS.parent)]  # the extension, and this checkout's minigrad

from minigrad.diagnostics import VERSION  # noqa: E402 (after the path above)

project = "minigrad"
author = "the minigrad authors"
copyright = "the minigrad authors"
release = version = VERSION

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 from the pip package, copied into _static/mathjax: no CDN
    "course",
    "plain_docstrings",
]

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]

# Notebooks as saved: CI runs every one of them; the site shows their outputs.
nb_execution_mode = "off"
nb_ipywidgets_js = {}          # no widget manager fetched from a CDN
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True   # $$...$$ inside a paragraph, as JupyterLab reads it
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
add_module_names = False

html_theme = "furo"
html_title = f"minigrad {release}"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_js_files = ["course.js"]
html_copy_source = False
html_show_sourcelink = False
