"""The course as a website, read offline in a real browser.

The site is built once, with the README's command (warnings are errors), into a temporary folder, and
opened from disk in headless Chromium with every request that is not for a file aborted and recorded.
From the landing page, the test follows each page's "next" link to the end, and checks on every page
that nothing was fetched from another host, that every image loaded, and that every formula was
rendered by the MathJax inside the site (no TeX left in the text, no MathJax error). The walk must pass
every lesson in order, every exercise and the API reference; each lesson offers its notebook for
download; the search finds ``jvp``. The build and the walk take about 10 s of CPU each.
"""

import importlib.util
import os
import re
import subprocess
import sys
import time
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

from lab_in_chromium import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, REPO, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BUILD_S = 300             # the site built from scratch (about 30 s on 2 cores)
PAGE_MS = 30_000          # a page loaded and its formulas typeset
SITE_PACKAGES = ["sphinx", "myst_nb", "furo", "sphinx-mathjax-offline"]   # the docs extra

# After MathJax has typeset the page: what a reader sees of it.
PAGE_STATE = """async () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
    const images = [...document.querySelectorAll('img')];
    for (const img of images) { if (!img.complete) { await new Promise(r => { img.onload = img.onerror = r; }); } }
    const prose = (document.querySelector('article') || document.body).cloneNode(true);
    prose.querySelectorAll('pre, code, mjx-container, script, style, .highlight').forEach(e => e.remove());
    const formulas = [...document.querySelectorAll('article .math')];
    return {
        title: document.title,
        next: (document.querySelector('link[rel=next]') || {}).href || null,
        broken_images: images.filter(img => !(img.naturalWidth > 0)).map(img => img.getAttribute('src')),
        formulas: formulas.length,
        unrendered: formulas.filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 80)),
        tex_errors: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent.slice(0, 80)),
        mathjax: Boolean(window.MathJax && MathJax.version),
        prose: prose.innerText,
        downloads: [...document.querySelectorAll('a.download')].map(a => a.href),
    };
}"""

SEARCH_RESULTS = """() => {
    const found = [...document.querySelectorAll('#search-results ul.search li a')];
    const status = document.querySelector('#search-results p.search-summary');
    return status && status.textContent.trim() ? found.map(a => a.getAttribute('href')) : null;
}"""


def require(what, missing):
    """Skip (fail on CI, which installs everything) when something the test needs is ``missing``."""
    if missing:
        reason = f"{what} needs {', '.join(missing)}: pip install -e \".[dev,docs]\" and .ci/install-browser"
        pytest.fail(reason) if os.environ.get("CI") else pytest.skip(reason)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built by the README's command into a temporary folder."""
    require("building the site", [name for name in SITE_PACKAGES if importlib.util.find_spec(name) is None])
    out = tmp_path_factory.mktemp("site") / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "docs", str(out)]
    start = time.monotonic()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=BUILD_S)
    assert done.returncode == 0, f"the site does not build with -W:\n{done.stderr[-4000:]}"
    print(f"site built in {time.monotonic() - start:.0f} s")
    return out


def page_name(url, site):
    """``lessons/13_forward_and_reverse_mode`` for that page's file:// URL."""
    path = url2pathname(urlparse(url).path)
    return os.path.relpath(path, site).removesuffix(".html").replace(os.sep, "/")


@pytest.fixture(scope="module")
def browser():
    missing = [] if os.path.exists(CHROMIUM) else [f"Chromium at {CHROMIUM}"]
    missing += ["playwright"] if importlib.util.find_spec("playwright") is None else []
    require("reading the site in a browser", missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=30_000)
        yield chromium
        chromium.close()


