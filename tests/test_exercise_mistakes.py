"""A catalogue of the wrong answers students write, each caught by a visible check() that names the mistake.

Each entry edits one line or two of a solution notebook's answer cell (the
rest of the notebook is the reference), runs the notebook's cells, and reads
what ``check()`` prints: the exercise must fail a visible test, and the
message must point at the mistake (a missing gy, a sign, a graph cut by
``.data``, a nan from an overflow, ...). A few of them are also graded with
``minigrad-grade``, in one batch, and must lose points.
"""

from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from minigrad.grading import testing
from minigrad.grading.feedback import check_text

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"


def notebook(exercise):
    """The solution notebook of exercise "N.M": the one numbered N, after the lesson it pairs with."""
    (path,) = SOLUTIONS.glob(f"{int(exercise.split('.')[0]):02d}_*.ipynb")
    return path


@dataclass
class Mistake:
    exercise: str
    name: str
    right: str  # lines of the reference answer...
    wrong: str  # ...and what the student wrote instead
    says: str  # words check() must print about it

    def __str__(self):
        return f"{self.exercise} {self.name}"


GY = "multiply by gy"
NO_GRAPH = "no graph"
NAN = "inf or nan"

CATALOGUE = [
    Mistake("1.2", "forgotten gy", "return gy * 2 * x", "return 2 * x", GY),
    Mistake("1.2", "wrong sign", "return gy * 2 * x", "return -gy * 2 * x", "sign error"),
    Mistake("1.2", ".data in the rule", "return gy * 2 * x", "return gy * 2 * x.data", NO_GRAPH),
    Mistake("1.3", "gradients in the wrong order", "return gy * x1, gy * x0, gy", "return gy * x0, gy * x1, gy",
            "gx0 is wrong"),
    Mistake("1.3", "forgotten gy", "return gy * x1, gy * x0, gy", "return x1, x0, x0 * 0 + 1", GY),
    Mistake("2.1", "a reversed breadth-first order",
            "    order, seen = [], set()\n\n    def visit(f):\n        if f is None or f in seen:\n            return\n"
            "        seen.add(f)\n        for x in f.parents():\n            visit(x.creator)\n"
            "        order.append(f)\n\n    visit(y.creator)\n    return order",
            "    order, seen, queue = [], set(), [y.creator]\n    while queue:\n        f = queue.pop(0)\n"
            "        if f is None or f in seen:\n            continue\n        seen.add(f)\n        order.append(f)\n"
            "        queue.extend(x.creator for x in f.parents())\n    return order[::-1]",
            "must come before it"),
    Mistake("2.2", "a gradient overwritten, not added", "grads[x] = gx if x not in grads else grads[x] + gx",
            "grads[x] = gx", "add the gradients"),
    Mistake("2.3", "flags for the xs only", "n in targets or n.creator in needs", "n in targets", "flags"),
    Mistake("3.1", "forgotten gy", "return gy * my_cos(x)", "return my_cos(x)", GY),
    Mistake("3.1", "wrong sign", "return -gy * my_sin(x)", "return gy * my_sin(x)", "sign error"),
    Mistake("3.1", "ctx.inputs passed as the Variable", "(x,) = ctx.inputs\n    return gy * my_cos(x)",
            "return gy * my_cos(ctx.inputs)", "ctx.inputs"),
    Mistake("3.1", ".data in the rule", "return gy * my_cos(x)", "return gy * np.cos(x.data)", NO_GRAPH),
    Mistake("3.2", "forgotten gy", "return gy * (1 - y * y)", "return 1 - y * y", GY),
    Mistake("3.2", "ctx.inputs passed as the Variable", "(y,) = ctx.outputs\n    return gy * (1 - y * y)",
            "return gy * (1 - ctx.outputs * ctx.outputs)", "ctx.outputs"),
    Mistake("3.3", "an overflowing formula", "return 0.5 * xp.tanh(0.5 * x) + 0.5",
            "return xp.exp(x) / (1 + xp.exp(x))", NAN),
    Mistake("3.3", "forgotten gy", "return gy * y * (1 - y)", "return y * (1 - y)", GY),
    Mistake("3.4", "forgotten gy", "return gy / x", "return 1 / x", GY),
    Mistake("3.4", "wrong sign", "return gy / x", "return -gy / x", "sign error"),
    Mistake("5.1", ".data in the rule", "return F.matmul(gy, W.T), F.matmul(x.T, gy)",
            "return gy @ W.data.T, x.data.T @ gy", "never on .data"),
    Mistake("5.1", "a product in the wrong order", "F.matmul(x.T, gy)", "F.matmul(gy.T, x)", "shape (4, 3)"),
    Mistake("5.2", "a hard-coded shape", "F.sum(gy, axis=0)", "F.reshape(F.sum(gy, axis=0), (4,))", "shape"),
    Mistake("5.2", "the bias not summed", "F.sum(gy, axis=0)", "gy", "sum"),
    Mistake("5.3", "softmax without the max shift", "xp.exp(x - x.max(axis=-1, keepdims=True))", "xp.exp(x)",
            NAN),
    Mistake("5.3", "a hard-coded axis", "x.max(axis=-1, keepdims=True))\n        return e / e.sum(axis=-1,",
            "x.max(axis=1, keepdims=True))\n        return e / e.sum(axis=1,", "last axis"),
    Mistake("5.3", "forgotten gy", "return y * (gy - F.sum(gy * y, axis=-1, keepdims=True))",
            "return y * (1 - F.sum(y, axis=-1, keepdims=True))", "is wrong"),
    Mistake("5.4", "log-sum-exp without the max", "log_z = m + xp.log(xp.exp(x - m).sum(axis=1, keepdims=True))",
            "log_z = xp.log(xp.exp(x).sum(axis=1, keepdims=True))", NAN),
    Mistake("5.4", "forgotten gy", "* (gy / N)", "/ N", GY),
    Mistake("5.4", "the softmax from .data", "return (MySoftmax()(x) - onehot) * (gy / N)",
            "return (Variable(MySoftmax()(x.data).data) - onehot) * (gy / N)", "from x.data"),
    Mistake("7.1", "a missing materialize_grads", "create_graph=True, materialize_grads=True",
            "create_graph=True", "materialize_grads"),
    Mistake("7.1", "a missing create_graph", "create_graph=True, materialize_grads=True",
            "materialize_grads=True", "create_graph"),
    Mistake("9.1", "a window hard-coded to 2", "blocks(x.shape, self.k)).mean", "blocks(x.shape, 2)).mean", "k = 3"),
    Mistake("9.1", "a rule with k hard-coded to 2", "/ (k * k)", "/ 4", "k = 3"),
    Mistake("9.2", "forgotten gy", "return F.reshape(g, x.shape)", "return F.reshape(mask, x.shape)",
            "gets the block's gy"),
]

