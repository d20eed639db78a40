"""minigrad.functions: every differentiable function, as a lowercase factory.

    import minigrad.functions as F
    y = F.sin(x) * F.exp(x)

Each family lives in its own file, with every Function class, its factory,
and its backward rule (registered in ``minigrad.backward_functions``) side by side.
"""

from minigrad.functions.arithmetic import add, div, mul, neg, pow, sub
from minigrad.functions.elementwise import cast, cos, exp, identity, log, sin, tanh
from minigrad.functions.linalg import matmul
from minigrad.functions.reduction import sum
from minigrad.functions.shape import broadcast_to, getitem, reshape, sum_to, transpose

from minigrad.functions.activation import abs, clip, relu, sigmoid, sqrt, square  # noqa: I001
from minigrad.functions.affine import affine
from minigrad.functions.classification import log_softmax, logsumexp, softmax, softmax_cross_entropy
from minigrad.functions.conv import convolution
from minigrad.functions.pooling import average_pooling, max_pooling
from minigrad.functions.reduction import max, mean, min
from minigrad.functions.selection import maximum, minimum, where
from minigrad.functions.shape import concatenate, flatten
from minigrad.functions.cumulative import cumsum, prod
from minigrad.functions.linalg import diagonal, trace
from minigrad.functions.special import erf, expm1, log1p
from minigrad.functions.steps import ceil, floor, sign

__all__ = [
    "add", "sub", "mul", "div", "neg", "pow",
    "exp", "log", "sin", "cos", "tanh", "cast", "identity",
    "sum", "sum_to", "broadcast_to", "reshape", "transpose", "getitem",
    "matmul",
]
__all__ += [
    "relu", "sigmoid", "abs", "sqrt", "square", "clip", "maximum", "minimum", "where",
    "mean", "max", "min", "concatenate", "flatten",
    "softmax", "log_softmax", "logsumexp", "softmax_cross_entropy",
    "affine", "convolution", "max_pooling", "average_pooling",
]
__all__ += ["cumsum", "prod", "diagonal", "trace", "log1p", "expm1", "erf", "sign", "floor", "ceil"]
