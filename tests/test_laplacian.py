"""func.laplacian: closed forms, the three methods against each other and PyTorch, weights, batches,
every registered Function, the randomized estimate's mean, and the errors.

"nested" runs through the backward rules, "taylor" and "collapsed" through the Taylor rules: two
code paths, so their agreement checks both; PyTorch's Hessian (torch.func.hessian) is a third.
"""

import math
import re

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import Function, backward_functions, func, taylor
from minigrad.laplacian import directions
from cases import CASES

METHODS = ("collapsed", "taylor", "nested")
rng = np.random.default_rng(0)


def lap(f, x, method, **kwargs):
    return func.laplacian(f, method, **kwargs)(x).numpy()


# ---- closed forms ----
A = np.array([0.3, -0.5, 0.2, 0.7])
CLOSED_FORMS = [  # (f of one point, f of a batch (row by row), its Laplacian at x)
    ("sum sin", lambda x: F.sum(F.sin(x)), lambda x: F.sum(F.sin(x), axis=1), lambda x: -np.sin(x).sum(-1)),
    ("squared norm", lambda x: F.sum(x * x), lambda x: F.sum(x * x, axis=1),
     lambda x: np.full(x.shape[:-1], 2.0 * x.shape[-1])),
    ("exp(a.x)", lambda x: F.exp(F.sum(x * A)), lambda x: F.exp(F.sum(x * A, axis=1)),
     lambda x: np.exp(x @ A) * (A @ A)),
]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name, f, f_rows, expected", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_closed_forms(name, f, f_rows, expected, method):
    x = rng.standard_normal(4)
    np.testing.assert_allclose(lap(f, x, method), expected(x), rtol=1e-12, atol=1e-12)
    X = rng.standard_normal((5, 4))
    got = lap(f_rows, X, method)
    assert got.shape == (5,)
    np.testing.assert_allclose(got, expected(X), rtol=1e-12, atol=1e-12)


# ---- a network, against PyTorch ----
def mlp(params, act=F.tanh):
    def f(x):
        for i, (W, b) in enumerate(params):
            x = F.affine(x, W, b)
            if i < len(params) - 1:
                x = act(x)
        return x
    return f


def params(widths, seed=1):
    r = np.random.default_rng(seed)
    return [(r.standard_normal((m, n)) / np.sqrt(m), r.standard_normal(n)) for m, n in zip(widths[:-1], widths[1:])]


def torch_laplacian(torch, f_torch, X):
    """sum_d d^2 f/dx_d^2 for each row of X, by the trace of torch.func.hessian, vmapped over the rows."""
    H = torch.func.vmap(torch.func.hessian(f_torch))(torch.tensor(X))
    return H.diagonal(dim1=-2, dim2=-1).sum(-1).numpy()


@pytest.mark.parametrize("method", METHODS)
def test_network_against_pytorch(method):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle (pip install .[oracle])")
    P = params((6, 16, 16, 3))
    X = rng.standard_normal((7, 6))

    def f_torch(x):  # one point
        for i, (W, b) in enumerate(P):
            x = x @ torch.tensor(W) + torch.tensor(b)
            if i < len(P) - 1:
                x = torch.tanh(x)
        return x

    expected = torch_laplacian(torch, f_torch, X)  # (7, 3): three outputs per point
    got = lap(mlp(P), X, method)
    assert got.shape == (7, 3)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    one = lap(lambda x: mlp(P)(F.reshape(x, (1, -1)))[0], X[2], method)  # one point (D,)
    np.testing.assert_allclose(one, expected[2], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("act", [F.tanh, F.sigmoid, F.sin, lambda x: x * F.exp(-x * x)], ids=["tanh", "sigmoid",
                                                                                             "sin", "x exp(-x^2)"])
def test_the_methods_agree_to_rounding(act):
    f = mlp(params((5, 12, 9, 1)), act)
    X = rng.standard_normal((6, 5))
    values = [lap(f, X, m) for m in METHODS]
    assert np.abs(values[0]).max() > 1e-2  # not all zero
    for v in values[1:]:
        np.testing.assert_allclose(v, values[0], rtol=1e-11, atol=1e-12)


# ---- weights C ----
def hessians(f, X):
    """The Hessian of f at each row of X, by func.hessian (forward over reverse: another path again)."""
    return np.stack([func.hessian(lambda x: F.sum(f(F.reshape(x, (1, -1)))))(x).numpy() for x in X])


def symmetric(D, eigenvalues, seed):
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((D, D)))
    return (Q * eigenvalues) @ Q.T


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", ["positive definite", "indefinite", "low rank", "zero"])
def test_weights(method, kind):
    D = 4
    eig = {"positive definite": [0.5, 1, 2, 3], "indefinite": [-2, -0.5, 1, 3], "low rank": [0, 0, -1, 2],
           "zero": [0, 0, 0, 0]}[kind]
    C = symmetric(D, np.array(eig, dtype=float), seed=3)
    f = mlp(params((D, 10, 1)))
    X = rng.standard_normal((3, D))
    expected = np.einsum("ij,nij->n", C, hessians(f, X))  # sum_ij C_ij H_ij from the Hessian itself
    got = lap(f, X, method, weights=C)
    np.testing.assert_allclose(got.ravel(), expected, rtol=1e-10, atol=1e-12)


def test_weights_of_rank_r_take_r_directions():
    V, w = directions(5, symmetric(5, np.array([0.0, 0, 0, -1, 2]), seed=0))
    assert V.shape == (2, 5) and sorted(w) == pytest.approx([-1, 2])
    np.testing.assert_allclose((V.T * w) @ V, symmetric(5, np.array([0.0, 0, 0, -1, 2]), seed=0), atol=1e-12)


# ---- the randomized estimate ----
def test_the_same_directions_give_the_same_estimate_in_every_method():
    f = mlp(params((5, 8, 1)))
    X = rng.standard_normal((4, 5))
    values = [lap(f, X, m, samples=7, seed=11) for m in METHODS]
    for v in values[1:]:
        np.testing.assert_allclose(v, values[0], rtol=1e-11, atol=1e-12)
    assert not np.allclose(values[0], lap(f, X, "collapsed"))  # an estimate, not the exact value
    np.testing.assert_array_equal(values[0], lap(f, X, "collapsed", samples=7, seed=11))  # seeded


@pytest.mark.parametrize("weights", [None, "indefinite"])
def test_the_randomized_estimate_is_unbiased(weights):
    """The mean of many seeded estimates lies within 4 standard errors of the exact value; and the
    variance of one estimate falls as 1/S (the ratio of the variances at S = 2 and S = 8 near 4)."""
    D = 5
    C = None if weights is None else symmetric(D, np.array([-1.5, -0.3, 0.4, 1, 2]), seed=5)
    f = mlp(params((D, 10, 1), seed=4))
    x = rng.standard_normal((1, D))
    exact = lap(f, x, "nested", weights=C).item()
    estimates = {S: np.array([lap(f, x, "collapsed", weights=C, samples=S, seed=s).item() for s in range(400)])
                 for S in (2, 8)}
    for S, e in estimates.items():
        standard_error = e.std(ddof=1) / np.sqrt(len(e))
        assert standard_error > 0
        assert abs(e.mean() - exact) < 4 * standard_error, (S, e.mean(), exact, standard_error)
    ratio = estimates[2].var() / estimates[8].var()
    assert 2.5 < ratio < 6, ratio


