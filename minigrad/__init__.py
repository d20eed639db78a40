"""minigrad: automatic differentiation to any order, small enough to read in one sitting.

    import minigrad as mg
    import minigrad.functions as F

    x = mg.Variable([0.5, 1.0])
    y = F.sin(x)
    (dx,) = mg.grad(y, x, create_graph=True)   # cos(x), itself a graph
    (ddx,) = mg.grad(dx, x)                    # -sin(x)
    mg.func.jacfwd(F.sin)(x)                   # the Jacobian, by forward mode: diag(cos(x))
"""

from minigrad import autodiff, func, functions
from minigrad.autodiff import grad
from minigrad.core import variable
from minigrad.core.function import Function
from minigrad.core.variable import Variable
from minigrad.support.config import (
    device,
    enable_grad,
    get_default_device,
    is_grad_enabled,
    no_grad,
    set_default_device,
    set_grad_enabled,
)
from minigrad.diagnostics import VERSION as __version__  # noqa: F401 (the version, kept in one place)
from minigrad.diagnostics import doctor
from minigrad.parametric_functions import clear_parameters, get_parameters, parameter_scope, seed

variable.bind(functions, autodiff)  # the Variable's operators and backward(), which are built on it

__all__ = [
    "Variable", "Function", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "functions", "func", "seed", "get_parameters", "clear_parameters", "parameter_scope",
    "set_default_device", "get_default_device", "device", "doctor",
]
