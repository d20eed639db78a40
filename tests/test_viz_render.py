"""Rendering: SVG that parses, the engine lookup and its fallback, errors, summaries, saving."""

import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad.viz import EngineNotFoundError, Graph, draw, find_engines
from minigrad.viz.render import render

SVG = "{http://www.w3.org/2000/svg}"
fake_engines_need_sh = pytest.mark.skipif(sys.platform == "win32", reason="the fake engines are sh scripts")


@pytest.fixture
def engine():
    if not find_engines():
        pytest.skip("no DOT engine installed: pip install graphviz-pure")


def svg_node_titles(svg):
    """The titles of the drawn nodes (v0, f0, ..., legend0, ...), read from the SVG as XML."""
    root = ET.fromstring(svg.encode("utf-8"))
    groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    return [g.find(f"{SVG}title").text for g in groups]


def test_the_svg_parses_and_holds_every_node(engine):
    x = mg.Variable(np.array([0.5, 1.0]), name="x")
    y = F.sin(x) * x  # Sin, Mul; x, sin(x), y
    graph = draw(y)
    assert sorted(svg_node_titles(graph.svg)) == ["f0", "f1", "v0", "v1", "v2"]
    assert (graph.functions, graph.variables) == (2, 3)
    assert graph._repr_svg_() == graph.svg
    bundle = graph._repr_mimebundle_()
    assert bundle["image/svg+xml"] == graph.svg
    assert bundle["text/plain"] == "<Graph: 2 functions, 3 variables>"


def png_size(png):
    """(width, height) in pixels, read from the PNG's IHDR chunk."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_the_drawing_has_a_png_form_of_the_same_picture(engine):
    """An untrusted notebook shows the PNG of its bundle where it hides the SVG: both must be there, alike."""
    x = mg.Variable(np.array([0.5, 1.0]), name="x")
    graph = draw(F.tanh(x) * x + 1.0)
    bundle = graph._repr_mimebundle_()
    assert bundle["image/png"] == graph.png == graph._repr_png_()
    width, height = png_size(graph.png)
    root = ET.fromstring(graph.svg.encode("utf-8"))
    svg_width, svg_height = (float(root.get(k).removesuffix("pt")) for k in ("width", "height"))
    assert width > 100 and height > 100
    assert abs(width / height - svg_width / svg_height) < 0.05 * (svg_width / svg_height)  # the same picture


def test_the_legend_is_drawn_beside_the_graph(engine):
    x = mg.Variable(0.3)
    (gx,) = mg.grad(F.exp(x), x, create_graph=True)  # gy * exp(x): Exp, Mul; x, exp(x), gy, gx
    titles = svg_node_titles(draw(gx, by_order=True).svg)
    assert sorted(t for t in titles if not t.startswith("legend")) == ["f0", "f1", "v0", "v1", "v2", "v3"]
    assert sorted(t for t in titles if t.startswith("legend")) == ["legend0", "legend1", "legend2"]


def test_the_same_graph_gives_the_same_svg(engine):
    svgs = [draw(F.exp(mg.Variable(1.0)) * 2).svg for _ in range(2)]
    assert svgs[0] == svgs[1]


def test_save_writes_svg_png_and_dot(engine, tmp_path):
    graph = draw(F.cos(mg.Variable(1.0, name="x")))
    assert graph.save(tmp_path / "g.svg").read_text(encoding="utf-8") == graph.svg
    assert (tmp_path / "g.dot").exists() is False
    assert graph.save(tmp_path / "g.dot").read_text(encoding="utf-8") == graph.dot
    assert graph.save(tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match=r"Graph.save: .*\.svg, \.png"):
        graph.save(tmp_path / "g.jpeg")


def test_a_large_graph_is_summarised_not_laid_out(engine):
    x = mg.Variable(0.5)
    y = x
    for _ in range(30):
        y = F.sin(y)  # 30 functions, 31 variables
    graph = draw(y, max_nodes=50)
    assert "61 nodes: too many to draw (max_nodes=50)" in graph.message
    assert "30 functions, 31 variables" in graph.message
    assert svg_node_titles(graph.svg) == ["summary"]
    assert repr(graph) == "<Graph: 30 functions, 31 variables, summarised>"
    assert draw(y, max_nodes=61).message is None


# ---- the engine lookup, with fake engines in temporary folders ----

def fake_engine(folder, name, script):
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def places(tmp_path, monkeypatch):
    """An empty folder for 'beside python' and one for the PATH; nothing else is searched."""
    beside, on_path = tmp_path / "venv-bin", tmp_path / "path-bin"
    beside.mkdir()
    on_path.mkdir()
    monkeypatch.setattr(sys, "executable", str(beside / "python"))
    monkeypatch.setenv("PATH", str(on_path))
    return beside, on_path


@fake_engines_need_sh
def test_graphviz_pure_beside_python_comes_first_then_dot_on_the_path(places):
    beside, on_path = places
    dot = fake_engine(on_path, "dot", "echo dot")
    assert find_engines() == [dot]
    pure = fake_engine(beside, "graphviz-pure", "echo pure")
    assert find_engines() == [pure, dot]
    assert render("digraph {}") == b"pure\n"


@fake_engines_need_sh
def test_graphviz_pure_on_the_path_is_found_too(places):
    _, on_path = places
    pure = fake_engine(on_path, "graphviz-pure", "echo pure")
    assert find_engines() == [pure]


@fake_engines_need_sh
def test_a_failing_engine_hands_over_to_the_next(places):
    beside, on_path = places
    fake_engine(beside, "graphviz-pure", "echo broken >&2; exit 3")
    fake_engine(on_path, "dot", "echo '<svg/>'")
    assert render("digraph {}") == b"<svg/>\n"


@fake_engines_need_sh
def test_when_every_engine_fails_the_error_names_each(places):
    beside, on_path = places
    fake_engine(beside, "graphviz-pure", "echo broken >&2; exit 3")
    fake_engine(on_path, "dot", "exit 1")
    expected = r"(?s)graphviz-pure: broken.*dot: exit status 1.*pip install graphviz-pure"
    with pytest.raises(EngineNotFoundError, match=expected):
        render("digraph {}")


def test_no_engine_is_a_clear_error_never_none(places):
    with pytest.raises(EngineNotFoundError, match="no DOT engine found.*pip install graphviz-pure"):
        draw(F.sin(mg.Variable(1.0)))
    assert find_engines() == []


@fake_engines_need_sh
def test_a_slow_engine_is_stopped(places):
    beside, _ = places
    fake_engine(beside, "graphviz-pure", "while :; do :; done")  # the PATH holds no sleep
    with pytest.raises(TimeoutError, match="took more than 0.2 s"):
        render("digraph {}", timeout=0.2)


def test_graph_needs_a_working_engine_at_once(places):
    with pytest.raises(EngineNotFoundError):
        Graph("digraph {}", 0, 0)