TANGENT = "multiply by the tangent"
NOT_A_LINE = "not the line x0 + t"

CATALOGUE += [
    Mistake("13.1", "forgotten tangent", "return (1 + x * x) ** -1.5 * tx", "return (1 + x * x) ** -1.5", TANGENT),
    Mistake("13.1", "wrong sign", "return (1 + x * x) ** -1.5 * tx", "return -(1 + x * x) ** -1.5 * tx",
            "sign error"),
    Mistake("13.1", "the exponent -1/2", "return (1 + x * x) ** -1.5 * tx", "return (1 + x * x) ** -0.5 * tx",
            "first term of the product rule"),
    Mistake("13.1", "the exponent +3/2", "return (1 + x * x) ** -1.5 * tx", "return (1 + x * x) ** 1.5 * tx",
            "the exponent is negative"),
    Mistake("13.1", "the tangent through y, which cancels", "(x,) = ctx.inputs\n    return (1 + x * x) ** -1.5 * tx",
            "(y,) = ctx.outputs\n    return (1 - y * y) ** 1.5 * tx", "written through y"),
    Mistake("13.1", ".data in the rule", "return (1 + x * x) ** -1.5 * tx",
            "return mg.Variable((1 + x.data ** 2) ** -1.5) * tx", "never on .data"),
    Mistake("13.1", "a division by x", "(x,) = ctx.inputs\n    return (1 + x * x) ** -1.5 * tx",
            "(x,), (y,) = ctx.inputs, ctx.outputs\n    return (y / x) ** 3 * tx", NAN),
    Mistake("13.2", "a None tangent not handled", "    ty = None\n", "    return x0 / y * t0 + x1 / y * t1\n",
            "receives None"),
    Mistake("13.2", "forgotten tangents", "ty = x0 / y * t0\n    if t1 is not None:\n        term = x1 / y * t1",
            "ty = x0 / y\n    if t1 is not None:\n        term = x1 / y", TANGENT),
    Mistake("13.2", "a partial derivative on the wrong tangent", "ty = x0 / y * t0", "ty = x1 / y * t0",
            "its own partial derivative"),
    Mistake("14.1", "wrong sign", "(k * x[k] - s)", "(k * x[k] + s)", "wrong sign"),
    Mistake("14.1", "the weights j forgotten", "s = sum(j * y[j] * z[k - j]", "s = sum(y[j] * z[k - j]",
            "its weight j"),
    Mistake("14.1", "the weights on z, not on y", "s = sum(j * y[j] * z[k - j]", "s = sum((k - j) * y[j] * z[k - j]",
            "on y_j and not on the other factor"),
    Mistake("14.1", "off by one in the convolution", "z[k - j] for j in range(1, k))",
            "z[k - j - 1] for j in range(1, k))", "indexes add up to k"),
    Mistake("14.1", "a term of the sum left out", "for j in range(1, k))", "for j in range(1, k - 1))",
            "j = 1, ..., k - 1"),
    Mistake("14.1", "z_0 not divided", "/ (k * z[0])", "/ k", "divides by z_0"),
    Mistake("14.1", "k not divided", "/ (k * z[0])", "/ z[0]", "divides by k"),
    Mistake("14.1", "the derivatives returned", "return y\n",
            "return y * np.cumprod([1.0, *range(1, len(x))]).reshape((-1,) + (1,) * (x.ndim - 1))\n",
            "returns the derivatives k! y_k"),
    Mistake("14.1", "log's recurrence, divided by x_0", "/ (k * z[0])", "/ (k * x[0])", NAN),
    Mistake("14.1", "each coefficient squared alone", "z[k] = sum(x[j] * x[k - j] for j in range(k + 1))",
            "z[k] = x[k] * x[k]", "Cauchy product"),
    Mistake("14.1", "the 1 added to every coefficient", "z[0] += 1", "z += 1", "z_1 = 2 x_0 x_1"),
    Mistake("14.1", "a rule for the line x0 + t only", "y[k] = (k * x[k] - s) / (k * z[0])",
            "y[k] = (-1) ** (k - 1) * ((x[0] - 1j) ** -k).imag / k", NOT_A_LINE),
    Mistake("14.1", "a hard-coded order", "y = np.zeros_like(x)", "y = np.zeros((11,) + x.shape[1:])",
            "5 coefficients"),
    Mistake("14.2", "arctan of the quotient", "y[0] = np.arctan2(a[0], b[0])", "y[0] = np.arctan(a[0] / b[0])",
            "np.arctan2(a_0, b_0)"),
    Mistake("14.2", "the cross term's sign", "j * (b[k - j] * a[j] - a[k - j] * b[j])",
            "j * (a[k - j] * b[j] - b[k - j] * a[j])", "wrong sign"),
    Mistake("14.2", "b held constant", "j * (b[k - j] * a[j] - a[k - j] * b[j])", "j * b[k - j] * a[j]",
            "b moves too"),
    Mistake("14.2", "z from a alone", "a[j] * a[k - j] + b[j] * b[k - j]", "a[j] * a[k - j]", "(a_0^2 + b_0^2)"),
    Mistake("14.2", "the weights j forgotten", "s = sum(j * y[j] * z[k - j]", "s = sum(y[j] * z[k - j]",
            "its weight j"),
    Mistake("14.2", "through the quotient a / b", "    z = np.zeros_like(a)",
            "    from minigrad import series\n\n    y = atan_taylor(ctx, series.quotient(a, b))\n"
            "    y[0] = np.arctan2(a[0], b[0])\n    return y\n    z = np.zeros_like(a)", "a / b has no series"),
    Mistake("15.1", "a one-sided difference", "x[k] = old - step\n        down = f(x)\n        x[k] = old\n"
            "        g[k] = (up - down) / (2 * step)",
            "x[k] = old\n        down = f(x)\n        g[k] = (up - down) / step", "order h"),
    Mistake("15.1", "a step of fixed size", "step = h * max(1.0, abs(old))", "step = h", "scale the step"),
    Mistake("15.1", "an element not put back", "        x[k] = old\n        g[k]", "        g[k]",
            "put each element back"),
    Mistake("15.1", "a hard-coded shape", "for k in np.ndindex(x.shape):", "for k in range(x.size):",
            "whatever x's shape"),
    Mistake("15.1", "a difference over h, not 2h", "/ (2 * step)", "/ step", "constant factor"),
    Mistake("15.2", "a projection on ones", "u = np.random.default_rng(seed).standard_normal(shape)",
            "u = np.ones(shape)", "projected on ones"),
    Mistake("15.2", "False returned, not raised", "raise AssertionError(message)",
            "print(message)\n        return False", "returned False"),
    Mistake("15.2", "an absolute error", "errors = np.abs(a - n) / np.maximum(1.0, np.maximum(np.abs(a), np.abs(n)))",
            "errors = np.abs(a - n)", "relative to the size"),
    Mistake("15.2", "a relative error without a floor",
            "errors = np.abs(a - n) / np.maximum(1.0, np.maximum(np.abs(a), np.abs(n)))",
            "errors = np.abs(a - n) / np.maximum(np.abs(a), np.abs(n))", "floor"),
    Mistake("15.2", "a direction of x's shape", "standard_normal(shape)", "standard_normal(x.shape)",
            "output's shape"),
    Mistake("16.1", "recording in the forward", "with mg.no_grad():\n            y =", "if True:\n            y =",
            "without recording"),
    Mistake("16.1", "forgotten gy", "mg.grad(y, xs, grad_outputs=gy)", "mg.grad(y, xs)", "gy is not ones"),
    Mistake("16.1", "no recording in the backward", "with mg.enable_grad():  # the walker runs rules with "
            "recording off\n        y =", "if True:\n        y =", "recording off"),
    Mistake("16.2", "the last, shorter segment dropped", "range(0, len(Ws), k)", "range(0, len(Ws) - len(Ws) % k, k)",
            "last segment is shorter"),
    Mistake("16.2", "a hard-coded k",
            "for i in range(0, len(Ws), k):\n        h = MyCheckpoint(layers)(h, *Ws[i:i + k])",
            "for i in range(0, len(Ws), 2):\n        h = MyCheckpoint(layers)(h, *Ws[i:i + 2])",
            "one MyCheckpoint node per segment"),
    Mistake("16.2", "no checkpoint at all", "h = MyCheckpoint(layers)(h, *Ws[i:i + k])", "h = layers(h, *Ws[i:i + k])",
            "keep only their inputs"),
]

