"""Second-order jets of many directions at once through one Function: the step of ``laplacian``.

Along a direction v the Taylor coefficients of y = f(x(t)), x(t) = x_0 + x_1 t + x_2 t^2, are

    y_0 = f(x_0),   y_1 = J x_1,   y_2 = J x_2 + Q(x_1),

J the Jacobian at x_0 and Q(x_1) = (1/2) f''(x_0)[x_1, x_1] a quadratic form: y_2 is linear in x_2,
quadratic in x_1, with no x_1-x_2 cross term (the second-order Taylor rule of every Function has
this shape: collect t^2 in f(x_0 + x_1 t + x_2 t^2)). Hence, for K directions and weights w_k,

    sum_k w_k y_2(x_0, x_1k, x_2k) = J (sum_k w_k x_2k) + sum_k w_k Q(x_1k):

the weighted sum of the second coefficients passes through J, so one summed second coefficient
can travel instead of K ("collapsed" Taylor mode). A node carries one array of K + 2 rows: x_0,
the K first coefficients, and one second coefficient, instead of the 1 + 2K rows of K jets that
share x_0 (``Rows``). Every linear step (J) acts on all the rows but the value's alike: one matrix
product for the whole array.

Everything a node needs is f(x_0), J applied to rows, and Q of the first-order rows, and all of it
follows from the Taylor rule: run on [x_0, v, 0], it gives y_1 = J v and y_2 = Q(v). So ``derived``
serves every Function with a Taylor rule, direction by direction. The families below do the same
work on all the rows at once, where a Function's structure allows it:

- ``elementwise``: y = g(a, b, ...) value by value. The rule run once on unit seeds gives the
  partial derivatives g_a and (1/2) g_aa, g_ab, ..., and then J v and Q(v) are products that
  broadcast over the direction axis. For a linear g (Add, Neg) Q is 0 and is skipped.
- ``linear`` (the family of ``families.linear``): J v = L(v), Q = 0, so the summed second
  coefficient goes through as L(x_2).
- ``product`` (MatMul, Affine): y = B(a, b) is bilinear, J(v_a, v_b) = B(v_a, b_0) + B(a_0, v_b)
  and Q = B(v_a, v_b); one matrix product for all the rows. With a constant weight (a layer), Q = 0
  and the summed second coefficient is one more row: that is where K + 2 against 1 + 2K is saved on
  a network whose cost is its matrix products.

Where the leading direction axis needs care: an elementwise Function's inputs of different ranks
are padded after it (align() would put the padding before it), a linear Function's attributes
(an axis, a shape) refer to the value's axes, so it is applied direction by direction, and a 1-D
matmul operand becomes a row or column first.
"""

from minigrad import families, series, taylor
from minigrad.cuda import get_array_module

# Functions that act value by value (output = the inputs broadcast), declared once: their steps
# follow from the Taylor rule on unit seeds.
ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Neg", "PowScalar", "Pow", "Exp", "Log", "Sin", "Cos", "Tanh",
               "TanhGrad", "Cast", "Identity", "Sigmoid", "Sqrt", "Square", "ReLU", "Abs", "Clip",
               "Maximum", "Minimum", "Erf", "Expm1", "Log1p", "Sign", "Floor", "Ceil"}
PRODUCTS = {"MatMul", "Affine"}


class Rows:
    """The rows of a node's array: 0 the value x_0, 1..K the first coefficients x_1k, then the second
    ones: one row, sum_k w_k x_2k (``collapsed``), or K rows, one per direction."""

    def __init__(self, w, collapsed):
        self.K, self.weights = len(w), w
        self.w = w if collapsed else None  # the weights the second rows are summed with, as they travel
        self.first, self.second = slice(1, self.K + 1), slice(self.K + 1, None)
        self.count = 1 + self.K + (1 if collapsed else self.K)

    def quadratic(self, q):
        """Q of each direction (K rows) as the second rows receive it: summed with w, or as they are."""
        return q if self.w is None else _weighted_sum(self.w, q)[None]

    def add_products(self, Y, c, vi, vj):
        """Y's second rows += c v_ik v_jk, one per direction, or summed with w in one pass over the
        rows (einsum: no K-row product is ever made, only one of the value's size)."""
        xp = get_array_module(vi)
        if self.w is None:
            Y[self.second] += times(c, vi * vj)
        elif bool((self.w == self.w[0]).all()):  # (the Laplacian's ones, the samples' 1/S)
            Y[-1] += times(c, self.w[0] * xp.einsum("k...,k...->...", vi, vj))
        else:
            Y[-1] += times(c, xp.einsum("k,k...,k...->...", self.w, vi, vj))

    def result(self, Y):
        """2 sum_k w_k y_2k: the weighted sum of v_k^T H v_k."""
        return 2 * (Y[-1] if self.w is not None else _weighted_sum(self.weights, Y[self.second]))


