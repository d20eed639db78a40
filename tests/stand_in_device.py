"""A stand-in device for CI, which has no GPU: arrays that refuse to mix with NumPy arrays.

``DeviceArray`` behaves like a NumPy array of another device, as a CuPy array
does: any operation that mixes it with a plain NumPy array raises
TypeError, and its array module, ``xp``, makes new arrays on the device.
Running the engine on it proves that no function makes an array with NumPy
where it should ask its inputs for ``xp`` (the mistake that breaks CuPy).
"""

import types

import numpy as np

from minigrad.cuda import register_device


class DeviceArray(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(_answers_for_itself(x) for x in inputs):
            return NotImplemented  # as CuPy's does for a type it does not know (a Variable)
        _refuse_host_arrays(inputs + tuple(kwargs.get("out", ())), ufunc.__name__)
        inputs = tuple(_host(x) for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(_host(x) for x in kwargs["out"])
        return _wrap(getattr(ufunc, method)(*inputs, **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        flat = list(args) + list(kwargs.values())
        flat += [y for x in flat if isinstance(x, (list, tuple)) for y in x]
        _refuse_host_arrays(flat, func.__name__)
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))


def _answers_for_itself(x):
    """A type with its own ``__array_ufunc__`` that is not NumPy's: NumPy asks it next."""
    return not isinstance(x, (np.ndarray, np.generic)) and getattr(type(x), "__array_ufunc__", None) is not None


def _refuse_host_arrays(values, name):
    for x in values:
        if isinstance(x, np.ndarray) and not isinstance(x, DeviceArray) and x.ndim > 0:
            raise TypeError(f"stand-in device: {name} mixes a device array with a NumPy array of shape {x.shape}")


def _host(x):
    return x.view(np.ndarray) if isinstance(x, DeviceArray) else x


def _unwrap(x):
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(y) for y in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return _host(x)


def _wrap(x):
    if isinstance(x, np.ndarray) and not isinstance(x, DeviceArray):
        return x.view(DeviceArray)
    if isinstance(x, tuple):
        return tuple(_wrap(y) for y in x)
    if isinstance(x, np.generic):  # reductions give scalars: keep them on the device
        return np.asarray(x).view(DeviceArray)
    return x


def _device_function(fn):
    def wrapper(*args, **kwargs):
        return _wrap(fn(*_unwrap(args), **_unwrap(kwargs)))

    return wrapper


class _ArrayModule(types.ModuleType):
    """``xp`` of the stand-in device: NumPy's functions, returning device arrays."""

    def __getattr__(self, name):
        value = getattr(np, name)
        if isinstance(value, np.ufunc) or not callable(value) or isinstance(value, type):
            return value
        return _device_function(value)


xp = _ArrayModule("stand_in_xp")


def to_device(a):
    return np.array(a).view(DeviceArray)


def to_host(a):
    return np.array(a.view(np.ndarray))


register_device(DeviceArray, "stand-in", xp, to_host, to_device)
