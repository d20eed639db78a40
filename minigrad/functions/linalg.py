"""Linear algebra: matmul, with optional transposes of its operands; diagonal and trace.

``matmul(a, b, transpose_a=True)`` is ``a^T b`` without a separate transpose
node: the flag only tells BLAS to read ``a`` by columns. The rules of
matmul and affine need exactly such products (``gy W^T``, ``x^T gy``), so
the flags save a node and a call per gradient.
"""

from minigrad.backward_functions import register
from minigrad.families import transposed
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import bilinear_tangent
from minigrad.core.function import Function
from minigrad.cuda import get_array_module
from minigrad.functions.reduction import sum as sum_
from minigrad.functions.shape import getitem, reshape, transpose
from minigrad import series, taylor


def _T(x, flag):
    """x with its last two axes swapped when ``flag`` (a view, no copy)."""
    if not flag:
        return x
    return x.T if x.ndim == 2 else x.swapaxes(-1, -2)


class MatMul(Function):
    reads_outputs = False  # the rule reads only the inputs

    def __init__(self, transpose_a=False, transpose_b=False):
        self.transpose_a = transpose_a
        self.transpose_b = transpose_b

    def forward(self, a, b):
        try:
            return _T(a, self.transpose_a) @ _T(b, self.transpose_b)
        except ValueError as e:  # shapes that do not chain: say which, and why
            raise ValueError(self._mismatch(a, b)) from e

    def _mismatch(self, a, b):
        if a.ndim == 0 or b.ndim == 0:
            return "matmul needs arrays of at least one dimension; use * for a scalar"
        for flag, x, which in ((self.transpose_a, a, "a"), (self.transpose_b, b, "b")):
            if flag and x.ndim < 2:
                return f"matmul: transpose_{which}=True needs a matrix, but {which} has shape {x.shape}"
        a, b = _T(a, self.transpose_a), _T(b, self.transpose_b)
        flags = " (after the transposes asked for)" if self.transpose_a or self.transpose_b else ""
        k = -2 if b.ndim > 1 else 0
        if a.shape[-1] != b.shape[k]:
            return (
                f"matmul: shapes {a.shape} and {b.shape}{flags} do not chain: a's last dimension "
                f"({a.shape[-1]}) must equal b's {'second-to-last' if b.ndim > 1 else 'only'} "
                f"dimension ({b.shape[k]})"
            )
        return f"matmul: the batch axes of shapes {a.shape} and {b.shape}{flags} do not broadcast"


def matmul(a, b, transpose_a=False, transpose_b=False):
    """y = op(a) @ op(b), op(x) = x^T (last two axes swapped) where its flag is set, else x.

    Batched over leading axes as in NumPy; a 1-D ``a`` is a row, a 1-D ``b`` a column.
    """
    return MatMul(bool(transpose_a), bool(transpose_b))(a, b)


@register("MatMul")
def matmul_backward(ctx, gy):
    """Y = A B, y_ij = sum_k a_ik b_kj  =>  dy_ij/da_ik = b_kj, dy_ij/db_kj = a_ik.

    So gA = gY B^T and gB = A^T gY: two products, written with the flags.
    With transposed operands, Y = A^T B gives the gradient of A^T, which is
    gY B^T; A's own is its transpose, B gY^T. Each of the four cases is one
    matmul. Batch axes that were broadcast are summed back by the walker.
    """
    a, b = ctx.inputs
    f = ctx.function
    need_a, need_b = ctx.needs_input_grad
    if a.ndim >= 2 and b.ndim >= 2:
        return _matrix_grads(a, b, gy, f.transpose_a, f.transpose_b, need_a, need_b)
    # A vector operand (never transposed): make it a matrix, a row for a, a column for b.
    a2 = reshape(a, (1,) + a.shape) if a.ndim == 1 else a
    b2 = reshape(b, b.shape + (1,)) if b.ndim == 1 else b
    g = gy
    if a.ndim == 1:
        g = reshape(g, g.shape[:-1] + (1, g.shape[-1]) if b.ndim > 1 else (1,) + g.shape)
    if b.ndim == 1:
        g = reshape(g, g.shape + (1,))
    ga, gb = _matrix_grads(a2, b2, g, f.transpose_a, f.transpose_b, need_a, need_b)
    if ga is not None and a.ndim == 1:
        ga = reshape(ga, ga.shape[:-2] + ga.shape[-1:])
    if gb is not None and b.ndim == 1:
        gb = reshape(gb, gb.shape[:-1])
    return ga, gb


