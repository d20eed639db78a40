"""Second-order jets of many directions at once through one Function: the step of ``laplacian``.

Along a direction v the Taylor coefficients of y = f(x(t)), x(t) = x_0 + x_1 t + x_2 t^2, are

    y_0 = f(x_0),   y_1 = J x_1,   y_2 = J x_2 + Q(x_1),

J the Jacobian at x_0 and Q(x_1) = (1/2) f''(x_0)[x_1, x_1] a quadratic form: y_2 is linear in x_2,
quadratic in x_1, with no x_1-x_2 cross term (the second-order Taylor rule of every Function has
this shape: collect t^2 in f(x_0 + x_1 t + x_2 t^2)). Hence, for K directions and weights w_k,

    sum_k w_k y_2(x_0, x_1k, x_2k) = J (sum_k w_k x_2k) + sum_k w_k Q(x_1k):

the weighted sum of the second coefficients passes through J, so one summed second coefficient
can travel instead of K ("collapsed" Taylor mode). A node carries x_0, the K first coefficients
(an array with a leading direction axis) and one second coefficient: K + 2 arrays instead of the
1 + 2K of K separate jets that share x_0.

Everything a node needs is ``push`` (J applied to a batch of directions) and ``quadratic`` (the
sum of w_k Q(x_1k), or every Q(x_1k) when there are no weights), and both follow from the Taylor
rule: run it on [x_0, v, 0], and y_1 = J v, y_2 = Q(v). So ``Derived`` serves every Function with
a Taylor rule, direction by direction. The families below do the same work batched over the
direction axis, where a Function's structure allows it:

- ``Elementwise``: y = g(a, b, ...) value by value. The rule run once on unit seeds gives the
  partial derivatives g_a and (1/2) g_aa, g_ab, ..., and then J v and Q(v) are products that
  broadcast over the direction axis. For a linear g (Add, Neg) Q is 0 and is skipped.
- ``Linear`` (the family of ``families.linear``): J v = L(v), Q = 0. The pushed second coefficient
  is L(x_2): that is where K + 2 against 1 + 2K is saved on a network whose cost is its matmuls.
- ``Product`` (MatMul, Affine): y = B(a, b) is bilinear, J(v_a, v_b) = B(v_a, b_0) + B(a_0, v_b)
  and Q = B(v_a, v_b); one matrix product for all the directions of a batch.

Where the leading direction axis needs care: an elementwise Function's inputs of different ranks
are padded after it (align() would put the padding before it), a linear Function's attributes
(an axis, a shape) refer to the value's axes, so it is applied direction by direction, and a 1-D
matmul operand becomes a row or column first.
"""

from minigrad import families, taylor
from minigrad.core.rules import call_rule
from minigrad.cuda import get_array_module

# Functions that act value by value (output = the inputs broadcast), declared once: their rules
# follow from the Taylor rule on unit seeds.
ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Neg", "PowScalar", "Pow", "Exp", "Log", "Sin", "Cos", "Tanh",
               "TanhGrad", "Cast", "Identity", "Sigmoid", "Sqrt", "Square", "ReLU", "Abs", "Clip",
               "Maximum", "Minimum"}


def linearization(f, x0s, moving):
    """The second-order step of node ``f`` at its inputs' values ``x0s``; ``moving[i]``: input i has
    directions. Raises the Taylor table's error, naming f and how to register a rule, if f has none."""
    key = type(f).rule_key
    rule = taylor.table.rules.get(key) or taylor.table.lookup(type(f))
    library = getattr(rule, "__module__", "").startswith("minigrad.")
    if library and key in PRODUCTS:
        return Product(f, x0s, moving)
    if rule is families.linear_taylor:
        return Linear(f, x0s)
    if library and key in ELEMENTWISE:
        return Elementwise(f, x0s, moving)
    return Derived(f, x0s, moving)


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


def weighted_sum(w, q):
    """sum_k w_k q_k over the leading direction axis (w None: q itself, one per direction)."""
    if w is None:
        return q
    xp = get_array_module(q)
    return xp.tensordot(w.astype(q.dtype, copy=False), q, axes=1)


def padded(v, ndim):
    """A batch of directions (K, *shape) with axes of length 1 after K, up to ``ndim`` value axes."""
    return v.reshape(v.shape[:1] + (1,) * (ndim - v.ndim + 1) + v.shape[1:])


def _added(a, b):
    return b if a is None else a if b is None else a + b


class Derived:
    """Any Function with a Taylor rule, direction by direction: the rule on [x_0, v, 0] gives
    y_1 = J v and y_2 = Q(v) (several outputs too)."""

    def __init__(self, f, x0s, moving):
        self.f, self.x0s, self.outputs = f, x0s, outputs_of(f)
        self.values = [c[0] for c in self._run([None] * len(x0s))]

    def _run(self, vs):
        return call_rule(taylor.table, self.f, [_series(x0, v) for x0, v in zip(self.x0s, vs)], self.outputs)

    def _each(self, vs):
        """[per output: the coefficients of every direction, stacked (K, 3, *shape)]."""
        count = next(len(v) for v in vs if v is not None)
        runs = [self._run([None if v is None else v[k] for v in vs]) for k in range(count)]
        xp = get_array_module(self.values[0])
        return [xp.stack([run[i] for run in runs]) for i in range(len(self.outputs))]

    def push(self, vs):
        return [c[:, 1] for c in self._each(vs)]

    def jet(self, vs, w):
        cs = self._each(vs)
        return [c[:, 1] for c in cs], [weighted_sum(w, c[:, 2]) for c in cs]


