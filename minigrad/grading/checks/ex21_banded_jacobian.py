"""Visible tests of exercise 21: a banded Jacobian by colouring, against func.jacfwd and closed forms.

The functions fed to the student's code pass through ``PassCounter``, an
identity whose forward and backward rules count the tangents and gradients
pushed through them: a Jacobian by colouring takes one JVP per colour, and
the tests say when it takes more (one per column, as ``jacfwd`` does). Its
rules are registered when a test runs, not at import: a test suite may put
the tables back as they were after each test.
"""

import numpy as np

import minigrad as mg
import minigrad.functions as F
from minigrad import backward_functions, forward_functions, func
from minigrad.grading.testing import visible

PASSES = [0]  # JVPs and reverse passes through PassCounter since the last reset


class PassCounter(mg.Function):
    """y = x; each rule counts the passes that go through it."""

    def forward(self, x):
        return x


def pass_counter_forward(ctx, tx):
    """y = x  =>  ty = tx (one more JVP)."""
    PASSES[0] += 1
    return tx


def pass_counter_backward(ctx, gy):
    """y = x  =>  gx = gy (one more reverse pass)."""
    PASSES[0] += 1
    return gy


def _register_pass_counter():
    forward_functions.register("PassCounter", pass_counter_forward)
    backward_functions.register("PassCounter", pass_counter_backward)


def shifted(x, d):
    """x_{i-d} for each i, zeros where i - d falls outside 0 .. n - 1."""
    pad = np.zeros(abs(d))
    return F.concatenate([pad, x[:x.shape[0] - d]]) if d > 0 else F.concatenate([x[-d:], pad])


def banded(below, above, seed=0):
    """f: R^n -> R^n with f_i = sum over d in [-above, below] of c_d sin(x_{i-d} x_i) + x_i^2, zeros beyond the
    ends: J[i, j] is nonzero exactly when -above <= i - j <= below (the coefficients c_d are seeded)."""
    c = np.random.default_rng(seed).uniform(0.5, 1.5, below + above + 1)

    def f(x):
        x = PassCounter()(x)
        n = x.shape[0]
        # (no assignment in a loop: the sandbox's copy of this module drops one that the loop itself never reads)
        return sum((c[k] * F.sin(shifted(x, d) * x) for k, d in enumerate(range(-above, below + 1))
                    if d != 0 and abs(d) < n), x * x)

    return f


def jacobian_of(t, f, x, below, above):
    """(the student's banded_jacobian(f, x, below, above) as an array, the passes it took)."""
    _register_pass_counter()
    PASSES[0] = 0
    J = t.ns.banded_jacobian(f, x, below, above)
    return np.asarray(getattr(J, "data", J), dtype=np.float64), PASSES[0]


def expected(f, x):
    _register_pass_counter()
    with mg.no_grad():
        return func.jacfwd(f)(x).data


def outside_the_band(J, below, above):
    """The entries of J outside the band, which must be 0."""
    i, j = np.indices(J.shape)
    return J[(i - j > below) | (j - i > above)]


COLOURS = ("columns j and k share a row when |j - k| <= below + above, so below + above + 1 colours, "
           "j mod (below + above + 1): no fewer (two columns of one colour would overlap in a row)")
ROWS = ("column j is nonzero in rows j - above to j + below only; clip those rows to 0 .. n - 1 (a negative "
        "start of a slice counts from the end)")


def _values(t, below, above, n, seed):
    x = np.random.default_rng(seed).standard_normal(n)
    f = banded(below, above, seed)
    t.given(f"f: R^{n} -> R^{n} with J[i, j] nonzero where {-above} <= i - j <= {below}, x = {np.round(x, 3)}")
    J, _ = jacobian_of(t, f, x, below, above)
    t.true(np.shape(J) == (n, n), f"banded_jacobian returned shape {np.shape(J)}: the Jacobian is ({n}, {n})")
    if np.shape(J) == (n, n):
        t.true(np.all(outside_the_band(J, below, above) == 0), "entries outside the band must be zero: "
               "a JVP seeded with a colour sums the columns of that colour, so copy into column j only the "
               "rows of its band, not the whole JVP")
    t.close(J, expected(f, x), f"banded_jacobian(f, x, below={below}, above={above})", rtol=1e-10, atol=1e-12)


@visible("21.1", hint=COLOURS + "; " + ROWS)
def a_tridiagonal_jacobian(t):
    _values(t, 1, 1, 7, 0)


@visible("21.1", hint=ROWS + ". With below = 2 and above = 0, column j is nonzero in rows j, j + 1 and j + 2")
def a_band_below_the_diagonal_only(t):
    _values(t, 2, 0, 8, 1)


@visible("21.1", hint=ROWS + ". With below = 0 and above = 2, column j is nonzero in rows j - 2, j - 1 and j")
def a_band_above_the_diagonal_only(t):
    _values(t, 0, 2, 8, 2)


@visible("21.1", hint="one JVP per colour, below + above + 1 of them whatever n: not one per column, "
                      "and no more colours than the band needs")
def one_jvp_per_colour(t):
    n, below, above = 12, 2, 1
    x = np.random.default_rng(3).standard_normal(n)
    t.given(f"f: R^{n} -> R^{n}, below = {below}, above = {above}: {below + above + 1} colours")
    _, passes = jacobian_of(t, banded(below, above, 3), x, below, above)
    t.equal(passes, below + above + 1, f"the tangents and gradients banded_jacobian pushed through f (colouring "
                                       f"needs {below + above + 1} JVPs for n = {n}, whatever n)")


@visible("21.1", hint="fewer columns than colours: one JVP per column, and each colour's range of columns "
                      "may be empty")
def fewer_columns_than_colours(t):
    _values(t, 2, 2, 3, 4)
