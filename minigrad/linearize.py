"""Reverse mode is forward mode transposed: ``linearize``, then ``linear_transpose`` (JAX's names).

**linearize(f, *primals)** runs f once, recording its graph, and pushes
placeholder tangents through the forward rules (``minigrad.forward_functions``),
recording what they do. A forward rule is linear in its tangents: sin's is
``cos(x) * tx``, where cos(x) is computed there and then, once, and tx is the
placeholder. Of what was recorded, the nodes that depend on a placeholder
form the *linear graph*: linear operations of the tangents (Mul by cos(x),
Reshape, Sum, MatMul by a constant W, ...) whose other inputs are constants.
``f_jvp(*tangents)`` replays that graph on the tangents given: J t, without
calling f and without running the forward pass of any Function that is not
linear in the tangents (no sin, no exp: their values are already constants).

**linear_transpose(f_lin, *primals)** needs the linear graph of f_lin. An
f_jvp made by linearize carries the one it replays (``f_jvp.linear_graph``);
any other f_lin is called once, on placeholders of the primals' shapes and
dtypes, and what it records is its graph. Every Function of the graph must
be linear in what depends on the arguments. ``f_t(*cotangents)`` walks the
graph from the outputs back, calling each node's transpose rule
(``minigrad.transpose_functions``) and adding what comes back, as the
reverse walker does with backward rules. Since <L t, u> = <t, L^T u>,

    vjp(f, x)(u) = linear_transpose(linearize(f, x)[1], x)(u) = J^T u,

with rules only for the linear Functions: reverse mode needs no table of
its own. The rules run with recording on, so the results are graphs of the
primals (through the constants) and of the cotangents: a VJP found by
transposition differentiates again.

What it costs: ``linearize`` runs f and the forward rules once each (a
forward rule's product, tx W, runs once on the placeholder, to be recorded);
the VJP then runs one transpose rule per linear node, what the backward pass
runs: on an MLP, as many matrix products as mg.grad's backward pass. The
linear graph keeps every constant (cos(x) for each sin) from ``linearize``
until f_jvp is dropped, as the backward tape keeps what its rules read.
"""

from minigrad.core.function import freed_message
from minigrad.core.graph import topological_order
from minigrad.autodiff import differentiable, mark
from minigrad.core.rules import call_rule
from minigrad.core.variable import Variable
from minigrad.cuda import get_array_module
from minigrad.forward_functions import table as forward_rules
from minigrad.forward_functions import zero_tangent
from minigrad.functions.elementwise import identity
from minigrad.support.config import enable_grad
from minigrad.support.func_arguments import as_outputs, checked_function, checked_primals, matching, with_aux
from minigrad.transpose_functions import table as transpose_rules
from minigrad.transpose_functions import NotLinearError, why_not_linear


# ---- linearize: forward mode, keeping only the linear map ----
def linearize(f, *primals, has_aux=False):
    """(outputs, f_jvp): f at ``primals``, and f_jvp(*tangents) = J t, one tangent per primal.

    f_jvp replays the linear graph recorded once here (see the module's
    docstring), ``f_jvp.linear_graph``, which linear_transpose walks back; a
    tangent may be None (that primal does not move). With ``has_aux``, f
    returns (output, aux), and linearize returns (outputs, f_jvp, aux).
    """
    checked_function(f, "linearize")
    primals = checked_primals(primals, "linearize", "primals")
    since = mark()
    with enable_grad():
        xs = [identity(p) if p.requires_grad else Variable(p.node.data, requires_grad=True) for p in primals]
        out, aux = with_aux(f(*xs), has_aux, "linearize")
        outputs, single = as_outputs(out, "linearize")
        seeds = [_placeholder(x) for x in xs]
        touts = _pushed(outputs, xs, seeds)
    keep = differentiable(outputs, since, xs)  # (the linear map's constants: Variables, or arrays)
    graph = LinearGraph(seeds, touts, single, keep, "linearize")

    def f_jvp(*tangents):
        ts = matching(checked_primals(tangents, "f_jvp", "tangents", len(primals), allow_none=True), primals,
                      "f_jvp", "tangents", "primals")
        ts = [zero_tangent(p) if t is None else t for p, t in zip(primals, ts)]
        ys = graph.replay(ts)
        return ys[0] if single else tuple(ys)

    f_jvp.linear_graph = graph  # (linear_transpose walks it back: it need not call f_jvp to record it again)
    if not keep:
        out = out.detach() if single else tuple(y.detach() for y in outputs)
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def _placeholder(x):
    """A tangent that stands for any: zeros of x's shape and dtype, a leaf that records what is done to it."""
    return Variable(get_array_module(x.node.data).zeros(x.shape, dtype=x.dtype), requires_grad=True)


