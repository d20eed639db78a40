"""JupyterLab served on localhost for a test, and Debian's Chromium driving it through Playwright.

``serve_lab`` starts JupyterLab on a free port with no token (or, with
``token=True``, the token JupyterLab makes and prints), its settings,
workspaces and runtime files in a temporary folder and nothing read from the
user's Jupyter setup, and stops it (and its kernels) whatever happens.
``open_chromium`` launches the system Chromium headless. Both skip, saying
why, where Chromium, Playwright or JupyterLab is missing; on CI (``CI`` set),
which installs Chromium, a missing browser is a failure instead.
"""

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"  # screenshots and logs (git-ignored)
CHROMIUM = os.environ.get("MINIGRAD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

SERVER_START_S = 20       # JupyterLab answering on its port
UI_ACTION_MS = 10_000     # one click, one selector


def require_browser():
    """Skip (fail on CI) unless Chromium, Playwright and JupyterLab are all here."""
    if not Path(CHROMIUM).exists():
        reason = f"no Chromium at {CHROMIUM}: run .ci/install-browser (apt-get install chromium)"
        if os.environ.get("CI"):  # CI installs it: there, a missing browser is a failure, not a skip
            pytest.fail(reason)
        pytest.skip(reason)
    pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed (dev extra)")
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (dev extra)")


def free_port():
    """A port that nothing listens on now (the server is told not to try others)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def isolating_options(port, home, token=False):
    """What a test adds to a JupyterLab command line: localhost only, no token (unless ``token``), no browser,
    no user setup."""
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []  # CI containers
    return [
        "--no-browser", *as_root,
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        *([] if token else ["--IdentityProvider.token=", "--ServerApp.password="]),
        f"--LabApp.user_settings_dir={home / 'settings'}", f"--LabApp.workspaces_dir={home / 'workspaces'}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        # window.jupyterapp: the tests read the kernel's state and the open documents from it.
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


def runtime_dir(home):
    """Where the server writes its runtime files, among them the page a browser would be sent to."""
    return home / "jupyter_runtime_dir"


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


def printed_addresses(home):
    """The http addresses JupyterLab printed for a browser ("Or copy and paste one of these URLs")."""
    return re.findall(r"^\s+(https?://\S+)$", (home / "jupyterlab.log").read_text(), re.M)


def wait_for_addresses(home, process):
    """The addresses JupyterLab prints, once it has printed them (its token in each)."""
    deadline = time.monotonic() + SERVER_START_S
    while not printed_addresses(home) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.25)
    found = printed_addresses(home)
    if not found:
        pytest.fail(f"JupyterLab printed no address within {SERVER_START_S} s:\n"
                    f"{(home / 'jupyterlab.log').read_text()[-3000:]}")
    return found


@contextlib.contextmanager
def serve_lab(arguments, cwd, home, token=False):
    """Run ``python -m jupyter lab ARGUMENTS`` plus the test's options in ``cwd``; yield its base URL.

    ``home`` (a fresh folder) holds the server's settings, runtime files and log (``printed_addresses``
    reads what it printed). ``token``: keep the token JupyterLab makes, as a student's Lab does.
    """
    require_browser()
    port = free_port()
    log = home / "jupyterlab.log"
    command = [sys.executable, "-m", "jupyter", "lab", *arguments, *isolating_options(port, home, token)]
    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=cwd, env=lab_environment(home), stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        query = ""
        if token:  # (the API answers only with it)
            query = "?" + re.search(r"[?&](token=\w+)", wait_for_addresses(home, process)[0]).group(1)
        wait_for_server(f"{base}/api/status{query}", process, log)
        yield base
    finally:
        stop(process)


@contextlib.contextmanager
def open_chromium(screenshot):
    """A page in headless Chromium; what it shows is saved to ``screenshot`` at the end, pass or fail."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=30_000)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            page.set_default_timeout(UI_ACTION_MS)
            try:
                yield page
            finally:
                save_screenshot(page, screenshot)
        finally:
            browser.close()


def save_screenshot(page, path):
    """Save what the browser shows; a failure to do so must not hide the test's own failure."""
    try:
        page.screenshot(path=str(path))
    except Exception as error:
        print(f"could not save the screenshot {path}: {error}")


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
