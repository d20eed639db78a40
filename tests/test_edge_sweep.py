"""Every elementwise Function at the edge values, in every mode: where mathematics defines a value, they agree.

The Functions come from the catalogue of tests/cases.py (tests/test_gradcheck_registry.py keeps it complete
against the registry): a case is swept when, with its inputs broadcast to its output's shape, its Jacobian
with respect to each input is diagonal at its own point. For float64 and float32, the inputs take every edge
value (0, -0, +-inf, nan, the largest and smallest normal and subnormal magnitudes, ordinary values), or every
pair of them for two inputs, all at once: one array per dtype and input. Then, at every point:

- order 0: the forward pass, func.jvp's output and Taylor mode's y_0 (taylor.jet) are the same, NaN included;
- order 1: reverse mode (mg.grad), forward mode (func.jvp) and Taylor mode's y_1 give the same number (to
  rounding), or both NaN, or the same infinity, where the inputs are numbers and the value is not NaN: no
  derivative exists at a point that is not one. For two inputs, along each input with the other moving with a
  zero tangent (both are primals, and require grad), along each with the other a constant, and along both;
- dtypes: forward, jvp and Taylor give the forward's dtype, reverse mode the input's.

A disagreement that remains is a convention: CONVENTIONS says which mode differs from the other two, where,
and why, in one line each; README.md ("Conventions at the edges") says the same. A convention that no longer
occurs fails too, so that the table stays true.
"""

import functools
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import backward_functions, forward_functions, func, taylor
from cases import CASES

inf, nan = np.inf, np.nan
EDGES = {
    np.float64: [0.0, -0.0, inf, -inf, nan, 1e300, -1e300, 1e-300, -1e-300, 5e-324, -5e-324,
                 0.5, -0.5, 1.0, -1.0, 2.0, -1.5, 3.0, 710.0],
    np.float32: [0.0, -0.0, inf, -inf, nan, 3e38, -3e38, 1e-38, -1e-38, 1e-45, -1e-45,
                 0.5, -0.5, 1.0, -1.0, 2.0, -1.5, 3.0, 89.0],
}
MODES = ("rev", "jvp", "taylor")  # the three ways to a first derivative
RTOL = {np.float64: 1e-12, np.float32: 1e-5}  # two formulas for one number differ by a few hundred ulps


def elementwise_cases():
    """[(case, the shape its inputs are broadcast to)], one per Function and label, derived as said above."""
    found, seen = [], set()
    for case in CASES:
        xs = case.inputs()
        try:  # (a matrix product, a concatenation: the inputs' shapes do not broadcast, or f wants its own)
            shape = np.broadcast_shapes(*(x.shape for x in xs))
            xs = [np.broadcast_to(x, shape).copy() for x in xs]
            y = case.f(*xs)
        except ValueError:
            continue
        if (case.name, case.label) in seen or y.shape != shape:
            continue
        jacobians = func.jacfwd(case.f, argnums=tuple(range(len(xs))))(*xs)
        off_diagonal = 1 - np.eye(xs[0].size)
        if all(not (j.data.reshape(off_diagonal.shape) * off_diagonal).any() for j in jacobians):
            seen.add((case.name, case.label))
            found.append((case, shape))
    return found


SWEPT = elementwise_cases()


@dataclass
class Convention:
    name: str  # the Function's registry name
    directions: tuple  # names from directions()
    odd: str  # the mode that differs: "rev", "jvp" or "taylor"; the other two must agree
    where: object  # where(x, partials) -> the points it covers: x the inputs, partials reverse mode's d/dx_i
    reason: str


def subnormal(x):
    return (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)


def zero_tangent(other):
    """Forward mode multiplies the other input's zero tangent by its partial: 0 inf = NaN where it is infinite."""
    return lambda x, partials: ~np.isfinite(partials[other])


