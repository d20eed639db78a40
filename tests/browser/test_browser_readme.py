"""The README's launch command in a real browser: the quickstart open, the exercises in view.

The test runs the ``python -m jupyter lab ...`` line of the README as it stands, in the
repository's root, adding only what every browser test adds (a free port, no token, no
browser of its own, no user settings; ``--allow-root`` as root). It then sends headless
Chromium to the page the server writes for a student's browser, which redirects to the Lab,
and checks what the student sees: the quickstart open, and the file browser at the
repository's root, listing ``notebooks/`` and ``exercises/``. It takes about 10 s; a
screenshot is saved in ``tests/artifacts/`` (git-ignored), pass or fail.
"""

import re
import shlex
import time

import pytest

from lab_in_chromium import ARTIFACTS, REPO, open_chromium, runtime_dir, serve_lab, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOT = ARTIFACTS / "browser_readme_launch.png"
PAGE_LOAD_S = 30          # redirected, the Lab loaded, the notebook and the file browser shown
QUICKSTART = "notebooks/00_quickstart.ipynb"

QUICKSTART_OPEN = f"""() => {{
    const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    return Boolean(widget && widget.context && widget.context.path === {QUICKSTART!r}
                   && document.querySelector('.jp-NotebookPanel .jp-Cell') !== null);
}}"""

FILE_BROWSER = """() => ({
    path: [...document.querySelectorAll('.jp-FileBrowser .jp-BreadCrumbs')].map(e => e.textContent.trim()),
    items: [...document.querySelectorAll('.jp-FileBrowser .jp-DirListing-item')]
        .filter(item => item.offsetParent !== null)   // shown on screen
        .map(item => item.querySelector('.jp-DirListing-itemText').textContent.trim()),
})"""

AT_THE_ROOT = f"""() => {{
    const shown = ({FILE_BROWSER})();
    return shown.path.join() === '/' && shown.items.includes('notebooks') && shown.items.includes('exercises');
}}"""


def readme_launch_arguments():
    """The arguments of the README's ``python -m jupyter lab ...`` line."""
    lines = re.findall(r"^python -m jupyter lab(.*)$", (REPO / "README.md").read_text(), re.M)
    assert len(lines) == 1, f"README.md should have one line `python -m jupyter lab ...`, it has {lines}"
    return shlex.split(lines[0])


def page_the_server_opens(home):
    """The page ``jupyter lab`` sends a browser to: the file it writes for that, as a file:// URL."""
    folder = runtime_dir(home)
    # jupyter_server writes one for the file named on the command line, if any, and one for the Lab
    pages = sorted(folder.glob("jpserver-file-to-run-*-open.html")) or sorted(folder.glob("jpserver-*-open.html"))
    assert pages, f"JupyterLab wrote no page for a browser in {folder}"
    return pages[0].as_uri()


def test_the_readme_command_opens_the_quickstart_with_the_exercises_in_view(tmp_path):
    with serve_lab(readme_launch_arguments(), cwd=REPO, home=tmp_path):
        with open_chromium(SCREENSHOT) as page:
            deadline = time.monotonic() + PAGE_LOAD_S
            page.goto(page_the_server_opens(tmp_path))
            wait_until(page, QUICKSTART_OPEN, f"{QUICKSTART} to open in the Lab", deadline)
            # The Lab first shows the quickstart's folder, then the folder the URL asks for: wait for it.
            try:
                page.wait_for_function(AT_THE_ROOT, timeout=max(deadline - time.monotonic(), 0.1) * 1000,
                                       polling=200)
            except Exception:  # playwright's TimeoutError: the assertions below say what is shown
                pass
            shown = page.evaluate(FILE_BROWSER)
            assert shown["path"] == ["/"], f"the file browser is not at the repository's root: {shown}"
            for folder in ("notebooks", "exercises"):
                assert folder in shown["items"], f"no {folder}/ in the file browser: {shown}"