# ---- every registered Function, in every method ----
def flat(case, w):
    """<w, case.f(inputs)> as a function of one vector holding every input's elements."""
    sizes = [math.prod(s) for s in case.shapes]

    def f(z):
        xs, start = [], 0
        for shape, size in zip(case.shapes, sizes):
            xs.append(F.reshape(F.getitem(z, slice(start, start + size)), shape))
            start += size
        return F.sum(case.f(*xs) * w)

    return f


def case_point(case):
    z = np.concatenate([x.ravel() for x in case.inputs()])
    y = case.f(*[mg.Variable(x) for x in case.inputs()])
    return z, np.random.default_rng(2).standard_normal(y.shape)


def test_every_registered_function_has_a_case():
    names = {c.name for c in CASES}
    library = [n for n in taylor.registered() if taylor.lookup(n).__module__.startswith("minigrad.")]
    assert library and not set(library) - names


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_function_in_every_method(case):
    """collapsed and taylor (through the Taylor rules) against nested (through the backward rules)."""
    z, w = case_point(case)
    f = flat(case, w)
    expected = lap(f, z, "nested")
    for method in ("collapsed", "taylor"):
        np.testing.assert_allclose(lap(f, z, method), expected, rtol=1e-9, atol=1e-9, err_msg=method)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_function_against_pytorch(case):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle (pip install .[oracle])")
    z, w = case_point(case)
    sizes = [math.prod(s) for s in case.shapes]

    def twin(zt):
        xs = [p.reshape(s) for p, s in zip(torch.split(zt, sizes), case.shapes)]
        return (case.twin(torch, *xs) * torch.tensor(w)).sum()

    expected = torch.func.hessian(twin)(torch.tensor(z)).diagonal().sum().item()
    np.testing.assert_allclose(lap(flat(case, w), z, "collapsed"), expected, rtol=1e-9, atol=1e-9)


def test_an_output_of_several_elements_per_point():
    def f(x):  # (N, 3) -> (N, 2, 2): sin of each coordinate, then the square of the first
        both = F.concatenate([F.sin(x), x * x], axis=1)
        return F.reshape(F.getitem(both, (slice(None), slice(0, 4))), (-1, 2, 2))

    X = rng.standard_normal((5, 3))
    expected = np.stack([-np.sin(X[:, 0]), -np.sin(X[:, 1]), -np.sin(X[:, 2]), np.full(5, 2.0)], axis=1)
    for method in METHODS:
        np.testing.assert_allclose(lap(f, X, method), expected.reshape(5, 2, 2), rtol=1e-12, atol=1e-12,
                                   err_msg=method)
        np.testing.assert_allclose(lap(lambda x: f(F.reshape(x, (1, 3)))[0], X[1], method), expected[1].reshape(2, 2),
                                   rtol=1e-12, atol=1e-12, err_msg=method)


# ---- errors, and what each method needs ----
class Softplus(Function):
    def forward(self, x):
        return np.logaddexp(0, x)


def test_a_function_without_a_taylor_rule_is_named_with_how_to_register_one():
    backward_functions.register("Softplus", lambda ctx, gy: gy * F.sigmoid(ctx.inputs[0]))
    f = lambda x: F.sum(Softplus()(x))  # noqa: E731
    x = rng.standard_normal(3)
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(lap(f, x, "nested"), (s * (1 - s)).sum(), rtol=1e-12)
    for method in ("collapsed", "taylor"):
        with pytest.raises(NotImplementedError, match=rf"laplacian.*{method}.*Taylor rule.*'Softplus'.*register"):
            lap(f, x, method)
    taylor.register("Softplus", lambda ctx, x: _softplus_series(x))
    try:
        for method in ("collapsed", "taylor"):  # derived from the Taylor rule, direction by direction
            np.testing.assert_allclose(lap(f, x, method), (s * (1 - s)).sum(), rtol=1e-12)
    finally:
        del taylor.table.rules["Softplus"]
        del backward_functions.table.rules["Softplus"]


def _softplus_series(x):
    """log(1 + e^x) to second order: y_1 = s x_1, y_2 = s x_2 + s (1 - s) x_1^2 / 2, s = sigmoid(x_0)."""
    s = 1 / (1 + np.exp(-x[0]))
    return np.stack([np.logaddexp(0, x[0]), s * x[1], s * x[2] + s * (1 - s) * x[1] ** 2 / 2])