D0, D1, BOTH = "d/dx0", "d/dx1", "along (1, 1)"
CONVENTIONS = [
    Convention("Mul", (D0,), "jvp", zero_tangent(1), "a zero tangent is a number: func.jvp multiplies x1's by "
               "dy/dx1 = x0 = inf, 0 inf = NaN, as torch.func.jvp and jax.jvp do (None: x1 does not move)"),
    Convention("Mul", (D1,), "jvp", zero_tangent(0), "as for d/dx0"),
    Convention("Div", (D0,), "jvp", zero_tangent(1), "x1's zero tangent times dy/dx1 = -x0 / x1^2 (inf or NaN)"),
    Convention("Pow", (D0,), "jvp", zero_tangent(1), "x1's zero tangent times dy/dx1 = y log x0, NaN for x0 < 0: "
               "(-1.5) ** 3 along (1, 0) is 6.75 in Taylor and reverse mode, NaN in jvp"),
    Convention("Pow", (D1,), "jvp", zero_tangent(0), "x0's zero tangent times dy/dx0 = x1 x0^(x1-1) (inf or NaN)"),
    Convention("TanhGrad", (D0,), "jvp", zero_tangent(1), "gy's zero tangent times 1 - y^2 = -inf"),
    Convention("TanhGrad", (D1,), "jvp", zero_tangent(0), "y's zero tangent times -2 y gy (inf or NaN)"),
    Convention("Pow", (D0, BOTH), "taylor", lambda x, p: subnormal(x[0]) & (x[1] == 0),
               "x1 moves: reverse and forward mode keep x1 x0^(x1-1) for the mixed derivative x0^-1, which "
               "overflows at a subnormal x0: 0 inf = NaN; Taylor mode's x0^x1 = x0^0 x0^(x1-0) has no x0^-1: 0"),
    Convention("TanhGrad", (D0, BOTH, "d/dx0 (x1 constant)"), "taylor", lambda x, p: (x[0] == 0) & np.isinf(x[1]),
               "d/dy gy (1 - y^2) = -2 y gy at y = 0, gy = inf: 0 inf = NaN in reverse and forward mode; Taylor "
               "mode takes the zero coefficient z_1 = -2 y_0 y_1 of 1 - y^2 as exact: 0, the limit of finite gy"),
]


def directions(arity):
    """(name, seed: 1 for an input that moves along it, constant: whether the others are constants)."""
    if arity == 1:
        return [("d/dx0", (1,), False)]
    return [("d/dx0", (1, 0), False), ("d/dx1", (0, 1), False), ("along (1, 1)", (1, 1), False),
            ("d/dx0 (x1 constant)", (1, 0), True), ("d/dx1 (x0 constant)", (0, 1), True)]