EACH_ROW = "its own largest logit"

CATALOGUE += [
    Mistake("3.3", "an overflow thrown away", "return 0.5 * xp.tanh(0.5 * x) + 0.5", "return 1 / (1 + xp.exp(-x))",
            "overflowed"),
    Mistake("4.1", "target axes aligned left", "lead + i for i, s in enumerate(self.shape) if s == 1 and "
            "x.shape[lead + i] != 1", "i for i, s in enumerate(self.shape) if s == 1 and x.shape[i] != 1",
            "line up from the right"),
    Mistake("4.2", ".data in the rule", "return MyBroadcastTo(x.shape)(gy)", "return MyBroadcastTo(x.shape)(gy.data)",
            NO_GRAPH),
    Mistake("4.2", "forgotten gy", "return MyBroadcastTo(x.shape)(gy)",
            "return MyBroadcastTo(x.shape)(mg.Variable(np.ones(gy.shape)))", GY),
    Mistake("4.2", "a hard-coded shape", "return my_sum_to(gy, x.shape)", "return my_sum_to(gy, (2, 1))",
            "none written as a number"),
    Mistake("4.2", "a mean, not a sum, over the copies", "return my_sum_to(gy, x.shape)",
            "return my_sum_to(gy, x.shape) * (x.size / gy.size)", "constant factor"),
    Mistake("5.3", "a shift shared by the whole batch", "xp.exp(x - x.max(axis=-1, keepdims=True))",
            "xp.exp(x - x.max())", EACH_ROW),
    Mistake("5.4", "a shift shared by the whole batch", "m = x.max(axis=1, keepdims=True)", "m = x.max()", EACH_ROW),
    Mistake("6.1", "grad_outputs left out", "(gx,) = mg.grad(f(x), x, grad_outputs=v)",
            "(gx,) = mg.grad(F.sum(f(x)), x)", "weights each output's gradient by v"),
    Mistake("6.2", "a missing create_graph", "(g,) = mg.grad(f(x), x, create_graph=True)", "(g,) = mg.grad(f(x), x)",
            "recording a graph"),
    Mistake("6.2", "v left out of the second pass", "(hv,) = mg.grad(g, x, grad_outputs=v)", "(hv,) = mg.grad(g, x)",
            "(the gradient . v)"),
    Mistake("6.3", "the Jacobian transposed", "for i in range(m)])", "for i in range(m)], axis=1)", "transpose"),
    Mistake("6.3", "a square Jacobian assumed", "m = f(mg.Variable(x)).shape[0]", "m = len(x)",
            "comes from f's output"),
    Mistake("9.2", "a rule with k hard-coded to 2", "k = ctx.function.k", "k = 2", "k = 3"),
    Mistake("10.1", "a missing create_graph", "(g,) = mg.grad(F.sum(D(x)), x, create_graph=True)",
            "(g,) = mg.grad(F.sum(D(x)), x)", "must record its graph"),
    Mistake("10.1", "one norm for the whole batch", "norm = F.sum(g * g, axis=1) ** 0.5", "norm = F.sum(g * g) ** 0.5",
            "one norm per sample"),
    Mistake("10.1", "a hard-coded batch size", "/ x.shape[0]", "/ 2", "is wrong"),
    Mistake("10.1", "the penalty from .data", "norm = F.sum(g * g, axis=1) ** 0.5",
            "norm = mg.Variable(np.sqrt((g.data * g.data).sum(axis=1)))", "never from .data"),
    Mistake("13.1", "a quotient, inf / inf when differentiated again", "return (1 + x * x) ** -1.5 * tx",
            "return tx / (1 + x * x) ** 1.5", NAN),
    Mistake("13.1", "a cube of sqrt, inf * 0 when differentiated again", "return (1 + x * x) ** -1.5 * tx",
            "return tx / F.sqrt(1 + x * x) ** 3", NAN),
    Mistake("15.1", "a step of 0 at x = 0", "step = h * max(1.0, abs(old))", "step = h * abs(old)", "floor"),
    Mistake("3.3", ".data in the rule", "return gy * y * (1 - y)", "return gy * y.data * (1 - y.data)", NO_GRAPH),
    Mistake("5.2", ".data in the rule", "return F.matmul(gy, W.T), F.matmul(x.T, gy), F.sum(gy, axis=0)",
            "return F.matmul(gy, W.data.T), F.matmul(x.data.T, gy), F.sum(gy, axis=0)", "never on .data"),
    Mistake("5.3", ".data in the rule", "return y * (gy - F.sum(gy * y, axis=-1, keepdims=True))",
            "return y.data * (gy - F.sum(gy * y.data, axis=-1, keepdims=True))", NO_GRAPH),
    Mistake("9.1", ".data in the rule", "g = F.broadcast_to(F.reshape(gy,", "g = F.broadcast_to(F.reshape(gy.data,",
            NO_GRAPH),
    Mistake("15.2", "an unseeded generator", "np.random.default_rng(seed)", "np.random.default_rng()", "same seed"),
    Mistake("24.1", "the sum over the wrong axis", "return F.matmul(u, ctx.function.w)",
            "return F.matmul(ctx.function.w, u) if u.shape[0] == u.shape[1] else F.matmul(u, ctx.function.w)",
            "sums over the wrong axis"),
    Mistake("24.1", "the weights forgotten", "return F.matmul(u, ctx.function.w)", "return F.sum(u, axis=1)",
            "without the weights"),
    Mistake("24.1", "no sum over the copies", "return F.matmul(u, ctx.function.w)", "return u * ctx.function.w",
            "a cotangent of shape (3, 4) for an input of shape (3,)"),
    Mistake("24.2", "repeated indices written once",
            "    picks = (idx[:, None] == np.arange(x.shape[0])).astype(u.dtype)  # (m, n): row i picks x[idx[i]]\n"
            "    return F.matmul(picks, u, transpose_a=True)",
            "    g = np.zeros(x.shape)\n    g[idx] = u.data\n    return mg.Variable(g)", "added, not written"),
    Mistake("24.3", "the backward rules instead", "    _, f_jvp = func.linearize(f, x)\n"
            "    (g,) = func.linear_transpose(f_jvp, x)(u)\n    return g",
            "    return func.vjp(f, x)[1](u)[0]", "no backward rule registered for 'OnlyForward'"),
]


