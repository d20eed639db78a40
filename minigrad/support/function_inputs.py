"""What Function.__call__ does with what it is given and what forward returns: optional reading.

A number or an array among the inputs becomes a constant node (numbers are
"weak": they take the dtype of the arrays beside them); inputs on two devices
are refused; an error in ``forward`` gets a message that names the Function
and the shapes and dtypes of its inputs; a NumPy scalar returned by
``forward`` becomes a 0-d array.
"""

import numpy as np

from minigrad.support import config as settings
from minigrad.support.config import config
from minigrad.cuda import device_of, get_array_module, is_cupy_array
from minigrad.core.variable import UnrecordedNode, Variable, VariableNode
from minigrad.support.numpy_interop import as_float_array


def _forward_message(f, arrays, e):
    shapes = ", ".join(str(a.shape) for a in arrays)
    dtypes = ", ".join(str(a.dtype) for a in arrays)
    hint = ""
    if "broadcast" in str(e):
        hint = ("; to combine them, their trailing dimensions must be equal or 1: "
                "reshape one input, or sum it down to the other's shape")
    elif isinstance(getattr(e, "ndim", None), int) and isinstance(getattr(e, "axis", None), int):  # AxisError
        hint = (f"; the axes of a {e.ndim}-d array are 0 to {e.ndim - 1} (or -{e.ndim} to -1 from the end)"
                if e.ndim > 1 else "; a 1-d array has one axis: pass axis=0 (or -1)")
    return f"{f.name}: forward failed for inputs of shapes {shapes} and dtypes {dtypes}: {e}{hint}"


def _add_note(e, message):
    """Add minigrad's message to an exception whose class we must not rebuild (a student's own,
    whose __init__ may take other arguments; NumPy's AxisError): its type and args stay."""
    if hasattr(e, "add_note"):  # Python 3.11+
        e.add_note(message)
    else:
        e.__notes__ = [*getattr(e, "__notes__", []), message]


def _as_array(y):
    """What forward returned, as an array (a NumPy reduction or 0-d operation may return a scalar)."""
    if isinstance(y, np.ndarray):
        return y
    if isinstance(y, np.generic):  # x0 * x1 of two 0-d arrays is a NumPy scalar
        return np.asarray(y)
    return y if is_cupy_array(y) else np.asarray(y)


def constant_outputs(ys, nodes, wanted):
    """The nodes of outputs computed with nothing recorded: constants. When an input requires grad
    (``wanted``), or under ``no_grad()`` an input is such a constant, an UnrecordedNode, so that
    ``backward()`` can say why there is no graph."""
    unrecorded = wanted or settings.switched and config.enable_backprop is False and UnrecordedNode in map(type, nodes)
    node_type = UnrecordedNode if unrecorded else VariableNode
    return [node_type(y if type(y) is np.ndarray else _as_array(y), False) for y in ys]


_NUMBERS = (int, float, np.bool_, np.integer, np.floating)  # Python numbers and NumPy scalars: "weak"


def _constant_node(x, inputs, f):
    """The node of an input that is not a Variable: a number or an array, as a constant.

    A number, a Python one or a NumPy scalar (a bool too), is weak: it takes
    the dtype and device of the first floating array among the inputs, on
    either side of any operator, so ``x32 * 2.0``, ``2.0 * x32`` and
    ``np.float64(2) * x32`` all stay float32. An array is strong, as in NumPy:
    a floating one keeps its dtype, and a boolean or integer one takes the
    dtype NumPy would give it beside that floating array (``x32 * (x32 > 0)``
    stays float32; an int64 array beside float32 makes float64).
    """
    if type(x) is np.ndarray and x.dtype.kind == "f" and (not settings.switched or config.default_device == "cpu"):
        return VariableNode(x, False)  # the common case, first: a float array already on the host
    first = inputs[0]
    if (type(x) is float or type(x) is int) and type(first) is Variable and type(first.node.data) is np.ndarray:
        return VariableNode(np.asarray(x, dtype=first.node.data.dtype), False)  # x * 2.0 on the host: next
    if isinstance(x, Variable):  # (a subclass of Variable)
        return x.node
    ref = _first_floating_array(inputs)
    if isinstance(x, _NUMBERS) and ref is not None:
        xp = np if type(ref) is np.ndarray else get_array_module(ref)
        return VariableNode(xp.asarray(x, dtype=ref.dtype), False)
    dtype = None
    if ref is not None and getattr(x, "dtype", None) is not None and x.dtype.kind in "biu":
        dtype = np.result_type(ref.dtype, x.dtype)
    return VariableNode(as_float_array(x, dtype, where=f.name), False)


def _first_floating_array(inputs):
    """The array of the first input that holds floating-point values (not a number); None if there is none."""
    for y in inputs:
        ref = y.node.data if isinstance(y, Variable) else y
        if not isinstance(ref, _NUMBERS) and getattr(ref, "dtype", None) is not None and ref.dtype.kind == "f":
            return ref
    return None


def check_one_device(f, arrays):
    """TypeError, naming the devices, when the inputs of one call live on different devices."""
    devices = [device_of(a) for a in arrays]
    if len(set(devices)) > 1:
        where = ", ".join(f"inputs[{i}] on {d}" for i, d in enumerate(devices))
        raise TypeError(
            f"{f.name}: its inputs live on different devices ({where}); move them to one "
            "device first, with x.to_gpu() or x.to_cpu()"
        )


def forward_failed(f, arrays, e):
    """Raise ``e``, an error of f's ``forward``, told with f's name and the shapes and dtypes of its inputs
    (called inside the ``except`` clause of ``Function.__call__``)."""
    if type(e) in (ValueError, TypeError, IndexError):  # NumPy's: the same type, our message first
        raise type(e)(_forward_message(f, arrays, e)) from e
    _add_note(e, _forward_message(f, arrays, e))  # any other class: kept as it is, with a note
    raise e


class InputsRequiringGrad:
    """``ctx.needs_input_grad`` of a node the walker has not visited: which inputs require grad.

    The walker sets ``f.needs_input_grad`` on the node before it calls the
    rule, and that value is what the rule reads (an attribute set on an
    instance hides a class attribute with no __set__). A rule called by hand,
    as lessons do, reads this default instead.
    """

    def __get__(self, f, owner=None):
        if f is None:
            return self
        return tuple(n.requires_grad for n in f.parents())


def freed_message(f):
    """Why a node freed by a backward pass cannot be gone through again, and what to pass."""
    return (
        f"the graph through {f.name} was freed by an earlier backward pass; "
        "pass retain_graph=True to the first grad()/backward() call to go through it again"
    )


def unrecorded_message(f):
    """Why a Function called with nothing recorded has no inputs to give a rule."""
    return f"{f.name}: this Function was called under no_grad(), so it recorded no inputs"
