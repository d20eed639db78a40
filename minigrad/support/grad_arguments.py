"""The arguments of grad() and backward(), checked: every error a caller can make, and how to fix it.

The walker (``backprop``) trusts what comes out of here: lists of Variables,
and one seed gradient per output, of the output's shape and dtype.
"""

import numpy as np

from minigrad.cuda import get_array_module
from minigrad import functions as F
from minigrad.core.variable import UnrecordedNode, Variable, VariableNode, _variable_of
from minigrad.support.numpy_interop import as_float_array


def seed_gradients(outputs, grad_outputs, loss_scale, where):
    """[(output node, its initial gradient)], with every check on grad_outputs.

    None seeds ones (times ``loss_scale``), a number is broadcast, an array or
    a Variable must have its output's shape and is cast to its dtype.
    """
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif not isinstance(grad_outputs, (list, tuple)):
        if len(outputs) != 1:
            raise ValueError(
                f"{where}: grad_outputs must be a list with one entry per output "
                f"(there are {len(outputs)} outputs), e.g. [None, 2.0]"
            )
        grad_outputs = [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise ValueError(
            f"{where}: grad_outputs has {len(grad_outputs)} entries but outputs has "
            f"{len(outputs)}; give one entry per output (None for ones)"
        )
    return [(y.node, _seed(j, y, gy, loss_scale, where)) for j, (y, gy) in enumerate(zip(outputs, grad_outputs))]


def _seed(j, y, gy, loss_scale, where):
    """The initial gradient of outputs[j], from its entry gy in grad_outputs."""
    if gy is None:
        return _filled(y, 1 if loss_scale is None else loss_scale)
    if isinstance(gy, (int, float, np.integer, np.floating)):  # a number, a NumPy scalar too: broadcast
        return _filled(y, gy)
    name = "grad" if where == "backward" else f"grad_outputs[{j}]"
    if not isinstance(gy, Variable):
        gy = Variable(as_float_array(gy, y.dtype, where=f"{where}: {name}"), requires_grad=False)
    if gy.shape != y.shape:
        what = "the output" if where == "backward" else f"outputs[{j}]"
        raise ValueError(
            f"{where}: {name} has shape {gy.shape} but {what} has shape {y.shape}; "
            f"pass an array of shape {y.shape}, a Python number, or None (ones)"
        )
    return gy if gy.dtype == y.dtype else F.cast(gy, y.dtype)


def _filled(y, value):
    """A constant of y's shape, dtype and device, every element ``value``."""
    data = y.node.data
    seed = get_array_module(data).empty(data.shape, dtype=data.dtype)
    seed.fill(value)
    return _constant(seed)


def _constant(array):
    """A Variable that needs no gradient, on an array already checked."""
    return _variable_of(VariableNode(array, False))


def as_list(xs, what, allow_none=False):
    """``xs`` as a list of Variables (None allowed where ``allow_none``); TypeError naming a bad entry."""
    if isinstance(xs, (list, tuple)):
        xs = list(xs)
    elif isinstance(xs, Variable) or (allow_none and xs is None):
        xs = [xs]
    else:
        xs = [xs]
    if not xs and what in ("outputs", "inputs"):
        raise ValueError(f"grad: {what} is empty; pass a Variable or a list of Variables")
    for i, x in enumerate(xs):
        if not isinstance(x, Variable) and not (allow_none and x is None):
            how = "wrap arrays with mg.Variable(...)"
            if what == "outputs" and hasattr(x, "shape"):  # computed, but not by minigrad
                how = ("an array has no graph to differentiate: was it computed by a NumPy function "
                       "(np.exp, np.dot, ...)? Compute it with minigrad's, F.exp, F.matmul, ...")
            raise TypeError(f"grad: {what}[{i}] is a {type(x).__name__}, not a Variable; "
                            f"{what} must be Variables ({how})")
    return xs


def checked_allow_unused(allow_unused, materialize_grads):
    """allow_unused, defaulting to materialize_grads; ValueError when the two contradict."""
    if allow_unused is None:
        return materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError(
            "grad: materialize_grads=True gives zeros for unused inputs, which contradicts "
            "allow_unused=False; leave allow_unused out (it defaults to materialize_grads)"
        )
    return allow_unused


def checked_grad_inputs(grad_inputs, inputs):
    """grad_inputs as a list, one Variable (or None) per input, each of its input's shape."""
    grad_inputs = as_list(grad_inputs, "grad_inputs", allow_none=True)
    if len(grad_inputs) != len(inputs):
        raise ValueError(
            f"grad: grad_inputs has {len(grad_inputs)} entries but inputs has {len(inputs)}; "
            "give one per input (None where there is none)"
        )
    for i, (g, x) in enumerate(zip(grad_inputs, inputs)):
        if g is not None and g.shape != x.shape:
            raise ValueError(
                f"grad: grad_inputs[{i}] has shape {g.shape} but inputs[{i}] has shape {x.shape}; "
                f"pass a Variable of shape {x.shape}, or None"
            )
    return grad_inputs


def unreachable_message(i, x, outputs):
    """Why inputs[i] got no gradient, and the two ways out (allow_unused, materialize_grads)."""
    msg = (
        f"grad: inputs[{i}] (shape {x.shape}) is not reachable from the outputs: no output "
        "depends on it. Pass allow_unused=True to get None for it, or "
        "materialize_grads=True to get zeros."
    )
    for j, y in enumerate(outputs):
        if y.creator is None and y.node is not x.node:
            msg += (
                f" Note: outputs[{j}] has no creator: was it computed under no_grad(), "
                "by grad(..., create_graph=False), or by a rule registered with differentiable=False?"
            )
            break
    if not x.requires_grad:
        msg += f" Note: inputs[{i}] has requires_grad=False, so no graph was recorded through it."
    return msg



def no_graph_message(y):
    """Why backward() on y has nothing to do: y has no graph and requires no grad."""
    if isinstance(y.node, UnrecordedNode):
        return (
            f"backward: this Variable (shape {y.shape}) has no graph: it was computed inside no_grad() "
            "(or set_grad_enabled(False)), where nothing is recorded. Compute it outside that block "
            "to differentiate it."
        )
    return (
        f"backward: this Variable (shape {y.shape}) does not require grad and has no graph: none of the "
        "Variables it was computed from requires grad (they were made with requires_grad=False, or are "
        "constants, or results of detach()). Make the Variables you differentiate with respect to with "
        "requires_grad=True (the default)."
    )
