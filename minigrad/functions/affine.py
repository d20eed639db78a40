"""The fully connected layer, as nnabla writes it: affine(x, W, b, base_axis).

The axes of x from ``base_axis`` on are flattened into one vector of
features, which W maps to the outputs:

    x: (N, C, H, W) with base_axis=1  ->  (N, C*H*W) @ W (C*H*W, outputs) + b (outputs,).

The product and the bias are one Function, Affine, whose rule is written
with matmul (its transpose flags: no transpose nodes) and sum, so it
carries every order of derivative.
One Function rather than matmul then add saves an array per layer.
"""

import math

from minigrad.backward_functions import register
from minigrad.families import transposed
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import bilinear_tangent, tangent_sum
from minigrad.core.function import Function
from minigrad.functions.linalg import matmul
from minigrad.functions.reduction import sum
from minigrad.functions.shape import reshape
from minigrad import series, taylor


class Affine(Function):
    """y = x @ W + b for a 2-D x (N, inputs), W (inputs, outputs) and b (outputs,)."""

    reads_outputs = False  # the rule reads only the inputs

    def forward(self, x, W, b=None):
        y = x @ W
        if b is None:
            return y
        if b.dtype == y.dtype:
            y += b  # in place on our own product: no second array
            return y
        return y + b  # a float64 b with float32 x and W: promoted, as x @ W + b would be


@register("Affine")
def affine_backward(ctx, gy):
    """y_nj = sum_i x_ni W_ij + b_j  =>  dy_nj/dx_ni = W_ij, dy_nj/dW_ij = x_ni, dy_nj/db_j = 1

    =>  gx_ni = sum_j gy_nj W_ij,  gW_ij = sum_n x_ni gy_nj,  gb_j = sum_n gy_nj:
        gx = gy W^T,  gW = x^T gy,  gb = the sum of gy over axis 0.

    gx is computed last: it is the gradient the next rule reads, so it is
    still in the cache then (gW, as large as W, would have pushed it out).
    """
    x, W = ctx.inputs[:2]
    need = ctx.needs_input_grad
    gW = matmul(x, gy, transpose_a=True) if need[1] else None
    gb = sum(gy, axis=0) if len(need) == 3 and need[2] else None
    gx = matmul(gy, W, transpose_b=True) if need[0] else None
    return (gx, gW) if len(need) == 2 else (gx, gW, gb)


@register_forward("Affine")
def affine_forward(ctx, tx, tW, tb=None):
    """y = x W + b  =>  dy = dx W + x dW + db  =>  ty = tx W + x tW + tb (tb broadcast over the batch)."""
    x, W = ctx.inputs[:2]
    return tangent_sum(bilinear_tangent(matmul, x, W, tx, tW), tb)


def affine(x, W, b=None, base_axis=1):
    """y = x @ W + b over the features of x from ``base_axis`` on; W has shape (inputs, *outputs)."""
    x_shape, W_shape = tuple(x.shape), tuple(W.shape)
    if (base_axis == 1 and len(x_shape) == 2 and len(W_shape) == 2 and x_shape[1] == W_shape[0]
            and (b is None or tuple(b.shape) == W_shape[1:])):  # the common case: no reshapes
        return Affine()(x, W) if b is None else Affine()(x, W, b)
    check_base_axis(x_shape, base_axis, "affine")
    batch = x_shape[:base_axis]
    features = math.prod(x_shape[base_axis:])
    if len(W_shape) < 2 or W_shape[0] != features:
        raise ValueError(
            f"affine: x of shape {x_shape} has {features} features from base_axis={base_axis} on, "
            f"but W of shape {W_shape} expects {W_shape[0] if W_shape else '?'}; W must be "
            f"({features}, outputs)"
        )
    outputs = W_shape[1:]
    if b is not None and tuple(b.shape) != outputs:
        raise ValueError(f"affine: b of shape {tuple(b.shape)} does not fit W of shape {W_shape}; "
                         f"b must have shape {outputs}")
    x2 = x if len(x_shape) == 2 and base_axis == 1 else reshape(x, (math.prod(batch), features))
    W2 = W if len(W_shape) == 2 else reshape(W, (features, math.prod(outputs)))
    args = (x2, W2) if b is None else (x2, W2, b if len(outputs) == 1 else reshape(b, (math.prod(outputs),)))
    y = Affine()(*args)
    return y if len(batch) == 1 and len(outputs) == 1 else reshape(y, batch + outputs)


def check_base_axis(x_shape, base_axis, where):
    """ValueError unless ``base_axis`` is an axis of x: its features are the axes from there on."""
    if not 0 <= base_axis < len(x_shape):
        one = f"; one sample needs a batch axis first: x[None] has shape {(1,) + x_shape}" if len(x_shape) == 1 else ""
        raise ValueError(
            f"{where}: base_axis={base_axis} is out of range for x of shape {x_shape}: the features are "
            f"the axes of x from base_axis on, so base_axis must be 0 to {len(x_shape) - 1}{one}"
        )


@taylor.register("Affine")
def affine_taylor(ctx, x, W, b=None):
    """y = x W + b: bilinear in (x, W), linear in b  =>  y_k = sum_{j=0..k} x_j W_{k-j} + b_k."""
    y = series.bilinear(ctx.function.forward, x, W)
    return y if b is None else y + b[:, None, :]


transposed("Affine", products=(0, 1))  # x W + b: linear in (x, b) or in (W, b)
