"""How a wrong answer differs from the right one: both values, where they differ, and a likely mistake.

"expected [0.93, -0.30], received [-0.93, 0.30]" may not show a sign error
at once; the message names it. The guesses are the mistakes a backward
rule is most often wrong by: a sign, gy left out, a constant factor (1/N),
a transpose, a missing sum over broadcast axes, axes of length 1 added or
dropped. A guess is only offered when it explains the received value
exactly (to the test's tolerance), so a message never suggests a wrong cause.
"""

import re

import numpy as np

SHOW_INDEX_FROM = 5  # arrays with this many elements or more also say where they differ


WIDTH = 70  # characters of an array's line: with check()'s indent and "expected: ", a notebook's width


def show(a, prefix=""):
    """An array as the student reads it: 6 digits, commas, long arrays shortened, lines of WIDTH at most.

    Its later lines are aligned under the first, which follows ``prefix``.
    """
    return prefix + np.array2string(np.asarray(a), precision=6, separator=", ", threshold=30,
                                    max_line_width=WIDTH, prefix=prefix)


def mismatch(got, want, what, rtol, atol, gy=None):
    """None when ``got`` equals ``want`` (arrays of float64) to the tolerance, shape included; else describe's."""
    if got.shape == want.shape and np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return None
    return describe(got, want, what, rtol, atol, gy)


def describe(got, want, what, rtol, atol, gy=None):
    """The message of a wrong ``got`` (arrays of float64): what is wrong, both values, a guess.

    ``gy``, when the test passed grad_outputs, lets the guess spot a rule that forgot it.
    """
    def same(a, b):
        return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)

    if got.shape != want.shape:
        lines = [f"{what} has shape {got.shape}, expected shape {want.shape}"]
        guess = _shape_guess(got, want, same, _is_gradient(what, gy))
    else:
        lines = [f"{what} is wrong"]
        guess = _value_guess(got, want, same, gy)
    lines += [show(want, "expected: "), show(got, "received: ")]
    if got.shape == want.shape and want.size >= SHOW_INDEX_FROM:
        lines.append(_where_they_differ(got, want, rtol, atol))
    if guess:
        lines.append(f"note: {guess}")
    return "\n".join(lines)


def _value_guess(got, want, same, gy):
    if not np.all(np.isfinite(got)):
        return "received contains inf or nan: a division by zero, or exp of a large number?"
    if np.allclose(want, 0):
        return None
    if gy is not None and not np.allclose(gy, 1) and same(_times(got, gy, want.shape), want):
        return "received times grad_outputs would be right: does the rule multiply by gy?"
    if np.allclose(got, 0):
        return "received is zero everywhere: is the gradient ever passed on (multiplied by gy)?"
    if same(got, -want):
        return "received is the negative of expected: a sign error?"
    c = float(np.vdot(got, want) / np.vdot(want, want))
    if want.size > 1 and abs(c - 1) > 1e-3 and same(got, c * want):  # (one number is always some multiple)
        return f"received is {c:.4g} times expected: a constant factor missing or extra?"
    if want.ndim >= 2 and want.shape[-1] == want.shape[-2] and same(np.swapaxes(got, -1, -2), want):
        return "received is the transpose of expected: a product in the wrong order, or a missing .T?"
    return None


def _times(got, gy, shape):
    """got * gy in ``shape``, or ``got`` where the shapes do not broadcast (a gx beside the output's gy)."""
    try:
        return np.broadcast_to(got * gy, shape)
    except ValueError:
        return got


def _is_gradient(what, gy):
    """Does the test compare a gradient (gx, gW, grad(...), a rule's result) rather than a forward's value?"""
    return (gy is not None or re.match(r"g[a-zA-Z]\b", what) is not None
            or any(w in what.lower() for w in ("grad", "backward", "rule", "ctx")))


def _shape_guess(got, want, same, gradient):
    if got.size == want.size and same(got.reshape(want.shape), want):
        if np.squeeze(got).shape == np.squeeze(want).shape:
            return (f"the numbers are right, but axes of length 1 were added or dropped: "
                    f"give the result shape {want.shape} (keepdims, or a reshape)")
        return f"the numbers are right, in the wrong shape: reshape the result to {want.shape}"
    if got.ndim == 2 and got.T.shape == want.shape and same(got.T, want):
        return "received is the transpose of expected: a product in the wrong order, or a missing .T?"
    summed = _sum_to(got, want.shape)
    if summed is None or not gradient:  # (a forward's sums are the exercise itself: no guess to give away)
        return None
    if same(summed, want):
        return (f"summed over its extra axes down to {want.shape} it would be right: "
                "the gradient of a broadcast input is summed over the axes it was broadcast along")
    return (f"a gradient has the shape of its input, {want.shape}: "
            "sum over the axes the input was broadcast along")


def _sum_to(x, shape):
    """x summed down to ``shape`` (leading axes, and axes where shape has 1), or None if it cannot be."""
    lead = x.ndim - len(shape)
    if lead < 0 or any(s != 1 and s != n for s, n in zip(shape, x.shape[lead:])):
        return None
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and x.shape[lead + i] != 1)
    return x.sum(axis=axes, keepdims=True).reshape(shape)


def _where_they_differ(got, want, rtol, atol):
    wrong = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    first = tuple(int(i) for i in np.argwhere(wrong)[0])
    return (f"wrong at {int(wrong.sum())} of {want.size} elements; the first at index {first}: "
            f"expected {want[first]:.6g}, received {got[first]:.6g}")
