"""Parametric functions: layers that create and own their parameters, nnabla style.

    import minigrad.parametric_functions as PF

    h = PF.convolution(x, 8, (3, 3), (1, 1), name="conv1")   # creates conv1/W (8, C, 3, 3), conv1/b (8,)
    p = PF.affine(h, 10, name="pred")                          # creates pred/W (C*H*W, 10), pred/b (10,)
    params = mg.get_parameters()                               # {"conv1/W": ..., ..., "pred/b": ...}

The first call with a name creates its parameters; a later call with the
same name reuses them, so running the network again shares its weights.
``with mg.parameter_scope("block1"):`` puts "block1/" in front of the names.

Initialisation (Glorot and Bengio, 2010, as nnabla's default): a weight is
drawn uniformly from [-a, a] with a = sqrt(6 / (fan_in + fan_out)), where
fan_in and fan_out count the inputs and outputs one output element sees
(times the kernel's size for a convolution), so that signals keep their
variance going forward and back. Biases start at 0. ``mg.seed(n)`` makes
the draws reproducible. Parameters take the input's floating dtype and live
on the input's device.
"""

import contextlib
import math
from collections import OrderedDict

import numpy as np

import minigrad.functions as F
from minigrad.cuda import get_array_module
from minigrad.functions.affine import check_base_axis
from minigrad.functions._im2col import pair
from minigrad.core.variable import Variable
from minigrad.support.numpy_interop import data_of

_parameters = OrderedDict()  # full name -> Variable, in creation order
_scope = []  # the names of the enclosing parameter_scope blocks
_rng = np.random.default_rng(0)


def seed(n):
    """Seed the generator that initialises new parameters."""
    global _rng
    _rng = np.random.default_rng(n)


@contextlib.contextmanager
def parameter_scope(name):
    """Inside ``with parameter_scope("block1"):`` parameter names start with "block1/"."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"parameter_scope: name must be a non-empty str, got {name!r}")
    _scope.append(name)
    try:
        yield
    finally:
        _scope.pop()


def get_parameters():
    """The parameters under the current scope, as an ordered dict name -> Variable (creation order).

    Names are relative to the current scope: inside ``parameter_scope("block1")``
    the parameter "block1/conv/W" is listed as "conv/W".
    """
    prefix = "".join(s + "/" for s in _scope)
    return OrderedDict((k[len(prefix):], v) for k, v in _parameters.items() if k.startswith(prefix))


def clear_parameters():
    """Forget every parameter: the next call of a parametric function creates new ones."""
    _parameters.clear()


def get_parameter_or_create(name, shape, initializer, like):
    """The parameter ``name`` (under the current scope), created by ``initializer(shape)`` if new.

    ``like`` is the input: a new parameter takes its floating dtype and device.
    """
    full = "/".join(_scope + [name])
    shape = tuple(int(s) for s in shape)
    p = _parameters.get(full)
    if p is not None:
        if p.shape != shape:
            raise ValueError(
                f"parameter {full!r} exists with shape {p.shape}, but this call needs shape {shape}; "
                "use another name, or mg.clear_parameters() to start again"
            )
        return p
    data = data_of(like)
    dtype = data.dtype if getattr(data, "dtype", None) is not None and data.dtype.kind == "f" else np.float64
    xp = get_array_module(data)
    p = Variable(xp.asarray(initializer(shape).astype(dtype)), name=full)
    _parameters[full] = p
    return p


def glorot_uniform(fan_in, fan_out):
    """An initializer drawing uniformly from [-a, a], a = sqrt(6 / (fan_in + fan_out))."""
    a = math.sqrt(6.0 / (fan_in + fan_out))
    return lambda shape: _rng.uniform(-a, a, size=shape)


def zeros(shape):
    return np.zeros(shape)


def affine(x, n_outmaps, base_axis=1, with_bias=True, name="affine"):
    """y = F.affine(x, W, b, base_axis) with parameters ``name/W`` (inputs, *n_outmaps) and ``name/b``."""
    outputs = (n_outmaps,) if isinstance(n_outmaps, int) else tuple(n_outmaps)
    x_shape = tuple(x.shape)
    check_base_axis(x_shape, base_axis, "PF.affine")  # before creating a W of the wrong shape
    features = math.prod(x_shape[base_axis:])
    W = get_parameter_or_create(name + "/W", (features,) + outputs,
                                glorot_uniform(features, math.prod(outputs)), x)
    b = get_parameter_or_create(name + "/b", outputs, zeros, x) if with_bias else None
    return F.affine(x, W, b, base_axis=base_axis)


def convolution(x, outmaps, kernel, pad=None, stride=None, dilation=None, with_bias=True, name="conv"):
    """y = F.convolution(x, W, b, ...) with parameters ``name/W`` (outmaps, C, kh, kw) and ``name/b``.

    ``pad`` defaults to (0, 0), ``stride`` and ``dilation`` to (1, 1).
    """
    if len(tuple(x.shape)) != 4:
        raise ValueError(f"PF.convolution: x of shape {tuple(x.shape)} must be 4-D, (N, C, H, W)")
    kh, kw = pair(kernel, "PF.convolution: kernel")
    inmaps = x.shape[1]
    W = get_parameter_or_create(name + "/W", (outmaps, inmaps, kh, kw),
                                glorot_uniform(inmaps * kh * kw, outmaps * kh * kw), x)
    b = get_parameter_or_create(name + "/b", (outmaps,), zeros, x) if with_bias else None
    return F.convolution(x, W, b, pad=pad or (0, 0), stride=stride or (1, 1), dilation=dilation or (1, 1))
