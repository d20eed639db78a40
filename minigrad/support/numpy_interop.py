"""How a Variable meets NumPy, Python and the devices; NumPy functions refused, naming the minigrad one.

Optional reading: the engine works without any of it. ``as_float_array`` turns
what a caller passes (numbers, lists, arrays) into a floating-point array;
:class:`NumpyInterop`, a base class of Variable, answers NumPy when an array
meets a Variable: ``np.asarray(x)`` gives its values, ``array * x`` is the
Variable's product, and ``np.exp(x)`` is refused, naming ``F.exp``.
"""

import numpy as np

from minigrad.cuda import as_numpy, device_of, is_cupy_array, to_device
from minigrad.support.config import config
from minigrad.support.memory import ReleasedArray


def as_float_array(data, dtype=None, where="Variable"):
    """``data`` as a floating-point array (NumPy or CuPy).

    Python numbers, lists and integer or boolean arrays become ``dtype``
    (float64 when it is None); float16/32/64 arrays keep their dtype.
    """
    if isinstance(data, NumpyInterop):  # (a Variable)
        raise TypeError(
            f"{where}: got a Variable where an array was expected; "
            "pass the Variable itself to functions, or x.data for its array"
        )
    if isinstance(data, (list, tuple)) and any(isinstance(v, NumpyInterop) for v in data):
        raise TypeError(  # NumPy would read their values and drop their graphs: a silent constant
            f"{where}: got a {type(data).__name__} of Variables where one Variable was expected (ctx.inputs "
            "is a list: unpack it, (x,) = ctx.inputs); to join several Variables into one, use F.concatenate"
        )
    try:
        array = data if isinstance(data, np.ndarray) or is_cupy_array(data) else np.asarray(data)
    except ValueError as e:  # [[1, 2], [3]]
        raise ValueError(
            f"{where}: this nested {type(data).__name__} is not an array: its rows have different "
            f"lengths (NumPy: {e}); give every row the same length"
        ) from e
    if config.default_device != "cpu" and type(array) is np.ndarray:
        array = to_device(array, config.default_device)
    kind = array.dtype.kind
    if kind == "f":
        return array
    if kind in "biu":
        return array.astype(dtype or np.float64)
    got = "" if array is data else f" (made from a {type(data).__name__})"  # None -> dtype object: say so
    raise TypeError(
        f"{where}: cannot hold data of dtype {array.dtype}{got}; minigrad differentiates "
        "real floating-point arrays: pass numbers, or an array such as x.astype(np.float64)"
    )


def checked_grad(x, value):
    """``value`` set as the ``.grad`` of the Variable x: a Variable of x's shape (an array becomes one)."""
    if not isinstance(value, NumpyInterop):
        value = type(x)(as_float_array(value, where="Variable.grad"), requires_grad=False)
    if value.shape != x.shape:
        raise ValueError(f"Variable.grad: a gradient of shape {value.shape} for a Variable of shape {x.shape}; a "
                         "gradient has its Variable's shape")
    return value