def test_nested_names_a_function_without_a_backward_rule():
    class Cube(Function):
        def forward(self, x):
            return x ** 3

    with pytest.raises(NotImplementedError, match=r"laplacian\(method='nested'\).*'Cube'.*register"):
        lap(lambda x: F.sum(Cube()(x)), rng.standard_normal(3), "nested")


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="hessian"), r"laplacian: method='hessian' is not one of"),
    (dict(samples=0), r"laplacian: samples=0 must be a whole number >= 1"),
    (dict(samples=2.5), r"laplacian: samples=2.5"),
    (dict(weights=np.ones((3, 3))), r"laplacian: weights has shape \(3, 3\), but x has D = 4"),
    (dict(weights=np.triu(np.ones((4, 4)))), r"laplacian: weights \(4, 4\) is not symmetric.*\(C \+ C.T\) / 2"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        func.laplacian(lambda x: F.sum(x * x), **kwargs)(np.ones(4))


def test_bad_points_and_functions():
    with pytest.raises(ValueError, match=r"laplacian: x has shape \(2, 2, 2\); pass one point \(D,\)"):
        func.laplacian(F.sum)(np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match=r"x is a batch of 3 points \(3, 4\).*f returned shape \(\)"):
        func.laplacian(lambda x: F.sum(x * x))(np.ones((3, 4)))
    with pytest.raises(TypeError, match=r"laplacian: f returned float64, not a Variable"):
        func.laplacian(lambda x: np.sin(x.data).sum())(np.ones(4))
    with pytest.raises(TypeError, match=r"laplacian: f must be a function"):
        func.laplacian(3)


# ---- weights, seed and samples: checked when the operator is made, with what was found and the fix ----
def sum_of_c_h(f, x, C):
    """sum_ij C_ij H_ij at one point x, H from func.hessian (forward over reverse), C any matrix."""
    return np.sum(C * func.hessian(f)(x).numpy())


def smooth(x):
    return F.sum(F.sin(x) * x) + F.exp(F.sum(x * A[:x.shape[-1]]))


@pytest.mark.parametrize("bad, first", [(np.inf, "inf"), (-np.inf, "-inf"), (np.nan, "nan")])
def test_weights_that_are_not_finite_are_refused(bad, first):
    """An infinity used to leave no direction above the rank's threshold: a silent 0."""
    C = np.eye(3)
    C[0, 1] = C[1, 0] = bad
    with pytest.raises(ValueError, match=rf"laplacian: weights \(3, 3\) has 2 entries that are not finite numbers "
                                         rf"in float64, the first {first} at \(0, 1\); pass a matrix of finite"):
        func.laplacian(smooth, weights=C)  # not called: refused when the operator is made
    with pytest.raises(ValueError, match=r"laplacian: weights \(2, 2\) has 1 entries that are not finite"):
        func.laplacian(smooth, weights=np.array([[1e400, 0], [0, 1]], dtype=np.longdouble))


def test_complex_weights_are_refused_with_the_real_and_imaginary_parts_as_the_fix():
    x = np.array([0.3, -0.4, 0.8])
    with pytest.raises(TypeError, match=r"laplacian: weights \(3, 3\) has complex dtype complex128.*imaginary "
                                        r"parts are all zero: pass C.real"):
        func.laplacian(smooth, weights=np.eye(3, dtype=complex))
    C = symmetric(3, np.array([1.0, -2, 3]), seed=1) + 1j * symmetric(3, np.array([0.5, 0, 2]), seed=2)
    with pytest.raises(TypeError, match=r"laplacian: weights \(3, 3\) has complex dtype complex128.*"
                                        r"weights=C.real\)\(x\) \+ 1j \* laplacian\(f, weights=C.imag\)\(x\)"):
        func.laplacian(smooth, weights=C)
    advised = lap(smooth, x, "collapsed", weights=C.real) + 1j * lap(smooth, x, "collapsed", weights=C.imag)
    np.testing.assert_allclose(advised, sum_of_c_h(smooth, x, C), rtol=1e-12)


@pytest.mark.parametrize("weights, error, match", [
    (np.ones((3, 2)), ValueError, r"weights has shape \(3, 2\), not a square matrix; pass a symmetric \(D, D\)"),
    (np.ones(3), ValueError, r"weights has shape \(3,\), not a square matrix"),
    (np.ones((2, 2, 2)), ValueError, r"weights has shape \(2, 2, 2\), not a square matrix"),
    ([[1.0, 0.0], [0.0]], ValueError, r"weights is a ragged nested sequence, not a matrix"),
    ("eye", TypeError, r"weights has dtype <U3 \(shape \(\)\), not numbers; pass a symmetric \(D, D\) array"),
    (np.array([[1, 0], [0, "a"]], dtype=object), TypeError, r"weights \(2, 2\) holds values that are not real"),
    (np.array([[1, 0], [0, 1j]], dtype=object), TypeError, r"weights \(2, 2\) holds values that are not real"),
])
def test_weights_that_are_not_a_real_square_matrix_are_refused(weights, error, match):
    with pytest.raises(error, match="laplacian: " + match):
        func.laplacian(smooth, weights=weights)


def test_weights_of_ints_bools_or_python_numbers_are_taken_as_floats():
    x = np.array([0.3, -0.4, 0.8])
    expected = lap(smooth, x, "collapsed")
    for C in (np.eye(3, dtype=int), np.eye(3, dtype=bool), np.eye(3).tolist(), np.eye(3, dtype=object)):
        np.testing.assert_allclose(lap(smooth, x, "collapsed", weights=C), expected, rtol=1e-14)


@pytest.mark.parametrize("method", METHODS)
def test_weights_not_symmetric_are_refused_and_the_advised_symmetric_part_gives_their_sum(method):
    """sum_ij C_ij H_ij of a C that is not symmetric equals that of (C + C.T) / 2, as the message says."""
    x = np.array([0.3, -0.4, 0.8])
    C = np.array([[1.0, 2.0, -1.0], [0.0, 3.0, 0.5], [4.0, 0.0, -2.0]])
    with pytest.raises(ValueError, match=r"laplacian: weights \(3, 3\) is not symmetric, C\[0, 2\] = -1 but "
                                         r"C\[2, 0\] = 4; .* pass \(C \+ C.T\) / 2"):
        func.laplacian(smooth, method, weights=C)
    got = lap(smooth, x, method, weights=(C + C.T) / 2)
    np.testing.assert_allclose(got, sum_of_c_h(smooth, x, C), rtol=1e-12)
    S = (C + C.T) / 2
    S[0, 1] += 1e-13  # asymmetric by rounding only: taken
    np.testing.assert_allclose(lap(smooth, x, method, weights=S), got, rtol=1e-12)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scale", [1e-300, 1e300, 1.7e308])
def test_weights_of_extreme_size_give_the_sum_they_stand_for(method, scale):
    """C's entries up to float64's largest: eigh works on C scaled by a power of 4 (C + C.T overflowed)."""
    x = np.array([0.3, -0.4, 0.8])
    C = symmetric(3, np.array([1.0, -0.5, 0.25]) * scale, seed=7)  # entries up to 0.99 scale
    assert np.isfinite(C).all() and (scale < 1e308 or not np.isfinite(C + C.T).all())

    def g(x):  # a small Hessian, so that sum_ij C_ij H_ij stays a float64 number
        return smooth(x) * 1e-10

    np.testing.assert_allclose(lap(g, x, method, weights=C), sum_of_c_h(g, x, C), rtol=1e-11)


@pytest.mark.parametrize("method", METHODS)
def test_weights_whose_eigenvalue_overflows_are_refused_exactly_and_taken_by_samples(method):
    """ones * 1.5e308 has eigenvalue 3e308: no float64 weight for the exact sum, a clear error; the random
    directions carry C's scale in their weights, and for a C of rank 1 every draw is exact."""
    x = np.array([0.3, -0.4])
    C = np.full((2, 2), 1.5e308)

    def g(x):
        return F.sum(F.sin(x)) * 1e-10

    with pytest.raises(ValueError, match=r"laplacian: weights \(2, 2\) has entries up to 1.5e\+308 and an "
                                         r"eigenvalue near 10\^308.5, beyond float64's largest.*weights=C / k"):
        func.laplacian(g, method, weights=C)
    np.testing.assert_allclose(lap(g, x, method, weights=C, samples=3, seed=0), sum_of_c_h(g, x, C), rtol=1e-12)
    k = 2.0 ** 10  # the advised scaling
    np.testing.assert_allclose(lap(g, x, method, weights=C / k) * k, sum_of_c_h(g, x, C), rtol=1e-12)


def test_weights_of_the_wrong_size_are_named_when_x_arrives():
    operator = func.laplacian(smooth, weights=np.eye(3))
    with pytest.raises(ValueError, match=r"laplacian: weights has shape \(3, 3\), but x has D = 4 coordinates"):
        operator(np.ones(4))


@pytest.mark.parametrize("seed, error, match", [
    (-1, ValueError, r"seed=-1 \(int\) is not a seed np.random.default_rng takes \(expected non-negative"),
    (1.5, TypeError, r"seed=1.5 \(float\) is not a seed"),
    (np.float64(2.0), TypeError, r"seed=np.float64\(2.0\) \(float64\) is not a seed"),
    ("7", TypeError, r"seed='7' \(str\) is not a seed"),
    ([3, -1], ValueError, r"seed=\[3, -1\] \(list\) is not a seed"),
    (object(), TypeError, r"seed=<object object at .*> \(object\) is not a seed"),
])
def test_bad_seeds_are_refused_when_the_operator_is_made(seed, error, match):
    for samples in (4, None):  # (a seed is checked even where no directions are drawn)
        with pytest.raises(error, match=r"laplacian: " + match + r".*pass an int >= 0, a np.random.SeedSequence"):
            func.laplacian(smooth, samples=samples, seed=seed)


def test_every_seed_default_rng_takes():
    """An int, a NumPy int, a list of ints or a SeedSequence: the same directions at every call (those of
    default_rng(seed)); a Generator: the next ones of its stream at each call."""
    x = np.array([0.3, -0.4, 0.8])
    first = lap(smooth, x, "collapsed", samples=3, seed=7)
    for seed in (7, np.int64(7), np.uint8(7), np.random.SeedSequence(7)):
        operator = func.laplacian(smooth, samples=3, seed=seed)
        assert operator(x).item() == first.item() == operator(x).item()
    assert lap(smooth, x, "collapsed", samples=3, seed=[7, 8]) != first
    operator = func.laplacian(smooth, samples=3, seed=np.random.default_rng(7))
    assert operator(x).item() == first.item() != operator(x).item()


@pytest.mark.parametrize("samples", [0, -3, 2.5, 4.0, True, np.bool_(True), "4", np.array(4)])
def test_bad_sample_counts_are_refused_when_the_operator_is_made(samples):
    with pytest.raises(ValueError, match=r"laplacian: samples=" + re.escape(repr(samples)) + r" must be a whole "
                                         r"number >= 1, the number of random directions \(None for the exact"):
        func.laplacian(smooth, samples=samples, seed=0)


def test_a_numpy_int_sample_count_is_an_int():
    x = np.array([0.3, -0.4, 0.8])
    assert lap(smooth, x, "collapsed", samples=np.int64(5), seed=1) == lap(smooth, x, "collapsed", samples=5, seed=1)


def test_nested_is_differentiable_by_parameters():
    """Δ(p sum x^2) = 2 D p: d/dp = 2 D, through the graph the nested method records."""
    p = mg.Variable(np.array(1.5))
    value = func.laplacian(lambda x: p * F.sum(x * x), "nested")(rng.standard_normal(3))
    (g,) = mg.grad(value, p)
    assert value.item() == pytest.approx(9.0) and g.item() == pytest.approx(6.0)
    with mg.no_grad():
        assert func.laplacian(lambda x: p * F.sum(x * x), "nested")(np.ones(3)).creator is None


def test_a_linear_function_and_a_constant_have_a_zero_laplacian():
    for method in METHODS:
        assert lap(lambda x: F.sum(x * 3.0), np.ones(4), method) == 0
        np.testing.assert_array_equal(lap(lambda x: x, np.ones((2, 4)), method), np.zeros((2, 4)))


@pytest.mark.parametrize("method", METHODS)
def test_directions_in_chunks_give_the_same_value(method):
    """On a batch every method takes the directions chunk at a time; the reference is each point's
    Laplacian on its own (one point: nested mode's one-direction-at-a-time loop)."""
    f = mlp(params((5, 8, 2)))
    X = rng.standard_normal((3, 5))
    def one_point(x):
        return F.getitem(f(F.reshape(x, (1, 5))), 0)

    expected = np.stack([lap(one_point, x, "nested") for x in X])
    for chunk in (None, 1, 2, 4, 5, 9):
        np.testing.assert_allclose(lap(f, X, method, chunk=chunk), expected, rtol=1e-11, atol=1e-12)
    with pytest.raises(ValueError, match=r"laplacian: chunk=0 must be a whole number >= 1, directions per pass"):
        func.laplacian(f, chunk=0)


@pytest.mark.slow  # a subprocess: the network of --quick, with PyTorch where it imports; several seconds
def test_the_benchmark_runs_at_ci_size(tmp_path):
    """benchmarks/bench_laplacian.py --quick: every method agrees with nested (it checks), a table, a plot."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    plot = tmp_path / "laplacian.png"
    run = subprocess.run([sys.executable, str(root / "benchmarks" / "bench_laplacian.py"), "--quick", "--plot",
                          str(plot)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("collapsed / taylor") == 2 and "forward passes" in run.stdout
    assert plot.stat().st_size > 0


def test_nested_on_a_batch_stacks_it_once_per_direction_and_says_so():
    """Nested mode on a batch records f on K copies of it (PyTorch's vmap of HVPs); an f that does not
    map rows on their own is refused with the stacking named, at any chunk."""
    X = rng.standard_normal((4, 3))
    with pytest.raises(ValueError, match=r"batch of 4 points \(4, 3\).*one row per point.*3 x 4 rows"):
        lap(lambda x: F.sum(x * x), X, "nested")
    with pytest.raises(ValueError, match=r"batch of 4 points \(4, 3\).*got|batch of 4 points \(4, 3\).*returned"):
        lap(lambda x: F.sum(x * x), X, "nested", chunk=1)
    # weights and samples go through the same stacking: sum_ij C_ij H_ij of sum(x^3) is 6 sum_i C_ii x_i
    C = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, -0.3], [0.0, -0.3, 3.0]])
    f = lambda x: F.sum(x * x * x, axis=1)  # noqa: E731
    np.testing.assert_allclose(lap(f, X, "nested", weights=C), 6 * X @ np.diag(C), rtol=1e-12)


def test_nested_one_direction_at_a_time_takes_less_memory():
    """chunk=1 holds one Hessian-vector product of the batch at a time, chunk=D all D at once (the
    default below NESTED_STACKED points)."""
    import tracemalloc
    from minigrad.laplacian import NESTED_STACKED
    f = mlp(params((20, 64, 64, 1)))
    X = rng.standard_normal((16, 20))
    peaks = {}
    for chunk in (20, 1):
        op = func.laplacian(f, "nested", chunk=chunk)
        with mg.no_grad():
            tracemalloc.start()
            op(X)
            peaks[chunk] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    assert peaks[1] < peaks[20] / 4, peaks
    few = X[:NESTED_STACKED - 1]
    np.testing.assert_allclose(lap(f, few, "nested"), lap(f, few, "nested", chunk=1), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("method", ["collapsed", "taylor"])
def test_a_large_batch_goes_in_pieces_of_bounded_memory(method):
    """A batch past ROWS_PER_PASS rows of coefficients goes through in pieces: the same numbers as
    nested mode (one direction at a time, on the whole batch), and a memory that does not grow with N."""
    import tracemalloc
    from minigrad.laplacian import ROWS_PER_PASS
    f = mlp(params((6, 32, 1)))
    X = rng.standard_normal((3 * ROWS_PER_PASS // 8 + 5, 6))  # pieces of 128 points collapsed (8 rows), 78 taylor
    expected = lap(f, X, "nested", chunk=1)
    np.testing.assert_allclose(lap(f, X, method), expected, rtol=1e-11, atol=1e-12)
    peaks = {}
    for n in (len(X), 4 * len(X)):
        Xn = rng.standard_normal((n, 6))
        op = func.laplacian(f, method)
        tracemalloc.start()
        op(Xn)
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks[4 * len(X)] < 2 * peaks[len(X)], peaks


# ---- the Taylor methods, differentiated by f's parameters (a physics-informed network trains on them) ----
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_function_differentiated_by_parameters_against_nested(case):
    """d Δf / d(p, s) of f(p z + s), p = 1 and s = 0 requiring grad: collapsed and taylor walk f's graph
    recorded (minigrad/collapsed_recorded.py), nested differentiates its own Hessian-vector products."""
    z, w = case_point(case)
    p, s = mg.Variable(np.array(1.0)), mg.Variable(np.zeros(z.shape))
    f = flat(case, w)

    def moved(v):
        return f(v * p + s)

    found = {}
    for method in METHODS:
        value = func.laplacian(moved, method)(z)
        found[method] = [value.item()] + [g.numpy() for g in mg.grad(value, [p, s], materialize_grads=True)]
    for method in ("collapsed", "taylor"):
        for got, expected in zip(found[method], found["nested"]):
            np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-8, err_msg=method)


@pytest.mark.parametrize("method", ("collapsed", "taylor"))
def test_the_taylor_methods_are_differentiable_by_parameters(method):
    """Δ(p sum x^2) = 2 D p: d/dp = 2 D; a network's weight against central differences of the value."""
    p = mg.Variable(np.array(1.5))
    value = func.laplacian(lambda x: p * F.sum(x * x), method)(rng.standard_normal(3))
    (g,) = mg.grad(value, p)
    assert value.item() == pytest.approx(9.0) and g.item() == pytest.approx(6.0)
    with mg.no_grad():
        assert func.laplacian(lambda x: p * F.sum(x * x), method)(np.ones(3)).creator is None
    W1, W2 = mg.Variable(rng.standard_normal((4, 6))), mg.Variable(rng.standard_normal((6, 1)))
    x = rng.standard_normal((3, 4))

    def loss():
        net = lambda h: F.sum(F.matmul(F.tanh(F.matmul(h, W1)), W2), axis=1)  # noqa: E731
        return F.sum(func.laplacian(net, method)(x) ** 2)

    (gW1,) = mg.grad(loss(), W1)
    h = 1e-6
    for index in [(0, 0), (2, 3), (3, 5)]:
        W1.data[index] += h
        up = loss().item()
        W1.data[index] -= 2 * h
        down = loss().item()
        W1.data[index] += h
        assert gW1.data[index] == pytest.approx((up - down) / (2 * h), rel=1e-6, abs=1e-8)


def test_differentiated_by_parameters_in_pieces_chunks_and_samples():
    """A batch of 45 points at D = 50 goes through in pieces (ROWS_PER_PASS), the directions in chunks of 7,
    and the samples too: the recorded walks' gradients equal nested's."""
    local = np.random.default_rng(1)
    W1, W2 = mg.Variable(local.standard_normal((50, 8)) / 7), mg.Variable(local.standard_normal((8, 1)))

    def f(h):
        return F.sum(F.matmul(F.tanh(F.matmul(h, W1)), W2), axis=1)

    x = local.standard_normal((45, 50))
    for kwargs in ({}, {"chunk": 7}, {"samples": 5, "seed": 3}):
        found = {}
        for method in METHODS:
            value = func.laplacian(f, method, **kwargs)(x)
            found[method] = [value.numpy()] + [g.numpy() for g in mg.grad(F.sum(value * value), [W1, W2])]
        for method in ("collapsed", "taylor"):
            for got, expected in zip(found[method], found["nested"]):
                np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-11, err_msg=f"{method} {kwargs}")


# ---- differentiated with respect to x itself: x a Variable that requires grad, or carries a jvp's tangent ----
def _quartic(x):
    """f = sum x_d^4 + x_0^2 x_1^2: Δf = 12 sum x_d^2 + 2 (x_0^2 + x_1^2), ∇Δf = 24 x + 4 (x_0, x_1, 0...),
    Δ(Δf) = 24 D + 8."""
    return F.sum(x ** 4, axis=-1) + (x[..., 0] * x[..., 1]) ** 2


def _grad_of_laplacian(x):
    g = 24 * x
    g[..., :2] += 4 * x[..., :2]
    return g


@pytest.mark.parametrize("method", METHODS)
def test_the_laplacian_is_differentiable_by_x_in_both_modes(method):
    x0 = np.array([0.7, -1.3, 0.4])
    lap = func.laplacian(_quartic, method)
    x = mg.Variable(x0)
    expected = _grad_of_laplacian(x0)
    np.testing.assert_allclose(mg.grad(lap(x), x)[0].data, expected, rtol=1e-12)  # reverse mode
    np.testing.assert_allclose(func.jacfwd(lap)(x0).data, expected, rtol=1e-12)  # forward mode
    v = np.array([0.3, 1.0, -2.0])
    np.testing.assert_allclose(func.jvp(lap, (x0,), (v,))[1].data, expected @ v, rtol=1e-12)
    assert func.laplacian(lap, method)(x0).item() == pytest.approx(24 * 3 + 8, rel=1e-12)  # the biharmonic Δ(Δf)


@pytest.mark.parametrize("method", METHODS)
def test_a_batch_differentiated_by_x_against_central_differences(method):
    rng = np.random.default_rng(5)
    W1, W2 = rng.standard_normal((3, 8)), rng.standard_normal((8, 1))

    def net(x):
        return F.sum(F.matmul(F.tanh(F.matmul(x, W1)), W2), axis=1)

    X0 = rng.standard_normal((4, 3))
    X = mg.Variable(X0)
    (g,) = mg.grad(F.sum(func.laplacian(net, method)(X) * np.arange(1.0, 5.0)), X)
    lap = func.laplacian(net, "nested")
    h, numeric = 1e-5, np.zeros_like(X0)
    for i in np.ndindex(X0.shape):
        e = np.zeros_like(X0)
        e[i] = h
        numeric[i] = np.arange(1.0, 5.0) @ (lap(X0 + e).data - lap(X0 - e).data) / (2 * h)
    np.testing.assert_allclose(g.data, numeric, rtol=1e-6, atol=1e-8)


def test_x_as_an_array_or_inside_no_grad_gives_a_constant():
    x0 = np.array([0.7, -1.3, 0.4])
    assert not func.laplacian(_quartic)(x0).requires_grad
    with mg.no_grad():
        y = func.laplacian(_quartic)(mg.Variable(x0))
    assert y.creator is None and y.item() == pytest.approx(12 * (x0 ** 2).sum() + 2 * (x0[0] ** 2 + x0[1] ** 2))


# ---- a matmul of operands of every rank, each moving with x or constant ----
def _operand(shape, transposed):
    """The stored shape of an operand whose op() has ``shape``: its last two axes swapped when transposed."""
    return shape[:-2] + shape[:-3:-1] if transposed else shape


def _matmul_of(a_shape, b_shape, moving, transposed, p=None):
    """f(x) = sum exp(op(a) @ op(b) / 2), a and b cut from x when ``moving`` names them, else constants (times p,
    when given: constants made from a parameter); the 2-D and batched operands transposed when asked."""
    local = np.random.default_rng(7)
    ta, tb = (transposed and len(a_shape) > 1), (transposed and len(b_shape) > 1)
    stored = [_operand(a_shape, ta), _operand(b_shape, tb)]
    sizes = [math.prod(s) if name in moving else 0 for s, name in zip(stored, "ab")]
    constants = [local.standard_normal(s) for s in stored]

    def f(x):
        operands, start = [], 0
        for shape, size, c in zip(stored, sizes, constants):
            if size:
                operands.append(F.reshape(F.getitem(x, slice(start, start + size)), shape))
            else:
                operands.append(c if p is None else mg.Variable(c) * p)
            start += size
        return F.sum(F.exp(F.matmul(*operands, transpose_a=ta, transpose_b=tb) * 0.5))

    return f, local.standard_normal(sum(sizes))


MATMUL_SHAPES = [(a, b, moving, t) for a in [(3,), (2, 3), (2, 2, 3)] for b in [(3,), (3, 4), (2, 3, 4)]
                 for moving in ("a", "b", "ab") for t in (False, True) if not t or len(a) > 1 or len(b) > 1]


@pytest.mark.parametrize("a_shape, b_shape, moving, transposed", MATMUL_SHAPES,
                         ids=[f"{a}@{b}-moving {m}" + "-T" * t for a, b, m, t in MATMUL_SHAPES])
def test_a_matmul_of_every_operand_shape_against_nested(a_shape, b_shape, moving, transposed):
    """A 1-D operand (a dot product x @ c), a matrix or a batch of them, on either side, moving or constant:
    the value, the recorded walk's gradients by a parameter the constants are made from, and by x."""
    f, z = _matmul_of(a_shape, b_shape, moving, transposed)
    expected = lap(f, z, "nested")
    assert abs(expected) > 1e-3  # (exp makes even a product of one moving operand curved)
    p = mg.Variable(np.array(1.3))
    fp, _ = _matmul_of(a_shape, b_shape, moving, transposed, p)
    found = {}
    for method in METHODS:
        x = mg.Variable(z)
        value = func.laplacian(fp, method)(x)
        found[method] = [value.item()] + [g.numpy() for g in mg.grad(value, [p, x], materialize_grads=True)]
    for method in ("collapsed", "taylor"):
        np.testing.assert_allclose(lap(f, z, method), expected, rtol=1e-10, atol=1e-12, err_msg=method)
        for got, want in zip(found[method], found["nested"]):
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11, err_msg=method)