@register_forward("MatMul")
def matmul_forward(ctx, ta, tb):
    """Y = op(A) op(B) is bilinear  =>  dY = op(dA) op(B) + op(A) op(dB)

    =>  tY = matmul(tA, B) + matmul(A, tB), each with the node's transpose flags.
    """
    a, b = ctx.inputs
    f = ctx.function
    return bilinear_tangent(MatMul(f.transpose_a, f.transpose_b), a, b, ta, tb)


def _matrix_grads(a, b, gy, ta, tb, need_a, need_b):
    """gA and gB of Y = op(A) op(B), each one matmul (see matmul_backward)."""
    ga = gb = None
    if need_a:  # gA = gY op(B)^T, or, for A^T, its transpose op(B) gY^T
        ga = matmul(b, gy, transpose_a=tb, transpose_b=True) if ta else matmul(gy, b, transpose_b=not tb)
    if need_b:  # gB = op(A)^T gY, or, for B^T, its transpose gY^T op(A)
        gb = matmul(gy, a, transpose_a=True, transpose_b=ta) if tb else matmul(a, gy, transpose_a=not ta)
    return ga, gb


@taylor.register("MatMul")
def matmul_taylor(ctx, a, b):
    """Y = op(A) op(B) is bilinear: collect t^k in (sum_i A_i t^i)(sum_j B_j t^j)

    =>  Y_k = sum_{j=0..k} op(A_j) op(B_{k-j}): a Cauchy product of matrix products.
    """
    return series.bilinear(ctx.function.forward, a, b)


transposed("MatMul", products=(0, 1))


def diagonal(x, offset=0, axis1=0, axis2=1):
    """y = x's diagonal x[i, i + offset] in the plane of ``axis1`` and ``axis2``, as NumPy's: the other
    axes first, the diagonal last.

    It is x with axis1 and axis2 moved last, then indexed by two index arrays, rows i and columns
    i + offset: a transpose and a getitem, both linear, so its rules are theirs, composed (its
    backward rule puts gy back on the diagonal of zeros, GetItemGrad; forward and Taylor ones pick
    the diagonal of each tangent and coefficient).
    """
    ndim = len(x.shape)
    if ndim < 2:
        raise ValueError(f"diagonal: x of shape {tuple(x.shape)} has {ndim} axes; a diagonal needs 2 or more")
    a1, a2 = axis1 % ndim, axis2 % ndim
    if a1 == a2:
        raise ValueError(f"diagonal: axis1={axis1} and axis2={axis2} are the same axis of x's {ndim}")
    rest = [a for a in range(ndim) if a not in (a1, a2)]
    if rest + [a1, a2] != list(range(ndim)):
        x = transpose(x, rest + [a1, a2])
    n1, n2 = x.shape[-2:]
    xp = get_array_module(x)
    rows = xp.arange(max(0, -offset), max(0, min(n1, n2 - offset)))
    return getitem(x, (Ellipsis, rows, rows + offset))


def trace(x, offset=0, axis1=0, axis2=1):
    """y = sum_i x[i, i + offset]: the sum of ``diagonal(x, offset, axis1, axis2)`` along its last axis.

    Linear: its rules are those of diagonal and sum, composed (gx = gy on the diagonal, 0 elsewhere).
    """
    return sum_(diagonal(x, offset, axis1, axis2), axis=-1)