class Elementwise:
    """y = g(x_0, x_1, ...) value by value: y_1 = sum_i g_i v_i, y_2 = sum_{i<=j} c_ij v_i v_j with
    c_ii = (1/2) g_ii and c_ij = g_ij, read off the Taylor rule run on unit seeds:
    seed e_i gives (g_i, (1/2) g_ii), seed e_i + e_j gives (1/2) g_ii + g_ij + (1/2) g_jj."""

    def __init__(self, f, x0s, moving):
        self.ndim = len(outputs_of(f)[0].shape)
        live = [i for i, m in enumerate(moving) if m]
        run = self._runner(f, x0s)
        self.first, self.second = {}, {}
        for i in live:
            c = run({i})
            self.values = [c[0]]
            self.first[i] = c[1]
            self.second[i, i] = c[2]
        for n, i in enumerate(live):
            for j in live[n + 1:]:
                self.second[i, j] = run({i, j})[2] - self.second[i, i] - self.second[j, j]
        self.second = {ij: c for ij, c in self.second.items() if c.any()}  # Q = 0 for a linear g

    @staticmethod
    def _runner(f, x0s):
        xp = get_array_module(x0s[0])

        def run(seeds):
            args = [_series(x0, xp.ones_like(x0) if i in seeds else None) for i, x0 in enumerate(x0s)]
            return call_rule(taylor.table, f, args, outputs_of(f))[0]

        return run

    def push(self, vs):
        y = None
        for i, g in self.first.items():
            if vs[i] is not None:
                y = _added(y, g * padded(vs[i], self.ndim))
        return [y]

    def jet(self, vs, w):
        q = None
        for (i, j), c in self.second.items():
            if vs[i] is not None and vs[j] is not None:
                vi, vj = padded(vs[i], self.ndim), padded(vs[j], self.ndim)
                q = _added(q, c * weighted_sum(w, vi * vj))
        return self.push(vs), [q]


class Linear:
    """y = L(x_0, x_1, ...), linear in its inputs together: y_1 = L(v), y_2 = L(x_2), Q = 0. L's
    attributes refer to the value's axes, so it is applied to each direction in turn."""

    def __init__(self, f, x0s):
        self.f, self.x0s = f, x0s
        self.values = [f.forward(*x0s)]

    def push(self, vs):
        xp = get_array_module(self.x0s[0])
        count = next(len(v) for v in vs if v is not None)
        zeros = [xp.zeros_like(x0) if v is None else None for x0, v in zip(self.x0s, vs)]
        ys = [self.f.forward(*[z if v is None else v[k] for z, v in zip(zeros, vs)]) for k in range(count)]
        return [xp.stack(ys)]

    def jet(self, vs, w):
        return self.push(vs), [None]


class Product:
    """y = B(a, b) (+ c): J(v_a, v_b, v_c) = B(v_a, b_0) + B(a_0, v_b) + v_c, Q = B(v_a, v_b), each
    one matrix product over all the directions (MatMul: op(a) @ op(b); Affine: a @ b + c)."""

    def __init__(self, f, x0s, moving):
        self.f, self.a0, self.b0 = f, x0s[0], x0s[1]
        self.ndim = len(outputs_of(f)[0].shape)
        self.values = [f.forward(*x0s)]

    def push(self, vs):
        va, vb = vs[0], vs[1]
        y = None if va is None else self._product(va, self.b0, True, False)
        if vb is not None:
            y = _added(y, self._product(self.a0, vb, False, True))
        if len(vs) > 2 and vs[2] is not None:  # Affine's bias, broadcast over the rows
            y = _added(y, padded(vs[2], self.ndim))
        return [y]

    def jet(self, vs, w):
        va, vb = vs[0], vs[1]
        q = None if va is None or vb is None else weighted_sum(w, self._product(va, vb, True, True))
        return self.push(vs), [q]

    def _product(self, a, b, a_has, b_has):
        """op(a) @ op(b) with a leading direction axis on a (a_has), b (b_has) or both."""
        ta, tb = getattr(self.f, "transpose_a", False), getattr(self.f, "transpose_b", False)
        xp = get_array_module(a)
        a_vec, b_vec = a.ndim - a_has == 1, b.ndim - b_has == 1
        if a_has and not b_has and b.ndim == 2 and not ta and not a_vec:
            # all directions (and rows) as the rows of one matrix: one BLAS call
            y = _transposed(a.reshape(-1, a.shape[-1]), False) @ _transposed(b, tb)
            return y.reshape(a.shape[:-1] + y.shape[-1:])
        if a_has and a_vec:
            a = a[:, None, :]  # a row
        if b_has and b_vec:
            b = b[..., None]  # a column
        ndim = max(a.ndim - a_has, b.ndim - b_has)
        a = padded(a, ndim) if a_has else a
        b = padded(b, ndim) if b_has else b
        y = xp.matmul(_transposed(a, ta), _transposed(b, tb))
        if a_has and a_vec:
            y = y[..., 0, :]
        if b_has and b_vec:
            y = y[..., 0]
        return y


def _transposed(x, flag):
    return x.swapaxes(-1, -2) if flag else x


PRODUCTS = {"MatMul", "Affine"}
