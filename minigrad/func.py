"""Functional transforms on both modes, named and used as in torch.func and JAX.

    from minigrad import func

    y, ty = func.jvp(f, (x,), (v,))        # forward mode: ty = J v, one pass
    y, vjp_fn = func.vjp(f, x)             # reverse mode: vjp_fn(u) = (J^T u,)
    func.grad(loss)(w)                     # a function's gradient, as a function
    func.jacfwd(f)(x), func.jacrev(f)(x)   # J by columns (n jvps), by rows (m vjps)
    func.hessian(f)(x)                     # jacfwd(jacrev(f)): forward over reverse
    func.laplacian(f)(x)                   # sum_d d^2 f/dx_d^2 in collapsed Taylor mode (laplacian.py)

**Forward mode** (``jvp``) runs f once on fresh copies of its arguments,
``identity(x)``, new nodes of the graph that belong to this call alone. Then
it walks the recorded nodes from those inputs to the outputs, in
topological order, and hands each node's forward rule the tangents of its
inputs (``minigrad.forward_functions``); the result is its output's
tangent. Only nodes downstream of this call's inputs carry a tangent.

That is what keeps nested derivatives apart. In d/dx [x * d/dy (x + y)] the
inner jvp seeds y alone: x, an input of the outer call, has no tangent in
the inner walk, so d/dy (x + y) = 1 and the answer is 1. An implementation
that carries one dual number per value cannot tell the two perturbations
apart, lets x's count in the inner derivative, and answers 2 ("perturbation
confusion").

The rules run with recording on, so tangents are graphs and every transform
composes with every other, to any order. Inside ``no_grad()`` the results
are plain constants, and cheaper.
"""

from minigrad import autodiff
from minigrad.core.function import freed_message
from minigrad.core.graph import topological_order
from minigrad.core.rules import call_rule
from minigrad.core.variable import Variable
from minigrad.cuda import get_array_module
from minigrad.forward_functions import table as forward_rules
from minigrad.forward_functions import zero_tangent
from minigrad.functions.elementwise import identity
from minigrad.functions.shape import concatenate, reshape
from minigrad.laplacian import laplacian  # noqa: F401  (defined in its own module)
from minigrad.support.config import enable_grad, is_grad_enabled, set_grad_enabled
from minigrad.support.func_arguments import (as_outputs, checked_argnums, checked_function, checked_primals,
                                             matching, one_element)


# ---- forward mode ----
def jvp(f, primals, tangents, *, has_aux=False):
    """(outputs, output tangents): f at ``primals`` and its Jacobian-vector product J v, v = ``tangents``.

    ``primals`` and ``tangents`` are tuples, one entry per argument of f, of
    the same shapes and dtypes (a tangent may be None: that argument does not
    move). One forward pass: the tangents go through the forward rules. With
    ``has_aux``, f returns (output, aux) and jvp returns (outputs, tangents, aux).
    """
    checked_function(f, "jvp")
    primals = checked_primals(primals, "jvp", "primals")
    tangents = matching(checked_primals(tangents, "jvp", "tangents", len(primals), allow_none=True), primals,
                        "jvp", "tangents", "primals")
    keep = is_grad_enabled()
    xs = [_fresh(p) for p in primals]
    out, aux = _call(f, xs, has_aux, "jvp")
    outputs, single = as_outputs(out, "jvp")
    order = topological_order([y.node for y in outputs], {x.node for x in xs})
    with set_grad_enabled(keep):
        touts = _push(order, {x.node: t for x, t in zip(xs, tangents) if t is not None}, outputs)
    result = (_kept(out, keep), touts[0] if single else tuple(touts))
    return result + (aux,) if has_aux else result


def _push(order, seeds, outputs):
    """The tangent of each output (zeros where none arrives), from ``seeds``, {input node: tangent}."""
    tangents = dict(seeds)
    for f in order:
        inputs = f._inputs
        if inputs is None:  # freed by a backward pass: no tangent may need to cross it
            if any(n in tangents for n in f.parents()):
                raise RuntimeError(f"jvp: {freed_message(f)}")
            continue
        txs = [tangents.get(n) for n in inputs]
        if txs.count(None) == len(txs):
            continue  # not downstream of this call's inputs
        outs = [ref() for ref in f._outputs]
        for node, ty in zip(outs, call_rule(forward_rules, f, txs, outs)):
            if ty is not None:
                tangents[node] = ty
    found = [tangents.get(y.node) for y in outputs]
    return [zero_tangent(y) if t is None else t for y, t in zip(outputs, found)]


