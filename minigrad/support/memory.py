"""What a graph keeps, and what it frees: optional reading, not needed to follow the engine.

A recorded Function keeps its input nodes, and each node keeps its array, so
the graph holds every intermediate array until backward has used it. Most
rules need only some of them: tanh's rule reads its output y
(gx = gy (1 - y^2)), never its input; add's rule reads neither. A Function
says what its rule reads with two class attributes, ``reads_inputs`` and
``reads_outputs`` (both True unless a Function says otherwise, which is
always safe).

``Function.__call__`` makes one call here, :func:`watch`, once it has recorded
a node. An input array the rule reads is marked ``keep``: it is never
released. An output the rule does not read is watched: its node's link back
to its Variable becomes a :class:`ReleasingRef`, and when the Variable a
student held dies, its node swaps the array for a :class:`ReleasedArray`,
which remembers the shape, dtype and size (the walker and the shape rules
need those) and frees the memory. In ``tanh(affine(x, W, b))`` the product
x W + b is freed as soon as tanh has used it, as it would be without a graph.

Arrays under ``RELEASE_FROM_BYTES`` are always kept: freeing them saves
nothing worth having, and a drawn graph of a small example can still show
every value.

A jvp's tangents hang on nodes too (core/tangents.py); :func:`noted` keeps the nodes whose
tangent is a Variable, and :func:`closed` takes those tangents off when the jvp returns.
"""

import weakref

import numpy as np

RELEASE_FROM_BYTES = 64 * 1024


def watch(f, inputs, outputs, from_bytes=RELEASE_FROM_BYTES):
    """Mark the input nodes ``f``'s rule reads; have each output Variable (one, or a tuple) whose
    array the rule does not read free it when it dies (``from_bytes``: the smallest array worth it)."""
    if f.reads_inputs:
        for node in inputs:
            node.keep = True  # our rule reads these arrays: never release them
    if f.reads_outputs:
        if type(outputs) is tuple:  # an output nobody holds is gone with its Variable:
            f._kept_outputs = [v.node.data for v in outputs]  # keep its array for the rule (revived)
    else:
        for v in (outputs if type(outputs) is tuple else (outputs,)):
            if v.node.data.nbytes >= from_bytes:
                v.node._variable = releasing_ref(v, v.node)


def releasing_ref(variable, node):
    """The node's weak link back to its Variable, one that frees the node's array when the
    Variable dies, unless a rule reads it by then."""
    ref = ReleasingRef(variable, release_unread)
    ref.node_ref = weakref.ref(node)
    return ref


class ReleasingRef(weakref.ref):
    """A weak reference to a Variable that, when the Variable dies, releases its node's array
    unless a rule will read it. It holds the node weakly too: no cycle."""

    __slots__ = ("node_ref",)


def release_unread(ref):
    """The callback of a ReleasingRef: the Variable is gone; free its array if no rule reads it."""
    node = ref.node_ref()
    if node is not None and not node.keep and type(node.data) is not ReleasedArray:
        creator = node.creator.name if node.creator is not None else "?"
        node.data = ReleasedArray(node.data, creator)


class ReleasedArray:
    """Stands in for an array the graph let go of: its shape, dtype and size, and nothing else."""

    __slots__ = ("shape", "dtype", "ndim", "size", "creator")

    def __init__(self, array, creator):
        self.shape, self.dtype, self.ndim, self.size = array.shape, array.dtype, array.ndim, array.size
        self.creator = creator

    def _message(self):
        return (
            f"the values of this {self.shape} output of {self.creator} were freed: no backward rule "
            "reads them, so the graph let them go when its Variable was dropped. Keep a reference "
            "to that Variable (y = ...) to look at its values."
        )

    def _refuse(self, *args, **kwargs):
        raise RuntimeError(self._message())

    __array__ = __array_ufunc__ = __array_function__ = _refuse
    __getitem__ = __iter__ = __float__ = __len__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _refuse
    __neg__ = __matmul__ = __rmatmul__ = __pow__ = _refuse

    def __getattr__(self, name):  # .sum(), .reshape(), ...: refused, as AttributeError so getattr(a, n, None) works
        raise AttributeError(name if name.startswith("_") else f"{name}: {self._message()}")

    def __repr__(self):
        return f"<values of a {self.shape} {self.dtype} output of {self.creator}, freed>"


def revived(f, i, node_type):
    """Output ``i`` of ``f`` once its Variable and node are gone (a dropped output of several, as in
    ``y, _ = f(x)``), as a new node of f of the same values, when f's rule reads its outputs: f's
    outputs then need no one to hold them. The node is f's output i again, so a rule that reads it
    stays differentiable through f. None if f kept nothing (its rule reads no output)."""
    kept = getattr(f, "_kept_outputs", None)
    if kept is None or f._inputs is None:
        return None
    node = node_type(kept[i], True, creator=f)  # (a VariableNode: the core passes its class)
    f._outputs[i] = weakref.ref(node)
    return node


def hang_tangent(level, node, tangent):
    """Hang a jvp's ``tangent`` on ``node`` at ``level``, noted (``noted``) unless it is an array."""
    node.tangents[level] = tangent
    if not isinstance(tangent, np.ndarray):
        level.carriers.append(weakref.ref(node))


def noted(level, nodes):
    """The nodes given Variable tangents at ``level``. A Variable's graph may hold the node itself (tanh's
    forward rule reads its output): a cycle only the garbage collector would free, so ``closed`` takes
    those tangents off when the level closes (a lean level's arrays hold no node: they are not noted)."""
    level.carriers.extend(map(weakref.ref, nodes))


def closed(level):
    """``level`` closed: no rule sees it again, and no node keeps its Variable tangents."""
    level.open = False
    for ref in level.carriers:
        node = ref()
        if node is not None and node.tangents:
            node.tangents.pop(level, None)
    level.carriers = []
