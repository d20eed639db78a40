"""The one file that knows about CuPy.

Every function asks this module for ``xp``, the array module of its inputs
(NumPy for NumPy arrays, CuPy for CuPy arrays), and then writes
``xp.sin(x)`` instead of ``np.sin(x)``: the same code runs on either device.
CuPy is imported only when a CuPy array is met, so NumPy users never pay for it.
"""

import numpy as np


def _cupy():
    """The cupy module, or None when it is not installed."""
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def is_cupy_array(a):
    """True for a CuPy ndarray; decided by the type's module, without importing CuPy."""
    return type(a).__module__.startswith("cupy")


def get_array_module(*arrays):
    """``xp`` for these arrays (or Variables): ``cupy`` if any lives on a GPU, else ``numpy``."""
    for a in arrays:
        a = getattr(a, "data", a) if not isinstance(a, np.ndarray) else a
        if is_cupy_array(a):
            return _cupy()
    return np


def is_available():
    """True when CuPy is installed and a CUDA device can be used."""
    cupy = _cupy()
    if cupy is None:
        return False
    try:
        return bool(cupy.cuda.is_available())
    except Exception:
        return False


def as_numpy(a):
    """The array on the host: a NumPy array whatever device ``a`` lives on."""
    if is_cupy_array(a):
        return a.get()
    return np.asarray(a)


def scatter_add(a, key, b):
    """a[key] += b in place, adding up where ``key`` picks an element twice."""
    if is_cupy_array(a):
        import cupyx

        cupyx.scatter_add(a, key, b)
    else:
        np.add.at(a, key, b)
