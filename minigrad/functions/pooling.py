"""2-D pooling on NCHW images: max_pooling and average_pooling, with their backward functions.

Each output pixel summarises one kh x kw window of its channel:

- max pooling keeps the window's largest value, so its gradient goes to
  that one input pixel (the first one, on a tie, as torch and nnabla do);
- average pooling takes the window's mean, so its gradient is spread
  evenly, 1/(kh*kw) to every pixel of the window (padding counts as pixels
  holding 0, as torch's and nnabla's defaults).

Both gradients are linear in gy. They are Functions (MaxPoolingBackward,
AveragePoolingBackward) whose own rules pick from, or pool, the incoming
gradient again, so double backward through a CNN works.
"""

import numpy as np

from minigrad.families import linear
from minigrad.backward_functions import register
from minigrad.cuda import get_array_module, scatter_add
from minigrad.forward_functions import register as register_forward
from minigrad.core.function import Function
from minigrad.functions._im2col import col2im, im2col, pair
from minigrad.functions.shape import getitem, reshape
from minigrad import taylor


def _pool_args(x, kernel, stride, pad, where):
    kernel = pair(kernel, f"{where}: kernel")
    stride = kernel if stride is None else pair(stride, f"{where}: stride")
    pad = pair(pad, f"{where}: pad", 0)
    shape = tuple(x.shape)
    if len(shape) != 4:
        raise ValueError(f"{where}: x of shape {shape} must be 4-D, (N, C, H, W)")
    for size, k, p, what in zip(shape[2:], kernel, pad, ("height", "width")):
        if p >= k:
            raise ValueError(f"{where}: pad {pad} must be smaller than the kernel {kernel}")
        if size + 2 * p < k:
            raise ValueError(f"{where}: x of shape {shape} is smaller in {what} than the kernel {kernel}")
    return kernel, stride, pad


class MaxPooling(Function):
    def __init__(self, kernel, stride, pad):
        self.kernel = kernel
        self.stride = stride
        self.pad = pad
        self.indexes = None  # set by forward: where in x (flattened) each output came from

    def forward(self, x):
        xp = get_array_module(x)
        n, c, h, w = x.shape
        (kh, kw), (sh, sw), (ph, pw) = self.kernel, self.stride, self.pad
        col = im2col(x, self.kernel, self.stride, self.pad, (1, 1), pad_value=-np.inf)
        oh, ow = col.shape[4:]
        col = col.reshape(n, c, kh * kw, oh, ow)
        k = col.argmax(axis=2)  # the winning tap, (N, C, OH, OW)
        y = xp.take_along_axis(col, k[:, :, None], axis=2)[:, :, 0]
        if (ph or pw) and xp.isneginf(y).any():  # real pixels of -inf tie with the padding: a real one wins
            real = im2col(xp.ones((1, 1, h, w), dtype=bool), self.kernel, self.stride, self.pad, (1, 1),
                          pad_value=False).reshape(1, 1, kh * kw, oh, ow)
            k = ((col == y[:, :, None]) & real).argmax(axis=2)
        # The tap (k // kw, k % kw) of window (p, q) is pixel (p*sh - ph + k // kw, q*sw - pw + k % kw).
        rows = xp.arange(oh).reshape(-1, 1) * sh - ph + k // kw
        cols = xp.arange(ow) * sw - pw + k % kw
        planes = xp.arange(n * c).reshape(n, c, 1, 1)
        self.indexes = (planes * h + rows) * w + cols
        return y


def max_pooling(x, kernel, stride=None, pad=(0, 0)):
    """y = the largest value of each kernel window of x (N, C, H, W); ``stride`` defaults to the kernel."""
    kernel, stride, pad = _pool_args(x, kernel, stride, pad, "max_pooling")
    return MaxPooling(kernel, stride, pad)(x)


