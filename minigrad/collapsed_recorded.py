"""The steps of collapsed.py on Variables, recorded: a Laplacian that f's parameters can be trained on.

collapsed.py computes each node's rows on arrays, fast, but its result is a constant. A
physics-informed network needs more: its loss is built from Δu, so reverse mode must go back
through Δu to the network's weights. When f's graph holds a leaf that requires grad, laplacian
walks it with these steps instead: the same formulas, each operation a minigrad function, so that
the walk is a graph and ``backward()`` reaches every parameter (the chain rule through the
first-order rows and the summed second-order row, as torch-jet gets it from PyTorch).

One thing is computed differently. An elementwise Function's partial derivatives g_i and g_ij come
from its backward rules (a gradient with ``create_graph=True``, then a gradient of that), which
are differentiable by construction, instead of its Taylor rule on unit seeds, which returns
arrays. A Function outside the three families (elementwise, linear, MatMul and Affine) goes
direction by direction through its backward rules too (``derived``): slower, as the array path's
``collapsed.derived`` is.
"""

from minigrad import families, taylor
from minigrad.core.backprop import Pass, _backprop
from minigrad.core.graph import _plan
from minigrad.support.grad_arguments import seed_gradients
from minigrad.collapsed import ELEMENTWISE, PRODUCTS, outputs_of, padded  # (padded: Z.reshape, a Variable's too)
from minigrad.core.variable import Variable
from minigrad.cuda import get_array_module
from minigrad.functions.elementwise import identity
from minigrad.functions.linalg import matmul
from minigrad.functions.reduction import sum as sum_
from minigrad.functions.selection import where
from minigrad.functions.shape import broadcast_to, concatenate, getitem, reshape


def step(f, Zs, x0s, rows):
    """collapsed.step on Variables: the rows of f's output from its inputs' rows (None for an input that
    does not move, of value x0s[i], a Variable of f's graph)."""
    key = type(f).rule_key
    if key in PRODUCTS:
        return [product(f, Zs, x0s, rows)]
    if taylor.table.lookup(type(f)) is families.linear_taylor:
        return [linear(f, Zs, x0s, rows)]
    if key in ELEMENTWISE:
        return [elementwise(f, Zs, x0s, rows)]
    return [derived(f, Zs, x0s, rows)]


def derived(f, Zs, x0s, rows):
    """Any other Function (one output), direction by direction, through its backward rules alone, which
    are differentiable: with a seed u of the output's shape, s = u . J v is a vjp dotted with v, so
    J v = ds/du; and d/du of v . ds/dx is the vector of v^T H_e v over the output's elements e, 2 Q(v)."""
    if len(f._outputs) != 1:
        raise NotImplementedError(
            f"{f.name} has {len(f._outputs)} outputs, and the Laplacian is differentiated by f's parameters "
            f"through Functions of one output only; use method='nested' to train on it, or compute it "
            f"inside no_grad() (a constant)")
    live = [i for i, Z in enumerate(Zs) if Z is not None]
    xs = [_node_of(x0, x0.shape) if i in live else x0 for i, x0 in enumerate(x0s)]
    y = f._new_node()(*xs)
    u = Variable(get_array_module(y.data).ones(y.shape, y.dtype))
    moving = [xs[i] for i in live]
    vjps = _grads(y, moving, u)

    def along(row, quadratic=False):
        v = [Zs[i][row] for i in live]
        s = sum(sum_(g * vi) for g, vi in zip(vjps, v))
        if quadratic:
            s = sum(sum_(g * vi) for g, vi in zip(_grads(s, moving), v))
        return _grads(s, [u])[0] * (0.5 if quadratic else 1.0)

    K = rows.K
    ys = [y] + [along(k) for k in range(1, K + 1)]
    quadratics = [along(k, True) for k in range(1, K + 1)]
    if rows.w is None:
        ys += [along(K + k) + q for k, q in enumerate(quadratics, 1)]
    else:
        ys.append(along(K + 1) + sum(q * float(w) for q, w in zip(quadratics, rows.w)))
    return concatenate([reshape(r, (1,) + y.shape) for r in ys], axis=0)