def laid_out(points, shape):
    """The flat columns of ``points`` as arrays of shape (k,) + shape, padded with 0.5 (the case's f may
    want its own shape: where's condition)."""
    size = int(np.prod(shape))
    k = -(-len(points[0]) // size)
    return [np.concatenate([p, np.full(k * size - len(p), 0.5, p.dtype)]).reshape((k,) + shape) for p in points]


def in_every_mode(f, xs, seed, constant):
    """{mode: flat values} of f at ``xs`` along ``seed``: the forward value three ways, and the derivative."""
    if constant:  # the inputs with seed 0 are constants closed over
        moving = [i for i, s in enumerate(seed) if s]
        fixed = {i: mg.Variable(x, requires_grad=False) for i, x in enumerate(xs) if not seed[i]}
        count = len(xs)

        def g(*vs):
            return f(*[fixed[i] if i in fixed else vs[moving.index(i)] for i in range(count)])
        xs, seed = [xs[i] for i in moving], [1] * len(moving)
    else:
        g = f
    vs = [mg.Variable(x) for x in xs]
    y = g(*vs)
    gs = mg.grad(y, [v for v, s in zip(vs, seed) if s], grad_outputs=np.ones(y.shape, y.dtype))
    tangents = tuple(np.full_like(x, s) for x, s in zip(xs, seed))
    y_jvp, t_jvp = func.jvp(g, tuple(xs), tangents)
    y0, (y1,) = taylor.jet(g, tuple(xs), tuple([t] for t in tangents))
    return {"forward": y.data, "jvp value": y_jvp.data, "taylor y_0": y0,
            "rev": sum(g.data for g in gs), "jvp": t_jvp.data, "taylor": y1}


def agree(a, b, dtype, scale=0.0):
    """Elementwise: the same number to rounding (RTOL of the larger, or of ``scale``, the size of the terms
    a sum cancelled; and below the normal numbers, where an underflow rounds to 0 or to a subnormal), both
    NaN, or the same infinity."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    finite = np.isfinite(a) & np.isfinite(b)
    gap = np.abs(np.where(finite, a, 0) - np.where(finite, b, 0))
    size = np.maximum(np.maximum(np.abs(a), np.abs(b)), np.where(np.isfinite(scale), scale, 0))
    close = gap <= RTOL[dtype] * size + np.finfo(dtype).tiny
    return (np.isnan(a) & np.isnan(b)) | (a == b) | (finite & close)


def pair(a, b):
    """The modes a and b in the order of MODES, a key of sweep's ``same``."""
    return tuple(sorted((a, b), key=MODES.index))


def sweep(case, shape, dtype):
    """(disagreements, the indices of the conventions that covered one): each disagreement a line saying
    where, and what each mode gave."""
    edges = np.array(EDGES[dtype], dtype=dtype)
    arity = len(case.shapes)
    points = [edges] if arity == 1 else [p.ravel() for p in np.meshgrid(edges, edges, indexing="ij")]
    n = len(points[0])
    xs = laid_out(points, shape)
    results = {}
    for name, seed, constant in directions(arity):
        values = in_every_mode(case.f, xs, seed, constant)
        dtypes = {mode: np.asarray(v).dtype for mode, v in values.items()}
        want = dict.fromkeys(dtypes, dtypes["forward"]) | {"rev": np.dtype(dtype)}
        assert dtypes == want, f"{case.id} {dtype.__name__} {name}: dtypes {dtypes}"
        results[name] = {mode: np.asarray(v).reshape(-1)[:n] for mode, v in values.items()}
    partials = [results[f"d/dx{i}"]["rev"] for i in range(arity)]
    a_number = ~np.any([np.isnan(p) for p in points], axis=0)
    bad, used = [], set()

    def at(j):
        return f"{case.id} {dtype.__name__} at {tuple(float(p[j]) for p in points)}"

    for name, r in results.items():
        for mode in ("jvp value", "taylor y_0"):
            for j in np.flatnonzero(~agree(r["forward"], r[mode], dtype)):
                bad.append(f"{at(j)}: forward {r['forward'][j]}, {mode} {r[mode][j]}")
        defined = a_number & ~np.isnan(r["forward"])
        if name == "along (1, 1)":  # reverse mode's gradient dotted with (1, 1) here: inf + -inf is no number
            defined &= ~np.isnan(partials[0] + partials[1]) | np.isnan(partials[0]) | np.isnan(partials[1])
        same = {pair(a, b): agree(r[a], r[b], dtype) for a, b in [("rev", "jvp"), ("rev", "taylor"), ("jvp", "taylor")]}
        excused = np.zeros(n, bool)
        for i, c in enumerate(CONVENTIONS):
            if c.name == case.name and name in c.directions:
                a, b = (m for m in MODES if m != c.odd)
                covered = defined & c.where(points, partials) & same[pair(a, b)] & ~same[pair(c.odd, a)]
                if covered.any():
                    used.add(i)
                excused |= covered
        for j in np.flatnonzero(defined & ~excused & ~(same[pair("rev", "jvp")] & same[pair("rev", "taylor")])):
            bad.append(f"{at(j)} {name}: rev {r['rev'][j]}, jvp {r['jvp'][j]}, taylor {r['taylor'][j]}")
    return bad, used


@functools.cache
def swept():
    """(every disagreement, the indices of the conventions that occurred), over every case and dtype."""
    bad, used = [], set()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # (the forward pass's own overflow and 0 / 0)
        for case, shape in SWEPT:
            for dtype in EDGES:
                b, u = sweep(case, shape, dtype)
                bad += b
                used |= u
    return bad, used


def test_the_sweep_finds_every_elementwise_function_of_the_registry():
    """What the families declare elementwise (its forward rule is its backward rule), and the binary ones."""
    names = {case.name for case, _ in SWEPT}
    backward, forward = backward_functions.table.rules, forward_functions.table.rules
    declared = {name for name, rule in backward.items()  # (minigrad's own: tests register rules of theirs)
                if rule.__module__.startswith("minigrad.") and forward.get(name) is rule}
    assert declared and declared <= names, sorted(declared - names)
    assert {"Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Where", "TanhGrad"} <= names
    assert not names & {"Softmax", "CumSum", "Sum", "MatMul", "LogSoftmax"}  # (not elementwise: not swept)


def test_every_mode_agrees_at_the_edges_where_the_value_is_defined():
    bad, _ = swept()
    assert not bad, f"{len(bad)} disagreements that no convention covers:\n" + "\n".join(bad[:40])


def test_every_convention_still_occurs():
    _, used = swept()
    stale = [f"{c.name} {c.directions} ({c.odd}): {c.reason}" for i, c in enumerate(CONVENTIONS) if i not in used]
    assert not stale, "conventions that no longer occur (remove them, here and in README.md):\n" + "\n".join(stale)
    assert all(c.odd in MODES and c.reason for c in CONVENTIONS)


# ---- the other Functions, at the finite edge values: one convention, the zero tangent's (prod of twelve
# 1e300s: jacfwd's column k is sum_j o_j e_k,j with every o_j = inf, so 0 inf = NaN beside inf) ----
FINITE_EDGES = {np.float64: [0.0, -0.0, 1e300, -1e300, 1e-300, -1e-300, 5e-324, -5e-324],
                np.float32: [0.0, -0.0, 3e38, -3e38, 1e-38, -1e-38, 1e-45, -1e-45]}


def with_edges(case):
    """(dtype, input index, what was placed, the inputs) for every finite edge value e: input i all e, and
    (float64) only its first element e, the others the case's own."""
    base = case.inputs()
    for dtype, edges in FINITE_EDGES.items():
        for i in range(len(base)):
            for e in edges:
                for whole in (True, False) if dtype == np.float64 else (True,):
                    xs = [b.astype(dtype) for b in base]
                    xs[i] = np.full_like(xs[i], e) if whole else np.concatenate([[e], xs[i].ravel()[1:]]).reshape(
                        xs[i].shape).astype(dtype)
                    yield dtype, i, f"{'all' if whole else 'first'} {e}", xs


def jacobian_checks(case, dtype, i, xs):
    """Disagreements of f's Jacobian by input i: order 0 against the forward pass, jacrev against jacfwd
    entry by entry, and J v by func.jvp against Taylor mode's y_1 (v of mixed signs and sizes)."""
    constants = [mg.Variable(x, requires_grad=False) for x in xs]

    def g(v):
        return case.f(*[v if k == i else constants[k] for k in range(len(xs))])

    x = xs[i]
    y = g(mg.Variable(x)).data
    forward, reverse = func.jacfwd(g)(x).data, func.jacrev(g)(x).data
    v = ((np.arange(x.size) % 3 + 1.0) * (-1.0) ** np.arange(x.size)).reshape(x.shape).astype(dtype)
    _, t = func.jvp(g, (x,), (v,))
    y0, (y1,) = taylor.jet(g, x, [v])
    J = reverse.reshape(y.size, x.size)
    defined = ~np.isnan(y).ravel()  # (rows: an output inf - inf, as a product of two 1e300s makes)
    bad = []
    if not agree(y, y0, dtype).all():
        bad.append(f"forward {y.ravel()[:4]}, taylor y_0 {np.ravel(y0)[:4]}")
    # a zero tangent is a number: a column's jvp is NaN where another column of its row is infinite
    others_infinite = (np.isinf(J).sum(axis=1, keepdims=True) - np.isinf(J)) > 0
    same = agree(forward.reshape(J.shape), J, dtype) | (np.isnan(forward.reshape(J.shape)) & others_infinite)
    if not same[defined].all():
        bad.append(f"jacfwd {forward.reshape(J.shape)[~same]}, jacrev {J[~same]}")
    scale = (np.abs(np.where(np.isfinite(J), J, 0)) @ np.abs(v.ravel())).reshape(y.shape)
    same = agree(t.data, y1, dtype, scale).ravel()
    if not same[defined].all():
        bad.append(f"jvp {t.data.ravel()[~same]}, taylor {np.ravel(y1)[~same]}")
    return bad


OTHERS = [case for case in CASES if (case.name, case.label) not in {(c.name, c.label) for c, _ in SWEPT}]


def test_every_other_function_agrees_at_finite_edge_values():
    """Reductions, shapes, products of matrices, softmax and the rest: the edge values that are numbers."""
    bad = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        for case in OTHERS:
            for dtype, i, placed, xs in with_edges(case):
                bad += [f"{case.id} {dtype.__name__} x{i} {placed}: {b}" for b in jacobian_checks(case, dtype, i, xs)]
    assert not bad, f"{len(bad)} disagreements:\n" + "\n".join(bad[:40])


@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
def test_the_softmax_family_at_rows_holding_inf_and_nan_agrees_with_its_forward_pass(name, axis):
    """Rows holding +inf, -inf or nan: Taylor mode's value is the forward pass's, nan where it is nan
    (softmax of a row holding +inf is nan throughout: inf / inf), and its slope is nan where jvp's is."""
    function = getattr(F, name)
    x = np.array([[np.inf, 1.0, 2.0, 3.0], [-np.inf, 1.0, 2.0, 3.0], [np.nan, 0.0, 1.0, 2.0], [0.5, 1.0, -2.0, 3.0]])
    f = lambda v: function(v, axis=axis)  # noqa: E731
    with np.errstate(all="ignore"):
        value = f(mg.Variable(x)).data
        coefficients = taylor.derivatives(f, x, 1, direction=np.ones_like(x))
        _, slope = func.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(coefficients[0], value, rtol=1e-14)  # (nan where nan, inf where inf)
    np.testing.assert_array_equal(np.isnan(coefficients[1]), np.isnan(slope.data))