CATALOGUE += [
    Mistake("25.1", "the second derivative without its 1/2", "c * x2 - 0.5 * s * np.sum(x1 * x1, axis=0)",
            "c * x2 - s * np.sum(x1 * x1, axis=0)", "half the second derivative"),
    Mistake("25.1", "x2 left out", "c * x2 - 0.5 * s * np.sum(x1 * x1, axis=0)", "-0.5 * s * np.sum(x1 * x1, axis=0)",
            "y2 is J x2"),
    Mistake("25.2", "the cross term left out", "a2 * b0 + a0 * b2 + np.sum(a1 * b1, axis=0)", "a2 * b0 + a0 * b2",
            "the cross term is a1[k] b1[k]"),
]


# the exercises of lessons 21 to 23
COLOURING = "colouring needs"

CATALOGUE += [
    Mistake("21.1", "one JVP per column", "colours = below + above + 1", "colours = n", COLOURING),
    Mistake("21.1", "colours from the wider side of the band", "colours = below + above + 1",
            "colours = 2 * max(below, above) + 1", COLOURING),
    Mistake("21.1", "one colour too few", "colours = below + above + 1", "colours = below + above",
            "below + above + 1 colours"),
    Mistake("21.1", "the band's rows reversed", "slice(max(j - above, 0), j + below + 1)",
            "slice(max(j - below, 0), j + above + 1)", "rows j - above to j + below"),
    Mistake("21.1", "the whole JVP copied into each column", "J[rows, j] = compressed.data[rows]",
            "J[:, j] = compressed.data", "outside the band must be zero"),
    Mistake("21.1", "a negative start of a slice", "max(j - above, 0)", "j - above", "negative start"),
    Mistake("22.1", "forgotten gy", "return gy / dg_dx, gy * F.sin(x) / dg_dx", "return 1 / dg_dx, F.sin(x) / dg_dx",
            GY),
    Mistake("22.1", "the slope at the input, not at the root", "dg_dx = 1 - e * F.cos(x)", "dg_dx = 1 - e * F.cos(M)",
            "at the root x"),
    Mistake("22.1", "the minus of the theorem dropped", "return gy / dg_dx, gy * F.sin(x) / dg_dx",
            "return -gy / dg_dx, -gy * F.sin(x) / dg_dx", "sign error"),
    Mistake("22.1", "multiplied by dg/dx, not divided", "return gy / dg_dx, gy * F.sin(x) / dg_dx",
            "return gy * dg_dx, gy * F.sin(x) * dg_dx", "divide by dg/dx"),
    Mistake("22.1", ".data in the rule", "(x,) = ctx.outputs", "x = mg.Variable(ctx.outputs[0].data)",
            "never from .data"),
    Mistake("23.1", "an overflowing forward", "return a + xp.log1p(xp.exp(-2 * a)) - np.log(2.0)",
            "return xp.log(xp.cosh(x))", NAN),
    Mistake("23.1", "log 2 left out", "return a + xp.log1p(xp.exp(-2 * a)) - np.log(2.0)",
            "return a + xp.log1p(xp.exp(-2 * a))", "log 2"),
    Mistake("23.1", "forgotten gy", "return gy * F.tanh(x)", "return F.tanh(x)", GY),
    Mistake("23.1", "wrong sign", "return gy * F.tanh(x)", "return -gy * F.tanh(x)", "sign error"),
    Mistake("23.1", "an overflowing rule", "return gy * F.tanh(x)",
            "return gy * (F.exp(x) - F.exp(-x)) / (F.exp(x) + F.exp(-x))", NAN),
    Mistake("23.1", "an overflow when differentiated again", "return gy * F.tanh(x)",
            "return gy * (1 - 2 / (F.exp(2 * x) + 1))", NAN),
    Mistake("23.1", ".data in the rule", "return gy * F.tanh(x)", "return gy * np.tanh(x.data)", NO_GRAPH),
]


