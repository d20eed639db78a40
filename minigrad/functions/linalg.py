"""Linear algebra: matmul."""

from minigrad.backward_functions import register
from minigrad.function import Function
from minigrad.functions.shape import reshape, transpose


class MatMul(Function):
    def forward(self, x0, x1):
        if x0.ndim == 0 or x1.ndim == 0:
            raise ValueError("matmul needs arrays of at least one dimension; use * for a scalar")
        if x0.shape[-1] != x1.shape[-2 if x1.ndim > 1 else 0]:
            raise ValueError(
                f"matmul: shapes {x0.shape} and {x1.shape} do not chain: x0's last dimension "
                f"({x0.shape[-1]}) must equal x1's {'second-to-last' if x1.ndim > 1 else 'only'} "
                f"dimension ({x1.shape[-2 if x1.ndim > 1 else 0]})"
            )
        return x0 @ x1


def matmul(x0, x1):
    """y = x0 @ x1: matrix product, batched over leading axes as in NumPy."""
    return MatMul()(x0, x1)


def _mT(x):
    """Swap the last two axes."""
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return transpose(x, tuple(axes))


@register("MatMul")
def matmul_backward(ctx, gy):
    """Y = X0 X1, y_ij = sum_k x0_ik x1_kj  =>  dy_ij/dx0_ik = x1_kj, dy_ij/dx1_kj = x0_ik.

    gX0 = gY X1^T,  gX1 = X0^T gY.  A 1-D operand is a row (x0) or a column
    (x1), as in NumPy; batch axes that were broadcast are summed back by the walker.
    """
    x0, x1 = ctx.inputs
    need0, need1 = ctx.needs_input_grad
    if x0.ndim == 2 and x1.ndim == 2:  # the common case, without reshapes
        return (matmul(gy, transpose(x1)) if need0 else None), (matmul(transpose(x0), gy) if need1 else None)
    a = reshape(x0, (1,) + x0.shape) if x0.ndim == 1 else x0
    b = reshape(x1, x1.shape + (1,)) if x1.ndim == 1 else x1
    g = gy
    if x0.ndim == 1:
        g = reshape(g, g.shape[:-1] + (1, g.shape[-1]) if x1.ndim > 1 else (1,) + g.shape)
    if x1.ndim == 1:
        g = reshape(g, g.shape + (1,))
    gx0 = matmul(g, _mT(b)) if need0 else None
    gx1 = matmul(_mT(a), g) if need1 else None
    if gx0 is not None and x0.ndim == 1:
        gx0 = reshape(gx0, gx0.shape[:-2] + gx0.shape[-1:])
    if gx1 is not None and x1.ndim == 1:
        gx1 = reshape(gx1, gx1.shape[:-1])
    return gx0, gx1
