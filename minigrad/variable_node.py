"""VariableNode: what the graph keeps of a Variable, and when it lets go of its array.

Function nodes hold their inputs as VariableNodes, never as Variables (see
variable.py for why). A node holds the array, so the graph keeps every
intermediate array alive until backward has used it. Most rules need only
some of them: tanh's rule reads its output y (gx = gy (1 - y^2)), never its
input; add's rule reads neither. A Function says what its rule reads with two
class attributes, ``reads_inputs`` and ``reads_outputs`` (both True unless a
Function says otherwise, which is always safe).

When the Variable a student held dies and no rule will read its array, the
node swaps the array for a :class:`ReleasedArray`, which remembers the shape,
dtype and size (the walker and the shape rules need those) and frees the
memory. In ``tanh(affine(x, W, b))`` the product x W + b is freed as soon as
tanh has used it, as it would be without a graph.

Arrays under ``RELEASE_FROM_BYTES`` are always kept: freeing them saves
nothing worth having, and a drawn graph of a small example can still show
every value.
"""

import weakref

RELEASE_FROM_BYTES = 64 * 1024


class VariableNode:
    """What the graph keeps of a Variable: data, creator, and a weak link back.

    ``node.variable()`` returns the Variable that shows this node, or a new
    one if the student's Variable is gone (a backward rule may still need its value).
    ``keep`` is set once a recorded rule will read the array: then it is never released.
    """

    __slots__ = ("data", "creator", "requires_grad", "name", "keep", "_variable", "__weakref__")

    def __init__(self, data, requires_grad=True, name=None):
        self.data = data
        self.creator = None
        self.requires_grad = requires_grad
        self.name = name
        self.keep = False
        self._variable = None

    # variable.py sets this to its constructor of Variables for nodes (it imports this module,
    # so this module cannot import it)
    new_variable = None

    def variable(self):
        v = self._variable() if self._variable is not None else None
        return v if v is not None else VariableNode.new_variable(self)

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype


class UnrecordedNode(VariableNode):
    """The node of a result computed under ``no_grad()`` from inputs that require grad.

    It is a plain constant; its type only lets ``backward()`` say why there is no graph.
    """

    __slots__ = ()


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