class NumpyInterop:
    """What NumPy, Python and the devices see of a Variable (a base class of it)."""

    __slots__ = ()
    functions = None  # minigrad.functions, to name the function a refused ufunc stands for (core/variable.py)

    @classmethod
    def from_numpy_array(cls, array, name=None, requires_grad=True):
        """A Variable holding ``array`` (nnabla's spelling of ``Variable(array)``)."""
        return cls(array, name=name, requires_grad=requires_grad)

    @property
    def shape(self):
        return self.node.data.shape

    @property
    def ndim(self):
        return self.node.data.ndim

    @property
    def size(self):
        return self.node.data.size

    @property
    def dtype(self):
        return self.node.data.dtype

    @property
    def T(self):
        return self.functions.transpose(self)

    def reshape(self, *shape):
        return self.functions.reshape(self, *shape)

    def transpose(self, *axes):
        return self.functions.transpose(self, *axes)

    def sum(self, axis=None, keepdims=False, out=None):
        if out is not None:  # (np.sum(x) calls x.sum(axis=..., out=None))
            raise TypeError("Variable.sum: out= is NumPy's; a Variable's sum is a new Variable: y = x.sum()")
        return self.functions.sum(self, axis=axis, keepdims=keepdims)

    @property
    def device(self):
        """'gpu' for CuPy data, 'cpu' for NumPy data."""
        return device_of(self.node.data)

    def to_gpu(self):
        """Move the data to the GPU, in place (for leaves: inputs and parameters); returns self."""
        self.node.data = to_device(self.node.data, "gpu")
        if self._grad is not None:
            self._grad.to_gpu()
        return self

    def to_cpu(self):
        """Move the data to the host, in place; returns self."""
        self.node.data = to_device(self.node.data, "cpu")
        if self._grad is not None:
            self._grad.to_cpu()
        return self

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len(): this Variable is 0-dimensional (shape ()); use x.item() for its value")
        return len(self.node.data)

    def numpy(self):
        """The data as a NumPy array (copied to the host if it lives on a GPU)."""
        return as_numpy(self.node.data)
    # ---- meeting Python ----
    # A comparison has no derivative (its result is a step, flat almost everywhere), so it records
    # nothing: it compares the values, as NumPy would, and gives a boolean array, a constant.
    # Multiplying a Variable by it masks the Variable: gy * (x > 0) is relu's rule (activation.py).
    # (== and != stay identity, so that Variables can be dictionary keys and list members.)
    def __lt__(self, other):
        return self.node.data < data_of(other)

    def __le__(self, other):
        return self.node.data <= data_of(other)

    def __gt__(self, other):
        return self.node.data > data_of(other)

    def __ge__(self, other):
        return self.node.data >= data_of(other)

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                f"the truth value of a Variable of shape {self.shape} is ambiguous: test its values "
                "with .any() or .all(), e.g. (x > 0).all()"
            )
        return bool(self.node.data)

    def item(self):
        """The value of a one-element Variable as a Python float."""
        if self.size != 1:
            raise ValueError(
                f"Variable.item(): only a one-element Variable has a single value; this one has shape {self.shape}"
            )
        return self.node.data.item()

    def __float__(self):
        return float(self.item())

    def __repr__(self):
        data = self.node.data
        text = repr(data) if type(data) is ReleasedArray else \
            np.array2string(as_numpy(data), separator=", ", prefix="Variable(")
        extras = ""
        if self.dtype != np.float64:
            extras += f", dtype={self.dtype}"
        if self.name is not None:
            extras += f", name={self.name!r}"
        if self.creator is not None:
            extras += f", creator={type(self.creator).__name__}"
        return f"Variable({text}{extras})"


    def __array__(self, dtype=None, copy=None):
        """What NumPy sees of a Variable: its values, as ``x.numpy()``, and no graph.

        So ``np.allclose(x, expected)``, ``np.testing`` and ``plt.plot(x, y)``
        work on Variables, and a NumPy function such as ``np.dot(x, W)``
        returns a plain array: it records nothing, so nothing is differentiated
        through it. ``F.matmul(x, W)`` keeps the graph. (NumPy's ufuncs,
        ``np.exp(x)``, refuse a Variable outright: see ``__array_ufunc__``.)
        """
        array = as_numpy(self.node.data)
        if dtype is not None and array.dtype != dtype:
            if copy is False:
                raise ValueError(f"np.asarray(Variable, dtype={dtype}, copy=False): the values are "
                                 f"{array.dtype}, so a copy is needed; leave copy out")
            return array.astype(dtype)
        return array.copy() if copy else array

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``array * x`` is the Variable's product; ``np.exp(x)`` is refused, naming ``F.exp``.

        An array's operator is a NumPy ufunc: ``a * x`` calls ``np.multiply(a, x)``,
        which hands the call to this method. Returning NotImplemented would not
        make Python try ``x.__rmul__(a)``: NumPy raises instead. So the ufuncs of
        the operators are answered here by the Variable's own operator, which
        records the graph (CuPy's ``cupy_array * x`` comes here the same way,
        once its ``__array_ufunc__`` has declined a type it does not know).
        Every other ufunc would compute on the values alone and drop the graph,
        so it is refused with the minigrad function to use instead.
        """
        name = ufunc.__name__
        if method == "__call__" and not kwargs and len(inputs) == 2:
            a, b = inputs
            if name in ("equal", "not_equal"):  # == and != are identity, as x == a is
                return (a is b) == (name == "equal")
            if name in _OPERATOR_UFUNCS:
                forward, reflected = _OPERATOR_UFUNCS[name]
                if a is self:  # (NumPy asks the leftmost Variable)
                    return getattr(a, forward)(b)
                return getattr(b, reflected)(a)  # other OP self
        raise TypeError(_ufunc_refused(ufunc, method, kwargs, self.functions))


# A NumPy ufunc that an array's operator calls -> (the Variable's operator, its reflected one).
_OPERATOR_UFUNCS = {
    "add": ("__add__", "__radd__"),
    "subtract": ("__sub__", "__rsub__"),
    "multiply": ("__mul__", "__rmul__"),
    "divide": ("__truediv__", "__rtruediv__"),
    "true_divide": ("__truediv__", "__rtruediv__"),  # (NumPy 1's name for divide)
    "power": ("__pow__", "__rpow__"),
    "matmul": ("__matmul__", "__rmatmul__"),
    "less": ("__lt__", "__gt__"),  # a < x is x > a
    "less_equal": ("__le__", "__ge__"),
    "greater": ("__gt__", "__lt__"),
    "greater_equal": ("__ge__", "__le__"),
}
# NumPy's name -> minigrad's, where they differ
_F_NAMES = {"absolute": "abs", "fabs": "abs", "negative": "neg", "subtract": "sub", "multiply": "mul",
            "divide": "div", "true_divide": "div", "power": "pow"}


def _ufunc_refused(ufunc, method, kwargs, functions):
    """Why a NumPy ufunc cannot take a Variable, and what to write instead."""
    name = ufunc.__name__
    if "out" in kwargs:
        return (f"np.{name}(..., out=...) got a Variable: an array cannot hold a Variable's graph "
                "(a += x, with a an array and x a Variable); write a = a + x, which is a new Variable")
    call = f"np.{name}(x)" if method == "__call__" else f"np.{name}.{method}(x)"
    refused = (f"{call} got a Variable: NumPy would compute on its values and drop the graph, "
               "so nothing could be differentiated through it")
    f_name = _F_NAMES.get(name, name)
    if method != "__call__":
        instead = "Use the functions of minigrad.functions (F.sum, F.max, ...)"
    elif callable(getattr(functions, f_name, None)):
        instead = f"Use F.{f_name}(x) (import minigrad.functions as F)"
    else:
        instead = (f"minigrad.functions has no {name}: build it from F functions, or write a Function "
                   "and its backward rule (the README's 'Writing a function and its rule')")
    return f"{refused}. {instead}; or {call.replace('(x)', '(x.data)')} for the values alone"


def data_of(x):
    """The array a Variable holds; anything else as it is.

    (Not ``getattr(x, "data", x)``: a NumPy array's ``.data`` is its raw
    memory buffer, and a CuPy array's a device pointer, not the array.)
    """
    return x.node.data if isinstance(x, NumpyInterop) else x
