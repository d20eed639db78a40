"""Process-wide settings: grad mode, and the device new Variables are made on.

Grad mode says whether calling a Function records a node in the graph.
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
    # Where Variables made from NumPy data (and new parameters) live: "cpu" or "gpu".
    default_device = "cpu"


class _Using:
    """One Config setting changed inside a ``with`` block (or a decorated function), then restored."""

    def __init__(self, name, value):
        self.name = name
        self.value = value

    def __enter__(self):
        self.previous = getattr(Config, self.name)
        setattr(Config, self.name, self.value)
        return self

    def __exit__(self, *exc):
        setattr(Config, self.name, self.previous)
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with _Using(self.name, self.value):
                return fn(*args, **kwargs)

        wrapper.__name__ = fn.__name__
        wrapper.__doc__ = fn.__doc__
        return wrapper


def no_grad():
    """Record no graph inside ``with mg.no_grad():`` (or a function decorated with it)."""
    return _Using("enable_backprop", False)


def enable_grad():
    """Record the graph again, for example inside a ``no_grad()`` block."""
    return _Using("enable_backprop", True)


def set_grad_enabled(mode):
    """Recording on (True) or off (False) inside ``with set_grad_enabled(mode):``."""
    return _Using("enable_backprop", bool(mode))


def is_grad_enabled():
    """True when calling a Function records a node."""
    return Config.enable_backprop


def set_default_device(device):
    """Make new Variables from host data (and new parameters) live on ``device``: "cpu" or "gpu".

    Raises RuntimeError, saying why, when "gpu" is asked for and cannot be used.
    """
    from minigrad.cuda import check_device

    check_device(device)
    Config.default_device = device


def device(name):
    """``with mg.device("gpu"):`` makes new Variables live on that device inside the block.

    Raises RuntimeError, saying why, when "gpu" is asked for and cannot be used.
    """
    from minigrad.cuda import check_device

    check_device(name)
    return _Using("default_device", name)


def get_default_device():
    """The device new Variables are made on: "cpu" or "gpu"."""
    return Config.default_device
