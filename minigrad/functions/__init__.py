"""minigrad.functions: every differentiable function, as a lowercase factory.

    import minigrad.functions as F
    y = F.sin(x) * F.exp(x)

Each family lives in its own file, with every Function class, its factory,
and its backward rule (registered in ``minigrad.backward_functions``) side by side.
"""

from minigrad.functions.arithmetic import add, div, mul, neg, pow, sub
from minigrad.functions.elementwise import cast, cos, exp, log, sin, tanh
from minigrad.functions.linalg import matmul
from minigrad.functions.reduction import sum
from minigrad.functions.shape import broadcast_to, getitem, reshape, sum_to, transpose

__all__ = [
    "add", "sub", "mul", "div", "neg", "pow",
    "exp", "log", "sin", "cos", "tanh", "cast",
    "sum", "sum_to", "broadcast_to", "reshape", "transpose", "getitem",
    "matmul",
]
