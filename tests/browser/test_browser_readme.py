"""The README's launch command in a real browser: the address it prints opens the quickstart, root in view.

The test runs the ``python -m jupyter lab ...`` line of the README as it stands, in the
repository's root, token kept, adding only what every browser test adds (a free port, no
browser of its own, no user settings; ``--allow-root`` as root) and its own workspace folder,
into which the README's workspace is copied (the Lab writes its layout there as it goes, and
the repository's copy stays as it is). It then sends headless Chromium to the first address
JupyterLab prints, as printed, and checks what the student sees: the quickstart open, and
the file browser at the repository's root, listing ``notebooks/`` and ``exercises/``. It takes
about 10 s; a screenshot is saved in ``tests/artifacts/`` (git-ignored), pass or fail.
"""

import re
import shlex
import shutil
import time

import pytest

from lab_in_chromium import ARTIFACTS, REPO, open_chromium, printed_addresses, serve_lab, wait_until

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


def with_workspace_copied(arguments, home):
    """``arguments`` less its workspace folder, whose workspaces are copied into the test's own (``home``)."""
    folders = [a.split("=", 1)[1] for a in arguments if a.startswith("--LabApp.workspaces_dir=")]
    assert len(folders) == 1, f"the README's command names no workspace folder: {arguments}"
    (home / "workspaces").mkdir()
    for workspace in (REPO / folders[0]).glob("*.jupyterlab-workspace"):
        shutil.copy(workspace, home / "workspaces" / workspace.name)
    return [a for a in arguments if not a.startswith("--LabApp.workspaces_dir=")]


def test_the_address_the_readme_command_prints_opens_the_quickstart_with_the_exercises_in_view(tmp_path):
    arguments = with_workspace_copied(readme_launch_arguments(), tmp_path)
    with serve_lab(arguments, cwd=REPO, home=tmp_path, token=True):
        addresses = printed_addresses(tmp_path)
        for address in addresses:  # each as a browser takes it: the token a parameter of its own
            assert re.fullmatch(r"http://[\w.:-]+/lab[^?#]*\?token=[0-9a-f]{32,}", address), address
        with open_chromium(SCREENSHOT) as page:
            deadline = time.monotonic() + PAGE_LOAD_S
            page.goto(addresses[0])
            wait_until(page, QUICKSTART_OPEN, f"{QUICKSTART} to open in the Lab at {addresses[0]}", deadline)
            try:  # (the file browser may show its folder a moment after the notebook opens)
                page.wait_for_function(AT_THE_ROOT, timeout=max(deadline - time.monotonic(), 0.1) * 1000,
                                       polling=200)
            except Exception:  # playwright's TimeoutError: the assertions below say what is shown
                pass
            shown = page.evaluate(FILE_BROWSER)
            assert shown["path"] == ["/"], f"the file browser is not at the repository's root: {shown}"
            for folder in ("notebooks", "exercises"):
                assert folder in shown["items"], f"no {folder}/ in the file browser: {shown}"
