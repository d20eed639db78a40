"""Random programs against PyTorch: values, derivatives of every mode and order, and dtypes.

Each seed draws a small program, a few steps of minigrad.functions applied to random inputs and to
each other's results (elementwise functions, operators with Python and NumPy numbers on either side
and with constant arrays, broadcasting, 0-d and empty arrays, reductions over every kind of axis,
shapes, indexing, matmul, affine, convolution, pooling, ...), in float64, float32 or both, on inputs
given as they come (integers, views that are not contiguous or not writeable, constants that require
no gradient). The same program runs three times:

- in minigrad, on the inputs as they are;
- in PyTorch, in the same dtypes (the oracle);
- in PyTorch in float64 throughout: how far the second run is from it says how much rounding the
  program's dtypes allow, so that float32 is held to what float32 can do, and not to a fixed guess.

and the test compares the values and dtypes of: the gradients (``mg.grad`` vs ``torch.autograd.grad``,
random ``grad_outputs``), of intermediate values too; the second derivatives (``create_graph=True``,
then a gradient of the gradients along random directions), J v as the gradient of the gradients with
respect to ``grad_outputs``; forward mode (``func.jvp`` vs ``torch.func.jvp``), reverse over forward,
forward over reverse, ``func.linearize`` and ``vjp(method="transpose")``; for small programs the
Jacobians and Hessians (``jacfwd``, ``jacrev``, ``hessian``), third derivatives and ``.grad`` after
``backward()`` twice; and ``grad``'s ``no_grad_vars``, ``grad_inputs``, ``loss_scale``, ``retain_grad``.

The generator sees the values as it builds the program and keeps each input away from the points
where a function has no derivative (the kinks of abs, relu, floor and clip, ties of max and maximum,
sqrt and log at 0), and keeps the values finite and moderate. Some programs are exact (small halves,
and steps that round nothing): there a value may sit exactly on a kink, to test minigrad's documented
conventions, which are torch's (relu'(0) = abs'(0) = 0, clip passes its bounds, ties share evenly).

Dtypes follow minigrad's rule (README): a Python or NumPy number is weak and takes its partner's
dtype; arrays (0-d ones too) are strong, as in NumPy. PyTorch treats a 0-d tensor as weak
(float32 (3,) times a float64 0-d tensor is float32 there, float64 here), so the PyTorch program casts
each operation's inputs to the dtype of minigrad's rule first: both sides then compute in the same
dtypes, and every dtype is compared.

``python tests/test_fuzz_torch.py 0 5000`` runs seeds 0 to 4999 and prints each failing program.
"""

import math
import operator
import sys
import time
import traceback
from functools import partial

import numpy as np
import pytest

import minigrad as mg
import minigrad.functions as F
from minigrad import func

torch = pytest.importorskip("torch", reason="PyTorch is the oracle framework (pip install .[oracle])")

F64, F32 = np.dtype(np.float64), np.dtype(np.float32)
MARGIN = 0.02  # how far (plus 1e-4 of the value) an input stays from a kink, a tie or a pole
LARGEST = 1e4  # a step whose values exceed this (or are not finite) is drawn again


# ---------------------------------------------------------------- the program
class Program:
    """Inputs (``leaves``: value index -> array) and steps (output index, op, value indices, params).

    While it is drawn, ``refs[i]`` holds value i computed by PyTorch twice, (in the program's dtypes,
    in float64), as NumPy arrays: what the generator looks at to keep away from kinks.
    """

    def __init__(self, dtype, exact):
        self.dtype = dtype  # of new inputs
        self.exact = exact  # inputs of small whole numbers: kinks and ties are met exactly, or kept away from
        self.leaves = {}
        self.given = {}  # value index -> the array minigrad is given (integers, a non-contiguous view, ...)
        self.mids = []  # intermediate values whose gradients are asked for too
        self.consts = set()  # inputs that are constants: Variables with requires_grad=False, never differentiated
        self.moving = set()  # the values that depend on an input that is not a constant
        self.exact_ids = set()  # the values computed without rounding (see exactly())
        self.steps = []
        self.dtypes = []
        self.refs = []
        self.outputs = []

    def shape(self, i):
        return self.refs[i][0].shape

    def size(self, i):
        return self.refs[i][0].size

    @property
    def inputs(self):
        """The inputs that are differentiated: every one but the constants."""
        return [i for i in self.leaves if i not in self.consts]

    def upstream(self, values):
        """Every value that ``values`` are computed from, themselves included."""
        found = set(values)
        for out, _, args, _ in reversed(self.steps):
            if out in found:
                found.update(args)
        return found

    def add_leaf(self, array, given, const=False):
        self.leaves[len(self.dtypes)] = array
        self.given[len(self.dtypes)] = given
        (self.consts if const else self.moving).add(len(self.dtypes))
        if self.exact:
            self.exact_ids.add(len(self.dtypes))
        self.dtypes.append(array.dtype)
        self.refs.append((array, array.astype(np.float64)))
        return len(self.dtypes) - 1

    def __repr__(self):
        lines = [f"  x{i} = {a.dtype} {a.shape}" + describe(self.given[i]) + (", a constant" * (i in self.consts))
                 for i, a in self.leaves.items()]
        for out, op, args, params in self.steps:
            shown = {k: v for k, v in params.items()}
            lines.append(f"  x{out} = {op}({', '.join(f'x{a}' for a in args)}; {shown})  # {self.dtypes[out]}"
                         f" {self.shape(out)}")
        lines.append(f"  outputs: {self.outputs}, gradients of intermediates: {self.mids}")
        return "\n".join(lines)


def both(prog, i):
    """Value i as computed in the program's dtypes and in float64."""
    return prog.refs[i]


def away(values, points, margin=MARGIN):
    """True when every value is at least margin (plus 1e-4 of its size) from every point."""
    for v in values:
        for p in points:
            if v.size and not (np.abs(v - p) > margin + 1e-4 * np.abs(v)).all():
                return False
    return True


def clear(prog, values, points, ids):
    """Like away(), for a kink whose convention minigrad documents (relu'(0) = abs'(0) = 0, clip passes
    its bounds, ties share evenly): where the values (of the values ``ids``) are exact, computed without
    rounding by any library, one exactly on the point, in both of its computations, passes too."""
    if not prog.exact_ids.issuperset(ids):
        return away(values, points)
    v0, v1 = (np.asarray(v) for v in values)
    for p in points:
        far = (np.abs(v0 - p) > MARGIN + 1e-4 * np.abs(v0)) & (np.abs(v1 - p) > MARGIN + 1e-4 * np.abs(v1))
        if not (far | (v0 == p) & (v1 == p)).all():
            return False
    return True


def broadcast_partner(rng, shape):
    """A shape that broadcasts with ``shape``: the same, a suffix with some axes 1, 0-d, or a larger one."""
    kind = rng.integers(5)
    if kind == 0:
        return shape
    if kind == 1:
        return ()
    if kind == 2:  # a suffix, some of its axes 1
        tail = list(shape[rng.integers(len(shape) + 1):])
        return tuple(1 if rng.random() < 0.4 else s for s in tail)
    if kind == 3:  # one more leading axis, and axes of length 1 where shape has them... or more
        return (int(rng.integers(1, 4)),) + tuple(int(rng.integers(1, 4)) if s == 1 else s for s in shape)
    return tuple(1 if rng.random() < 0.5 else s for s in shape)


def describe(given):
    """How an input is given to minigrad, when not as a contiguous floating array."""
    if given.dtype.kind != "f":
        return f", given as {given.dtype}"
    if not given.flags.writeable:
        return ", given read-only"
    if not given.flags.c_contiguous:
        return f", given with strides {given.strides}"
    return ""


def random_shape(rng, empty=False, big=False):
    if big:  # 64 KiB or more: large enough for a graph to free what no rule reads
        return [(64, 130), (4, 32, 130), (8300,)][rng.integers(3)]
    ndim = int(rng.choice([0, 1, 1, 2, 2, 3]))
    shape = [int(rng.choice([1, 2, 3, 4])) for _ in range(ndim)]
    if empty and ndim:
        shape[rng.integers(ndim)] = 0
    return tuple(shape)


def new_leaf(prog, rng, shape, dtype=None):
    """A new input of ``shape``: normal numbers, or small whole ones (halves too) in an exact program.

    minigrad is sometimes given it as integers (they become float64), or as a view that is not
    contiguous (negative strides, Fortran order, every other element) or not writeable.
    """
    dtype = dtype or prog.dtype
    if prog.exact:
        a = rng.integers(-3, 4, size=shape) * (0.5 if rng.random() < 0.3 else 1.0)
    else:
        a = rng.standard_normal(shape)
    a = np.asarray(a, dtype=dtype)
    given, kind = a, rng.integers(12)
    if kind == 0 and a.ndim:
        given = np.flip(np.flip(a, -1).copy(), -1)
    elif kind == 1 and a.ndim >= 2:
        given = np.asfortranarray(a)
    elif kind == 2 and a.ndim:
        given = np.repeat(a, 2, axis=-1)[..., ::2]
    elif kind == 3:
        given = np.broadcast_to(a, a.shape)  # read-only
    elif kind in (4, 5) and prog.exact and dtype == F64 and (a == np.round(a)).all():
        given = a.astype([np.int64, np.int32][kind - 4])
    return prog.add_leaf(a, given, const=bool(prog.leaves) and rng.random() < 0.15)


def pick(prog, rng, ok=lambda shape: True):
    """An existing value whose shape passes ``ok`` (recent ones more often), or None."""
    ids = [i for i in range(len(prog.dtypes)) if ok(prog.shape(i))]
    if not ids:
        return None
    weights = np.arange(1, len(ids) + 1, dtype=float)
    return int(rng.choice(ids, p=weights / weights.sum()))


