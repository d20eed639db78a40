"""Variable: an array that remembers where it came from.

A Variable is what a student holds: its ``data``, its accumulated ``grad``,
and the ``creator``, the Function node that computed it. The graph itself
holds a second, smaller object, the :class:`VariableNode`, and the split is
deliberate. With ``backward(create_graph=True)`` the gradient ``x.grad`` is a
graph that uses ``x`` again (``d(x*x)/dx = 2*x``). If that graph held the
Variable ``x``, we would have the cycle x -> x.grad -> graph -> x, which only
the cyclic garbage collector can free. The graph holds ``x.node`` instead,
and the node points back to its Variable only by weak reference, so dropping
``x`` frees everything at once.
"""

import weakref

from minigrad.support.numpy_interop import NumpyInterop, as_float_array, checked_grad

# The operators below call minigrad.functions (as F), and backward() calls minigrad.autodiff: both are built
# on this module, so it cannot import them. minigrad/__init__.py hands them over once, with bind().
F = _autodiff = None


def bind(functions, autodiff):
    """Give the Variable its functions and its walker (called once, by ``import minigrad``)."""
    global F, _autodiff
    F, _autodiff = functions, autodiff
    NumpyInterop.functions = functions


class VariableNode:
    """What the graph keeps of a Variable: data, creator, and a weak link back.

    ``node.variable()`` returns the Variable that shows this node, or a new
    one if the student's Variable is gone (a backward rule may still need its value).
    ``keep`` is set once a recorded rule will read the array: then it is never
    released (support/memory.py, optional reading). ``tangents``: forward mode's.
    """

    __slots__ = ("data", "creator", "requires_grad", "name", "keep", "_variable", "tangents", "__weakref__")

    def __init__(self, data, requires_grad=True, name=None, creator=None):
        self.data = data
        self.creator = creator
        self.requires_grad = requires_grad
        self.name = name
        self.keep = False
        self._variable = None
        self.tangents = None  # {level: tangent} while a jvp runs (core/tangents.py)

    def variable(self):
        v = self._variable() if self._variable is not None else None
        return v if v is not None else _variable_of(self)

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype


class UnrecordedNode(VariableNode):
    """A result of ``no_grad()`` from inputs that require grad: a constant, typed so backward() can say why."""

    __slots__ = ()


class Variable(NumpyInterop):
    """An array in the computational graph.

    ``Variable(data, name=None, requires_grad=True)``: numbers and integer
    arrays become float64, float32 stays float32. Calling functions on
    Variables records the graph (unless inside ``mg.no_grad()``), and
    ``y.backward()`` or ``mg.grad(y, x)`` walks it back.
    """

    __slots__ = ("node", "_grad", "__weakref__")

    def __init__(self, data, name=None, requires_grad=True):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Variable: name must be a str or None, got {type(name).__name__}")
        self.node = VariableNode(as_float_array(data), bool(requires_grad), name)
        self.node._variable = weakref.ref(self)
        self._grad = None

    # ---- what it holds ----
    @property
    def data(self):
        return self.node.data

    @data.setter
    def data(self, value):
        if value is not self.node.data:  # (x.data -= ... changed the array in place: nothing to check)
            self.node.data = as_float_array(value, where="Variable.data")

    @property
    def grad(self):
        """The accumulated gradient: a Variable, or None before any backward()."""
        return self._grad

    @grad.setter
    def grad(self, value):
        self._grad = None if value is None else checked_grad(self, value)  # (a Variable of this one's shape)

    @property
    def creator(self):
        """The Function node that computed this Variable; None for a leaf or under no_grad."""
        return self.node.creator

    @property
    def name(self):
        return self.node.name

    @name.setter
    def name(self, value):
        self.node.name = value

    @property
    def requires_grad(self):
        return self.node.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.node.requires_grad = bool(value)

    # ---- gradients ----
    def backward(self, grad=None, retain_graph=None, create_graph=False, retain_grad=False):
        """Accumulate d(self)/d(leaf) into the ``.grad`` of every leaf that requires grad.

        ``grad`` seeds the pass (ones of this Variable's shape when None).
        ``retain_graph`` defaults to ``create_graph``: without it the graph
        walked is freed. ``create_graph=True`` makes the ``.grad`` values
        differentiable; ``retain_grad=True`` also keeps the gradient of every
        intermediate Variable.
        """
        _autodiff.backward(self, grad, retain_graph, create_graph, retain_grad)

    def zero_grad(self):
        """Forget the accumulated gradient: ``.grad`` becomes None."""
        self._grad = None

    def detach(self):
        """A new leaf with the same data and no graph: a constant."""
        return Variable(self.node.data, name=self.name, requires_grad=False)

    # ---- operators: each one line, each a differentiable function ----
    def __neg__(self):
        return F.neg(self)

    def __pos__(self):
        return self

    def __add__(self, other):
        return F.add(self, other)

    def __radd__(self, other):  # other + self
        return F.add(other, self)

    def __sub__(self, other):
        return F.sub(self, other)

    def __rsub__(self, other):  # other - self
        return F.sub(other, self)

    def __mul__(self, other):
        return F.mul(self, other)

    def __rmul__(self, other):  # other * self
        return F.mul(other, self)

    def __truediv__(self, other):
        return F.div(self, other)

    def __rtruediv__(self, other):  # other / self
        return F.div(other, self)

    def __pow__(self, other):
        return F.pow(self, other)

    def __rpow__(self, other):  # other ** self
        return F.pow(other, self)

    def __matmul__(self, other):
        return F.matmul(self, other)

    def __rmatmul__(self, other):  # other @ self
        return F.matmul(other, self)

    def __getitem__(self, key):
        return F.getitem(self, key)


def _variable_of(node):
    """A new Variable showing ``node`` (which then links back to it, weakly)."""
    v = _new_variable(Variable)
    v.node = node
    v._grad = None
    node._variable = weakref.ref(v)
    return v


_new_variable = object.__new__