def _pushed(outputs, xs, seeds):
    """The tangents of the outputs (None where none arrives), from the seeds, through the forward rules."""
    tangents = {x.node: t for x, t in zip(xs, seeds)}
    for f in topological_order([y.node for y in outputs], set(tangents)):
        txs = [tangents.get(n) for n in f.parents()]
        if txs.count(None) == len(txs):
            continue  # not downstream of the arguments
        if f._inputs is None:
            raise RuntimeError(f"linearize: {freed_message(f)}")
        outs = [ref() for ref in f._outputs]
        for node, ty in zip(outs, call_rule(forward_rules, f, txs, outs)):
            if ty is not None:
                tangents[node] = ty
    found = [tangents.get(y.node) for y in outputs]
    return [zero_tangent(y) if t is None else t for y, t in zip(outputs, found)]  # (zeros: it does not move)


class LinearGraph:
    """The recorded nodes between the placeholders ``seeds`` and the ``outputs`` (Variables), in order.

    Each step is a Function node, the constants it takes (None for an input
    that moves: a placeholder or a step's output) and its output nodes.
    ``replay`` runs the steps forward on new tangents (f_jvp), ``transpose``
    runs their transpose rules backward on cotangents (f_t): the same graph,
    both ways. Unless ``keep``, the constants are detached, in the steps too,
    so the graph holds nothing of f's and what it computes is constant in the primals.
    """

    def __init__(self, seeds, outputs, single, keep=True, where="linear_transpose"):
        self.seeds, self.single = seeds, single
        self.outputs = [(y.node, _constant(y.node, keep)) for y in outputs]
        self.steps, moving = [], {s.node for s in seeds}
        for g in topological_order([y.node for y in outputs], set(moving)):
            flags = [n in moving for n in g.parents()]  # (a node freed by a backward pass is upstream: a constant)
            if True not in flags:
                continue
            if g._inputs is None:
                raise RuntimeError(f"{where}: {freed_message(g)}")
            args = [None if flag else _constant(n, keep) for n, flag in zip(g._inputs, flags)]
            if not keep:  # the rules read ctx.inputs: the detached constants, as replay passes them
                g._inputs = [n if a is None else a.node for n, a in zip(g._inputs, args)]
            outs = [ref() for ref in g._outputs]
            self.steps.append((g, args, outs))
            moving.update(o for o in outs if o is not None)
        self.moving = moving

    def takes(self, primals):
        """Whether the seeds are of these primals' number, shapes and dtypes."""
        return len(primals) == len(self.seeds) and all(
            p.shape == s.shape and p.dtype == s.dtype for p, s in zip(primals, self.seeds))

    def replay(self, tangents):
        """The outputs' tangents for these input tangents: every step called again, on the new values."""
        values = {s.node: t for s, t in zip(self.seeds, tangents)}
        for g, args, outs in self.steps:
            ys = g(*[values[n] if a is None else a for n, a in zip(g._inputs, args)])
            for node, y in zip(outs, ys if isinstance(ys, tuple) else (ys,)):
                values[node] = y
        return [values.get(node, constant) for node, constant in self.outputs]  # (a constant: it does not move)

    def transpose(self, cotangents):
        """The seeds' cotangents L^T u for the outputs' cotangents u: the reverse walker's loop, with each
        step's transpose rule, from the outputs back, adding what comes back where paths meet."""
        grads = {}
        for (node, _), u in zip(self.outputs, cotangents):
            if node in self.moving:
                _add(grads, node, u)
        for g, args, outs in reversed(self.steps):
            gys = [grads.pop(node, None) for node in outs]
            if gys.count(None) == len(gys):
                continue  # no cotangent reaches it
            flags = tuple(a is None for a in args)
            g.needs_input_grad = flags  # the linear inputs: what the rule reads as ctx.needs_input_grad
            for x, gx in zip(g._inputs, call_rule(transpose_rules, g, gys, g._inputs, flags)):
                if gx is not None:
                    _add(grads, x, gx)
        return [grads[s.node] if s.node in grads else zero_tangent(s) for s in self.seeds]

    def check_linear(self):
        """NotLinearError at the first step that is not linear in the inputs that move, or at an output that
        does not move and is not zero (an affine map)."""
        for g, args, _ in self.steps:
            reason = why_not_linear(g, tuple(a is None for a in args))
            if reason is not None:
                raise NotLinearError(f"linear_transpose: f_lin is not linear in its arguments: {reason}. Only a "
                                     "linear function has a transpose: pass the f_jvp of func.linearize, or a "
                                     "function built of linear Functions of its arguments")
        for i, (node, constant) in enumerate(self.outputs):
            if node not in self.moving and get_array_module(constant.node.data).any(constant.node.data):
                raise NotLinearError(f"linear_transpose: output {i} of f_lin does not depend on its arguments and "
                                     "is not zero: f_lin is affine, not linear (f(0) must be 0)")