def partner(prog, rng, shape, fits):
    """A value to combine with one of ``shape``: an existing one that ``fits``, or a new input."""
    if rng.random() < 0.5:
        j = pick(prog, rng, fits)
        if j is not None:
            return j
    return new_leaf(prog, rng, broadcast_partner(rng, shape), prog.other_dtype(rng))


def broadcastable(shape):
    def fits(other):
        try:
            np.broadcast_shapes(shape, other)
            return True
        except ValueError:
            return False
    return fits


# Each generator returns (op, value indices, params) for a step on value i, or None when it does not apply.
# It may add steps first (to make a value positive) and new inputs.

UNARY_ANYWHERE = ["exp", "sin", "cos", "tanh", "sigmoid", "square", "erf", "expm1", "neg", "identity"]
UNARY_KINKED = ["abs", "relu", "sign"]  # kinked (or jumping) at 0
UNARY_STEPS = ["floor", "ceil"]  # jumping at the integers


def positive(prog, rng, i, low=MARGIN * 5):
    """A value, > low everywhere, made from value i by a step or two (exp, sigmoid, x*x + c, ...)."""
    for v in both(prog, i):
        if v.size and not (v > low + 1e-4 * np.abs(v)).all():
            break
    else:
        return i
    kind = rng.integers(3)
    if kind == 0 and all((v < 8).all() for v in both(prog, i)):
        return add_step(prog, "unary", [i], {"name": "exp"}) or positive_square(prog, rng, i)
    if kind == 1:
        j = add_step(prog, "unary", [i], {"name": "sigmoid"})
        return add_step(prog, "scalar", [j], scalar_params(rng, "+", 0.5)) if j is not None else None
    return positive_square(prog, rng, i)


def positive_square(prog, rng, i):
    j = add_step(prog, "unary", [i], {"name": "square"})
    return None if j is None else add_step(prog, "scalar", [j], scalar_params(rng, "+", 0.25))


def nonzero(prog, rng, i):
    """Value i if it is away from 0 everywhere, else a positive value made from it."""
    return i if away(both(prog, i), [0.0]) else positive(prog, rng, i)


def scalar_params(rng, op, c, side=None):
    """A scalar operand c as a Python float or int, or a NumPy scalar, on the right or the left."""
    kinds = [float, np.float64, np.float32]
    if float(c).is_integer():
        kinds += [int, np.int64]
    kind = kinds[rng.integers(len(kinds))]
    side = side or ("right" if rng.random() < 0.6 else "left")
    return {"op": op, "c": kind(c), "side": side, "form": "operator" if rng.random() < 0.7 else "F"}


def gen_unary(prog, rng, i):
    name = rng.choice(UNARY_ANYWHERE + UNARY_KINKED + UNARY_STEPS + ["log", "sqrt", "log1p"])
    if name in UNARY_KINKED and not clear(prog, both(prog, i), [0.0], [i]):
        return None
    if name in UNARY_STEPS:
        v = both(prog, i)
        if not clear(prog, [x - np.round(x) for x in v], [0.0], [i]):
            return None
    if name in ("log", "sqrt"):
        i = positive(prog, rng, i)
    if name == "log1p":
        i = positive(prog, rng, i) if not all((v > -0.8).all() for v in both(prog, i)) else i
    if i is None:
        return None
    return "unary", [i], {"name": str(name)}


def gen_binary(prog, rng, i):
    name = str(rng.choice(["add", "sub", "mul", "div", "pow", "maximum", "minimum"]))
    j = partner(prog, rng, prog.shape(i), broadcastable(prog.shape(i)))
    if rng.random() < 0.5:
        i, j = j, i
    if name == "div":
        j = nonzero(prog, rng, j)
        if i == j:  # x / x = 1: its derivatives cancel, to the rounding of terms in 1/x^2, 1/x^3, ...
            return None
    if name == "pow":
        i = positive(prog, rng, i)
        if j is not None and not all((np.abs(v) < 3).all() for v in both(prog, j)):
            j = add_step(prog, "unary", [j], {"name": "tanh"})
        if j is not None and not away(both(prog, j), [0.0, 1.0]):
            # an exponent of exactly 0: torch masks d/dx0 x0^x1 to 0 there, and so its derivative in x1,
            # which is 1/x0 (minigrad's, see arithmetic._slope); at 1, the first derivative's x0^(x1 - 1)
            # meets the same mask at the third; kept away from, as a kink would be
            return None
    if i is None or j is None:
        return None
    if name in ("maximum", "minimum"):
        if not clear(prog, [a - b for a, b in zip(both(prog, i), both(prog, j))], [0.0], [i, j]):
            return None
    form = "operator" if name in ("add", "sub", "mul", "div", "pow") and rng.random() < 0.5 else "F"
    return "binary", [i, j], {"name": name, "form": form}


SCALARS = [2.0, 0.5, -1.5, 3.0, 1.0, -2.0, 0.1, 4.0]


def gen_scalar(prog, rng, i):
    op = str(rng.choice(["+", "-", "*", "/", "**", "**"]))
    c = float(rng.choice(SCALARS))
    params = scalar_params(rng, op, c)
    left = params["side"] == "left"
    if op == "/" and left:
        i = nonzero(prog, rng, i)
    if op == "**" and left:  # c ** x: a positive base
        params = scalar_params(rng, op, abs(c) if abs(c) != 1 else 2.0, "left")
    elif op == "**":
        c = float(rng.choice([2.0, 3.0, -1.0, 0.5, -0.5, 1.5, 0.0, 1.0, -2.0]))
        params = scalar_params(rng, op, c, "right")
        if c < 0 and c.is_integer():
            i = nonzero(prog, rng, i)
        elif not c.is_integer():
            i = positive(prog, rng, i)
    if i is None:
        return None
    return "scalar", [i], params


def gen_scalar_function(prog, rng, i):
    """maximum, minimum, pow or where with a number as one operand."""
    name = str(rng.choice(["maximum", "minimum", "pow", "where"]))
    c = float(rng.choice(SCALARS))
    if name in ("maximum", "minimum"):
        c = float(np.round(rng.standard_normal(), 2))
        if prog.exact and rng.random() < 0.5 and exact_values(prog, i).size:
            c = float(rng.choice(exact_values(prog, i)))
        if not clear(prog, both(prog, i), [c], [i]):
            return None
    if name == "pow":
        c = float(rng.choice([2.0, 3.0, 0.5, -1.0]))
        i = positive(prog, rng, i) if c < 1 else i
    if i is None:
        return None
    kind = [float, np.float64, np.float32][rng.integers(3)]
    params = {"name": name, "c": kind(c), "side": "right" if rng.random() < 0.6 or name == "pow" else "left"}
    if name == "where":
        params["cond"] = rng.random(broadcast_partner(rng, prog.shape(i))) < 0.5
        if np.broadcast_shapes(params["cond"].shape, prog.shape(i)) != prog.shape(i):
            params["cond"] = rng.random(prog.shape(i)) < 0.5
    return "scalar_function", [i], params


def gen_constant(prog, rng, i):
    """x op a or a op x with a constant NumPy array a: float64, float32, int64, bool, 0-d too."""
    op = str(rng.choice(["+", "-", "*", "/"]))
    shape = broadcast_partner(rng, prog.shape(i))
    kind = int(rng.integers(5))
    if kind == 0:
        a = rng.integers(-3, 4, size=shape)
    elif kind == 1:
        a = rng.random(shape) < 0.5
    else:
        a = rng.standard_normal(shape).astype([np.float64, np.float32, np.float32][kind - 2])
    side = "right" if rng.random() < 0.5 else "left"
    if op == "/" and side == "right":
        if a.dtype == bool:
            a = ~np.zeros(shape, dtype=bool)
        a = np.where(np.abs(a) < 0.2, 1, a).astype(a.dtype)
    if op == "/" and side == "left":
        i = nonzero(prog, rng, i)
    if i is None:
        return None
    return "constant", [i], {"op": op, "a": a, "side": side}


def gen_where(prog, rng, i):
    j = partner(prog, rng, prog.shape(i), broadcastable(prog.shape(i)))
    shape = np.broadcast_shapes(prog.shape(i), prog.shape(j))
    cond = rng.random(broadcast_partner(rng, shape)) < 0.5
    if np.broadcast_shapes(cond.shape, shape) != shape:
        cond = rng.random(shape) < 0.5
    return "where", [i, j], {"cond": cond}


def gen_clip(prog, rng, i):
    for _ in range(5):
        lo, hi = np.sort(np.round(rng.standard_normal(2) * 1.5, 2))
        if prog.exact and exact_values(prog, i).size:  # bounds on some of the values
            lo, hi = np.sort(rng.choice(exact_values(prog, i), 2))
        if hi - lo > 0.1 and clear(prog, both(prog, i), [lo, hi], [i]):
            kind = [float, int][rng.integers(2)] if float(lo).is_integer() and float(hi).is_integer() else float
            return "clip", [i], {"lo": kind(lo), "hi": kind(hi)}
    return None


def exact_values(prog, i):
    """The values of value i that are halves: computed exactly by any library (so a bound put on one of
    them is met exactly by minigrad too, not one rounding off)."""
    v0, v1 = both(prog, i)
    return v1[(v0 == v1) & (v1 * 2 == np.round(v1 * 2))] if i in prog.exact_ids else np.zeros(0)


def gen_cast(prog, rng, i):
    return "cast", [i], {"dtype": F32 if prog.dtypes[i] == F64 else F64}