# ---- reverse mode ----
def vjp(f, *primals, has_aux=False):
    """(outputs, vjp_fn): f at ``primals``, and vjp_fn(u) = (J^T u for each primal), a tuple.

    ``u`` has the structure of the outputs (a Variable, or a tuple of them);
    vjp_fn can be called any number of times, each a reverse pass.
    """
    checked_function(f, "vjp")
    primals = checked_primals(primals, "vjp", "primals")
    keep = is_grad_enabled()
    xs = [_fresh(p) for p in primals]
    out, aux = _call(f, xs, has_aux, "vjp")
    outputs, single = as_outputs(out, "vjp")

    def vjp_fn(cotangents):
        if single and not (isinstance(cotangents, (tuple, list)) and len(cotangents) == 1):
            cotangents = (cotangents,)
        us = matching(checked_primals(cotangents, "vjp_fn", "cotangents", len(outputs)), outputs,
                      "vjp_fn", "cotangents", "outputs")
        return tuple(autodiff.grad(outputs, xs, grad_outputs=us, retain_graph=True,
                                   create_graph=is_grad_enabled(), materialize_grads=True))  # (read now, as torch)

    result = (_kept(out, keep), vjp_fn)
    return result + (aux,) if has_aux else result


def grad(f, argnums=0, has_aux=False):
    """The function computing the gradient of f, whose output has one element, with respect to argument
    ``argnums`` (a tuple of them for a tuple of gradients). With ``has_aux``: (gradient, aux)."""
    checked_function(f, "grad")

    def gradient(*args, **kwargs):
        value, g = _value_and_grad(f, args, kwargs, argnums, has_aux, "grad")
        return (g, value[1]) if has_aux else g

    return gradient


def value_and_grad(f, argnums=0, has_aux=False):
    """As ``grad``, but the function returns (value, gradient); ((value, aux), gradient) with ``has_aux``."""
    checked_function(f, "value_and_grad")
    return lambda *args, **kwargs: _value_and_grad(f, args, kwargs, argnums, has_aux, "value_and_grad")


def _value_and_grad(f, args, kwargs, argnums, has_aux, where):
    keep = is_grad_enabled()
    xs, nums = _arguments(args, argnums, where)
    out, aux = _call(f, xs, has_aux, where, kwargs)
    one_element(out, where)
    gs = autodiff.grad(out, [xs[i] for i in nums], retain_graph=keep, create_graph=keep, materialize_grads=True)
    value = _kept(out, keep)
    return ((value, aux) if has_aux else value), (gs[0] if isinstance(argnums, int) else tuple(gs))


# ---- Jacobians and Hessians ----
def jacfwd(f, argnums=0, *, has_aux=False):
    """The function computing the Jacobian of f, of shape output.shape + input.shape, column by
    column: one forward pass per input element (cheap for few inputs, many outputs)."""
    checked_function(f, "jacfwd")

    def jacobian(*args, **kwargs):
        keep, outputs, single, wrt, aux = _traced(f, args, kwargs, argnums, has_aux, "jacfwd")
        order = topological_order([y.node for y in outputs], {x.node for x in wrt})
        columns = [[[] for _ in wrt] for _ in outputs]  # [output][input]: tangents, one per input element
        with set_grad_enabled(keep):
            for i, x in enumerate(wrt):
                for e in _unit_vectors(x):
                    for j, t in enumerate(_push(order, {x.node: e}, outputs)):
                        columns[j][i].append(reshape(t, (-1, 1)))
            jac = [[_assembled(c, 1, y, x) for c, x in zip(cols, wrt)] for cols, y in zip(columns, outputs)]
        return _structured(jac, argnums, single, aux, has_aux)

    return jacobian