@pytest.fixture
def offline_page(browser):
    """A page that may read files only: any other request is aborted and recorded in ``page.left``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(PAGE_MS)
    page.left = []

    def only_files(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            page.left.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    page.on("request", lambda request: None if request.url.startswith(("file:", "data:", "blob:"))
            else page.left.append(request.url))
    page.on("websocket", lambda ws: page.left.append(ws.url))
    page.errors = []
    page.on("console", lambda message: page.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    yield page
    context.close()


def checked_page(page, name):
    """What the page shows, after checking its images and formulas."""
    state = page.evaluate(PAGE_STATE)
    assert not state["broken_images"], f"{name}: images that did not load: {state['broken_images']}"
    assert not state["unrendered"], f"{name}: formulas MathJax did not render: {state['unrendered']}"
    assert not state["tex_errors"], f"{name}: formulas MathJax could not parse: {state['tex_errors']}"
    assert state["mathjax"] or not state["formulas"], f"{name}: MathJax is not loaded"
    raw = re.findall(r".{0,30}(?:\$|\\\(|\\\[).{0,30}", state["prose"])
    assert not raw, f"{name}: TeX left in the text: {raw}"
    for href in state["downloads"]:
        assert os.path.isfile(url2pathname(urlparse(href).path)), f"{name}: the download {href} is missing"
    return state


def assert_offers_its_notebook(name, downloads):
    """The page links to its notebook, and the file it hands out is the one in the repository (the
    student's version, for an exercise: never a solution)."""
    folder, notebook = {"lessons": "notebooks", "exercises": "exercises"}[name.split("/")[0]], name.split("/")[1]
    files = [url2pathname(urlparse(href).path) for href in downloads if href.endswith(f"/{notebook}.ipynb")]
    assert files, f"{name}: no link to download {notebook}.ipynb: {downloads}"
    with open(files[0], "rb") as handed_out:
        assert handed_out.read() == (REPO / folder / f"{notebook}.ipynb").read_bytes(), f"{name}: {files[0]}"


def test_every_page_reads_offline_lessons_in_order(site, offline_page):
    page, lessons = offline_page, [f"lessons/{nb.stem}" for nb in sorted((REPO / "notebooks").glob("*.ipynb"))]
    exercises = [f"exercises/{nb.stem}" for nb in sorted((REPO / "exercises").glob("*.ipynb"))]
    walk, url, formulas = [], (site / "index.html").as_uri(), 0
    try:
        while url and len(walk) < 200:
            page.goto(url)
            name = page_name(page.url, site)
            state = checked_page(page, name)
            walk.append(name)
            formulas += state["formulas"]
            if name in lessons + exercises:
                assert_offers_its_notebook(name, state["downloads"])
            if name in lessons:
                named = re.search(r"Exercises?: |No exercise goes with this lesson", state["prose"])
                assert named, f"{name} names no exercise"
            url = state["next"]
    finally:
        save_screenshot(page, ARTIFACTS / "browser_site.png")
    assert not page.left, f"requests that left the machine: {page.left[:20]}"
    assert not page.errors, f"errors in the browser's console: {page.errors[:10]}"
    assert walk[0] == "index"
    assert [name for name in walk if name.startswith("lessons/")] == lessons, "the next links skip or reorder lessons"
    assert [name for name in walk if name.startswith("exercises/")] == exercises
    api = sorted(p.relative_to(site).with_suffix("").as_posix() for p in (site / "api").glob("*.html"))
    assert {"api/index", "api/func", "api/engine"} <= set(api) and set(api) <= set(walk), (api, walk)
    assert formulas > 100, f"only {formulas} formulas on the whole site: is the math parsed?"


def test_search_works_offline(site, offline_page):
    offline_page.goto((site / "search.html").as_uri() + "?q=jvp")
    offline_page.wait_for_function(SEARCH_RESULTS, polling=200)
    found = [href.split("#")[0] for href in offline_page.evaluate(SEARCH_RESULTS)]
    assert "api/func.html" in found and "lessons/13_forward_and_reverse_mode.html" in found, found
    assert not offline_page.left, f"requests that left the machine: {offline_page.left}"
    assert not offline_page.errors, f"errors in the browser's console: {offline_page.errors[:10]}"


WEB_SOURCE = re.compile(r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\b(?:src|href|data)="
                        r"[\"']?(?:https?:)?//[^\"'\s>]+|@import\s+(?:url\()?[\"']?(?:https?:)?//|url\([\"']?(?:https?:)?//[^)]+",
                        re.I)


def test_no_page_or_stylesheet_loads_from_the_web(site):
    """What a browser would fetch by itself (scripts, styles, images, fonts) names no other host."""
    files = [*site.rglob("*.html"), *site.rglob("*.css")]
    found = {str(f.relative_to(site)): WEB_SOURCE.findall(f.read_text(errors="replace")) for f in files}
    assert len(files) > 40 and not {f: hits for f, hits in found.items() if hits}