def random_axis(rng, ndim, tuples=True, allow_none=True):
    """None, an int (maybe negative), or a tuple of distinct axes (maybe negative, maybe empty)."""
    choices = (["none"] if allow_none else []) + (["int"] if ndim else []) + (["tuple"] if tuples else [])
    kind = rng.choice(choices) if choices else "none"
    if kind == "none":
        return None
    if kind == "int":
        a = int(rng.integers(ndim))
        return a - ndim if rng.random() < 0.3 else a
    k = int(rng.integers(0, ndim + 1)) if ndim else 0
    axes = [int(a) for a in rng.permutation(ndim)[:k]]
    axes = [a - ndim if rng.random() < 0.3 else a for a in axes]
    return tuple(axes) if rng.random() < 0.8 else list(axes)


def reduced_shape(shape, dims, keepdims):
    return tuple(1 if k in dims else s for k, s in enumerate(shape) if keepdims or k not in dims)


def reduced_axes(ndim, axis):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(a % ndim for a in axes))


def gen_reduce(prog, rng, i):
    name = str(rng.choice(["sum", "mean", "max", "min", "prod", "logsumexp"]))
    shape = prog.shape(i)
    axis = random_axis(rng, len(shape))
    axes = reduced_axes(len(shape), axis)
    n = math.prod(shape[a] for a in axes)
    if name in ("max", "min"):
        if n == 0:
            return None
        ties = []
        for v in both(prog, i):
            rest = [a for a in range(v.ndim) if a not in axes]
            w = np.sort(np.transpose(v, rest + list(axes)).reshape([v.shape[a] for a in rest] + [n]), axis=-1)
            gaps = np.diff(w, axis=-1)
            ties.append((gaps == 0).sum())
            if not ((gaps > MARGIN) | (gaps == 0) & (i in prog.exact_ids)).all():
                return None
        if ties[0] != ties[1]:
            return None
    if name == "prod" and n > 12:
        return None
    return "reduce", [i], {"name": name, "axis": axis, "keepdims": bool(rng.random() < 0.4),
                           "method": name == "sum" and rng.random() < 0.3}  # x.sum(...)


def gen_softmax(prog, rng, i):
    shape = prog.shape(i)
    if not shape:
        return None
    name = str(rng.choice(["softmax", "log_softmax"]))
    if len(shape) >= 2 and rng.random() < 0.2:
        return "softmax", [i], {"name": name}  # the default axis, 1
    axis = random_axis(rng, len(shape), allow_none=False)
    if not isinstance(axis, int) and not axis:
        axis = -1
    return "softmax", [i], {"name": name, "axis": axis}


def gen_cumsum(prog, rng, i):
    return "cumsum", [i], {"axis": random_axis(rng, len(prog.shape(i)), tuples=False)}