@register("MaxPooling")
def max_pooling_backward(ctx, gy):
    """y[p] = x[k(p)], k(p) the window's winner  =>  dy[p]/dx[m] = [m = k(p)]

    =>  gx = zeros with gy added at the winners: MaxPoolingBackward.
    """
    (x,) = ctx.inputs
    return MaxPoolingBackward(ctx.function.indexes, x.shape)(gy)


@register_forward("MaxPooling")
def max_pooling_forward(ctx, tx):
    """y[p] = x[k(p)], k(p) the window's winner  =>  dy[p] = dx[k(p)]  =>  ty = tx.flat[indexes]."""
    return getitem(reshape(tx, -1), ctx.function.indexes)


@taylor.register("MaxPooling")
def max_pooling_taylor(ctx, x):
    """y[p] = x[m(p)], m(p) the winner of window p in the values x_0 (the forward's ``indexes``):
    near x_0 the winners stay, so y_k[p] = x_k[m(p)] (the first of tied winners, as backward)."""
    return x.reshape(len(x), -1)[:, ctx.function.indexes]


class MaxPoolingBackward(Function):
    """gx = zeros of x's shape; gx.flat[indexes] += gy (windows that overlap may share a winner)."""

    def __init__(self, indexes, x_shape):
        self.indexes = indexes
        self.x_shape = tuple(x_shape)

    def forward(self, gy):
        xp = get_array_module(gy)
        gx = xp.zeros(int(np.prod(self.x_shape)), dtype=gy.dtype)
        indexes = xp.asarray(self.indexes)  # on gy's device, wherever the indexes were made
        scatter_add(gx, indexes.ravel(), gy.ravel())
        return gx.reshape(self.x_shape)


@register("MaxPoolingBackward")
def max_pooling_backward_backward(ctx, ggx):
    """gx = scatter(gy) is linear in gy; its transpose picks the winners again: ggy = ggx.flat[indexes]."""
    return getitem(reshape(ggx, -1), ctx.function.indexes)


linear("MaxPoolingBackward")


class AveragePooling(Function):
    def __init__(self, kernel, stride, pad):
        self.kernel = kernel
        self.stride = stride
        self.pad = pad

    def forward(self, x):
        col = im2col(x, self.kernel, self.stride, self.pad, (1, 1))
        return col.mean(axis=(2, 3))


def average_pooling(x, kernel, stride=None, pad=(0, 0)):
    """y = the mean of each kernel window of x (N, C, H, W), padding counted as zeros."""
    kernel, stride, pad = _pool_args(x, kernel, stride, pad, "average_pooling")
    return AveragePooling(kernel, stride, pad)(x)


@register("AveragePooling")
def average_pooling_backward(ctx, gy):
    """y[p] = (1/K) sum of x over window p, K = kh*kw  =>  dy[p]/dx[m] = 1/K for m in window p

    =>  gx = AveragePoolingBackward(gy): gy / K spread over each window, summed where windows overlap.
    """
    (x,) = ctx.inputs
    f = ctx.function
    return AveragePoolingBackward(x.shape, f.kernel, f.stride, f.pad)(gy)


linear("AveragePooling")


class AveragePoolingBackward(Function):
    """gx = col2im of gy / (kh*kw), copied to every tap of its window."""

    def __init__(self, x_shape, kernel, stride, pad):
        self.x_shape = tuple(x_shape)
        self.kernel = kernel
        self.stride = stride
        self.pad = pad

    def forward(self, gy):
        xp = get_array_module(gy)
        kh, kw = self.kernel
        n, c, oh, ow = gy.shape
        gcol = xp.broadcast_to((gy / (kh * kw))[:, :, None, None], (n, c, kh, kw, oh, ow))
        return xp.ascontiguousarray(col2im(gcol, self.x_shape, self.stride, self.pad, (1, 1)))


@register("AveragePoolingBackward")
def average_pooling_backward_backward(ctx, ggx):
    """gx = A^T gy, A the averaging map  =>  its transpose is A itself: ggy = average_pooling(ggx)."""
    f = ctx.function
    return AveragePooling(f.kernel, f.stride, f.pad)(ggx)


linear("AveragePoolingBackward")

