"""A lesson in a real browser: JupyterLab served on localhost, driven by headless Chromium.

The test starts JupyterLab on a free port (no token, settings and workspaces in a temporary
folder), opens ``lesson_smoke.ipynb`` in Debian's ``chromium`` through Playwright, runs all
cells from the Run menu as a student would, waits until every code cell has an execution
count and the kernel is idle, and then checks what the student sees: no error output, a
matplotlib plot rendered as a PNG ``<img>`` and a graph from ``minigrad.viz.draw`` rendered
from its SVG, showing its function nodes. Every wait has a timeout and the server is stopped
whatever happens; it takes about 15 s. A screenshot is saved in ``tests/artifacts/``
(git-ignored), pass or fail.

It skips, saying why, where Chromium or Playwright is missing (``.ci/install-browser``
installs Chromium; ``pip install -e .[dev]`` installs Playwright). Playwright is only the
driver: the browser is always the system one, never a download.
"""

import shutil
import time
from pathlib import Path

import pytest

from lab_in_chromium import ARTIFACTS, KERNEL_IDLE, open_chromium, serve_lab, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE / "lesson_smoke.ipynb"
SCREENSHOT = ARTIFACTS / "browser_lesson.png"

PAGE_LOAD_S = 20          # the notebook open and its kernel idle
RUN_ALL_S = 20            # every cell executed and the kernel idle again (one budget for both)


@pytest.fixture
def lab(tmp_path):
    """A running JupyterLab serving a copy of the notebook; yields its base URL."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    with serve_lab([f"--ServerApp.root_dir={root}"], cwd=root, home=tmp_path) as base:
        yield base


ALL_CELLS_RAN = """() => {
    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
    return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
}"""

# JupyterLab 4 shows an SVG output as <img src="data:image/svg+xml,...">; older ones inline <svg>.
RENDERED_SVG = """element => {
    const image = element.querySelector('img'), svg = element.querySelector('svg');
    const shown = image || svg;
    if (shown === null) return {drawn: false, source: element.outerHTML.slice(0, 300)};
    const box = shown.getBoundingClientRect();
    const decoded = image === null || (image.complete && image.naturalWidth > 0);
    let source = svg === null ? '' : svg.outerHTML;
    if (image !== null) {
        const data = image.src.slice(image.src.indexOf(',') + 1);
        source = image.src.includes(';base64,') ? atob(data) : decodeURIComponent(data);
    }
    return {drawn: decoded && box.width > 10 && box.height > 10, source: source};
}"""

NOTEBOOK_OUTPUTS = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    return panel.context.model.toJSON().cells.flatMap(cell => cell.outputs || []);
}"""


def run_all_cells(page):
    """Run > Run All Cells, from the menu bar."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def test_lesson_runs_and_renders_in_chromium(lab):
    """Run All in JupyterLab: no error, one plot and one graph on screen."""
    with open_chromium(SCREENSHOT) as page:
        deadline = time.monotonic() + PAGE_LOAD_S
        page.goto(f"{lab}/lab/tree/{NOTEBOOK.name}", timeout=PAGE_LOAD_S * 1000)
        wait_until(page, KERNEL_IDLE, "the notebook to open with an idle kernel", deadline)
        run_all_cells(page)
        deadline = time.monotonic() + RUN_ALL_S
        wait_until(page, ALL_CELLS_RAN, "every code cell to get an execution count", deadline)
        wait_until(page, KERNEL_IDLE, "the kernel to be idle after Run All", deadline)

        outputs = page.evaluate(NOTEBOOK_OUTPUTS)
        errors = [f"{o['ename']}: {o['evalue']}" for o in outputs if o["output_type"] == "error"]
        assert errors == [], f"the notebook raised: {errors}"

        plots = page.locator(".jp-OutputArea-output img[src^='data:image/png']")
        assert plots.count() >= 1, "no matplotlib plot (<img>) was rendered"
        plots.first.scroll_into_view_if_needed()
        assert plots.first.evaluate("img => img.complete && img.naturalWidth > 0"), \
            "the plot's <img> did not decode"

        graphs = page.locator(".jp-OutputArea-output[data-mime-type='image/svg+xml']")
        assert graphs.count() >= 1, "no graph (SVG from minigrad.viz.draw) was rendered"
        graphs.first.scroll_into_view_if_needed()
        graph = graphs.first.evaluate(RENDERED_SVG)
        assert graph["drawn"], f"the graph's SVG was not drawn: {graph}"
        for label in ("Tanh", "Mul"):      # y = tanh(x) * x: its two function nodes
            assert label in graph["source"], f"no {label} in the graph: {graph['source'][:300]}"