C3 = np.array([1.0, -1.0, 2.0])
DOTS = [  # (f of x (3,), its Laplacian in closed form)
    ("x@c", lambda x: F.matmul(x, C3), lambda x: 0.0),
    ("c@x", lambda x: F.matmul(C3, x), lambda x: 0.0),
    ("x@x", lambda x: F.matmul(x, x), lambda x: 2.0 * len(x)),
    ("x@sin(x)", lambda x: F.matmul(x, F.sin(x)), lambda x: np.sum(2 * np.cos(x) - x * np.sin(x))),
    ("sin(x)@x", lambda x: F.matmul(F.sin(x), x), lambda x: np.sum(2 * np.cos(x) - x * np.sin(x))),
    ("sin(x@c)", lambda x: F.sin(F.matmul(x, C3)), lambda x: -np.sin(x @ C3) * (C3 @ C3)),
]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name, f, expected", DOTS, ids=[d[0] for d in DOTS])
def test_a_dot_product_of_x_against_its_closed_form(name, f, expected, method):
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(lap(f, x, method), expected(x), rtol=1e-12, atol=1e-12)
    xv = mg.Variable(x)  # recorded, to differentiate by x: the same value
    np.testing.assert_allclose(func.laplacian(f, method)(xv).item(), expected(x), rtol=1e-12, atol=1e-12)
    X = rng.standard_normal((4, 3))  # a batch, row by row: x @ c and c @ x^T
    for g in (lambda x: F.sin(F.matmul(x, C3)), lambda x: F.sin(F.matmul(C3, x, transpose_b=True))):
        np.testing.assert_allclose(lap(g, X, method), -np.sin(X @ C3) * (C3 @ C3), rtol=1e-12, atol=1e-12)


