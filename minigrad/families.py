"""Rules declared once for a family of Functions, rather than restated Function by Function.

**Linear Functions.** A Function y = L(x_0, ..., x_k) that is linear in its
inputs taken together (reshape, transpose, sum, getitem, concatenate, where
with a constant condition, average pooling, ...) needs no rule of its own in
forward or Taylor mode: both follow from linearity alone (HIPS autograd's
``def_linear``, JAX's ``deflinear``).

- Forward: dy = L(dx_0, ..., dx_k), so ty = L(tx_0, ..., tx_k): the same
  Function, with the same attributes, applied to the tangents (zeros for an
  input that does not move). Applied with recording on, it is differentiable
  again, as every rule is.
- Taylor: x(t) = sum_k x_k t^k gives y(t) = L(x(t)) = sum_k L(x_k) t^k, so
  y_k = L(x_k): the forward pass applied to each coefficient.

Its backward rule is the transpose of L, and stays written by hand, under the Function.

    linear("Reshape")   # below Reshape's backward rule, in functions/shape.py
"""

from minigrad import series
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import zero_tangent
from minigrad.taylor import register as register_taylor


def linear(*names):
    """Declare the Functions named ``names`` linear: register their forward and Taylor rules."""
    for name in names:
        register_forward(name, linear_forward)
        register_taylor(name, linear_taylor)


def linear_forward(ctx, *txs):
    """y = L(x)  =>  dy = L(dx)  =>  ty = L(tx): the Function applied again, to the tangents."""
    if len(txs) > 1 and None in txs:
        txs = [zero_tangent(x) if t is None else t for x, t in zip(ctx.inputs, txs)]
    return ctx.function(*txs)  # (a recorded Function called again makes a new node with its attributes)


def linear_taylor(ctx, *xs):
    """y = L(x)  =>  y(t) = L(x(t)) = sum_k L(x_k) t^k  =>  y_k = L(x_k), coefficient by coefficient."""
    return series.each(ctx.function.forward, *xs)
