"""Rules declared once for a family of Functions, rather than restated Function by Function.

**Linear Functions.** A Function y = L(x_0, ..., x_k) that is linear in its
inputs taken together (reshape, transpose, sum, getitem, concatenate, where
with a constant condition, average pooling, ...) needs no rule of its own in
forward, Taylor or transpose mode: all three follow from linearity alone
(HIPS autograd's ``def_linear``, JAX's ``deflinear``).

- Forward: dy = L(dx_0, ..., dx_k), so ty = L(tx_0, ..., tx_k): the same
  Function, with the same attributes, applied to the tangents (zeros for an
  input that does not move). Applied with recording on, it is differentiable
  again, as every rule is.
- Taylor: x(t) = sum_k x_k t^k gives y(t) = L(x(t)) = sum_k L(x_k) t^k, so
  y_k = L(x_k): the forward pass applied to each coefficient.
- Transpose: the gradient of <L(x), gy> by x is L^T gy, whatever x is, so the
  backward rule, which computes that gradient, *is* the transpose rule
  (``transposed``, below).

The backward rule stays written by hand, under the Function.

**Elementwise Functions.** A Function y_i = f(x_i) of one input (exp, sin,
tanh, sigmoid, relu, x^c, ...) has a diagonal Jacobian, J = diag(f'(x)), so
J = J^T: the backward rule gx = J^T gy = f'(x) gy, applied to a tangent,
is the forward rule ty = J tx = f'(x) tx. Its forward rule is its backward
rule, the same function object, and only the backward rule is written. (Its
Taylor rule is a recurrence of its own, written under the Function.)

    linear("Reshape")        # below Reshape's backward rule, in functions/shape.py
    elementwise("Exp")       # below Exp's backward rule, in functions/elementwise.py
"""

from minigrad import series
from minigrad.backward_functions import table as backward
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import zero_tangent
from minigrad.taylor import register as register_taylor
from minigrad.transpose_functions import register as register_transpose


def linear(*names):
    """Declare the Functions named ``names`` linear: register their forward, Taylor and transpose rules."""
    for name in names:
        register_forward(name, linear_forward)
        register_taylor(name, linear_taylor)
        transposed(name)


def transposed(name, products=(), constants=()):
    """Register the backward rule of the Function ``name`` as its transpose rule: for y = L(x), linear in
    the inputs that move, the gradient of <L(x), gy> by x is L^T gy. ``products`` and ``constants`` say
    which inputs it is not linear in together (minigrad.transpose_functions.register)."""
    register_transpose(name, backward.lookup(name), products=products, constants=constants)


def elementwise(*names):
    """Declare the one-input Functions named ``names`` elementwise: their backward rule is their forward rule."""
    for name in names:
        rule = backward.rules.get(name)
        if rule is None:
            raise LookupError(f"elementwise({name!r}): {name} has no backward rule yet; declare it elementwise "
                              "below its backward rule, which is also its forward rule")
        register_forward(name, rule)


def linear_forward(ctx, *txs):
    """y = L(x)  =>  dy = L(dx)  =>  ty = L(tx): the Function applied again, to the tangents."""
    if len(txs) > 1 and any(t is None for t in txs):
        txs = [zero_tangent(x) if t is None else t for x, t in zip(ctx.inputs, txs)]
    return ctx.function(*txs)  # (a recorded Function called again makes a new node with its attributes)


def linear_taylor(ctx, *xs):
    """y = L(x)  =>  y(t) = L(x(t)) = sum_k L(x_k) t^k  =>  y_k = L(x_k), coefficient by coefficient."""
    return series.each(ctx.function.forward, *xs)