def factorizations(n, parts):
    """A random shape of ``parts`` axes with n elements."""
    if parts == 0:
        return [()] if n == 1 else []
    out = []
    for d in range(1, n + 1):
        if n % d == 0:
            out += [(d,) + rest for rest in factorizations(n // d, parts - 1)]
    return out


def gen_reshape(prog, rng, i):
    shape = prog.shape(i)
    n = math.prod(shape)
    if shape and rng.random() < 0.15:  # F.flatten: (N, everything else)
        return "reshape", [i], {"shape": (shape[0], math.prod(shape[1:])), "flatten": True}
    if n == 0:
        return "reshape", [i], {"shape": tuple(reversed(shape)) + (1,)}
    options = [s for p in range(4) for s in factorizations(n, p)]
    new = list(options[rng.integers(len(options))])
    if new and rng.random() < 0.3:
        new[rng.integers(len(new))] = -1
    return "reshape", [i], {"shape": tuple(new), "splat": bool(rng.random() < 0.3), "method": rng.random() < 0.3}


def gen_transpose(prog, rng, i):
    ndim = len(prog.shape(i))
    if rng.random() < 0.3:
        return "transpose", [i], {"axes": None, "method": ["F", "transpose", "T"][rng.integers(3)]}
    axes = [int(a) for a in rng.permutation(ndim)]
    return "transpose", [i], {"axes": tuple(a - ndim if rng.random() < 0.3 else a for a in axes),
                              "method": ["F", "transpose"][rng.integers(2)], "splat": rng.random() < 0.5}


def gen_broadcast_to(prog, rng, i):
    shape = prog.shape(i)
    lead = tuple(int(rng.integers(1, 4)) for _ in range(rng.integers(0, 2)))
    return "broadcast_to", [i], {"shape": lead + tuple(int(rng.integers(1, 4)) if s == 1 else s for s in shape)}


def gen_sum_to(prog, rng, i):
    shape = prog.shape(i)
    tail = shape[rng.integers(len(shape) + 1):]
    return "sum_to", [i], {"shape": tuple(1 if rng.random() < 0.4 else s for s in tail)}


def index_array(rng, n, size):
    """Indices into an axis of length n, with repeats and negative ones."""
    idx = rng.integers(-n, n, size=size)
    return idx.tolist() if rng.random() < 0.2 and np.ndim(idx) == 1 else idx


def basic_part(rng, n):
    kind = rng.integers(4)
    if kind == 0 and n:
        return int(rng.integers(-n, n))
    if kind == 1:
        step = int(rng.choice([1, 1, 2, -1, -2]))
        start = int(rng.integers(-n - 1, n + 2)) if rng.random() < 0.5 else None
        stop = int(rng.integers(-n - 1, n + 2)) if rng.random() < 0.5 else None
        return slice(start, stop, step)
    return slice(None)


def gen_getitem(prog, rng, i):
    shape = prog.shape(i)
    if not shape:
        return "getitem", [i], {"key": () if rng.random() < 0.5 else None}
    kind = rng.integers(5)
    key = [basic_part(rng, n) for n in shape[:rng.integers(1, len(shape) + 1)]]
    if kind == 1 and shape[0]:  # an integer array, repeats and negatives, on one axis
        a = int(rng.integers(len(key)))
        if shape[a]:
            key[a] = index_array(rng, shape[a], tuple(rng.integers(1, 4, size=rng.integers(1, 3))))
    elif kind == 2 and len(shape) >= 2 and shape[0] and shape[1]:  # two arrays that broadcast together
        key = [index_array(rng, shape[0], (3,)), index_array(rng, shape[1], (2, 1) if rng.random() < 0.5 else (3,))]
        if rng.random() < 0.5:
            key = [key[0], slice(None), key[1]] if len(shape) >= 3 and shape[2] else key
            if len(key) == 3:
                key[2] = index_array(rng, shape[2], (3,))
    elif kind == 3:  # a boolean mask over the first axes
        k = int(rng.integers(1, len(shape) + 1))
        key = [rng.random(shape[:k]) < 0.6]
    if rng.random() < 0.2:
        key.insert(int(rng.integers(len(key) + 1)), None)
    if rng.random() < 0.2 and not any(isinstance(k, np.ndarray) and k.dtype == bool for k in key):
        key.insert(int(rng.integers(len(key) + 1)), Ellipsis)
    key = tuple(key) if len(key) != 1 or rng.random() < 0.3 else key[0]
    try:
        np.empty(shape)[key]
    except IndexError:
        return None
    return "getitem", [i], {"key": key, "form": "operator" if rng.random() < 0.6 else "F",
                            "variable_index": rng.random() < 0.2}  # integer arrays given as Variables


def gen_concatenate(prog, rng, i):
    shape = prog.shape(i)
    if not shape:
        return None
    axis = int(rng.integers(len(shape)))
    others = []
    for _ in range(rng.integers(1, 3)):
        other = list(shape)
        other[axis] = int(rng.integers(0, 3))
        j = pick(prog, rng, lambda s: len(s) == len(shape) and all(
            a == b for k, (a, b) in enumerate(zip(s, shape)) if k != axis)) if rng.random() < 0.4 else None
        others.append(j if j is not None else new_leaf(prog, rng, tuple(other), prog.other_dtype(rng)))
    ids = [i] + others
    rng.shuffle(ids)
    axis = axis - len(shape) if rng.random() < 0.4 else axis
    return "concatenate", [int(j) for j in ids], {"axis": axis, "as_list": bool(rng.random() < 0.5)}


def swapped(shape):
    return shape[:-2] + (shape[-1], shape[-2])


def gen_matmul(prog, rng, i):
    """op(a) @ op(b) with value i as a or as b, op a transpose where a flag asks (2-D and more only)."""
    shape = prog.shape(i)
    if not shape:
        return None
    m = int(rng.integers(1, 4))
    flag_i = len(shape) >= 2 and rng.random() < 0.3
    seen = swapped(shape) if flag_i else shape  # value i as the product sees it
    i_is_a = rng.random() < 0.5
    if i_is_a:  # the other's first (or second-to-last) axis is a's last
        k = seen[-1]
        other = [(k,), (k, m), (int(rng.integers(1, 3)), k, m)][rng.integers(3)]
    else:  # value i is b: the other's last axis is b's first (or second-to-last)
        k = seen[-2] if len(seen) >= 2 else seen[0]
        other = [(k,), (m, k), (2, m, k)][rng.integers(3)]
    flag_j = len(other) >= 2 and rng.random() < 0.3
    j = new_leaf(prog, rng, swapped(other) if flag_j else other, prog.other_dtype(rng))
    ids, flags = ([i, j], (flag_i, flag_j)) if i_is_a else ([j, i], (flag_j, flag_i))
    shapes = [np.zeros(prog.shape(ids[0])), np.zeros(prog.shape(ids[1]))]
    try:
        np.matmul(*[s.swapaxes(-1, -2) if f else s for s, f in zip(shapes, flags)])
    except ValueError:
        return None
    ta, tb = (bool(f) for f in flags)
    return "matmul", ids, {"ta": ta, "tb": tb, "form": "operator" if not (ta or tb) and rng.random() < 0.5 else "F"}


def gen_affine(prog, rng, i):
    shape = prog.shape(i)
    if not shape:
        return None
    base = int(rng.integers(len(shape))) if rng.random() < 0.5 else min(1, len(shape) - 1)
    features = math.prod(shape[base:])
    outputs = [(int(rng.integers(1, 4)),), (2, 2)][int(rng.random() < 0.2)]
    W = new_leaf(prog, rng, (features,) + outputs, prog.other_dtype(rng))
    ids = [i, W]
    if rng.random() < 0.7:
        ids.append(new_leaf(prog, rng, outputs, prog.other_dtype(rng)))
    return "affine", ids, {"base_axis": base}


def gen_diagonal(prog, rng, i):
    shape = prog.shape(i)
    if len(shape) < 2:
        return None
    a1, a2 = (int(a) for a in rng.permutation(len(shape))[:2])
    offset = int(rng.integers(-2, 3))
    return "diagonal", [i], {"name": str(rng.choice(["diagonal", "trace"])), "offset": offset,
                             "axis1": a1, "axis2": a2 - len(shape) if rng.random() < 0.3 else a2}


def gen_cross_entropy(prog, rng, i):
    shape = prog.shape(i)
    if len(shape) < 1 or 0 in shape:
        return None
    axis = int(rng.integers(len(shape))) if len(shape) > 1 else 0
    keep = shape[:axis] + (1,) + shape[axis + 1:]
    t = rng.integers(0, shape[axis], size=keep if rng.random() < 0.5 else shape[:axis] + shape[axis + 1:])
    return "cross_entropy", [i], {"t": t, "axis": axis}


def image(prog, rng, i):
    """A 4-D value (N, C, H, W) made from value i: itself, reshaped, or a new input."""
    shape = prog.shape(i)
    if len(shape) == 4 and min(shape[2:]) >= 2:
        return i
    if len(shape) == 2 and min(shape) >= 2:
        return add_step(prog, "reshape", [i], {"shape": (1, 1) + shape})
    n, c, h, w = (int(a) for a in rng.integers([1, 1, 2, 2], [3, 4, 6, 6]))
    return new_leaf(prog, rng, (n, c, h, w))


def gen_convolution(prog, rng, i):
    i = image(prog, rng, i)
    if i is None or 0 in prog.shape(i):  # (torch's conv2d of no channels gives no output channels, not zeros)
        return None
    n, c, h, w = prog.shape(i)
    k = (int(rng.integers(1, min(h, 3) + 1)), int(rng.integers(1, min(w, 3) + 1)))
    params = {"pad": (int(rng.integers(0, 2)), int(rng.integers(0, 2))), "stride": (int(rng.integers(1, 3)),) * 2,
              "dilation": (1, int(rng.integers(1, 3))) if k[1] == 1 or w >= 2 * k[1] else (1, 1)}
    ids = [i, new_leaf(prog, rng, (int(rng.integers(1, 4)), c) + k, prog.other_dtype(rng))]
    if rng.random() < 0.6:
        ids.append(new_leaf(prog, rng, (prog.shape(ids[1])[0],), prog.other_dtype(rng)))
    try:
        F.convolution(*(mg.Variable(np.zeros(prog.shape(j))) for j in ids), **params)
    except ValueError:
        return None
    return "convolution", ids, params


def gen_pooling(prog, rng, i):
    i = image(prog, rng, i)
    if i is None or 0 in prog.shape(i):  # (torch's pooling refuses an empty image)
        return None
    h, w = prog.shape(i)[2:]
    name = str(rng.choice(["max_pooling", "average_pooling"]))
    k = (int(rng.integers(1, min(h, 3) + 1)), int(rng.integers(1, min(w, 3) + 1)))
    params = {"name": name, "kernel": k, "stride": None if rng.random() < 0.4 else (int(rng.integers(1, 3)),) * 2,
              "pad": (int(rng.integers(0, k[0] // 2 + 1)), int(rng.integers(0, k[1] // 2 + 1)))}
    if name == "max_pooling":  # no ties in a window (the padding, -inf, never wins)
        for v in both(prog, i):
            t = torch.as_tensor(v).double()
            stride = params["stride"] or k
            windows = torch.nn.functional.unfold(t.reshape((-1, 1) + t.shape[2:]), k, padding=params["pad"],
                                                 stride=stride).numpy()
            top = np.sort(windows, axis=1)[:, -2:] if windows.shape[1] > 1 else None
            if top is not None and not (top[:, 1] - top[:, 0] > MARGIN).all():
                return None
    return "pooling", [i], params


GENERATORS = [
    (gen_unary, 6), (gen_binary, 5), (gen_scalar, 4), (gen_scalar_function, 2), (gen_constant, 2),
    (gen_where, 1), (gen_clip, 1), (gen_cast, 1), (gen_reduce, 4), (gen_softmax, 1.5), (gen_cumsum, 1),
    (gen_reshape, 1), (gen_transpose, 1), (gen_broadcast_to, 1), (gen_sum_to, 1), (gen_getitem, 3),
    (gen_concatenate, 1), (gen_matmul, 2), (gen_affine, 1), (gen_diagonal, 0.5), (gen_cross_entropy, 0.5),
    (gen_convolution, 0.7), (gen_pooling, 0.7),
]


def add_step(prog, op, args, params):
    """Append a step if its values, in both dtypes, are finite and moderate; its index, else None."""
    refs = []
    for k in range(2):
        inputs = [torch.as_tensor(prog.refs[a][k]) for a in args]
        with torch.no_grad():
            y = t_step(op, inputs, params, prog.dtypes, args, all64=bool(k))
        refs.append(y.numpy())
    if not all(np.isfinite(r).all() and (np.abs(r) < LARGEST).all() for r in refs):
        return None
    prog.dtypes.append(expected_dtype(op, [prog.dtypes[a] for a in args], params))
    if prog.moving.intersection(args):
        prog.moving.add(len(prog.dtypes) - 1)
    if prog.exact_ids.issuperset(args) and exactly(op, params):
        prog.exact_ids.add(len(prog.dtypes) - 1)
    prog.refs.append(tuple(refs))
    prog.steps.append((len(prog.dtypes) - 1, op, list(args), params))
    return len(prog.dtypes) - 1


def exactly(op, params):
    """Whether the step computes exactly (no rounding, in any library) from small halves: sums, products,
    selections and moves, not exp or a division."""
    name = params.get("name")
    if op == "unary":
        return name in ("neg", "identity", "abs", "relu", "sign", "floor", "ceil", "square")
    if op == "binary":
        return name in ("add", "sub", "mul", "maximum", "minimum")
    if op in ("scalar", "scalar_function"):
        c = float(params["c"])
        return c * 2 == round(c * 2) and params.get("op", "") in ("+", "-", "*", "") and name != "pow"
    if op == "reduce":
        return name in ("sum", "max", "min")
    return op in ("where", "clip", "reshape", "transpose", "broadcast_to", "sum_to", "getitem", "concatenate",
                  "cumsum", "cast", "diagonal")


def expected_dtype(op, dtypes, params):
    """minigrad's dtype rule (README): numbers are weak, arrays strong, as NumPy's result_type."""
    if op == "cast":
        return params["dtype"]
    if op == "constant":
        return np.result_type(dtypes[0], params["a"].dtype)
    return np.result_type(*dtypes)


def draw(seed):
    """The program of ``seed``: its inputs, steps and outputs."""
    rng = np.random.default_rng(seed)
    mix = rng.random()
    prog = Program(F64 if mix < 0.45 else F32, exact=rng.random() < 0.15)
    prog.other_dtype = lambda r: (F64 if r.random() < 0.5 else F32) if mix > 0.85 else prog.dtype
    empty = rng.random() < 0.08
    big = prog.big = rng.random() < 0.05
    for k in range(rng.integers(1, 3)):
        new_leaf(prog, rng, random_shape(rng, empty, big and k == 0))
    gens, weights = zip(*GENERATORS)
    weights = np.array(weights) / sum(weights)
    length = int(rng.integers(2, 9))
    tries = 0
    while len(prog.steps) < length and tries < 40:
        tries += 1
        gen = gens[rng.choice(len(gens), p=weights)]
        i = pick(prog, rng)
        drawn = gen(prog, rng, i)
        if drawn is not None and drawn[1][0] is not None:
            add_step(prog, *drawn)
    used = {a for _, _, args, _ in prog.steps for a in args}
    sinks = [out for out, _, _, _ in prog.steps if out not in used]  # every result no step goes on with
    prog.outputs = sinks[-3:] if sinks else [len(prog.dtypes) - 1]
    if rng.random() < 0.3:  # an output given twice
        prog.outputs.append(prog.outputs[0])
    inner = [out for out, _, _, _ in prog.steps if out in prog.moving]
    if inner and rng.random() < 0.4:
        prog.mids = [int(m) for m in rng.choice(inner, size=int(rng.integers(1, 3)))]  # (repeats too)
    return prog


# ---------------------------------------------------------------- minigrad's side
ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "**": operator.pow}
F_OF = {"+": F.add, "-": F.sub, "*": F.mul, "/": F.div, "**": F.pow}


def mg_step(op, xs, params):
    p = params
    if op == "unary":
        return getattr(F, p["name"])(xs[0])
    if op == "binary":
        if p["form"] == "operator":
            sign = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}[p["name"]]
            return ARITH[sign](xs[0], xs[1])
        return getattr(F, p["name"])(xs[0], xs[1])
    if op == "scalar":
        a, b = (xs[0], p["c"]) if p["side"] == "right" else (p["c"], xs[0])
        return (ARITH if p["form"] == "operator" else F_OF)[p["op"]](a, b)
    if op == "scalar_function":
        if p["name"] == "where":
            a, b = (xs[0], p["c"]) if p["side"] == "right" else (p["c"], xs[0])
            return F.where(p["cond"], a, b)
        a, b = (xs[0], p["c"]) if p["side"] == "right" else (p["c"], xs[0])
        return getattr(F, p["name"])(a, b)
    if op == "constant":
        a, b = (xs[0], p["a"]) if p["side"] == "right" else (p["a"], xs[0])
        return ARITH[p["op"]](a, b)
    if op == "where":
        return F.where(p["cond"], xs[0], xs[1])
    if op == "clip":
        return F.clip(xs[0], p["lo"], p["hi"])
    if op == "cast":
        return F.cast(xs[0], p["dtype"])
    if op == "reduce":
        if p.get("method"):
            return xs[0].sum(axis=p["axis"], keepdims=p["keepdims"])
        return getattr(F, p["name"])(xs[0], axis=p["axis"], keepdims=p["keepdims"])
    if op == "softmax":
        f = getattr(F, p["name"])
        return f(xs[0], axis=p["axis"]) if "axis" in p else f(xs[0])
    if op == "cumsum":
        return F.cumsum(xs[0], axis=p["axis"])
    if op == "reshape":
        if p.get("flatten"):
            return F.flatten(xs[0])
        f = xs[0].reshape if p.get("method") else partial(F.reshape, xs[0])
        return f(*p["shape"]) if p.get("splat") and p["shape"] else f(p["shape"])
    if op == "transpose":
        if p.get("method") == "T":
            return xs[0].T
        f = xs[0].transpose if p.get("method") == "transpose" else partial(F.transpose, xs[0])
        if p["axes"] is None:
            return f()
        return f(*p["axes"]) if p.get("splat") and p["axes"] else f(p["axes"])
    if op == "broadcast_to":
        return F.broadcast_to(xs[0], p["shape"])
    if op == "sum_to":
        return F.sum_to(xs[0], p["shape"])
    if op == "getitem":
        key = p["key"]
        if p.get("variable_index"):  # (read as integers, as the README says)
            parts = key if isinstance(key, tuple) else (key,)
            parts = tuple(mg.Variable(k, requires_grad=False) if isinstance(k, np.ndarray) and k.dtype.kind == "i"
                          else k for k in parts)
            key = parts if isinstance(key, tuple) else parts[0]
        return xs[0][key] if p.get("form") != "F" else F.getitem(xs[0], key)
    if op == "concatenate":
        return F.concatenate(list(xs), axis=p["axis"]) if p["as_list"] else F.concatenate(*xs, axis=p["axis"])
    if op == "matmul":
        if p["form"] == "operator":
            return xs[0] @ xs[1]
        return F.matmul(xs[0], xs[1], transpose_a=p["ta"], transpose_b=p["tb"])
    if op == "affine":
        return F.affine(*xs, base_axis=p["base_axis"])
    if op == "diagonal":
        return getattr(F, p["name"])(xs[0], offset=p["offset"], axis1=p["axis1"], axis2=p["axis2"])
    if op == "cross_entropy":
        return F.softmax_cross_entropy(xs[0], p["t"], axis=p["axis"])
    if op == "convolution":
        return F.convolution(*xs, **p)
    if op == "pooling":
        return getattr(F, p["name"])(xs[0], p["kernel"], p["stride"], p["pad"])
    raise AssertionError(op)


def mg_run(prog, xs):
    """(the outputs, the intermediate values in prog.mids) of the program run on xs."""
    env = dict(zip(prog.inputs, xs))
    env.update({c: mg.Variable(prog.given[c], requires_grad=False) for c in prog.consts})
    for out, op, args, params in prog.steps:
        env[out] = mg_step(op, [env[a] for a in args], params)
    return [env[o] for o in prog.outputs], [env[m] for m in prog.mids]


# ---------------------------------------------------------------- PyTorch's side
TD = {F64: torch.float64, F32: torch.float32}


def t_unary(name, x):
    return {"neg": torch.neg, "identity": torch.clone, "erf": torch.special.erf, "square": torch.square,
            "relu": torch.relu}.get(name, getattr(torch, name, None))(x)


def t_reduce(name, x, axis, keepdims):
    dims = reduced_axes(x.ndim, axis)
    if axis is not None and not dims:  # NumPy's axis=(): nothing reduced (torch's dim=() reduces everything)
        return x.clone()  # (a new node, as minigrad's: the gradient of an intermediate value is its own)
    if name == "prod":  # (torch's prod takes one dim: the dims moved last and made one)
        rest = [a for a in range(x.ndim) if a not in dims]
        moved = x.permute(rest + list(dims))
        y = torch.prod(moved.reshape(moved.shape[:len(rest)] + (math.prod(moved.shape[len(rest):]),)), -1)
        return y.reshape(reduced_shape(x.shape, dims, keepdims))
    f = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin,
         "logsumexp": torch.logsumexp}[name]
    if not dims:  # a 0-d x over all (no) axes
        return x.clone()
    return f(x, dim=dims, keepdim=keepdims)


def t_softmax(name, x, axis):
    if isinstance(axis, int):
        return (torch.softmax if name == "softmax" else torch.log_softmax)(x, axis)
    dims = reduced_axes(x.ndim, axis)
    ls = x - torch.logsumexp(x, dim=dims, keepdim=True)
    return ls.exp() if name == "softmax" else ls


def t_gather(x, key):
    """x[key] as NumPy means it: the flat positions NumPy picks, gathered (repeats add up in backward)."""
    idx = np.arange(x.numel()).reshape(tuple(x.shape))[key]
    return x.reshape(-1)[torch.as_tensor(np.array(idx, dtype=np.int64))]


def t_affine(x, W, b, base):
    batch, features = tuple(x.shape[:base]), math.prod(x.shape[base:])
    y = x.reshape(math.prod(batch), features) @ W.reshape(features, math.prod(W.shape[1:]))
    if b is not None:
        y = y + b.reshape(-1)
    return y.reshape(batch + tuple(W.shape[1:]))


def t_diagonal(x, name, offset, a1, a2):
    d = torch.diagonal(x, offset=offset, dim1=a1, dim2=a2)
    return d.sum(-1) if name == "trace" else d


def t_cross_entropy(x, t, axis):
    t = torch.as_tensor(t.reshape(tuple(x.shape[:axis]) + (1,) + tuple(x.shape[axis + 1:])))
    return -torch.take_along_dim(torch.log_softmax(x, axis), t, dim=axis)


def t_step(op, xs, params, dtypes, args, all64):
    """One step in PyTorch; the inputs of an operation on several arrays cast first to minigrad's dtype."""
    p = params

    def dt(d):
        return torch.float64 if all64 else TD[np.dtype(d)]

    if op in ("affine", "convolution"):
        xs = [x.to(dt(np.result_type(*[dtypes[a] for a in args[:2]]))) for x in xs[:2]] + \
            [x.to(dt(dtypes[a])) for x, a in zip(xs[2:], args[2:])]
    elif len(xs) > 1 or op == "constant":
        target = dt(expected_dtype(op, [dtypes[a] for a in args], params))
        xs = [x.to(target) for x in xs]
    else:
        xs = [x.to(dt(dtypes[args[0]])) for x in xs]
    x = xs[0]
    if op == "unary":
        return t_unary(p["name"], x)
    if op == "binary":
        return {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
                "maximum": torch.maximum, "minimum": torch.minimum}[p["name"]](xs[0], xs[1])
    if op == "scalar":
        c = float(p["c"])  # a Python number: weak in PyTorch too
        if x.ndim == 0:  # (but torch.func.jvp's tangent of a 0-d float32 with one is float64: made 1-d here)
            return ARITH[p["op"]](x.reshape(1), c).reshape(()) if p["side"] == "right" else \
                ARITH[p["op"]](c, x.reshape(1)).reshape(())
        return ARITH[p["op"]](x, c) if p["side"] == "right" else ARITH[p["op"]](c, x)
    if op == "scalar_function":
        c = torch.tensor(float(p["c"]), dtype=x.dtype)
        if p["name"] == "where":
            cond = torch.as_tensor(p["cond"])
            return torch.where(cond, x, c) if p["side"] == "right" else torch.where(cond, c, x)
        if p["name"] == "pow":  # (a number: a tensor exponent brings in its log(x) term, nan for x < 0)
            return (x.reshape(-1) ** float(p["c"])).reshape(x.shape)
        f = {"maximum": torch.maximum, "minimum": torch.minimum}[p["name"]]
        return f(x, c) if p["side"] == "right" else f(c, x)
    if op == "constant":
        a = torch.as_tensor(p["a"]).to(x.dtype)
        return ARITH[p["op"]](x, a) if p["side"] == "right" else ARITH[p["op"]](a, x)
    if op == "where":
        return torch.where(torch.as_tensor(p["cond"]), xs[0], xs[1])
    if op == "clip":
        return torch.clamp(x, p["lo"], p["hi"])
    if op == "cast":
        return x.to(dt(p["dtype"]))
    if op == "reduce":
        return t_reduce(p["name"], x, p["axis"], p["keepdims"])
    if op == "softmax":
        return t_softmax(p["name"], x, p.get("axis", 1))
    if op == "cumsum":
        return torch.cumsum(x.reshape(-1), 0) if p["axis"] is None else torch.cumsum(x, p["axis"])
    if op == "reshape":
        return x.reshape(p["shape"])
    if op == "transpose":
        return x.permute(tuple(reversed(range(x.ndim))) if p["axes"] is None else p["axes"])
    if op == "broadcast_to":
        return torch.broadcast_to(x, p["shape"])
    if op == "sum_to":
        lead = x.ndim - len(p["shape"])
        dims = tuple(range(lead)) + tuple(lead + k for k, s in enumerate(p["shape"]) if s == 1)
        return x.sum(dim=dims, keepdim=True).reshape(p["shape"]) if dims else x.reshape(p["shape"])
    if op == "getitem":
        return t_gather(x, p["key"])
    if op == "concatenate":
        return torch.cat(xs, dim=p["axis"])
    if op == "matmul":
        a = xs[0].transpose(-1, -2) if p["ta"] else xs[0]
        b = xs[1].transpose(-1, -2) if p["tb"] else xs[1]
        return torch.matmul(a, b)
    if op == "affine":  # x @ W + b: the product in the dtype of x and W, then b added (README)
        return t_affine(xs[0], xs[1], xs[2] if len(xs) > 2 else None, p["base_axis"])
    if op == "diagonal":
        return t_diagonal(x, p["name"], p["offset"], p["axis1"], p["axis2"])
    if op == "cross_entropy":
        return t_cross_entropy(x, p["t"], p["axis"])
    if op == "convolution":  # the bias added after the product, as affine's
        y = torch.nn.functional.conv2d(xs[0], xs[1], None, p["stride"], p["pad"], p["dilation"])
        return y if len(xs) < 3 else y + xs[2].reshape(-1, 1, 1)
    if op == "pooling":
        f = torch.nn.functional.max_pool2d if p["name"] == "max_pooling" else torch.nn.functional.avg_pool2d
        return f(x, p["kernel"], p["stride"] or p["kernel"], p["pad"])
    raise AssertionError(op)


def torch_run(prog, ts, all64, detached=()):
    """The program in PyTorch; the values in ``detached`` are made constants where they are computed."""
    env = dict(zip(prog.inputs, ts))
    env.update({c: torch.tensor(prog.leaves[c].astype(np.float64) if all64 else prog.leaves[c]) for c in prog.consts})
    for out, op, args, params in prog.steps:
        env[out] = t_step(op, [env[a] for a in args], params, prog.dtypes, args, all64)
        if out in detached:
            env[out] = env[out].detach()
    return [env[o] for o in prog.outputs], [env[m] for m in prog.mids]


# ---------------------------------------------------------------- running and comparing
def directions(rng, arrays):
    return [np.asarray(rng.standard_normal(a.shape), dtype=a.dtype) for a in arrays]


class Directions:
    """The random arrays a comparison needs: ``gy`` (grad_outputs), ``v`` (the second derivative's
    directions, on the inputs), ``t`` (tangents of the inputs), ``w`` (grad_outputs on the tangents)."""

    def __init__(self, prog, seed):
        rng = np.random.default_rng([seed, 1])
        leaves = [prog.leaves[i] for i in prog.inputs]
        outputs = [prog.refs[o][0].astype(prog.dtypes[o]) for o in prog.outputs]
        self.gy, self.v, self.t, self.w = (directions(rng, a) for a in (outputs, leaves, leaves, outputs))


WHAT = {  # each result: its dtype is that of the outputs, of the inputs, or of the intermediate values
    "value": "outputs", "grad": "inputs", "grad of intermediates": "mids", "second": "inputs",
    "J v as the gradient of grad_outputs": "outputs", "jvp value": "outputs", "jvp": "outputs",
    "grad of jvp": "inputs", "jvp of grad": "inputs",
    "jvp by linearize": "outputs", "grad by the transposed linearization": "inputs",
}


def minigrad_results(prog, d):
    given = [prog.given[i] for i in prog.inputs]
    xs = [mg.Variable(a) for a in given]
    n = len(xs)
    outs, mids = mg_run(prog, xs)
    gy = [mg.Variable(g) for g in d.gy]  # Variables: the gradients are differentiated in them too
    g1 = mg.grad(outs, xs + mids, grad_outputs=gy, create_graph=True, materialize_grads=True)
    g2 = mg.grad(g1[:n], xs + gy, grad_outputs=d.v, materialize_grads=True)  # d<g1, v>/dgy = J v
    out_j, t_j = func.jvp(lambda *a: tuple(mg_run(prog, a)[0]), tuple(xs), tuple(d.t))
    g_of_t = mg.grad(list(t_j), xs, grad_outputs=d.w, materialize_grads=True)  # reverse over forward

    def gradient(*a):  # as torch.func's: a function of the inputs that differentiates its own graph
        return func.vjp(lambda *b: tuple(mg_run(prog, b)[0]), *a)[1](tuple(d.gy))

    _, t_of_g = func.jvp(gradient, tuple(given), tuple(d.t))  # forward over reverse

    def program(*a):
        return tuple(mg_run(prog, a)[0])

    _, f_jvp = func.linearize(program, *given)
    _, vjp_fn = func.vjp(program, *given, method="transpose")
    return {"value": outs, "grad": g1[:n], "grad of intermediates": g1[n:], "second": g2[:n],
            "J v as the gradient of grad_outputs": g2[n:], "jvp value": list(out_j), "jvp": list(t_j),
            "grad of jvp": g_of_t, "jvp of grad": list(t_of_g), "jvp by linearize": list(f_jvp(*d.t)),
            "grad by the transposed linearization": list(vjp_fn(tuple(d.gy)))}


def torch_grad(outs, ts, gs, create_graph=False, retain_graph=None):
    live = [(o, g) for o, g in zip(outs, gs) if o.requires_grad]
    if not live:  # nothing depends on the inputs: zeros
        return [torch.zeros_like(t) for t in ts]
    return list(torch.autograd.grad([o for o, _ in live], ts, [g for _, g in live], create_graph=create_graph,
                                    retain_graph=retain_graph, allow_unused=True, materialize_grads=True))


def torch_results(prog, d, all64):
    def tensor(a, grad=False):
        return torch.tensor(a.astype(np.float64) if all64 else a, requires_grad=grad)

    leaves = [prog.leaves[i] for i in prog.inputs]
    ts = [tensor(a, True) for a in leaves]
    n = len(ts)
    outs, mids = torch_run(prog, ts, all64)
    gy = [tensor(g, True) for g in d.gy]
    g1 = torch_grad(outs, ts + mids, gy, create_graph=True)
    g2 = torch_grad(g1[:n], ts + gy, [tensor(v) for v in d.v])
    out_j, t_j = torch.func.jvp(lambda *a: tuple(torch_run(prog, a, all64)[0]), tuple(ts),
                                tuple(tensor(t) for t in d.t))
    g_of_t = torch_grad(t_j, ts, [tensor(w) for w in d.w])

    def gradient(*a):
        return torch.func.vjp(lambda *b: tuple(torch_run(prog, b, all64)[0]), *a)[1](
            tuple(tensor(g) for g in d.gy))

    primals = tuple(tensor(a) for a in leaves)
    _, t_of_g = torch.func.jvp(gradient, primals, tuple(tensor(t) for t in d.t))
    return {"value": outs, "grad": g1[:n], "grad of intermediates": g1[n:], "second": g2[:n],
            "J v as the gradient of grad_outputs": g2[n:], "jvp value": list(out_j), "jvp": list(t_j),
            "grad of jvp": g_of_t, "jvp of grad": list(t_of_g), "jvp by linearize": list(t_j),
            "grad by the transposed linearization": g1[:n]}


TOLERANCE = {F64: (1e-7, 1e-9), F32: (2e-4, 2e-4)}  # (relative, absolute, of the array's largest element)


def close(ours, theirs, exact, dtype, big=False):
    """Whether ours is theirs to within the rounding that theirs shows against the float64 ``exact``.

    ``big``: sums of thousands of numbers, which torch adds more accurately than NumPy's cumsum.
    """
    rtol, atol = TOLERANCE[dtype] if not big else {F64: (1e-6, 1e-7), F32: (1e-3, 1e-3)}[dtype]
    if ours.shape != theirs.shape:
        return False
    nan = np.isnan(theirs)
    if (np.isnan(ours) != nan).any():
        return False
    ours, theirs, exact = ours[~nan], theirs[~nan], exact[~nan]
    if not ours.size:
        return True
    inf = np.isinf(theirs)
    if (ours[inf] != theirs[inf]).any():
        return False
    ours, theirs, exact = ours[~inf], theirs[~inf], exact[~inf]
    scale = np.abs(exact).max(initial=1.0)
    slack = 10 * np.abs(theirs.astype(np.float64) - exact).max(initial=0.0)
    return bool((np.abs(ours.astype(np.float64) - theirs) <= slack + rtol * np.abs(theirs) + atol * scale).all())


def to_numpy(t):
    """A tensor's values as a NumPy array. materialize_grads and torch.func.jvp may give a ZeroTensor, whose
    .numpy(force=True) has crashed the process (a segmentation fault) in torch 2.13: its zeros are made here."""
    if t._is_zerotensor():
        return np.zeros(tuple(t.shape), dtype=str(t.dtype).replace("torch.", ""))
    return t.detach().numpy(force=True)


def jacobians(prog, torch_side=None, all64=False):
    """jacfwd, jacrev and hessian of the program, each a flat list of arrays (outputs by inputs)."""
    n = len(prog.inputs)
    if torch_side is None:
        args = [prog.given[i] for i in prog.inputs]
        f = lambda *a: tuple(mg_run(prog, a)[0])  # noqa: E731
        transforms = func
    else:
        args = [torch.tensor(prog.leaves[i].astype(np.float64) if all64 else prog.leaves[i]) for i in prog.inputs]
        f = lambda *a: tuple(torch_run(prog, a, all64)[0])  # noqa: E731
        transforms = torch.func
    results = {}
    for name in ("jacfwd", "jacrev", "hessian"):
        jac = getattr(transforms, name)(f, argnums=tuple(range(n)))(*args)
        flat = [j for per_output in jac for j in per_output]
        if name == "hessian":
            flat = [h for row in flat for h in row]
        results[name] = flat
    return results


def higher(prog, d, torch_side=None, all64=False):
    """The third derivative d<d<d<y, gy>/dx, v>/dx, w>/dx, and the gradients that y.backward(gy), called
    twice, leaves in the inputs' .grad (accumulated: twice the gradient), for the first output."""
    if torch_side is None:
        xs = [mg.Variable(prog.given[i]) for i in prog.inputs]
        outs = mg_run(prog, xs)[0]
        g1 = mg.grad(outs, xs, grad_outputs=d.gy, create_graph=True, materialize_grads=True)
        g2 = mg.grad(g1, xs, grad_outputs=d.v, create_graph=True, materialize_grads=True)
        g3 = mg.grad(g2, xs, grad_outputs=d.t, materialize_grads=True)  # (frees the graph it walks)
        y = mg_run(prog, xs)[0][0]
        if prog.outputs[0] in prog.moving:  # (a constant has no graph: backward() raises, as torch's does)
            y.backward(d.gy[0], retain_graph=True)
            y.backward(d.gy[0])
        return {"third": g3, ".grad after backward() twice": [x.grad for x in xs]}

    def tensor(a, grad=False):
        return torch.tensor(a.astype(np.float64) if all64 else a, requires_grad=grad)

    ts = [tensor(prog.leaves[i], True) for i in prog.inputs]
    outs = torch_run(prog, ts, all64)[0]
    g1 = torch_grad(outs, ts, [tensor(g) for g in d.gy], create_graph=True)
    g2 = torch_grad(g1, ts, [tensor(v) for v in d.v], create_graph=True)
    g3 = torch_grad(g2, ts, [tensor(t) for t in d.t])
    y = torch_run(prog, ts, all64)[0][0]
    if prog.outputs[0] in prog.moving:
        y.backward(tensor(d.gy[0]), retain_graph=True)
        y.backward(tensor(d.gy[0]))
    return {"third": g3, ".grad after backward() twice": [t.grad for t in ts]}


def options(prog, d, torch_side=None, all64=False):
    """mg.grad's options against what they mean in PyTorch, with m the first of prog.mids:
    ``no_grad_vars=[m]`` (m made a constant where it is computed), ``grad_inputs`` (initial gradients of
    the inputs and of m, which flows on upstream of m when an output depends on m: m as one more output,
    seeded with its own; the walker never visits the graph of an m no output depends on),
    ``loss_scale`` (the seeds of the outputs, times it) and ``retain_grad`` (m.grad: its gradient)."""
    scale = 2.5
    a = [g * 0.5 for g in d.v]  # initial gradients of the inputs, and of m
    b = np.asarray(d.t[0].reshape(-1)[0] if d.t[0].size else 1.0, dtype=prog.dtypes[prog.mids[0]]) + \
        np.zeros(prog.shape(prog.mids[0]), dtype=prog.dtypes[prog.mids[0]])
    if torch_side is None:
        xs = [mg.Variable(prog.given[i]) for i in prog.inputs]
        outs, mids = mg_run(prog, xs)
        kept = mg.grad(outs, xs, grad_outputs=d.gy, no_grad_vars=[mids[0]], retain_graph=True, materialize_grads=True)
        given = mg.grad(outs, xs + mids[:1], grad_outputs=d.gy, grad_inputs=[mg.Variable(g) for g in a + [b]],
                        retain_graph=True, materialize_grads=True)
        scaled = mg.grad(outs, xs, loss_scale=scale, retain_graph=True, materialize_grads=True)
        mg.grad(outs, xs, grad_outputs=d.gy, retain_grad=True, materialize_grads=True)
        retained = [mids[0].grad if mids[0].grad is not None else mg.Variable(np.zeros_like(b))]
        return {"no_grad_vars": kept, "grad_inputs": given, "loss_scale": scaled, "retain_grad": retained}

    def tensor(x, grad=False):
        return torch.tensor(x.astype(np.float64) if all64 else x, requires_grad=grad)

    ts = [tensor(prog.leaves[i], True) for i in prog.inputs]
    outs = torch_run(prog, ts, all64, detached={prog.mids[0]})[0]
    kept = torch_grad(outs, ts, [tensor(g) for g in d.gy])
    outs, mids = torch_run(prog, ts, all64)
    flows = prog.mids[0] in prog.upstream(prog.outputs)
    given = torch_grad(outs + mids[:1], ts + mids[:1], [tensor(g) for g in d.gy] + [tensor(b * flows)],
                       retain_graph=True)
    given = [g + tensor(x) for g, x in zip(given, a + [b * (not flows)])]
    scaled = torch_grad(outs, ts, [torch.full_like(o, scale) for o in outs], retain_graph=True)
    retained = torch_grad(outs, mids[:1], [tensor(g) for g in d.gy])
    return {"no_grad_vars": kept, "grad_inputs": given, "loss_scale": scaled, "retain_grad": retained}


def check_higher(prog, d):
    """What disagrees in the third derivative and in .grad after two backward() calls."""
    ours, theirs, exact = higher(prog, d), higher(prog, d, True), higher(prog, d, True, all64=True)
    return compared(prog, ours, theirs, exact)


def check_options(prog, d):
    return compared(prog, options(prog, d), options(prog, d, True), options(prog, d, True, all64=True))


def compared(prog, ours, theirs, exact):
    """What disagrees between minigrad's results and torch's (None, when both are None, agrees)."""
    problems = []
    for what in ours:
        for k, (a, b, e) in enumerate(zip(ours[what], theirs[what], exact[what])):
            if a is None or b is None:  # (.grad of an input y does not depend on: None in both)
                if (a is None) != (b is None):
                    problems.append(f"{what}[{k}]: {a} vs torch {b}")
                continue
            problems += disagreement(f"{what}[{k}]", np.asarray(a.data), to_numpy(b), to_numpy(e), prog)
    return problems


def check_jacobians(prog):
    """What disagrees among the Jacobians and Hessians of a small program (value and dtype)."""
    ours, theirs, exact = jacobians(prog), jacobians(prog, True), jacobians(prog, True, all64=True)
    problems = []
    for what in ours:
        for k, (a, b, e) in enumerate(zip(ours[what], theirs[what], exact[what])):
            a_np, b_np = np.asarray(a.data), to_numpy(b)
            if what == "hessian":
                b_np = b_np.astype(a_np.dtype)  # (the dtype of forward over reverse: not compared)
            problems += disagreement(f"{what}[{k}]", a_np, b_np, to_numpy(e), prog)
    return problems


def disagreement(name, a_np, b_np, e_np, prog):
    """[what differs between minigrad's ``a_np`` and torch's ``b_np``, the dtype or the values (within the
    tolerance ``close`` takes from the float64 answer ``e_np``)], or [] where they agree."""
    if a_np.dtype != b_np.dtype:
        return [f"{name}: dtype {a_np.dtype}, torch {b_np.dtype}"]
    if not close(a_np, b_np, e_np, F32 if F32 in prog.dtypes else F64, prog.big):
        return [f"{name}: shape {a_np.shape} vs torch {b_np.shape}, "
                f"largest difference {largest_difference(a_np, b_np)}"]
    return []


def check(seed):
    """Every comparison for the program of ``seed``: a list of what disagrees (empty when all agree)."""
    prog = draw(seed)
    d = Directions(prog, seed)
    ours = minigrad_results(prog, d)
    theirs = torch_results(prog, d, all64=False)
    exact = torch_results(prog, d, all64=True)
    dtypes = {"outputs": [prog.dtypes[o] for o in prog.outputs], "inputs": [prog.dtypes[i] for i in prog.inputs],
              "mids": [prog.dtypes[m] for m in prog.mids]}
    problems = []
    for what in ours:
        for k, (a, b, e) in enumerate(zip(ours[what], theirs[what], exact[what])):
            a_np, b_np, e_np = np.asarray(a.data), to_numpy(b), to_numpy(e)
            expected = dtypes[WHAT[what]][k]  # a gradient has its input's dtype, a tangent its output's
            torch_dtype = b_np.dtype
            if what in ("jvp", "grad of jvp", "jvp of grad", "jvp by linearize"):
                # torch.func.jvp's tangent of a 0-d float32 with a Python number is float64 (torch's forward
                # mode promotes there, and jvp of grad casts the gradient): minigrad held to the rule alone
                torch_dtype = expected
            if a_np.dtype != expected or torch_dtype != expected:
                problems.append(f"{what}[{k}]: dtype {a_np.dtype}, torch {torch_dtype}, the rule says {expected}")
            elif not close(a_np, b_np, e_np, F32 if F32 in prog.dtypes else F64, prog.big):
                problems.append(f"{what}[{k}]: shape {a_np.shape} vs torch {b_np.shape}, "
                                f"largest difference {largest_difference(a_np, b_np)}")
    sizes = [prog.leaves[i].size for i in prog.inputs] + [prog.size(o) for o in prog.outputs]
    if sum(sizes) <= 24 and 0 not in sizes:  # (torch.func's jacrev fails to reshape an empty Jacobian)
        problems += check_jacobians(prog) + check_higher(prog, d)
    if prog.mids:
        problems += check_options(prog, d)
    return prog, problems


def largest_difference(a, b):
    if a.shape != b.shape:
        return "(shapes differ)"
    with np.errstate(invalid="ignore"):
        d = np.abs(a.astype(np.float64) - b)
    return float(np.nanmax(d, initial=0.0))


SEEDS = range(250)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")  # (torch.func's own)
@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_matches_torch(seed):
    prog, problems = check(seed)
    assert not problems, f"seed {seed}:\n{prog}\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------- API behaviours, beside PyTorch's
def raises(f):
    """The exception f raises (None if it returns)."""
    try:
        f()
    except Exception as e:  # noqa: BLE001  (any exception: the test says which it expects)
        return e
    return None


def test_allow_unused_and_materialize_grads_as_torch():
    x, u = mg.Variable(np.array([1.0, 2.0])), mg.Variable(np.array([3.0], dtype=np.float32))
    tx, tu = torch.tensor(x.data, requires_grad=True), torch.tensor(u.data, requires_grad=True)
    y, ty = F.sum(F.sin(x)), torch.sin(tx).sum()
    e = raises(lambda: mg.grad(y, [x, u], retain_graph=True))  # torch: a RuntimeError that names allow_unused
    assert isinstance(raises(lambda: torch.autograd.grad(ty, [tx, tu], retain_graph=True)), RuntimeError)
    assert isinstance(e, ValueError) and "inputs[1] (shape (1,))" in str(e) and "allow_unused=True" in str(e)
    g, none = mg.grad(y, [x, u], allow_unused=True, retain_graph=True)
    tg, tnone = torch.autograd.grad(ty, [tx, tu], allow_unused=True, retain_graph=True)
    assert none is None and tnone is None
    np.testing.assert_allclose(g.data, tg.numpy(), rtol=1e-15)
    g, zero = mg.grad(y, [x, u], materialize_grads=True)
    tg, tzero = torch.autograd.grad(ty, [tx, tu], materialize_grads=True)
    assert zero.shape == tuple(tzero.shape) and zero.dtype == np.float32 and not zero.data.any()


def test_a_second_pass_through_a_freed_graph_raises_as_torch():
    x = mg.Variable(np.array([0.5, 1.0]))
    tx = torch.tensor(x.data, requires_grad=True)
    y, ty = F.sum(F.exp(x) * x), (torch.exp(tx) * tx).sum()
    mg.grad(y, x)
    torch.autograd.grad(ty, tx)
    e, te = raises(lambda: mg.grad(y, x)), raises(lambda: torch.autograd.grad(ty, tx))
    assert isinstance(e, RuntimeError) and isinstance(te, RuntimeError)
    assert "freed" in str(e) and "retain_graph=True" in str(e) and "retain_graph=True" in str(te)
    e, te = raises(lambda: y.backward()), raises(lambda: ty.backward())
    assert isinstance(e, RuntimeError) and isinstance(te, RuntimeError) and "retain_graph=True" in str(e)
    y, ty = F.sum(F.exp(x) * x), (torch.exp(tx) * tx).sum()  # create_graph keeps it, in both
    (g,) = mg.grad(y, x, create_graph=True)
    (tg,) = torch.autograd.grad(ty, tx, create_graph=True)
    (g2,), (tg2,) = mg.grad(y, x), torch.autograd.grad(ty, tx)
    np.testing.assert_allclose(g2.data, tg2.numpy(), rtol=1e-15)


@pytest.mark.parametrize("shape", [(3,), (1,), (), (2, 1), (1, 2)])
def test_grad_outputs_of_another_shape_raise_as_torch_naming_grad_the_argument_and_the_shapes(shape):
    x = mg.Variable(np.array([0.5, 1.0]))
    tx = torch.tensor(x.data, requires_grad=True)
    y, ty = F.sin(x), torch.sin(tx)
    te = raises(lambda: torch.autograd.grad(ty, tx, grad_outputs=torch.ones(shape, dtype=torch.float64)))
    assert te is not None  # (torch refuses a broadcastable one too)
    for gy in (np.ones(shape), mg.Variable(np.ones(shape))):
        e = raises(lambda gy=gy: mg.grad(y, x, grad_outputs=gy, retain_graph=True))
        assert isinstance(e, ValueError)
        assert str(e).startswith(f"grad: grad_outputs[0] has shape {shape} but outputs[0] has shape (2,)"), str(e)
        e = raises(lambda gy=gy: y.backward(gy, retain_graph=True))
        assert isinstance(e, ValueError)
        assert str(e).startswith(f"backward: grad has shape {shape} but the output has shape (2,)"), str(e)


def test_integer_and_boolean_inputs_are_float64_and_differentiate_as_torch_in_float64():
    a = np.array([[1, -2, 3], [0, 2, 1]])
    for given in (a, a.astype(np.int32), a.tolist(), a > 0):
        x = mg.Variable(given)
        assert x.dtype == np.float64
        array = np.asarray(given)
        tx = torch.tensor(array, dtype=torch.float64, requires_grad=True)
        assert isinstance(raises(lambda a=array: torch.tensor(a, requires_grad=True)), RuntimeError)
        gy = np.array([[1, 2, 3], [4, 5, 6]])  # integer grad_outputs: the output's dtype
        (g,) = mg.grad(F.tanh(x) * x, x, grad_outputs=gy)
        (tg,) = torch.autograd.grad(torch.tanh(tx) * tx, tx, torch.tensor(gy, dtype=torch.float64))
        assert g.dtype == np.float64
        np.testing.assert_allclose(g.data, tg.numpy(), rtol=1e-14)
    y, t = func.jvp(F.tanh, (a,), (a > 0,))  # integer primals, boolean tangents
    ty, tt = torch.func.jvp(torch.tanh, (torch.tensor(a, dtype=torch.float64),),
                            (torch.tensor(a > 0, dtype=torch.float64),))
    assert y.dtype == t.dtype == np.float64
    np.testing.assert_allclose(t.data, tt.numpy(), rtol=1e-14)


def views(a):
    """Views of a 2-D array: reversed, transposed, every other column, read-only, and a 0-strided one."""
    wide = np.repeat(a, 2, axis=1)
    return {"reversed": a[::-1, ::-1], "transposed": np.asfortranarray(a).T.T, "strided": wide[:, ::2],
            "read-only": np.broadcast_to(a, a.shape), "broadcast": np.broadcast_to(a[:1], a.shape)}


def test_non_contiguous_inputs_and_grad_outputs_as_torch():
    a = np.random.default_rng(0).standard_normal((3, 4))
    for name, v in views(a).items():
        for gy_name, gy in views(a[:, :2] * 2.0).items():
            x, tx = mg.Variable(v), torch.tensor(np.ascontiguousarray(v), requires_grad=True)
            y = F.softmax(x * F.sin(x), axis=1)[:, 1:3]
            ty = torch.softmax(tx * torch.sin(tx), 1)[:, 1:3]
            (g,) = mg.grad(y, x, grad_outputs=gy, create_graph=True)
            (tg,) = torch.autograd.grad(ty, tx, torch.tensor(np.ascontiguousarray(gy)), create_graph=True)
            np.testing.assert_allclose(g.data, tg.detach().numpy(), rtol=1e-12, err_msg=f"{name}, {gy_name} gy")
            (g2,) = mg.grad(F.sum(g * g), x)
            (tg2,) = torch.autograd.grad((tg * tg).sum(), tx)
            np.testing.assert_allclose(g2.data, tg2.numpy(), rtol=1e-11, err_msg=f"{name}, {gy_name} gy")
        assert np.array_equal(v, views(a)[name])  # (nothing written into the caller's arrays)


def test_0d_outputs_as_torch():
    x = mg.Variable(np.array([0.3, -1.2]))
    tx = torch.tensor(x.data, requires_grad=True)
    for gy in (None, 2.5, np.array(2.5), mg.Variable(np.array(2.5))):
        y, ty = F.sum(F.exp(x)), torch.exp(tx).sum()  # 0-d
        (g,) = mg.grad(y, x, grad_outputs=gy)
        (tg,) = torch.autograd.grad(ty, tx, None if gy is None else torch.tensor(2.5, dtype=torch.float64))
        np.testing.assert_allclose(g.data, tg.numpy(), rtol=1e-15)
    assert isinstance(raises(lambda: mg.grad(F.sum(x), x, grad_outputs=np.ones(1))), ValueError)
    assert isinstance(raises(lambda: torch.autograd.grad(tx.sum(), tx, torch.ones(1, dtype=torch.float64))),
                      RuntimeError)
    F.sum(F.exp(x)).backward()  # as torch's y.backward(): ones
    torch.exp(tx).sum().backward()
    np.testing.assert_allclose(x.grad.data, tx.grad.numpy(), rtol=1e-15)
    y, t = func.jvp(lambda a: F.sum(a * a), (np.array(1.5),), (np.array(2.0),))
    ty, tt = torch.func.jvp(lambda a: (a * a).sum(), (torch.tensor(1.5, dtype=torch.float64),),
                            (torch.tensor(2.0, dtype=torch.float64),))
    assert y.shape == t.shape == () and float(t.data) == tt.item() == 6.0


def main(lo, hi):
    """Check seeds lo to hi - 1, printing each failing program (and the traceback of a crash)."""
    start, bad = time.perf_counter(), 0
    for s in range(lo, hi):
        try:
            prog, problems = check(s)
        except Exception as e:  # noqa: BLE001  (a crash is a finding too)
            traceback.print_exc()
            problems = [f"{type(e).__name__}: {e}"]
            try:
                prog = draw(s)
            except Exception:  # noqa: BLE001
                prog = "  (drawing the program failed)"
        if problems:
            bad += 1
            print(f"seed {s}:\n{prog}\n  " + "\n  ".join(problems), flush=True)
    print(f"{bad} of {hi - lo} seeds disagree ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (0, 1000))
