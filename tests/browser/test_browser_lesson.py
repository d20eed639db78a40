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

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
NOTEBOOK = HERE / "lesson_smoke.ipynb"
SCREENSHOT = REPO / "tests" / "artifacts" / "browser_lesson.png"
CHROMIUM = os.environ.get("MINIGRAD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

SERVER_START_S = 20       # JupyterLab answering on its port
PAGE_LOAD_S = 20          # the notebook open and its kernel idle
RUN_ALL_S = 20            # every cell executed and the kernel idle again (one budget for both)
UI_ACTION_MS = 10_000     # one click, one selector


def free_port():
    """A port that nothing listens on now (the server is told not to try others)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_command(port, root, settings, workspaces):
    """The JupyterLab command line: localhost only, no token, nothing read from the user's setup."""
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # CI containers
    return [
        sys.executable, "-m", "jupyterlab", "--no-browser", *as_root,
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        "--IdentityProvider.token=", "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={workspaces}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        # window.jupyterapp: the test reads the kernel's state and the outputs' types from it.
        "--LabApp.expose_app_in_browser=True",
    ]


def lab_environment(home):
    """The server's environment: this checkout's minigrad first, no user Jupyter config."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        env[name] = str(home / name.lower())
    env.pop("MPLBACKEND", None)           # the kernel must use the inline backend
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    # Lab asks once whether to fetch news; the answer lives in the (fresh) config folder.
    labconfig = home / "jupyter_config_dir" / "labconfig"
    labconfig.mkdir(parents=True)
    page_config = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
    (labconfig / "page_config.json").write_text(json.dumps(page_config))
    return env


def wait_for_server(url, process, log):
    """Poll ``url`` until it answers; fail with the server's log if it exits or is too slow."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"JupyterLab exited with code {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with opener.open(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    pytest.fail(f"JupyterLab did not answer {url} within {SERVER_START_S} s:\n{log.read_text()[-3000:]}")


def stop(process):
    """Stop the server (it shuts its kernel down); kill its process group if it takes over 10 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)   # started in a new session: pgid == pid
            process.wait(timeout=10)


@pytest.fixture
def lab(tmp_path):
    """A running JupyterLab serving a copy of the notebook; yields its base URL."""
    if not Path(CHROMIUM).exists():
        reason = f"no Chromium at {CHROMIUM}: run .ci/install-browser (apt-get install chromium)"
        if os.environ.get("CI"):  # CI installs it: there, a missing browser is a failure, not a skip
            pytest.fail(reason)
        pytest.skip(reason)
    pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (dev extra)")
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (dev extra)")
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    port = free_port()
    log = tmp_path / "jupyterlab.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            lab_command(port, root, tmp_path / "settings", tmp_path / "workspaces"),
            cwd=root, env=lab_environment(tmp_path), stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_server(f"{base}/api/status", process, log)
        yield base
    finally:
        stop(process)


def wait_until(page, script, what, deadline):
    """Wait until the JavaScript predicate ``script`` is true, failing with ``what`` at ``deadline``."""
    seconds = max(deadline - time.monotonic(), 0.1)
    try:
        page.wait_for_function(script, timeout=seconds * 1000, polling=200)
    except Exception as error:  # playwright's TimeoutError, without importing it at module level
        pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}: {error}")


# The toolbar's indicator reads "idle" before any kernel exists, so ask the session too.
KERNEL_IDLE = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const session = panel && panel.sessionContext;
    const kernel = session && session.isReady && session.session && session.session.kernel;
    const status = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
    return Boolean(kernel) && kernel.connectionStatus === 'connected' && kernel.status === 'idle'
        && status !== null && status.dataset.status === 'idle';
}"""

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


def save_screenshot(page):
    """Save what the browser shows; a failure to do so must not hide the test's own failure."""
    try:
        page.screenshot(path=str(SCREENSHOT))
    except Exception as error:
        print(f"could not save the screenshot {SCREENSHOT}: {error}")


def test_lesson_runs_and_renders_in_chromium(lab):
    """Run All in JupyterLab: no error, one plot and one graph on screen."""
    from playwright.sync_api import sync_playwright

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=30_000)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.set_default_timeout(UI_ACTION_MS)
            try:
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
            finally:
                save_screenshot(page)
        finally:
            browser.close()
