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