def _cells(exercise):
    return nbformat.read(notebook(exercise), as_version=4).cells


def _answer_cell(cells, exercise):
    (cell,) = [c for c in cells if c.metadata.get("nbgrader", {}).get("solution")
               and c.metadata["minigrad"]["exercise"] == exercise]
    return cell


def with_mistake(mistake):
    """The solution notebook's cells, with ``mistake`` written into its exercise's answer cell."""
    cells = _cells(mistake.exercise)
    cell = _answer_cell(cells, mistake.exercise)
    assert mistake.right in cell.source, f"{mistake}: the answer cell has no {mistake.right!r}"
    cell.source = cell.source.replace(mistake.right, mistake.wrong, 1)
    return cells


def notebook_names(cells, upto):
    """The names a notebook's code cells define, run up to (and with) the answer cell of ``upto``."""
    ns = {"__name__": "__main__"}
    for cell in cells:
        if cell.cell_type != "code" or "check(" in cell.source:
            continue
        exec(compile(cell.source, "<cell>", "exec"), ns)
        if cell.metadata.get("minigrad", {}).get("exercise") == upto:
            break
    return ns


@pytest.mark.parametrize("mistake", CATALOGUE, ids=str)
def test_a_typical_mistake_fails_a_visible_check_that_names_it(mistake):
    text = check_text(mistake.exercise, ns=notebook_names(with_mistake(mistake), mistake.exercise))
    first = text.splitlines()[0]
    assert "FAIL" in text and not first.endswith(": all visible tests passed."), f"{mistake} passes:\n{text}"
    assert mistake.says in " ".join(text.split()), f"{mistake}: no {mistake.says!r} in\n{text}"


