"""plot_derivatives: each line holds the closed-form derivative."""

import matplotlib

matplotlib.use("Agg")  # headless: no display needed

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import minigrad.functions as F  # noqa: E402
from minigrad.viz import plot_derivatives  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_sin_and_its_derivatives_are_sin_shifted_by_quarter_turns():
    x = np.linspace(-3, 3, 41)
    ax = plot_derivatives(F.sin, x, order=4)
    lines = ax.get_lines()
    assert len(lines) == 5
    for n, line in enumerate(lines):
        np.testing.assert_allclose(line.get_xdata(), x)
        np.testing.assert_allclose(line.get_ydata(), np.sin(x + n * np.pi / 2), atol=1e-12)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "$f(x)$", "$f'(x)$", "$f''(x)$", "$f'''(x)$", "$f^{(4)}(x)$"]


def test_a_polynomial_runs_out_of_derivatives_into_zeros():
    # x^3 -> 3x^2 -> 6x -> 6 -> 0 -> 0. The points leave out x = 0, where the 4th
    # derivative is 6 * 0 * x^-1 by the power rule, which NumPy evaluates to nan.
    x = np.linspace(-2, 2, 8)
    ax = plot_derivatives(lambda v: v ** 3, x, order=5, name="p")
    expected = [x ** 3, 3 * x ** 2, 6 * x, np.full_like(x, 6.0), np.zeros_like(x), np.zeros_like(x)]
    for line, y in zip(ax.get_lines(), expected):
        np.testing.assert_allclose(line.get_ydata(), y, atol=1e-12)
    assert ax.get_lines()[2].get_label() == "$p''(x)$"


def test_tanh_derivatives_match_their_closed_forms():
    # t = tanh x: t' = 1 - t^2, t'' = -2 t (1 - t^2)
    x = np.linspace(-2, 2, 11)
    t = np.tanh(x)
    ys = [line.get_ydata() for line in plot_derivatives(F.tanh, x, order=2).get_lines()]
    np.testing.assert_allclose(ys[1], 1 - t ** 2, atol=1e-12)
    np.testing.assert_allclose(ys[2], -2 * t * (1 - t ** 2), atol=1e-12)


def test_the_given_axes_is_drawn_on_and_returned():
    fig, (left, right) = plt.subplots(1, 2)
    ax = plot_derivatives(F.exp, np.linspace(0, 1, 5), order=1, ax=right)
    assert ax is right and len(right.get_lines()) == 2 and not left.get_lines()


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="order must be an int >= 0"):
        plot_derivatives(F.sin, np.linspace(0, 1, 5), order=-1)
    with pytest.raises(ValueError, match="x must be a 1-D array"):
        plot_derivatives(F.sin, np.ones((2, 2)), order=1)
    with pytest.raises(ValueError, match="same shape"):
        plot_derivatives(F.sum, np.linspace(0, 1, 5), order=1)


def test_taylor_mode_plots_the_30th_derivative_of_tanh_at_once():
    from minigrad import taylor

    x = np.linspace(-2, 2, 201)
    ax = plot_derivatives(F.tanh, x, order=30, method="taylor")
    lines = ax.get_lines()
    assert len(lines) == 31 and lines[30].get_label() == "$f^{(30)}(x)$"
    expected = taylor.derivatives(F.tanh, x, 30)
    for line, y in zip(lines, expected):
        np.testing.assert_allclose(line.get_ydata(), y)
    # the same lines as nested reverse mode, at the orders it can reach quickly
    reverse = plot_derivatives(F.tanh, x, order=4).get_lines()
    for a, b in zip(lines, reverse):
        np.testing.assert_allclose(a.get_ydata(), b.get_ydata(), rtol=1e-12, atol=1e-12)


def test_taylor_mode_gives_zeros_where_the_power_rule_gives_nan():
    x = np.linspace(-2, 2, 9)  # includes 0
    ys = [line.get_ydata() for line in plot_derivatives(lambda v: v ** 3, x, order=5, method="taylor").get_lines()]
    np.testing.assert_allclose(ys[3:], [np.full_like(x, 6.0), np.zeros_like(x), np.zeros_like(x)])


def test_an_unknown_method_is_a_clear_error():
    with pytest.raises(ValueError, match="method must be 'reverse'.*or 'taylor'.*got 'forward'"):
        plot_derivatives(F.sin, np.linspace(0, 1, 5), order=1, method="forward")
    with pytest.raises(ValueError, match="same shape"):
        plot_derivatives(F.sum, np.linspace(0, 1, 5), order=1, method="taylor")
