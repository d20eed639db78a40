"""The arguments of minigrad.func's transforms, checked: every error a caller can make, and how to fix it."""

import inspect
from numbers import Integral

from minigrad.core.variable import Variable
from minigrad.support.numpy_interop import as_float_array


def checked_function(f, where):
    """TypeError unless f can be called."""
    if not callable(f):
        raise TypeError(f"{where}: f must be a function of Variables returning a Variable, got "
                        f"{type(f).__name__}; pass the function itself, e.g. func.{where}(F.sin, ...)")


def called(f, xs, where, kwargs=None, how=None, noun="argument"):
    """f(*xs, **kwargs); a TypeError of the call itself (f takes another number of arguments) names
    ``where`` and says how to pass them (``how``), where one from inside f is raised as it is."""
    try:
        return f(*xs, **(kwargs or {}))
    except TypeError as e:
        try:
            inspect.signature(f).bind(*xs, **(kwargs or {}))
        except TypeError:  # f does not take these arguments: the error is in the call, not inside f
            raise TypeError(f"{where}: f cannot take the {len(xs)} {noun}(s) given ({e}); "
                            f"{how or 'pass one primal per argument of f'}") from e
        except ValueError:  # (no signature to read: a builtin)
            pass
        raise


def _holds_arrays(v):
    """Whether a tuple or list holds arrays or Variables (a nested structure), not numbers (an array-like)."""
    return isinstance(v, (tuple, list)) and any(
        isinstance(e, Variable) or getattr(e, "ndim", 0) > 0 or _holds_arrays(e) for e in v)


def checked_primals(values, where, what, count=None, allow_none=False, reference="primals"):
    """``values`` (a tuple or list, one per argument) as Variables; arrays and numbers become constants
    (None stays None where ``allow_none``). ``count``: how many ``reference`` has, one value each
    ("primals", or "outputs" for cotangents, one per output of f)."""
    owner = reference[:-len("'s outputs")] if reference.endswith("'s outputs") else "f"
    per = f"output of {owner}" if "outputs" in reference else "argument of f"
    if not isinstance(values, (tuple, list)):
        one = "a function of one argument" if per == "argument of f" else "an f of one output"
        raise TypeError(f"{where}: {what} must be a tuple with one entry per {per}, got "
                        f"{type(values).__name__}; pass ({what.split()[0]}_0,) for {one}")
    if count is not None and len(values) != count:
        raise ValueError(f"{where}: {what} has {len(values)} entries but {reference} has {count}; give one per "
                         f"{'primal' if reference == 'primals' else per}")
    for i, v in enumerate(values):
        if _holds_arrays(v):
            raise TypeError(f"{where}: {what}[{i}] is a {type(v).__name__} of arrays or Variables; each entry is "
                            f"one array (or Variable) for one {per}, not a nested {type(v).__name__} (vjp takes "
                            "the primals as arguments, vjp(f, x, y); jvp as tuples, jvp(f, (x, y), (tx, ty))); "
                            "to mean one array made of them, pass np.stack(...)")
    return [v if isinstance(v, Variable) or (allow_none and v is None)
            else Variable(as_float_array(v, where=f"{where}: {what}[{i}]"), requires_grad=False)
            for i, v in enumerate(values)]


def matching(values, references, where, what, reference):
    """values[i] of references[i]'s shape and dtype: ValueError (shape) or TypeError (dtype) naming i.

    A number or a list given as a value takes the reference's dtype.
    """
    result = []
    for i, (v, r) in enumerate(zip(values, references)):
        if v is None:  # (a primal that does not move)
            result.append(v)
            continue
        if v.shape != r.shape:
            raise ValueError(f"{where}: {what}[{i}] has shape {v.shape} but {reference}[{i}] has shape "
                             f"{r.shape}; pass {what} of the same shapes as the {reference}")
        if v.dtype != r.dtype:
            if v.creator is not None or v.requires_grad:
                raise TypeError(f"{where}: {what}[{i}] has dtype {v.dtype} but {reference}[{i}] has dtype "
                                f"{r.dtype}; pass {what} of the same dtypes (cast with F.cast(v, {r.dtype}))")
            v = Variable(v.node.data.astype(r.dtype), requires_grad=False)
        result.append(v)
    return result


def as_outputs(out, where):
    """(f's output as a list of Variables, whether it was a single Variable); TypeError otherwise."""
    if isinstance(out, Variable):
        return [out], True
    if isinstance(out, (tuple, list)) and out and all(isinstance(y, Variable) for y in out):
        return list(out), False
    got = type(out).__name__
    if isinstance(out, (tuple, list)):
        got = f"a {got} of " + ", ".join(type(y).__name__ for y in out) if out else f"an empty {got}"
    raise TypeError(f"{where}: f must return a Variable or a tuple of Variables, got {got}; compute the "
                    "output with minigrad's functions (F.sin, F.matmul, ...), not NumPy's")


def with_aux(out, has_aux, where):
    """(f's output, aux): ``out`` split in two with ``has_aux``, else (out, None)."""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"{where}: with has_aux=True, f must return a pair (output, aux), got "
                        f"{type(out).__name__}{f' of length {len(out)}' if isinstance(out, tuple) else ''}")
    return out


def one_element(out, where):
    """ValueError (TypeError for a non-Variable) unless out is a Variable of one element."""
    if isinstance(out, (tuple, list)):
        raise TypeError(f"{where}: f returned a {type(out).__name__} of {len(out)} outputs; {where} needs one "
                        "Variable of one element: use func.jacrev for several outputs, or has_aux=True when "
                        "the others are extra data")
    as_outputs(out, where)
    if out.size != 1:
        raise ValueError(f"{where}: f returned an output of shape {out.shape} ({out.size} elements); {where} "
                         "differentiates a one-element output (a loss): use func.jacrev for the gradient of "
                         "every element, or func.vjp for a weighted sum of them")


def checked_argnums(argnums, count, where):
    """``argnums`` (an int or a tuple of ints) as a tuple of indices into ``count`` arguments."""
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums or not all(isinstance(a, Integral) and not isinstance(a, bool) for a in nums):
        raise TypeError(f"{where}: argnums must be an int or a non-empty tuple of ints (which arguments of f "
                        f"to differentiate by), got {argnums!r}")
    if count == 0:
        raise ValueError(f"{where}: f was called with no positional arguments; pass the inputs to differentiate")
    for a in nums:
        if not -count <= a < count:
            raise ValueError(f"{where}: argnums={argnums!r} is out of range for f called with {count} positional "
                             f"argument(s); pass 0 to {count - 1} (or a tuple of them)")
    nums = tuple(int(a) % count for a in nums)
    if len(set(nums)) != len(nums):
        raise ValueError(f"{where}: argnums={argnums!r} names an argument twice; name each once")
    return nums