GRADED = ["2.1 a reversed breadth-first order", "3.1 forgotten gy", "3.3 an overflowing formula",
          "5.3 softmax without the max shift", "7.1 a missing materialize_grads", "9.1 a window hard-coded to 2"]

GRADED += ["13.1 forgotten tangent", "14.1 a rule for the line x0 + t only", "14.2 through the quotient a / b",
           "15.2 a projection on ones", "16.1 recording in the forward"]

GRADED += ["24.2 repeated indices written once"]

GRADED += ["4.2 .data in the rule", "5.4 a shift shared by the whole batch", "6.3 a square Jacobian assumed",
           "10.1 a missing create_graph"]

GRADED += ["21.1 the whole JVP copied into each column", "22.1 the slope at the input, not at the root",
           "23.1 an overflowing forward"]


@pytest.fixture
def registered_tests_kept():
    """The grader registers the reference notebooks' hidden tests in this process: forget them afterwards,
    so that check() in later tests runs the visible tests only."""
    kept = {exercise: dict(tests) for exercise, tests in testing._tests.items()}
    yield
    testing._tests.clear()
    testing._tests.update(kept)


@pytest.mark.slow  # notebooks graded in sandboxes: seconds each
def test_a_typical_mistake_loses_points_when_graded(tmp_path, registered_tests_kept):
    from minigrad.grading.course import grade_all
    from minigrad.grading.sandbox import why_no_sandbox
    from minigrad.grading.score import Settings

    pytest.importorskip("IPython", reason="the grader runs notebooks in an IPython shell")
    chosen = [m for m in CATALOGUE if str(m) in GRADED]
    assert len(chosen) == len(GRADED)
    for k, mistake in enumerate(chosen):  # one student per mistake, so that each is graded alone
        nb = nbformat.read(notebook(mistake.exercise), as_version=4)
        nb.cells = with_mistake(mistake)
        path = tmp_path / f"student{k}" / notebook(mistake.exercise).name
        path.parent.mkdir()
        nbformat.write(nb, path)
    settings = Settings(cell_timeout=30, test_time_limit=30, sandbox=not why_no_sandbox())
    results = dict(grade_all(tmp_path, SOLUTIONS, settings, jobs=2))
    for k, mistake in enumerate(chosen):
        r = results[f"student{k}"]
        assert r.reasons == [], f"{mistake}: {r.reasons}"
        (exercise,) = [e for e in r.exercises if e.id == mistake.exercise]
        assert exercise.score < exercise.points, f"{mistake} scored full marks when graded"
        lost = [t for t in exercise.tests if not t["passed"] and not t["hidden"]]
        assert lost, f"{mistake}: no visible test failed when graded"