# ---- infinities: an exact zero coefficient times an infinite partial is no term, as in taylor.derivatives ----
POLES = [  # (name, g, a point where g or its derivatives are infinite: Δ sum g is inf, -inf or finite there)
    ("exp past overflow", F.exp, 710.0), ("x exp(x)", lambda x: x * F.exp(x), 710.0),
    ("exp(-x)", lambda x: F.exp(-x), -710.0), ("log at 0", F.log, 0.0), ("log1p at -1", F.log1p, -1.0),
    ("sqrt at 0", F.sqrt, 0.0), ("1 / x at 0", lambda x: 1.0 / x, 0.0), ("x^3 at inf", lambda x: x ** 3, np.inf),
    ("x x at inf", lambda x: x * x, np.inf), ("square at inf", F.square, np.inf), ("tanh at inf", F.tanh, np.inf),
    ("sigmoid at -inf", F.sigmoid, -np.inf),
]


@pytest.mark.parametrize("name, g, pole", POLES, ids=[c[0] for c in POLES])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_an_infinite_value_or_derivative_gives_what_nested_and_taylor_derivatives_give(name, g, pole):
    """At the point alone, "nested" and taylor.derivatives are the reference; beside finite entries (whose
    zero coefficients along the pole's own direction met its infinities), the pole's and the other entries'
    Laplacians, each taken alone by "nested"; and on a batch, and recorded (a parameter requires grad)."""
    f = lambda x: F.sum(g(x), axis=-1)  # noqa: E731
    alone = lap(f, np.array([pole]), "nested")
    np.testing.assert_array_equal(alone, taylor.derivatives(f, np.array([pole]), 2)[2])
    x = np.array([pole, 0.5, 1.5])
    expected = alone + lap(f, x[1:], "nested")
    p = mg.Variable(np.array(1.0))
    for method in ("collapsed", "taylor"):
        np.testing.assert_allclose(lap(f, x[:1], method), alone, rtol=1e-12, err_msg=method)
        np.testing.assert_allclose(lap(f, x, method), expected, rtol=1e-12, err_msg=method)
        np.testing.assert_allclose(lap(f, np.stack([x, x[::-1]]), method), [expected, expected], rtol=1e-12)
        recorded = func.laplacian(lambda x: f(x * p), method)(x)
        assert recorded.creator is not None
        np.testing.assert_allclose(recorded.numpy(), expected, rtol=1e-12, err_msg=method)