def _rows(Z, start, stop=None):
    return getitem(Z, slice(start, stop))


def elementwise(f, Zs, x0s, rows):
    """collapsed.elementwise: J on the rows, Q into the second rows, with g_i and g_ij from the
    backward rules: g_i = d sum(y) / d x_i, g_ij = d sum(g_i) / d x_j (each y element depends on the
    same element of each input only, so the sums pick out the elementwise partials)."""
    shape = outputs_of(f)[0].shape
    ndim, K = len(shape), rows.K
    xs = [_node_of(x0, shape) for x0 in x0s]
    y = f._new_node()(*xs)
    live = [i for i, Z in enumerate(Zs) if Z is not None]
    first = _grads(sum_(y), [xs[i] for i in live])
    J = Q = None
    for n, i in enumerate(live):
        term = times(first[n], padded(_rows(Zs[i], 1), ndim))
        J = term if J is None else J + term
        if first[n].creator is None:
            continue  # g_i is a constant: no second derivatives (Add, Sub, Neg)
        vi = padded(_rows(Zs[i], 1, K + 1), ndim)
        for m, g in enumerate(_grads(sum_(first[n]), [xs[j] for j in live[n:]])):
            if g.creator is None and not g.data.any():
                continue
            j = live[n + m]
            vj = vi if j == i else padded(_rows(Zs[j], 1, K + 1), ndim)
            q = times(g, quadratic(vi * vj, rows, ndim, 0.5 if i == j else 1.0))  # (g_ii / 2 on the diagonal)
            Q = q if Q is None else Q + q
    second = _rows(J, K)
    return concatenate([reshape(y, (1,) + shape), _rows(J, 0, K), second if Q is None else second + Q], axis=0)


def times(c, rows):
    """collapsed.times on Variables: c rows, and 0 where a row is 0 when c has an entry that is not finite."""
    product = c * rows
    if get_array_module(c.data).isfinite(c.data).all():
        return product
    return where(rows.data == 0, 0.0, product)


def _node_of(x0, shape):
    """x0 in the output's shape as a node of its own that requires grad (the gradients with respect to
    it are then graphs): x0's graph behind it when x0 has one, else a new leaf."""
    if not x0.requires_grad:
        v = Variable(get_array_module(x0.data).broadcast_to(x0.data, shape).copy())
        if x0.node.tangents:  # a jvp moves x0 (laplacian differentiated by x in forward mode): v moves with it
            v.node.tangents = {level: t if t.shape == shape else broadcast_to(t, shape)
                               for level, t in x0.node.tangents.items()}
        return v
    return broadcast_to(x0, shape) if x0.shape != shape else identity(x0)


def _grads(y, xs, seed=None):
    """The gradients of y (seeded with ``seed``, ones when None) by the fresh nodes xs (_node_of), recorded.
    None of them lies upstream of another, so the pass stops at them rather than walking f's whole graph
    behind (grad() can stop at its one input only: with several, one could lie upstream of another)."""
    targets = {x.node for x in xs}
    order, needs, _ = _plan([y], targets, targets)
    grads = _backprop(seed_gradients([y], [seed], None, "laplacian"), order, needs,
                      Pass(targets, retain_graph=True, create_graph=True))
    return [grads[x.node] if x.node in grads else _zeros(x) for x in xs]


def _zeros(x):
    return Variable(get_array_module(x.data).zeros_like(x.data), requires_grad=False)


def quadratic(products, rows, ndim, scale=1.0):
    """The K products v_ik v_jk times ``scale`` as the second rows receive them: K rows, or one, summed
    with w (one sum and a number when w is uniform: the Laplacian's ones, the samples' 1/S)."""
    w = rows.w
    if w is None:
        return products if scale == 1.0 else products * scale
    if bool((w == w[0]).all()):
        return sum_(products, axis=0, keepdims=True) * (float(w[0]) * scale)
    return _weighted_sum(products, w * scale, ndim, True)


