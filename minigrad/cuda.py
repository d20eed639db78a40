"""The one file that knows about CuPy: array modules, devices, and moving data between them.

Every function asks this module for ``xp``, the array module of its inputs
(NumPy for NumPy arrays, CuPy for CuPy arrays), and then writes
``xp.sin(x)`` instead of ``np.sin(x)``: the same code runs on either device.
CuPy is imported only when it is needed, so NumPy users never pay for it.

A device is named by a string: ``"cpu"`` for NumPy arrays, ``"gpu"`` for CuPy
arrays. ``register_device`` adds another array type (the tests use a stand-in
device to prove that no function calls NumPy on data directly).
"""

import math

import numpy as np

# array type -> (device name, its array module, to_host, from_host); CuPy is added when first met
_devices = {}


def register_device(array_type, name, xp, to_host, from_host):
    """Teach minigrad another array type: its device name, module, and the moves to and from NumPy."""
    _devices[array_type] = (name, xp, to_host, from_host)


def is_cupy_array(a):
    """True for a CuPy ndarray; decided by the type's module, without importing CuPy."""
    return type(a).__module__.startswith("cupy")


def _entry(a):
    """The device entry of an array, or None for a NumPy array (or anything on the host)."""
    t = type(a)
    if t is np.ndarray:
        return None
    entry = _devices.get(t)
    if entry is None and is_cupy_array(a):
        cupy = _import_cupy()
        register_device(t, "gpu", cupy, lambda x: x.get(), cupy.asarray)
        entry = _devices[t]
    return entry


def get_array_module(*arrays):
    """``xp`` for these arrays (or Variables): CuPy if one lives on the GPU, else NumPy."""
    for a in arrays:
        if type(a) is np.ndarray:  # the common case, answered first
            continue
        node = getattr(a, "node", None)  # a Variable: look at its array
        if node is not None:
            a = node.data
            if type(a) is np.ndarray:
                continue
        entry = _entry(a)
        if entry is not None:
            return entry[1]
    return np


def device_of(a):
    """'cpu' for a NumPy array, 'gpu' for a CuPy array."""
    entry = _entry(a)
    return "cpu" if entry is None else entry[0]


def as_numpy(a):
    """The array on the host: a NumPy array whatever device ``a`` lives on."""
    entry = _entry(a)
    if entry is not None:
        return entry[2](a)
    return np.asarray(a)


def to_device(a, device):
    """``a`` moved to ``device`` ('cpu' or 'gpu'); unchanged if it is there already."""
    if device_of(a) == device:
        return a
    host = as_numpy(a)
    if device == "cpu":
        return host
    return _from_host(device)(host)


def _from_host(device):
    if device == "gpu":
        require_gpu()
        return _import_cupy().asarray
    for name, _, _, from_host in _devices.values():
        if name == device:
            return from_host
    raise ValueError(f"unknown device {device!r}: use 'cpu' or 'gpu'")


def check_device(device):
    """Raise unless arrays can be made on ``device`` now."""
    if device == "gpu":
        require_gpu()
    elif device != "cpu" and device not in {name for name, *_ in _devices.values()}:
        raise ValueError(f"unknown device {device!r}: use 'cpu' or 'gpu'")


def scatter_add(a, key, b):
    """a[key] += b in place, adding up where ``key`` picks an element twice."""
    if is_cupy_array(a):
        import cupyx

        cupyx.scatter_add(a, key, b)
    else:
        get_array_module(a).add.at(a, key, b)


def erf(a):
    """The error function of each element of ``a``, on a's device: CuPy's on a GPU; NumPy has none, so
    math.erf element by element elsewhere."""
    if is_cupy_array(a):
        from cupyx.scipy import special

        return special.erf(a)
    return get_array_module(a).asarray(_math_erf(a), dtype=a.dtype)


_math_erf = np.frompyfunc(math.erf, 1, 1)


# ---- is a GPU usable, and if not, why not ----
def _import_cupy():
    import cupy

    return cupy


def why_no_gpu():
    """None when CuPy and a CUDA device are usable, else a sentence that says what is missing."""
    try:
        cupy = _import_cupy()
    except ImportError as e:
        return (
            f"CuPy is not installed ({e}); install it with the extra `gpu`: "
            "pip install 'minigrad-autodiff[gpu]' (that is, pip install cupy-cuda12x)"
        )
    try:
        if cupy.cuda.is_available():
            return None
        cupy.cuda.runtime.getDeviceCount()  # raises with CUDA's own reason
        reason = "CuPy sees no CUDA device"
    except Exception as e:  # CuPy raises its own CUDA error types
        reason = f"{type(e).__name__}: {e}"
    return f"CuPy is installed but no CUDA device or driver is usable ({reason})"


def is_available():
    """True when CuPy is installed and a CUDA device can be used."""
    return why_no_gpu() is None


def require_gpu():
    """Raise RuntimeError, saying why, unless the GPU can be used."""
    reason = why_no_gpu()
    if reason is not None:
        raise RuntimeError(f"minigrad cannot use the GPU: {reason}")


def versions():
    """CuPy's version and the CUDA runtime's and driver's it finds, as text (None: not found)."""
    try:
        cupy = _import_cupy()
    except ImportError:
        return {"CuPy": None, "CUDA runtime": None, "CUDA driver": None}
    found = {"CuPy": cupy.__version__}
    runtime = cupy.cuda.runtime
    for name, read in (("CUDA runtime", runtime.runtimeGetVersion), ("CUDA driver", runtime.driverGetVersion)):
        try:
            number = read()  # 12040 is 12.4; a driver of 0 is no driver
        except Exception:  # CuPy raises its own CUDA error types
            number = 0
        found[name] = f"{number // 1000}.{number % 1000 // 10}" if number else None
    return found
