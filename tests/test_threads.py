"""Grad mode belongs to a thread, as in PyTorch: bounded stress tests with exact answers checked."""

import threading

import numpy as np

import minigrad as mg
import minigrad.functions as F


def run_threads(*targets):
    errors = []

    def guarded(target):
        try:
            target()
        except BaseException as e:  # noqa: B036  (reported below, with the thread's own traceback)
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    if errors:
        raise errors[0]


def exact_gradient_loop(x0, steps, stop=None):
    """Forward and backward on a graph of our own, `steps` times, each answer checked exactly."""

    def loop():
        x = mg.Variable(np.array(x0))
        want = np.cos(x.data) * x.data + np.sin(x.data)
        for _ in range(steps):
            y = F.sum(F.sin(x) * x)
            (g,) = mg.grad(y, x)
            np.testing.assert_array_equal(g.data, want)
            z = F.sum(F.sin(x) * x)
            x.zero_grad()
            z.backward()
            np.testing.assert_array_equal(x.grad.data, want)
        if stop is not None:
            stop.set()

    return loop


def test_no_grad_in_one_thread_does_not_stop_another_from_recording():
    stop = threading.Event()

    def toggle():
        while not stop.is_set():
            with mg.no_grad():
                assert not mg.is_grad_enabled()
            assert mg.is_grad_enabled()

    run_threads(toggle, exact_gradient_loop([0.5, 1.0, -2.0], 1500, stop))
    assert mg.is_grad_enabled()


def test_two_threads_differentiate_at_once():
    run_threads(exact_gradient_loop([0.5, 1.0], 1500), exact_gradient_loop([-0.3, 2.0, 4.0], 1500))
    assert mg.is_grad_enabled()


def test_higher_order_in_two_threads_at_once():
    """create_graph tags nodes with their derivative order: the tag is per thread too."""

    def fourth_derivative_of_sin(x0):
        def loop():
            for _ in range(100):
                x = mg.Variable(x0)
                d = F.sin(x)
                for _ in range(4):
                    (d,) = mg.grad(d, x, create_graph=True)
                assert d.item() == np.sin(x0)
                assert d.creator.order == 4

        return loop

    run_threads(fourth_derivative_of_sin(0.3), fourth_derivative_of_sin(1.2))


def test_a_new_thread_starts_with_grad_enabled():
    seen = []
    with mg.no_grad():
        run_threads(lambda: seen.append(mg.is_grad_enabled()))
        assert not mg.is_grad_enabled()
    assert seen == [True]


def test_no_grad_as_a_decorator_nests_and_restores():
    @mg.no_grad()
    def inner():
        return mg.is_grad_enabled()

    @mg.no_grad()
    def outer():
        with mg.enable_grad():
            first = inner()
            after = mg.is_grad_enabled()
        return first, after

    assert outer() == (False, True)
    assert inner.__name__ == "inner"
    assert mg.is_grad_enabled()


def test_a_jvp_in_one_thread_pushes_no_tangent_through_another_threads_calls():
    """While one thread sits inside func.jvp (its levels open), another thread's calls carry no tangents and
    its gradients stay exact; the count of open levels that lets calls skip the check comes back to 0."""
    from minigrad import func
    from minigrad.support import config as settings

    inside, release = threading.Event(), threading.Event()

    def f(x):
        inside.set()
        assert release.wait(60)
        return F.sin(x) * x

    def forward_mode():
        x = np.linspace(-1.0, 1.0, 5)
        y, t = func.jvp(f, (x,), (np.ones(5),))
        np.testing.assert_allclose(t.data, np.cos(x) * x + np.sin(x), rtol=1e-14)

    def reverse_mode():
        assert inside.wait(60)
        try:
            exact_gradient_loop([0.3, -1.2], 50)()
            v = mg.Variable(np.array([0.5, 2.0]))
            y = F.sin(v)
            assert not y.node.tangents, "a call in this thread carried another thread's tangent"
        finally:
            release.set()

    run_threads(forward_mode, reverse_mode)
    assert settings.engaged == 0


def test_the_count_of_open_levels_and_passes_is_balanced_after_errors():
    """A jvp whose f raises, and a create_graph pass whose rule raises, still close what they opened."""
    from minigrad import func
    from minigrad.support import config as settings

    def broken(x):
        raise ZeroDivisionError("in f")

    for _ in range(3):
        try:
            func.jvp(broken, (np.ones(2),), (np.ones(2),))
        except ZeroDivisionError:
            pass
    assert settings.engaged == 0

    class Broken(mg.Function):
        def forward(self, x):
            return x * 2

    @mg.backward_functions.register("Broken")
    def broken_backward(ctx, gy):
        raise ZeroDivisionError("in the rule")

    x = mg.Variable(np.ones(2))
    for _ in range(3):
        try:
            mg.grad(F.sum(Broken()(x)), x, create_graph=True)
        except ZeroDivisionError:
            pass
    assert settings.engaged == 0
    (g,) = mg.grad(F.sum(F.sin(x) * x), x, create_graph=True)  # and higher order still works after them
    (h,) = mg.grad(F.sum(g), x)
    np.testing.assert_allclose(h.data, 2 * np.cos(1.0) - np.sin(1.0), rtol=1e-14)