def jacrev(f, argnums=0, *, has_aux=False):
    """The function computing the Jacobian of f, of shape output.shape + input.shape, row by
    row: one reverse pass per output element (cheap for many inputs, few outputs)."""
    checked_function(f, "jacrev")

    def jacobian(*args, **kwargs):
        keep, outputs, single, wrt, aux = _traced(f, args, kwargs, argnums, has_aux, "jacrev")
        jac = []
        for y in outputs:
            rows = [[] for _ in wrt]
            for e in _unit_vectors(y):
                gs = autodiff.grad(y, wrt, grad_outputs=e, retain_graph=True, create_graph=keep,
                                   materialize_grads=True)
                for r, g in zip(rows, gs):
                    r.append(reshape(g, (1, -1)))
            with set_grad_enabled(keep):
                jac.append([_assembled(r, 0, y, x) for r, x in zip(rows, wrt)])
        return _structured(jac, argnums, single, aux, has_aux)

    return jacobian


def hessian(f, argnums=0):
    """The function computing the Hessian of f, of shape output.shape + input.shape + input.shape:
    jacfwd(jacrev(f)), forward mode over reverse mode, as in torch.func and JAX."""
    checked_function(f, "hessian")
    return jacfwd(jacrev(f, argnums), argnums)


def hvp(f, primals, tangents):
    """(f(*primals), H v): the Hessian of f (one-element output) times ``tangents``, one per primal,
    without forming H: the jvp of f's gradient (forward over reverse), one pass each way."""
    checked_function(f, "hvp")
    argnums = tuple(range(len(checked_primals(primals, "hvp", "primals"))))

    def flat(*xs):
        value, gs = _value_and_grad(f, xs, None, argnums, False, "hvp")
        return (value, *gs)

    (value, *_), (_, *hv) = jvp(flat, primals, tangents)
    return value, tuple(hv)


# ---- shared steps ----
def _fresh(x):
    """A new node holding x's values, for this call alone: identity(x) keeps x's graph behind it, so
    what comes out is still differentiable with respect to whatever x came from."""
    with enable_grad():
        return identity(x) if x.requires_grad else Variable(x.node.data, requires_grad=True)


def _arguments(args, argnums, where):
    """(the arguments, the ones at ``argnums`` as fresh Variables; the indices of those)."""
    nums = checked_argnums(argnums, len(args), where)
    xs = list(args)
    for i, x in zip(nums, checked_primals([args[i] for i in nums], where, "the arguments at argnums")):
        xs[i] = _fresh(x)
    return xs, nums


def _traced(f, args, kwargs, argnums, has_aux, where):
    """(recording was on, f's outputs as a list, whether it was one, the inputs at argnums, aux)."""
    keep = is_grad_enabled()
    xs, nums = _arguments(args, argnums, where)
    out, aux = _call(f, xs, has_aux, where, kwargs)
    outputs, single = as_outputs(out, where)
    return keep, outputs, single, [xs[i] for i in nums], aux


def _call(f, xs, has_aux, where, kwargs=None):
    """(f(*xs, **kwargs), aux), recorded: the trace every transform walks (keyword arguments are passed as
    they are, never differentiated)."""
    with enable_grad():
        out = f(*xs, **(kwargs or {}))
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"{where}: with has_aux=True, f must return a pair (output, aux), got "
                        f"{type(out).__name__}{f' of length {len(out)}' if isinstance(out, tuple) else ''}")
    return out


def _kept(out, keep):
    """The outputs as they are, or, with recording off, detached: constants."""
    if keep:
        return out
    return out.detach() if isinstance(out, Variable) else type(out)(y.detach() for y in out)


def _unit_vectors(x):
    """e_0, e_1, ...: constants of x's shape, dtype and device, each with a single 1."""
    data = x.node.data
    xp = get_array_module(data)
    for k in range(data.size):
        e = xp.zeros(data.size, dtype=data.dtype)
        e[k] = 1
        yield Variable(e.reshape(data.shape), requires_grad=False)


def _assembled(pieces, axis, y, x):
    """Rows (axis 0) or columns (axis 1) of the Jacobian of y by x, joined and shaped y.shape + x.shape."""
    if not pieces:  # x or y has no element: nothing to join
        xp = get_array_module(y.node.data)
        return Variable(xp.zeros(y.shape + x.shape, dtype=y.dtype), requires_grad=False)
    return reshape(concatenate(pieces, axis=axis), y.shape + x.shape)


def _structured(jac, argnums, single, aux, has_aux):
    """jac[output][input] in the shape of the answer: one Jacobian, or tuples over outputs and inputs."""
    per_output = [row[0] if isinstance(argnums, int) else tuple(row) for row in jac]
    result = per_output[0] if single else tuple(per_output)
    return (result, aux) if has_aux else result