def _constant(node, keep):
    """The Variable of a constant of the linear graph: still a function of the primals if ``keep``."""
    v = node.variable()
    return v if keep else v.detach()


def _add(grads, node, g):
    grads[node] = g if node not in grads else grads[node] + g


# ---- linear_transpose: the linear graph walked backward ----
def linear_transpose(f_lin, *primals):
    """f_t with f_t(*cotangents) = (L^T u for each argument), L = f_lin, a tuple; <L t, u> = <t, L^T u>.

    ``primals`` give the arguments' shapes and dtypes (their values are not
    read). The f_jvp of linearize is not called: its linear graph is walked
    back as it was recorded. Any other f_lin is called once, here, on
    placeholders. A Function on the way that is not linear in them raises
    NotLinearError (a TypeError and a ValueError), naming it and saying why.
    """
    checked_function(f_lin, "linear_transpose")
    primals = checked_primals(primals, "linear_transpose", "primals")
    graph = getattr(f_lin, "linear_graph", None)
    if not isinstance(graph, LinearGraph) or not graph.takes(primals):
        with enable_grad():
            seeds = [_placeholder(p) for p in primals]
            outputs, single = as_outputs(f_lin(*seeds), "linear_transpose")
        graph = LinearGraph(seeds, outputs, single)
    graph.check_linear()
    outputs = [constant for _, constant in graph.outputs]  # (for their shapes and dtypes)

    def f_t(*cotangents):
        if len(cotangents) == 1 and not graph.single and isinstance(cotangents[0], (tuple, list)):
            cotangents = tuple(cotangents[0])  # f_t((u0, u1)) as f_t(u0, u1)
        us = matching(checked_primals(cotangents, "f_t", "cotangents", len(outputs), reference="f_lin's outputs"),
                      outputs, "f_t", "cotangents", "f_lin's outputs")
        return tuple(graph.transpose(us))

    return f_t


def transposed_vjp(f, *primals, has_aux=False):
    """func.vjp(f, *primals, method="transpose"): (outputs, vjp_fn), vjp_fn(u) = f_t(u) where f_t is the
    transpose of f's linearization, walked on the graph linearize recorded. With ``has_aux``, f returns
    (output, aux), and aux comes third."""
    checked_function(f, "vjp")
    out, f_jvp, *aux = linearize(f, *primals, has_aux=has_aux)
    f_t = linear_transpose(f_jvp, *primals)

    outputs = [out] if isinstance(out, Variable) else list(out)

    def vjp_fn(cotangents):
        if isinstance(out, Variable) and not (isinstance(cotangents, (tuple, list)) and len(cotangents) == 1):
            cotangents = (cotangents,)
        matching(checked_primals(cotangents, "vjp_fn", "cotangents", len(outputs), reference="outputs"), outputs,
                 "vjp_fn", "cotangents", "outputs")  # (named as vjp_fn's, as the backward method names them)
        return f_t(*cotangents)

    return (out, vjp_fn, *aux)
