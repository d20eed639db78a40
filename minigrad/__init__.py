"""minigrad: automatic differentiation to any order, small enough to read in one sitting.

    import minigrad as mg
    import minigrad.functions as F

    x = mg.Variable([0.5, 1.0])
    y = F.sin(x)
    (dx,) = mg.grad(y, x, create_graph=True)   # cos(x), itself a graph
    (ddx,) = mg.grad(dx, x)                    # -sin(x)
    mg.func.jacfwd(F.sin)(x)                   # the Jacobian, by forward mode: diag(cos(x))
"""

# Variable first: function, autodiff and functions all build on it.
from minigrad.variable import Variable  # noqa: I001

from minigrad import func, functions
from minigrad.autodiff import grad
from minigrad.config import (
    device,
    enable_grad,
    get_default_device,
    is_grad_enabled,
    no_grad,
    set_default_device,
    set_grad_enabled,
)
from minigrad.diagnostics import doctor
from minigrad.function import Function
from minigrad.parametric_functions import clear_parameters, get_parameters, parameter_scope, seed

__version__ = "0.1.0"

__all__ = [
    "Variable", "Function", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "functions", "func", "seed", "get_parameters", "clear_parameters", "parameter_scope",
    "set_default_device", "get_default_device", "device", "doctor",
]
