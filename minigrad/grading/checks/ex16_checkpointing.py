"""Visible tests of exercises 16: a checkpointed segment, against the plain graph.

The gradients must be those of the plain graph; the segment must run
without recording in the forward pass and with recording in the backward
one (a spy segment writes down which), and a checkpointed network must keep
fewer arrays alive than the plain one, measured as lesson 16 does.
"""

import tracemalloc

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad.autodiff import topological_order
from minigrad.grading.testing import visible

SEED_GY = ("seed the recomputed segment's gradient with the incoming gradient gy: the segment's output is not the "
           "loss, so gy is not ones")


def layers(h, *ws):
    """The plain segment: h -> tanh(h W) for each W."""
    for W in ws:
        h = F.tanh(F.affine(h, W))
    return h


def _network(depth, width=5, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    x = mg.Variable(rng.standard_normal((batch, width)))
    ws = [mg.Variable(rng.standard_normal((width, width)) / np.sqrt(width)) for _ in range(depth)]
    return x, ws, rng.standard_normal((batch, width))


def _same_gradients(t, y, x, ws, u, what):
    """The gradients of sum(y * u) with respect to x and ws equal those of the plain graph."""
    loss = F.sum(y * u)
    got = mg.grad(loss, [x, *ws])
    plain = mg.grad(F.sum(layers(x, *ws) * u), [x, *ws])
    t.close(y, layers(x, *ws).data, f"the value of {what}")
    with_ones = mg.grad(F.sum(layers(x, *ws)), [x, *ws])
    t.true(not all(np.allclose(getattr(g, "data", g), o.data) for g, o in zip(got, with_ones)),
           f"the gradients through {what} are those of gy = ones, whatever gy is: {SEED_GY}")
    for name, g, p in zip(["x"] + [f"W{i}" for i in range(len(ws))], got, plain):
        t.close(g, p.data, f"the gradient of {name} through {what}")


def one_node(t, y, what):
    """``y`` was made by one MyCheckpoint node: a segment that runs as it is has the same values and gradients."""
    creator = y.creator if isinstance(y, mg.Variable) else None
    t.equal(getattr(creator, "name", None), "MyCheckpoint", f"the Function that made {what} (one node)")


def _spy():
    """A segment that writes down, at each call, whether minigrad was recording."""
    recording = []

    def segment(h, *ws):
        recording.append(mg.is_grad_enabled())
        return layers(h, *ws)

    return segment, recording


@visible("16.1", hint="the backward rule runs the segment again, recorded (the walker runs rules with recording "
                      "off: turn it on around the recomputation), and " + SEED_GY)
def same_gradients_as_the_plain_graph(t):
    x, ws, u = _network(3)
    t.given("y = MyCheckpoint(layers)(x, W0, W1, W2), loss = sum(y * u), u random; x (4, 5), W (5, 5)")
    y = t.ns.MyCheckpoint(layers)(x, *ws)
    one_node(t, y, "MyCheckpoint(layers)(x, W0, W1, W2)")
    _same_gradients(t, y, x, ws, u, "MyCheckpoint(layers)")


@visible("16.1", hint="the forward pass runs the segment without recording, so that it keeps none of its "
                      "intermediates; the backward pass runs it again, recording")
def recording_off_forward_on_backward(t):
    x, ws, u = _network(3)
    t.given("y = MyCheckpoint(segment)(x, W0, W1, W2), where segment notes whether minigrad records")
    segment, recording = _spy()
    y = t.ns.MyCheckpoint(segment)(x, *ws)
    t.equal(recording, [False], "whether minigrad recorded at each call of the segment in the forward pass")
    nodes = [f.name for f in topological_order([y.node])] if isinstance(y, mg.Variable) else []
    t.equal(nodes, ["MyCheckpoint"], "the nodes recorded by the forward pass (the segment is one node)")
    mg.grad(F.sum(y * u), [x, *ws])
    t.equal(recording, [False, True], "whether minigrad recorded at each call of the segment, forward then backward")


def _checkpointed(t, x, ws, k):
    return t.ns.checkpointed(x, ws, k)


@visible("16.2", hint="when k does not divide the number of layers, the last segment is shorter: every layer "
                      "belongs to exactly one segment")
def seven_layers_in_segments_of_three(t):
    x, ws, u = _network(7)
    t.given("checkpointed(x, [W0, ..., W6], k=3): segments of 3, 3 and 1 layers; loss = sum(y * u)")
    y = _checkpointed(t, x, ws, 3)
    one_node(t, y, "checkpointed(x, Ws, 3)")
    _same_gradients(t, y, x, ws, u, "checkpointed(x, Ws, 3)")


@visible("16.2", hint="one MyCheckpoint node per segment of k layers, one after another, and nothing else")
def one_node_per_segment(t):
    x, ws, _ = _network(7)
    t.given("checkpointed(x, [W0, ..., W6], k=3)")
    y = _checkpointed(t, x, ws, 3)
    t.equal([f.name for f in topological_order([y.node])], ["MyCheckpoint"] * 3,
            "the nodes of checkpointed(x, Ws, 3)'s graph")


def _kept_bytes(build):
    """Bytes of arrays still alive after build() returns (what it returns is kept), as lesson 16 measures."""
    tracemalloc.start()
    try:
        result = build()
        return tracemalloc.get_traced_memory()[0], result
    finally:
        tracemalloc.stop()


@visible("16.2", hint="a checkpointed network keeps only the input of each segment after its forward pass "
                      "(lesson 16): L/k arrays, not L")
def keeps_fewer_arrays_than_the_plain_graph(t):
    rng = np.random.default_rng(1)
    depth, width, batch = 12, 64, 256  # each activation 128 KiB, above what a graph frees (64 KiB)
    ws = [mg.Variable(rng.standard_normal((width, width)) / np.sqrt(width)) for _ in range(depth)]
    x0 = rng.standard_normal((batch, width))
    t.given(f"a network of {depth} layers, a batch of {batch} and {width} units; k = 4")
    plain, want = _kept_bytes(lambda: F.sum(layers(mg.Variable(x0), *ws)))
    kept, got = _kept_bytes(lambda: F.sum(_checkpointed(t, mg.Variable(x0), ws, 4)))
    t.true(kept < 0.5 * plain, f"after its forward pass the checkpointed network keeps {kept / 2**20:.2f} MiB "
                               f"of arrays, the plain graph {plain / 2**20:.2f} MiB: the segments should keep only "
                               "their inputs (is the segment run without recording?)")
    t.close(got, want.data, "sum(checkpointed(x, Ws, 4))")