def times(c, rows, out=None):
    """c rows: a partial derivative c, a value (any number, inf at a pole or past overflow), times rows of
    coefficients, whose zeros are exact: 0 t^k is no term of a series, so inf 0 is 0 there, not nan (as
    taylor.call's retry makes it inside a rule: series.strong_zero_product), and only where c is not finite.
    Written into ``out`` when given (no temporary array of all the rows)."""
    xp = get_array_module(c)
    if xp.isfinite(c).all():
        return xp.multiply(c, rows, out=out)
    y = series.strong_zero_product(c, rows, False, True)
    if out is None:
        return y
    out[...] = y
    return out


def _weighted_sum(w, q):
    """sum_k w_k q_k over the leading axis."""
    return get_array_module(q).tensordot(w.astype(q.dtype, copy=False), q, axes=1)


def step(f, Zs, x0s, rows):
    """The arrays of ``f``'s outputs (one per output) from its inputs': ``Zs[i]``, or None for an input
    that does not move (a constant, value ``x0s[i]``). Raises the Taylor table's error, naming f and how
    to register a rule, if f has none."""
    key = type(f).rule_key
    rule = taylor.table.rules.get(key) or taylor.table.lookup(type(f))
    library = getattr(rule, "__module__", "").startswith("minigrad.")
    if library and key in PRODUCTS:
        return [product(f, Zs, x0s, rows)]
    if rule is families.linear_taylor:
        return [linear(f, Zs, x0s, rows)]
    if library and key in ELEMENTWISE:
        return [elementwise(f, Zs, x0s, rows)]
    return derived(f, Zs, x0s, rows)


def outputs_of(f):
    return [ref() for ref in f._outputs]


def _series(x0, x1=None, x2=None):
    """[x_0, x_1, x_2] as one array of coefficients (zeros where None)."""
    xp = get_array_module(x0)
    c = xp.zeros((3,) + x0.shape, dtype=x0.dtype)
    c[0] = x0
    if x1 is not None:
        c[1] = x1
    if x2 is not None:
        c[2] = x2
    return c


def padded(Z, ndim):
    """Rows (R, *shape) with axes of length 1 after the row axis, up to ``ndim`` value axes."""
    return Z.reshape(Z.shape[:1] + (1,) * (ndim - Z.ndim + 1) + Z.shape[1:])


def derived(f, Zs, x0s, rows):
    """Any Function with a Taylor rule, direction by direction (several outputs too): the rule on
    [x_0, x_1k, x_2k] gives y_1k and y_2k = J x_2k + Q(x_1k) (per direction), and collapsed, the
    rule on [x_0, x_1k, 0] gives Q(x_1k) and on [x_0, x_2, 0] gives J x_2 as its y_1. An output nobody
    uses (None in outputs_of) gets no coefficients (None)."""
    outs = outputs_of(f)

    def run(r1, r2=None):
        args = [_series(x0, None if Z is None or r1 is None else Z[r1], None if Z is None or r2 is None else Z[r2])
                for Z, x0 in zip(Zs, x0s)]
        return taylor.call(f, args, outs)

    xp = get_array_module(x0s[0])
    Ys = [None if c is None else xp.empty((rows.count,) + c.shape[1:], dtype=c.dtype) for c in run(None)]
    for k in range(1, rows.K + 1):
        for Y, c in zip(Ys, run(k, None if rows.w is not None else rows.K + k)):
            if Y is None:
                continue
            Y[0], Y[k] = c[0], c[1]
            if rows.w is None:
                Y[rows.K + k] = c[2]
            else:  # sum_k w_k Q(x_1k), into the second row
                Y[-1] = c[2] * rows.w[k - 1] + (Y[-1] if k > 1 else 0)
    if rows.w is not None:
        for Y, c in zip(Ys, run(rows.K + 1)):
            if Y is not None:
                Y[-1] += c[1]  # J x_2
    return Ys


