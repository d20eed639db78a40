"""Plotting a function with its derivatives, each computed by differentiating the last.

    f' = grad(f(x), x, create_graph=True)
    f'' = grad(f', x, create_graph=True)
    ...

``create_graph=True`` makes each derivative a graph itself, so it can be
differentiated again: nothing is written by hand beyond f. For an elementwise
f (y_i depends on x_i only) the gradient of sum_i f(x_i) is f'(x_i) at every
point, which is what ``grad`` returns when seeded with ones.

That is nested reverse mode, the default. Its graphs grow with the order
(tanh's by about 2.8x per order), so ``method="taylor"`` gets every derivative
in one pass of Taylor mode instead (minigrad.taylor): tanh's 30th at once.
"""

import numpy as np

import minigrad as mg
from minigrad import taylor
from minigrad.cuda import as_numpy, device_of

METHODS = ("reverse", "taylor")


def _host_points(x):
    """The points as a float64 NumPy array, and the device they came from (a Variable or an array)."""
    data = x.data if isinstance(x, mg.Variable) else x
    device = device_of(data) if hasattr(data, "dtype") else "cpu"
    return as_numpy(data).astype(np.float64), device


def derivatives(f, x, order, method="reverse"):
    """[f(x), f'(x), ..., f^(order)(x)] as NumPy arrays, for an elementwise f and points x.

    The derivatives are computed on the device the points live on; the values come back to the host.
    ``method`` is "reverse" (nested reverse mode) or "taylor" (Taylor mode).
    """
    points, device = _host_points(x)
    with mg.device(device):
        return _derivatives(f, points, order, method)


def _derivatives(f, points, order, method):
    if method == "taylor":
        values = taylor.derivatives(f, points, order)  # (it checks that f returns a Variable)
        _check_elementwise(mg.Variable(values[0], requires_grad=False), points)
        return [as_numpy(v) for v in values]
    x = mg.Variable(points, name="x")
    y = f(x)
    _check_elementwise(y, x)
    values = [y.numpy()]
    for _ in range(order):
        # materialize_grads: a derivative that is constant has a zero derivative, not an error.
        (y,) = mg.grad(y, x, create_graph=True, materialize_grads=True)
        values.append(y.numpy())
    return values


def _check_elementwise(y, x):
    if not isinstance(y, mg.Variable) or y.shape != x.shape:
        raise ValueError(
            "plot_derivatives: f must map a Variable of points to a Variable of the same shape "
            "(an elementwise function such as F.sin or lambda x: x * F.exp(x)); "
            f"f returned {type(y).__name__}{'' if not isinstance(y, mg.Variable) else f' of shape {y.shape}'}"
        )


def derivative_label(n, name="f"):
    """Mathtext for the n-th derivative: $f(x)$, $f'(x)$, $f''(x)$, $f'''(x)$, $f^{(4)}(x)$, ..."""
    mark = "'" * n if n <= 3 else f"^{{({n})}}"
    return f"${name}{mark}(x)$"


def plot_derivatives(f, x, order=1, ax=None, name="f", method="reverse"):
    """f and its first ``order`` derivatives at the points ``x``, on one Axes with a legend.

    ``f`` takes and returns a Variable, elementwise (``F.sin``, ``F.tanh``,
    ``lambda x: x ** 3``). Line n holds the n-th derivative, labelled with
    ``name`` (f'(x), f''(x), ...). ``method="taylor"`` computes them in Taylor
    mode, in polynomial time, instead of nested reverse mode ("reverse").
    Returns the Axes, for further styling.
    """
    if not isinstance(order, int) or order < 0:
        raise ValueError(f"plot_derivatives: order must be an int >= 0, got {order!r}")
    if method not in METHODS:
        raise ValueError(f"plot_derivatives: method must be 'reverse' (nested reverse mode, the default) or "
                         f"'taylor' (Taylor mode, for high orders), got {method!r}")
    points, device = _host_points(x)
    if points.ndim != 1:
        raise ValueError(f"plot_derivatives: x must be a 1-D array of points, got shape {points.shape}; "
                         "try np.linspace(-3, 3, 200)")
    with mg.device(device):
        values = _derivatives(f, points, order, method)
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    for n, y in enumerate(values):
        ax.plot(points, y, label=derivative_label(n, name))
    ax.set_xlabel("$x$")
    ax.legend()
    return ax
