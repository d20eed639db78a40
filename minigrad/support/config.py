"""Grad mode, per thread, and the device new Variables are made on.

Grad mode says whether calling a Function records a node in the graph.
Recording is what makes backpropagation possible, and it costs memory: every
node keeps its inputs alive. Evaluation, plotting and parameter updates do not
need it, so they run inside ``no_grad()``.

Each thread has its own mode, as in PyTorch: a ``no_grad()`` block in one
thread (a progress bar, a widget's callback) never stops another thread from
recording, and every new thread starts with recording on. ``Config`` is a
``threading.local``: its class attributes are what a thread sees until it sets
its own.
"""

import contextlib
import threading

from minigrad.cuda import check_device


class Config(threading.local):
    """The switches ``Function.__call__`` reads at every call, one set per thread."""

    enable_backprop = True
    # The derivative order of the nodes being recorded: 0 for a forward pass,
    # n while grad(create_graph=True) builds the graph of an n-th derivative.
    derivative_order = 0
    # Where Variables made from NumPy data (and new parameters) live: "cpu" or "gpu".
    # set_default_device() changes it for every thread; ``with device(...)`` for one.
    default_device = "cpu"
    # The forward-mode levels open in this thread (core/tangents.py): one per running jvp, innermost last.
    levels = ()
    below = 1 << 30  # while a forward rule computes a tangent of depth d: d (only shallower levels are pushed)
    # While a backward pass that records nothing runs its rules, or a jvp's lean level its forward rules:
    # minigrad functions applied to plain arrays return plain arrays (support/lean.py).
    lean = False


config = Config()

# How many forward-mode levels and higher-order passes are open now, in all threads. While none is,
# Function.__call__ skips reading this thread's ``levels`` and ``derivative_order``: an attribute of a
# ``threading.local`` costs a few times a module's. Counted under a lock by the two places that open them.
engaged = 0
_engaged_lock = threading.Lock()


leaning = 0  # how many lean passes run now, in all threads: while none does, no call reads ``lean``

# How many changes of grad mode or device are in force now, in all threads (open ``no_grad()``,
# ``device()`` blocks, a backward pass's rules, a default device other than "cpu"). While none is,
# every thread records and makes constants on the host, and Function.__call__ reads neither switch.
switched = 0
_default_switched = False


def lean_passes(count):
    """Count ``count`` more (or, negative, fewer) lean passes running."""
    global leaning
    with _engaged_lock:
        leaning += count


def switch(count):
    """Count ``count`` more (or, negative, fewer) changes of grad mode or device in force."""
    global switched
    with _engaged_lock:
        switched += count


def engage(count):
    """Count ``count`` more (or, negative, fewer) open forward-mode levels or higher-order passes."""
    global engaged
    with _engaged_lock:
        engaged += count


class _Using(contextlib.ContextDecorator):
    """One setting changed inside a ``with`` block (or a decorated function), then restored.

    The object can be entered again, even inside itself (``ng = no_grad()``,
    then ``with ng:`` twice); as a decorator it makes a fresh block for each call.
    """

    def __init__(self, name, value):
        self.name = name
        self.value = value
        self.previous = []

    def __enter__(self):
        switch(1)
        self.previous.append(getattr(config, self.name))
        setattr(config, self.name, self.value)
        return self

    def __exit__(self, *exc):
        setattr(config, self.name, self.previous.pop())
        switch(-1)
        return False

    def _recreate_cm(self):  # contextlib.ContextDecorator's hook: each call of a decorated function
        return _Using(self.name, self.value)


def no_grad():
    """Record no graph inside ``with mg.no_grad():`` (or a function decorated with it), in this thread."""
    return _Using("enable_backprop", False)


def enable_grad():
    """Record the graph again, for example inside a ``no_grad()`` block."""
    return _Using("enable_backprop", True)


def set_grad_enabled(mode):
    """Recording on (True) or off (False) inside ``with set_grad_enabled(mode):``."""
    return _Using("enable_backprop", bool(mode))


def is_grad_enabled():
    """True when calling a Function in this thread records a node."""
    return bool(config.enable_backprop)  # (None while the walker runs rules that record nothing)


def set_default_device(device):
    """Make new Variables from host data (and new parameters) live on ``device``: "cpu" or "gpu".

    It changes the default of every thread (inside a ``with device(...)`` block,
    that block's device wins until it ends). Raises RuntimeError, saying why,
    when "gpu" is asked for and cannot be used.
    """
    global _default_switched
    check_device(device)
    if _default_switched != (device != "cpu"):
        _default_switched = device != "cpu"
        switch(1 if _default_switched else -1)
    Config.default_device = device
    config.__dict__.pop("default_device", None)  # this thread follows the new default too


def device(name):
    """``with mg.device("gpu"):`` makes new Variables live on that device inside the block (this thread).

    Raises RuntimeError, saying why, when "gpu" is asked for and cannot be used.
    """
    check_device(name)
    return _Using("default_device", name)


def get_default_device():
    """The device new Variables are made on in this thread: "cpu" or "gpu"."""
    return config.default_device
