"""Grad mode: whether calling a Function records a node in the graph.

Recording is what makes backpropagation possible, and it costs memory: every
node keeps its inputs alive. Evaluation, plotting and parameter updates do not
need it, so they run inside ``no_grad()``.
"""


class Config:
    """Process-wide switches, read by ``Function.__call__`` at every call."""

    enable_backprop = True
    # The derivative order of the nodes being recorded: 0 for a forward pass,
    # n while grad(create_graph=True) builds the graph of an n-th derivative.
    derivative_order = 0


class _GradMode:
    """Sets ``Config.enable_backprop`` for a ``with`` block or a decorated function."""

    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        self.previous = Config.enable_backprop
        Config.enable_backprop = self.enabled
        return self

    def __exit__(self, *exc):
        Config.enable_backprop = self.previous
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with _GradMode(self.enabled):
                return fn(*args, **kwargs)

        wrapper.__name__ = fn.__name__
        wrapper.__doc__ = fn.__doc__
        return wrapper


def no_grad():
    """Record no graph inside ``with mg.no_grad():`` (or a function decorated with it)."""
    return _GradMode(False)


def enable_grad():
    """Record the graph again, for example inside a ``no_grad()`` block."""
    return _GradMode(True)


def set_grad_enabled(mode):
    """Recording on (True) or off (False) inside ``with set_grad_enabled(mode):``."""
    return _GradMode(bool(mode))


def is_grad_enabled():
    """True when calling a Function records a node."""
    return Config.enable_backprop