def linear(f, Zs, x0s, rows):
    """collapsed.linear: f itself on each row (its attributes refer to the value's axes); an input that
    does not move is its value in row 0 and zeros in the others."""
    ys = []
    for r in range(rows.count):
        args = [Z[r] if Z is not None else x0 if r == 0 else get_array_module(x0.data).zeros(x0.shape, x0.dtype)
                for Z, x0 in zip(Zs, x0s)]
        y = f._new_node()(*args)
        ys.append(reshape(y, (1,) + y.shape))
    return concatenate(ys, axis=0)


def product(f, Zs, x0s, rows):
    """collapsed.product: B(a's rows, b_0) in one matrix product, b's rows added, Q = B(v_a, v_b) into
    the second rows, Affine's bias on the value's row."""
    (Za, Zb), (a0, b0) = Zs[:2], x0s[:2]
    ta, tb = getattr(f, "transpose_a", False), getattr(f, "transpose_b", False)
    K = rows.K
    if Za is None:
        Y = _product(a0, Zb, False, True, ta, tb)
    else:
        Y = _product(Za, b0, True, False, ta, tb)
        if Zb is not None:
            Y = concatenate([_rows(Y, 0, 1), _rows(Y, 1) + _product(a0, _rows(Zb, 1), False, True, ta, tb)], axis=0)
            vab = _product(_rows(Za, 1, K + 1), _rows(Zb, 1, K + 1), True, True, ta, tb)
            Y = concatenate([_rows(Y, 0, K + 1), _rows(Y, K + 1) + quadratic(vab, rows, Y.ndim - 1)], axis=0)
    if len(Zs) > 2:  # Affine's bias
        if Zs[2] is None:
            Y = concatenate([_rows(Y, 0, 1) + x0s[2], _rows(Y, 1)], axis=0)
        else:
            Y = Y + padded(Zs[2], Y.ndim - 1)
    return Y


def _product(a, b, a_rows, b_rows, ta, tb):
    """collapsed._product on Variables: op(a) @ op(b) with a leading row axis on a, b or both."""
    a_vec, b_vec = a.ndim - a_rows == 1, b.ndim - b_rows == 1
    if a_rows and not b_rows and b.ndim == 2 and not ta and not a_vec:  # one product for every row
        y = matmul(reshape(a, (-1, a.shape[-1])), b, transpose_b=tb)
        return reshape(y, a.shape[:-1] + y.shape[-1:])
    if a_vec:  # a 1-D operand as a row (a) or a column (b), rows or not (see collapsed._product)
        a = reshape(a, a.shape[:-1] + (1, a.shape[-1]))
    if b_vec:
        b = reshape(b, b.shape + (1,))
    ndim = max(a.ndim - a_rows, b.ndim - b_rows)
    a = padded(a, ndim) if a_rows else a
    b = padded(b, ndim) if b_rows else b
    y = matmul(a, b, transpose_a=ta, transpose_b=tb)
    if a_vec:
        y = reshape(y, y.shape[:-2] + y.shape[-1:])
    if b_vec:
        y = reshape(y, y.shape[:-1])
    return y


def result(Y, rows):
    """collapsed.Rows.result on Variables: 2 sum_k w_k y_2k."""
    if rows.w is not None:
        return getitem(Y, -1) * 2.0
    return _weighted_sum(_rows(Y, rows.K + 1), rows.weights, Y.ndim - 1, False) * 2.0


def _weighted_sum(products, w, ndim, keepdims):
    """sum_k w_k products_k over the leading axis."""
    return sum_(products * w.reshape((-1,) + (1,) * ndim).astype(products.dtype), axis=0, keepdims=keepdims)