def elementwise(f, Zs, x0s, rows):
    """y = g(x_0, x_1, ...) value by value: y_1 = sum_i g_i v_i, y_2 = sum_{i<=j} c_ij v_i v_j with
    c_ii = (1/2) g_ii and c_ij = g_ij, read off the Taylor rule run on unit seeds:
    seed e_i gives (g_i, (1/2) g_ii), seed e_i + e_j gives (1/2) g_ii + g_ij + (1/2) g_jj."""
    out = outputs_of(f)[0]
    xp = get_array_module(x0s[0])

    def run(seeds):
        args = [_series(x0, xp.ones_like(x0) if i in seeds else None) for i, x0 in enumerate(x0s)]
        return taylor.call(f, args, [out])[0]

    live = [i for i, Z in enumerate(Zs) if Z is not None]
    first, second = {}, {}
    for i in live:
        y0, first[i], second[i, i] = run({i})
    for n, i in enumerate(live):
        for j in live[n + 1:]:
            second[i, j] = run({i, j})[2] - second[i, i] - second[j, j]
    ndim = len(out.shape)
    Y = xp.empty((rows.count,) + y0.shape, dtype=y0.dtype)
    Y[0] = y0
    for n, i in enumerate(live):  # J on every row but the value's
        if n == 0:
            times(first[i], padded(Zs[i][1:], ndim), out=Y[1:])
        else:
            Y[1:] += times(first[i], padded(Zs[i][1:], ndim))
    for (i, j), c in second.items():
        if c.any():  # (Q = 0 for a linear g: Add, Neg)
            rows.add_products(Y, c, padded(Zs[i][rows.first], ndim), padded(Zs[j][rows.first], ndim))
    return Y


def linear(f, Zs, x0s, rows):
    """y = L(x_0, x_1, ...), linear in its inputs together: every coefficient is L of the inputs'
    (y_1 = L(x_1), y_2 = L(x_2), Q = 0). L's attributes (an axis, a shape) refer to the value's axes,
    so it is applied to one row at a time; an input that does not move has zeros there."""
    xp = get_array_module(x0s[0])
    zeros = [xp.zeros_like(x0) if Z is None else None for Z, x0 in zip(Zs, x0s)]
    ys = [f.forward(*[x0 if Z is None and r == 0 else z if Z is None else Z[r] for Z, x0, z in zip(Zs, x0s, zeros)])
          for r in range(rows.count)]
    return xp.stack(ys)


def product(f, Zs, x0s, rows):
    """y = B(a, b) (+ c): J(v_a, v_b, v_c) = B(v_a, b_0) + B(a_0, v_b) + v_c and Q = B(v_a, v_b), so
    B(a's rows, b_0) gives y_0 and the J of a's rows in one matrix product; b's rows add theirs
    (MatMul: op(a) @ op(b); Affine: a @ b + c)."""
    (Za, Zb), (a0, b0) = Zs[:2], x0s[:2]
    ta, tb = getattr(f, "transpose_a", False), getattr(f, "transpose_b", False)
    ndim = len(outputs_of(f)[0].shape)
    if Za is None:
        Y = _product(a0, Zb, False, True, ta, tb)
    else:
        Y = _product(Za, b0, True, False, ta, tb)
        if Zb is not None:
            Y[1:] += _product(a0, Zb[1:], False, True, ta, tb)
            Y[rows.second] += rows.quadratic(_product(Za[rows.first], Zb[rows.first], True, True, ta, tb))
    if len(Zs) > 2:  # Affine's bias, broadcast over the rows of the batch
        if Zs[2] is None:
            Y[0] += x0s[2]
        else:
            Y += padded(Zs[2], ndim)
    return Y


def _product(a, b, a_rows, b_rows, ta, tb):
    """op(a) @ op(b) with a leading row axis on a (a_rows), b (b_rows) or both."""
    xp = get_array_module(a)
    a_vec, b_vec = a.ndim - a_rows == 1, b.ndim - b_rows == 1
    if a_rows and not b_rows and b.ndim == 2 and not ta and not a_vec:
        # every row of every coefficient as the rows of one matrix: one BLAS call
        a2 = a.reshape(-1, a.shape[-1])
        if len(a2) <= 512:  # OpenBLAS runs a few rows faster as (b^T a^T)^T: 0.4-0.9x the time below 512
            y = (_transposed(b, not tb) @ a2.T).T
        else:
            y = a2 @ _transposed(b, tb)
        return y.reshape(a.shape[:-1] + y.shape[-1:])
    # A 1-D operand (never transposed) as NumPy's matmul takes it, a row (1, n) for a, a column (n, 1) for b,
    # whether it has a row axis or not: then every operand is a stack of matrices, and the row axes broadcast
    # as batch axes in front of the value's (padded); the axis of length 1 goes again after the product.
    if a_vec:
        a = a[..., None, :]
    if b_vec:
        b = b[..., None]
    ndim = max(a.ndim - a_rows, b.ndim - b_rows)
    a = padded(a, ndim) if a_rows else a
    b = padded(b, ndim) if b_rows else b
    y = xp.matmul(_transposed(a, ta), _transposed(b, tb))
    if a_vec:
        y = y[..., 0, :]
    if b_vec:
        y = y[..., 0]
    return y


def _transposed(x, flag):
    return x.swapaxes(-1, -2) if flag else x
