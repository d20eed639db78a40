"""Selection: where, maximum, minimum. Each output element is one of the inputs' elements.

So each gradient element goes back to the input it was taken from, and
nowhere else: the rules multiply ``gy`` by a constant mask. Where
``maximum`` meets a tie (x0 = x1) it takes both, and, as torch does, each
gets half the gradient. Inputs may broadcast; the walker sums the
output-shaped gradients back to each input's shape.
"""

import operator

from minigrad.families import linear
from minigrad.backward_functions import register
from minigrad.cuda import get_array_module
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import tangent_sum
from minigrad.core.function import Function
from minigrad.support.numpy_interop import data_of
from minigrad import series, taylor


class Where(Function):
    def __init__(self, condition):
        self.condition = condition

    def forward(self, x0, x1):
        try:
            return get_array_module(x0).where(self.condition, x0, x1)
        except ValueError as e:  # name the condition: its shape is not among the inputs'
            raise ValueError(
                f"condition of shape {self.condition.shape}, x0 of shape {x0.shape} and x1 of shape "
                f"{x1.shape} do not broadcast together"
            ) from e


def where(condition, x0, x1):
    """y = x0 where ``condition`` is true, else x1 (broadcast together).

    ``condition`` is a boolean array (or a Variable, read as booleans): it
    chooses, it is not differentiated.
    """
    xp = get_array_module(x0, x1)
    condition = xp.asarray(data_of(condition)).astype(bool)
    return Where(condition)(x0, x1)


@register("Where")
def where_backward(ctx, gy):
    """y = x0 if c else x1  =>  dy/dx0 = [c], dy/dx1 = [not c]

    =>  gx0 = where(c, gy, 0), gx1 = where(c, 0, gy): again a where, so differentiable.
    """
    c = ctx.function.condition
    need0, need1 = ctx.needs_input_grad
    gx0 = where(c, gy, 0.0) if need0 else None
    gx1 = where(c, 0.0, gy) if need1 else None
    return gx0, gx1


linear("Where")


def _share(win, tie, dtype):
    """The share of the gradient an input gets: 1 where it wins, 1/2 on a tie, else 0."""
    return win.astype(dtype) + 0.5 * tie.astype(dtype)


class Maximum(Function):
    wins = staticmethod(operator.gt)  # where x0 beats x1: the one thing Minimum does otherwise

    def forward(self, x0, x1):
        return get_array_module(x0).maximum(x0, x1)


class Minimum(Function):
    wins = staticmethod(operator.lt)

    def forward(self, x0, x1):
        return get_array_module(x0).minimum(x0, x1)


def maximum(x0, x1):
    """y = max(x0, x1) elementwise (with broadcasting)."""
    return Maximum()(x0, x1)


def minimum(x0, x1):
    """y = min(x0, x1) elementwise (with broadcasting)."""
    return Minimum()(x0, x1)


def _winners(ctx, v0, v1):
    """(where x0 wins, where x1 wins, where they tie), from the values v0 and v1 of x0 and x1."""
    wins = ctx.function.wins
    return wins(v0, v1), wins(v1, v0), v0 == v1


@register("Maximum")
@register("Minimum")
def extremum_backward(ctx, gy):
    """y = max(x0, x1)  =>  dy/dx0 = [x0 > x1], dy/dx1 = [x1 > x0], and 1/2 each on a tie
    (min(x0, x1) the same, with < for >)

    =>  gx0 = gy * share0, gx1 = gy * share1, with share0 + share1 = 1.
    """
    x0, x1 = ctx.inputs
    win0, win1, tie = _winners(ctx, data_of(x0), data_of(x1))
    return gy * _share(win0, tie, gy.dtype), gy * _share(win1, tie, gy.dtype)


@register_forward("Maximum")
@register_forward("Minimum")
def extremum_forward(ctx, tx0, tx1):
    """y = max(x0, x1) or min(x0, x1)  =>  dy = share0 dx0 + share1 dx1 (1 for the winner, 1/2 each on a tie)

    =>  ty = tx0 * share0 + tx1 * share1.
    """
    x0, x1 = ctx.inputs
    win0, win1, tie = _winners(ctx, data_of(x0), data_of(x1))
    dtype = (tx0 if tx1 is None else tx1).dtype
    return tangent_sum(None if tx0 is None else tx0 * _share(win0, tie, dtype),
                       None if tx1 is None else tx1 * _share(win1, tie, dtype))


@taylor.register("Maximum")
@taylor.register("Minimum")
def extremum_taylor(ctx, x0, x1):
    """y = max(x0, x1) or min(x0, x1): on either side of a tie y follows one input

    =>  y_k = x0_k where x0 wins, x1_k where x1 wins, x0_k / 2 + x1_k / 2 on a tie (backward's shares,
    each halved before the sum, which may overflow), and 0 where nothing wins nor ties (a nan, where
    the shares are 0). Chosen, not multiplied by a share of 0: a loser's infinite coefficient must not
    make 0 * inf. y_0 is the forward's value (on a tie x0_0 itself: 5e-324 / 2 would round to 0).
    """
    x0, x1 = series.align(x0, x1)
    win0, win1, tie = _winners(ctx, x0[0], x1[0])
    xp = get_array_module(x0)
    dtype = xp.result_type(x0, x1)
    half = xp.where(tie, x0 * dtype.type(0.5) + x1 * dtype.type(0.5), xp.zeros((), dtype=dtype))
    y = xp.where(win0, x0, xp.where(win1, x1, half))
    y[0] = ctx.function.forward(x0[0], x1[0])
    return y