# ---- a Function of several outputs, some unused; a Taylor rule that returns None ----
class SinCos(Function):
    def forward(self, x):
        return np.sin(x), np.cos(x)


@pytest.fixture
def sin_cos():
    from minigrad.functions.elementwise import sin_cos_series
    taylor.register("SinCos", lambda ctx, x: sin_cos_series(x))
    backward_functions.register("SinCos", lambda ctx, gs, gc: (0 if gs is None else gs * F.cos(ctx.inputs[0]))
                                - (0 if gc is None else gc * F.sin(ctx.inputs[0])))
    yield SinCos
    del taylor.table.rules["SinCos"]
    del backward_functions.table.rules["SinCos"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("used", [(0,), (1,), (0, 1)], ids=["sin only", "cos only", "both"])
def test_a_function_of_several_outputs_some_unused(sin_cos, used, method):
    """sum s^3 + c^3 over the outputs used, (s, c) = (sin x, cos x): (s^3)'' = 6 s c^2 - 3 s^3,
    (c^3)'' = 6 c s^2 - 3 c^3."""
    def f(x):
        outputs = sin_cos()(x)
        return sum(F.sum(outputs[i] ** 3, axis=-1) for i in used)

    def expected(x):
        s, c = np.sin(x), np.cos(x)
        return sum([6 * s * c * c - 3 * s ** 3, 6 * c * s * s - 3 * c ** 3][i] for i in used).sum(-1)

    X = rng.standard_normal((4, 3))
    np.testing.assert_allclose(lap(f, X[0], method), expected(X[0]), rtol=1e-12)
    np.testing.assert_allclose(lap(f, X, method), expected(X), rtol=1e-12)
    p = mg.Variable(np.array(1.0))  # to be differentiated by p: the recorded walk takes Functions of one output
    if method == "nested":  # against central differences in p
        (g,) = mg.grad(func.laplacian(lambda x: f(x * p), method)(X[0]), p)
        moved = [lap(lambda x, h=h: f(x * (1.0 + h)), X[0], method) for h in (1e-6, -1e-6)]
        assert g.item() == pytest.approx((moved[0] - moved[1]) / 2e-6, rel=1e-6)
    else:
        with pytest.raises(NotImplementedError, match=r"SinCos has 2 outputs.*use method='nested' to train on it"):
            func.laplacian(lambda x: f(x * p), method)(X[0])


def test_a_taylor_rule_that_returns_none_is_named_with_what_a_rule_returns():
    class Cubed(Function):
        def forward(self, x):
            return x ** 3

    taylor.register("Cubed", lambda ctx, x: None)
    backward_functions.register("Cubed", lambda ctx, gy: gy * 3 * ctx.inputs[0] ** 2)
    f = lambda x: F.sum(Cubed()(x))  # noqa: E731
    match = r"the Taylor rule of Cubed returned None for an output of shape \(2,\); a rule returns the output's 3 "
    try:
        for method in ("collapsed", "taylor"):
            with pytest.raises(ValueError, match=match + r"coefficients, an array of shape \(3, 2\)"):
                lap(f, np.array([0.5, 1.5]), method)
        with pytest.raises(ValueError, match=match):  # (was: taken as a constant, its derivatives 0)
            taylor.derivatives(f, np.array([0.5, 1.5]), 2)
    finally:
        del taylor.table.rules["Cubed"]
        del backward_functions.table.rules["Cubed"]


# ---- constants made inside f from parameters, whose arrays the graph frees when f returns ----
MADE_FROM_P = [  # (name, K(p) of shape (3, 4), by a Function whose backward rule does not read its output)
    ("p * 2", lambda p: p * 2.0), ("p + 1", lambda p: p + 1.0), ("-p", lambda p: -p),
    ("p @ W", lambda p: F.matmul(p, np.linspace(-1, 1, 16).reshape(4, 4))),
    ("reshape", lambda p: F.reshape(F.reshape(p, (12,)) * 1.5, (3, 4))),
    ("p * 2 - 1, freed twice", lambda p: (p * 2.0) - 1.0),
]
USED_BY = [  # (name, f(x (4,) or (N, 4), K) row by row)
    ("sin(x + K)", lambda x, K: F.sum(F.sin(x[..., None, :] + K), axis=(-2, -1))),
    ("tanh(K x)", lambda x, K: F.sum(F.tanh(F.matmul(x, K, transpose_b=True)), axis=-1)),
]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("use", USED_BY, ids=[u[0] for u in USED_BY])
@pytest.mark.parametrize("name, made", MADE_FROM_P, ids=[m[0] for m in MADE_FROM_P])
def test_a_constant_made_inside_f_whose_array_was_freed(name, made, use, method, monkeypatch):
    """Every array no backward rule reads is freed (RELEASE_FROM_BYTES = 0), as a large one is: the value,
    inside no_grad() too, and the gradient by p equal those with nothing freed."""
    x, X = rng.standard_normal(4), rng.standard_normal((3, 4))
    p = mg.Variable(np.random.default_rng(3).standard_normal((3, 4)))
    f = lambda x: use[1](x, made(p))  # noqa: E731

    def found():
        value = func.laplacian(f, method)(X)
        with mg.no_grad():
            constant = func.laplacian(f, method)(x)
        return value.numpy(), mg.grad(F.sum(value), p)[0].numpy(), constant.numpy()

    expected = found()
    monkeypatch.setattr("minigrad.core.function.RELEASE_FROM_BYTES", 0)
    for got, want in zip(found(), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_large_constant_made_inside_f_against_its_closed_form():
    """A (3000, 4) constant (96 KB: freed when f returns): Δ sum sin(x + 2 p) = -sum sin(x + 2 p)."""
    x = np.array([0.3, 0.9, 1.4, 0.2])
    p = mg.Variable(np.random.default_rng(0).standard_normal((3000, 4)))
    f = lambda v: F.sum(F.sin(v + p * 2.0))  # noqa: E731
    expected = -np.sin(x + 2 * p.data).sum()
    for method in METHODS:
        value = func.laplacian(f, method)(x)
        assert value.item() == pytest.approx(expected, rel=1e-12)
        np.testing.assert_allclose(mg.grad(value, p)[0].numpy(), -2 * np.cos(x + 2 * p.data), rtol=1e-12)
        with mg.no_grad():
            assert func.laplacian(f, method)(x).item() == pytest.approx(expected, rel=1e-12)


# ---- weights with small eigenvalues: only zeros are dropped ----
def _stiff(x):
    """x_0^2 + 1e20 x_1^2 + x_1 x_2 + x_2^2 sin(x_3): one coordinate 1e20 times as curved as the others."""
    return x[0] ** 2 + 1e20 * x[1] ** 2 + x[1] * x[2] + x[2] ** 2 * F.sin(x[3])


SMALL = [  # (name, C (4, 4), how many directions it takes)
    ("diag(1, 1e-17, 2, 3)", np.diag([1.0, 1e-17, 2.0, 3.0]), 4),
    ("diag(1, 1e-300, 0, 0)", np.diag([1.0, 1e-300, 0.0, 0.0]), 2),
    ("permuted diagonal, a zero", np.diag([0.0, -1e-17, 2.0, 1.0])[[3, 1, 0, 2]][:, [3, 1, 0, 2]], 3),
    ("a dense block beside a small entry", np.array([[2.0, 0, 1, 0], [0, 1e-17, 0, 0], [1, 0, 2, 0.5],
                                                     [0, 0, 0.5, 1]]), 4),
]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name, C, count", SMALL, ids=[c[0] for c in SMALL])
def test_weights_with_small_eigenvalues_keep_them(name, C, count, method):
    """sum_ij C_ij H_ij against func.hessian's H, exactly, and by samples: each Rademacher direction gives the
    1e20 coordinate's 1e-17 * 2e20 = 2000 exactly (it is a block of its own), the rest to noise of order 1."""
    x = np.array([0.3, 0.4, -0.7, 1.1])
    expected = sum_of_c_h(_stiff, x, C)
    assert len(directions(4, C)[0]) == count
    np.testing.assert_allclose(lap(_stiff, x, method, weights=C), expected, rtol=1e-12)
    estimate = lap(_stiff, x, method, weights=C, samples=200, seed=1)
    assert abs(estimate - expected) < 1.0, (estimate, expected)


def test_weights_of_a_dense_matrix_still_drop_eigenvalues_that_are_rounding():
    """C = Q diag(0, 0, 1e-17, 2) Q^T: its entries, about 1, carry rounding near 1e-16, so an eigenvalue of
    1e-17 is not told apart from 0: dropped, as the zeros are (the directions of C's rank)."""
    C = symmetric(4, np.array([0.0, 0.0, 1e-17, 2.0]), seed=2)
    V, w = directions(4, C)
    assert V.shape == (1, 4) and w == pytest.approx([2.0])


# ---- the result's dtype is f's output's ----
DTYPES = [  # (x's dtype, the weights' dtype, whether f casts its output to float32, Δf's dtype)
    (np.float32, np.float64, False, np.float64), (np.float32, np.float32, False, np.float32),
    (np.float64, np.float32, False, np.float64), (np.float64, np.float64, True, np.float32),
    (np.float32, np.float32, True, np.float32),
]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("x_dtype, W_dtype, cast, dtype", DTYPES,
                         ids=[f"x {x.__name__}, W {W.__name__}" + ", f cast" * c for x, W, c, _ in DTYPES])
def test_the_result_has_f_s_output_dtype(x_dtype, W_dtype, cast, dtype, method):
    """Against float64 everywhere at the same point (x's and W's values are float64's too), to float32's rounding
    where the result is float32, recorded (a parameter requires grad) too, on a batch; with weights C to
    float32's rounding when x is float32 (C's eigenvectors move x: they are rounded to x's dtype)."""
    local = np.random.default_rng(4)
    W = local.standard_normal((3, 4))
    X = local.standard_normal((2, 3)).astype(x_dtype)
    C = symmetric(3, np.array([0.5, 1.0, 2.0]), seed=1)

    def net(weights, p=1.0):
        def f(x):
            y = F.sum(F.tanh(F.matmul(x, weights)) * p, axis=-1)
            return F.cast(y, np.float32) if cast else y
        return f

    exact = dtype == np.float64 and (x_dtype == np.float64 or method != "nested")  # (nested: H v, a gradient by x,
    rtol = 1e-10 if exact else 2e-5                                               # has x's precision)
    W = W.astype(W_dtype)  # (and its values in float64, the reference's)
    expected = lap(net(W.astype(np.float64)), X.astype(np.float64), "nested")
    weighted = lap(net(W.astype(np.float64)), X.astype(np.float64), "nested", weights=C)
    p = mg.Variable(np.array(1.0, dtype=dtype))
    for f, recorded in ((net(W), False), (net(W, p), True)):
        got = func.laplacian(f, method)(X)
        assert got.dtype == dtype and (got.creator is not None) == recorded
        np.testing.assert_allclose(got.numpy(), expected, rtol=rtol, atol=rtol)
        got = func.laplacian(f, method, weights=C)(X)
        assert got.dtype == dtype
        np.testing.assert_allclose(got.numpy(), weighted, rtol=max(rtol, np.finfo(x_dtype).eps * 100))
        assert func.laplacian(f, method)(X[0]).dtype == dtype


# ---- a Function with a Taylor rule only, in a walk that is recorded (to differentiate by parameters or x) ----
@pytest.mark.parametrize("method", ("collapsed", "taylor"))
def test_a_function_with_only_a_taylor_rule_says_the_recorded_walk_needs_its_backward_rule(method):
    """Δ sum (p x)^3 = 6 p^3 sum x: as a constant (inside no_grad()) from the Taylor rule alone; to be
    differentiated (p, or x, requiring grad) the error says why a backward rule is needed and what to do;
    with one registered, d/dp = 18 p^2 sum x, and the gradient by x is nested's."""
    class Cubic(Function):
        def forward(self, x):
            return x ** 3

    taylor.register("Cubic", lambda ctx, x: taylor.series.product(x, taylor.series.product(x, x)))
    x, p = np.array([0.5, 1.5, -0.2]), mg.Variable(np.array(1.2))
    f = lambda v: F.sum(Cubic()(v * p))  # noqa: E731
    match = (r"laplacian\(method='collapsed' or 'taylor'\) is to be differentiated here .* backward rules.*not from "
             r"its Taylor rule: no backward rule registered for 'Cubic'.*Register that backward rule.*"
             r"inside no_grad\(\)")
    try:
        for point in (x, mg.Variable(x)):
            with pytest.raises(NotImplementedError, match=match):
                func.laplacian(f, method)(point)
        with mg.no_grad():
            assert func.laplacian(f, method)(x).item() == pytest.approx(6 * 1.2 ** 3 * x.sum(), rel=1e-12)
        p.requires_grad = False
        assert func.laplacian(lambda v: F.sum(Cubic()(v)), method)(x).item() == pytest.approx(6 * x.sum(), rel=1e-12)
        p.requires_grad = True
        backward_functions.register("Cubic", lambda ctx, gy: gy * 3 * ctx.inputs[0] ** 2)
        value = func.laplacian(f, method)(x)
        assert mg.grad(value, p)[0].item() == pytest.approx(18 * 1.2 ** 2 * x.sum(), rel=1e-12)
        xv = mg.Variable(x)
        (expected,) = mg.grad(func.laplacian(f, "nested")(xv), xv)
        np.testing.assert_allclose(mg.grad(func.laplacian(f, method)(xv), xv)[0].numpy(), expected.numpy(), rtol=1e-12)
    finally:
        del taylor.table.rules["Cubic"]
        backward_functions.table.rules.pop("Cubic", None)


# ---- a constant unless something could differentiate it ----
def _sin_of_px(p, axis=None):
    """f = sum sin(p x): Δf = -p^2 sum sin(p x), d/dp Δf = -2 p sum sin(p x) - p^2 sum x cos(p x)."""
    return lambda x: F.sum(F.sin(x * p), axis=axis)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape, kwargs", [((3,), {}), ((4, 3), {}), ((4, 3), {"chunk": 1}), ((4, 3), {"chunk": 2}),
                                           ((250, 3), {})], ids=["point", "batch", "chunk 1", "chunk 2", "in pieces"])
