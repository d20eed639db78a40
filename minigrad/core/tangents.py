"""Forward mode on the fly: a tangent travels beside its value, through each Function as it runs.

``func.jvp`` opens a *level* and hangs its inputs' tangents on their nodes
(``node.tangents[level]``); each Function called while the level is open
hands its forward rule the tangents its inputs carry (``call_rule``) and
hangs the results on its outputs. No graph is kept: a tangent is freed with its node.

Levels keep nested calls apart. An inner jvp's level is deeper, and the rule
computing a tangent of depth d runs with only shallower levels open: its
operations carry the enclosing calls' tangents, never their own. So in
d/dx [x * d/dy (x + y)] the inner call sees y move and not x: 1, not the 2
of one untagged dual number per value ("perturbation confusion"). Sibling
levels (one depth) never see each other: ``jacfwd`` pushes one per column.
"""

import weakref

from minigrad.core.rules import call_rule, forward
from minigrad.support import lean
from minigrad.support.config import config, engage
from minigrad.support.memory import closed, noted


class Level:
    """One jvp's perturbation, ordered by depth, closed once the jvp returns. ``lean``: when its rules run on
    arrays, as nothing will differentiate their tangents (support/lean.py): "always", "unrecorded" (in calls
    that record no node), or False."""

    __slots__ = ("depth", "open", "lean", "carriers")

    def __init__(self, depth, lean):
        self.depth, self.open, self.lean, self.carriers = depth, True, lean, []  # (carriers: memory.noted)


def open_levels(count, lean=False):
    """``count`` sibling levels, deeper than every open one, opened: (the levels, a function closing them)."""
    outer = config.levels
    new = tuple(Level(1 + max((level.depth for level in outer), default=0), lean) for _ in range(count))
    engage(1)
    config.levels = outer + new

    def close():
        for level in new:
            closed(level)  # (no rule sees it again, no node keeps its Variable tangents: support/memory.py)
        config.levels = outer
        engage(-1)

    return new, close


def push(f, nodes, outputs):
    """Each open level's tangents, carried by f's input nodes, through f's forward rule to its outputs."""
    below = config.below  # only levels shallower than this are pushed (see the module's docstring)
    carried = _carried(nodes, below)
    if not carried:
        return
    recorded = f._inputs is not None
    if not recorded:  # the rule's ctx, for this call only
        f._inputs, f._outputs = nodes, [weakref.ref(y) for y in outputs]
    for y in outputs:
        y.tangents = {}
    try:  # outer levels first: a deeper rule that reads an output (e^x's y) sees it move with the outer ones
        for level, txs in carried.items():
            config.below = level.depth
            on_arrays = level.lean == "always" or level.lean == "unrecorded" and not recorded
            tys = lean.pushed(call_rule, forward, f, txs, outputs) if on_arrays else call_rule(forward, f, txs, outputs)
            for y, ty in zip(outputs, tys):
                if ty is not None:
                    y.tangents[level] = ty
            if not on_arrays:  # (a Variable's graph may hold its own node: taken off at close)
                noted(level, outputs)
    finally:
        config.below = below
        if not recorded:
            f._inputs = f._outputs = None


def _carried(nodes, below):
    """{level: the tangent of each input node at that level (None where it has none)}, for open levels above
    depth ``below``, outermost first."""
    carried = {}
    for i, node in enumerate(nodes):
        if node.tangents:
            for level, t in node.tangents.items():
                if level.open and level.depth < below:
                    carried.setdefault(level, [None] * len(nodes))[i] = t
    return carried if len(carried) < 2 else dict(sorted(carried.items(), key=lambda item: item[0].depth))
