"""Step functions: sign, floor, ceil. Each is constant between its jumps (at 0, or at the integers).

So the derivative is 0 almost everywhere: everywhere but at the jumps, where it does not exist (an
infinite spike, a delta, which no array can hold). There the rules say 0 too, as torch's do: the
gradient of a step function is 0, at every order and in every mode, and the function passes no
gradient on. (A straight-through estimator, which passes gy on as if y = x, is a different function:
write it as x + F.cast(...) of a constant, or a Function of your own.)
"""

from minigrad.backward_functions import register
from minigrad.core.function import Function
from minigrad.cuda import get_array_module
from minigrad.families import elementwise
from minigrad.functions.selection import where
from minigrad import series, taylor


class _Step(Function):
    reads_inputs = reads_outputs = False  # the rule needs only the shape

    def forward(self, x):
        return getattr(get_array_module(x), self.ufunc)(x)


class Sign(_Step):
    ufunc = "sign"


class Floor(_Step):
    ufunc = "floor"


class Ceil(_Step):
    ufunc = "ceil"


def sign(x):
    """y = -1, 0 or 1 as x < 0, x = 0 or x > 0 (nan at nan)."""
    return Sign()(x)


def floor(x):
    """y = the largest whole number <= x."""
    return Floor()(x)


def ceil(x):
    """y = the smallest whole number >= x."""
    return Ceil()(x)


@register("Sign")
@register("Floor")
@register("Ceil")
def step_backward(ctx, gy):
    """y constant between jumps  =>  dy/dx = 0 almost everywhere (and 0 at a jump, as torch)  =>  gx = 0.

    Zeros of gy's shape, chosen by a where() rather than gy * 0, which is nan where gy is infinite;
    the where() keeps gx a function of gy, so that the rule's own derivative is 0 too.
    """
    return where(get_array_module(gy).ones(gy.shape, dtype=bool), 0.0, gy)


elementwise("Sign", "Floor", "Ceil")


@taylor.register("Sign")
@taylor.register("Floor")
@taylor.register("Ceil")
def step_taylor(ctx, x):
    """y(t) = f(x(t)) is f(x_0) near t = 0 (between two jumps)  =>  y_0 = f(x_0), y_k = 0 for k >= 1."""
    return series.constant(ctx.function.forward(x[0]), len(x) - 1)