def test_the_result_is_a_constant_unless_something_could_differentiate_it(shape, kwargs, method):
    """Constant parameters and an array x, in grad mode: no graph behind Δf (in every method, nested's
    stacked batch, one direction at a time, and pieces included). A parameter that requires grad: its
    gradient; a jvp by the parameter (inside no_grad() too): its tangent, both from the closed form."""
    x = np.random.default_rng(1).standard_normal(shape)
    axis = None if len(shape) == 1 else 1
    s, c = np.sin(1.3 * x).sum(-1), (x * np.cos(1.3 * x)).sum(-1)
    value, derivative = -1.69 * s, -2.6 * s - 1.69 * c

    constant = func.laplacian(_sin_of_px(mg.Variable(np.array(1.3), requires_grad=False), axis), method, **kwargs)(x)
    assert constant.creator is None
    np.testing.assert_allclose(constant.numpy(), value, rtol=1e-12)
    p = mg.Variable(np.array(1.3))
    trained = func.laplacian(_sin_of_px(p, axis), method, **kwargs)(x)
    assert trained.creator is not None
    np.testing.assert_allclose(mg.grad(F.sum(trained), p)[0].item(), derivative.sum(), rtol=1e-12)

    def of_p(p):
        return func.laplacian(_sin_of_px(p, axis), method, **kwargs)(x)

    for grad_mode in (mg.enable_grad, mg.no_grad):
        with grad_mode():
            out, tangent = func.jvp(of_p, (np.array(1.3),), (np.array(1.0),))  # (was 0 in the Taylor methods)
        np.testing.assert_allclose(out.numpy(), value, rtol=1e-12)
        np.testing.assert_allclose(tangent.numpy(), derivative, rtol=1e-12)
