"""The registry: register, replace, show_registry's text, and rules as data."""

import re

import numpy as np
import pytest

import minigrad as mg
from minigrad.backward_functions import is_differentiable, lookup, register, registered, show_registry
from minigrad import Function


class Softplus(Function):
    def forward(self, x):
        return np.log1p(np.exp(x))


def test_register_as_call_and_decorator_and_replace(capsys):
    import minigrad.functions as F

    def first(ctx, gy):
        return gy * 0.0

    register("Softplus", first)
    assert lookup("Softplus") is first

    @register("Softplus")
    def softplus_backward(ctx, gy):
        """y = log(1 + e^x)  =>  dy/dx = e^x / (1 + e^x)."""
        (x,) = ctx.inputs
        return gy * F.exp(x) / (1 + F.exp(x))

    assert lookup("Softplus") is softplus_backward  # replaced
    x = mg.Variable(0.3)
    (g,) = mg.grad(Softplus()(x), x, create_graph=True)
    assert np.isclose(g.item(), 1 / (1 + np.exp(-0.3)))
    (gg,) = mg.grad(g, x)
    s = 1 / (1 + np.exp(-0.3))
    assert np.isclose(gg.item(), s * (1 - s))


def test_show_registry_is_sorted_deterministic_text(capsys):
    show_registry()
    text = capsys.readouterr().out
    assert "0x" not in text
    rows = text.strip().splitlines()
    assert rows[0].split() == ["function", "backward", "rule", "differentiable"]
    names = [r.split()[0] for r in rows[1:-1]]
    assert names == sorted(names) == registered()
    assert re.search(r"^Sin\s+minigrad\.functions\.elementwise\.sin_backward\s+yes$", text, re.M)
    assert rows[-1] == f"{len(names)} functions registered."


def test_non_differentiable_flag_is_shown(capsys):
    register("NumpyOnly", lambda ctx, gy: gy, differentiable=False)
    assert not is_differentiable("NumpyOnly")
    show_registry()
    assert re.search(r"^NumpyOnly\s+\S+<lambda>\s+no$", capsys.readouterr().out, re.M)


def test_register_checks_its_arguments():
    with pytest.raises(TypeError, match="class name as a str"):
        register(Softplus, lambda ctx, gy: gy)
    with pytest.raises(TypeError, match="must be callable"):
        register("Softplus2", 3)


def test_lookup_of_a_missing_rule():
    with pytest.raises(NotImplementedError, match=r"@register\('Nope'\)"):
        lookup("Nope")


def test_a_non_differentiable_rule_warns_under_create_graph():
    class Sq(Function):
        def forward(self, x):
            return x * x

    @register("Sq", differentiable=False)
    def sq_backward(ctx, gy):
        (x,) = ctx.inputs
        return mg.Variable(gy.data * 2 * x.data)

    x = mg.Variable([1.0, 2.0])
    with pytest.warns(UserWarning, match="went through Sq, whose rule is registered with differentiable=False"):
        (g,) = mg.grad(Sq()(x), x, create_graph=True)
    with pytest.raises(ValueError, match="a rule registered with differentiable=False"):
        mg.grad(g, x)
