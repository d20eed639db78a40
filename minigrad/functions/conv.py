"""2-D convolution on NCHW images, and the two functions that make up its gradient.

With W of shape (O, C, kh, kw) and the windows of ``im2col``,

    y[n, o, p, q] = sum_{c, i, j} W[o, c, i, j] x_pad[n, c, p*sh + i*dh, q*sw + j*dw]  (+ b[o]).

y is linear in x and linear in W, so each gradient is again a linear map:

- ``ConvolutionDataGrad(gy, W)``: gx = the transpose of "convolve with W",
  applied to gy (col2im of W^T gy);
- ``ConvolutionFilterGrad(x, gy)``: gW = sum over n, p, q of gy times the windows of x.

Both are Functions with registered rules, and their rules are built from
these three functions again (convolution, ConvolutionDataGrad,
ConvolutionFilterGrad), so a CNN can be differentiated to any order.
"""

from minigrad.backward_functions import register
from minigrad.families import transposed
from minigrad.cuda import get_array_module
from minigrad.forward_functions import register as register_forward
from minigrad.forward_functions import bilinear_tangent, tangent_sum
from minigrad.core.function import Function
from minigrad.functions._im2col import col2im, im2col, pair
from minigrad.functions.reduction import sum as _sum
from minigrad.functions.shape import reshape
from minigrad import series, taylor


class _ConvolutionParams(Function):
    """Base class: holds pad, stride and dilation, each a pair (height, width)."""

    def __init__(self, pad, stride, dilation):
        self.pad = pad
        self.stride = stride
        self.dilation = dilation

    def windows(self, x, kernel):
        return im2col(x, kernel, self.stride, self.pad, self.dilation)


class Convolution(_ConvolutionParams):
    def forward(self, x, W, b=None):
        col = self.windows(x, W.shape[2:])  # (N, C, kh, kw, OH, OW)
        n, oh, ow = col.shape[0], col.shape[4], col.shape[5]
        # one matrix product per image: (O, C*kh*kw) @ (C*kh*kw, OH*OW), already in NCHW order
        y = (W.reshape(W.shape[0], -1) @ col.reshape(n, -1, oh * ow)).reshape(n, -1, oh, ow)
        if b is None:
            return y
        if b.dtype == y.dtype:
            y += b.reshape(1, -1, 1, 1)  # in place on our own product
            return y
        return y + b.reshape(1, -1, 1, 1)  # a float64 b with float32 x and W: promoted, as NumPy would


def convolution(x, W, b=None, pad=(0, 0), stride=(1, 1), dilation=(1, 1)):
    """y = the 2-D convolution (cross-correlation) of x (N, C, H, W) with W (O, C, kh, kw), plus b (O,).

    ``pad`` adds zeros on each side, ``stride`` is the window's step,
    ``dilation`` the spacing of its taps; each is an int or a pair (height, width).
    """
    pad, stride = pair(pad, "convolution: pad", 0), pair(stride, "convolution: stride")
    dilation = pair(dilation, "convolution: dilation")
    _check_shapes(tuple(x.shape), tuple(W.shape), None if b is None else tuple(b.shape), pad, dilation)
    inputs = (x, W) if b is None else (x, W, b)
    return Convolution(pad, stride, dilation)(*inputs)


def _check_shapes(x_shape, W_shape, b_shape, pad, dilation):
    if len(x_shape) != 4 or len(W_shape) != 4:
        raise ValueError(
            f"convolution: x of shape {x_shape} and W of shape {W_shape}: both must be 4-D, "
            "x as (N, C, H, W) and W as (outmaps, inmaps, kh, kw)"
        )
    if x_shape[1] != W_shape[1]:
        raise ValueError(
            f"convolution: x of shape {x_shape} has {x_shape[1]} channels but W of shape {W_shape} "
            f"expects {W_shape[1]} (W is (outmaps, inmaps, kh, kw))"
        )
    for size, k, p, d, what in zip(x_shape[2:], W_shape[2:], pad, dilation, ("height", "width")):
        if size + 2 * p < d * (k - 1) + 1:
            raise ValueError(
                f"convolution: x of shape {x_shape} is smaller in {what} than the kernel of W "
                f"of shape {W_shape} (with pad {pad}, dilation {dilation}); pad x or use a smaller kernel"
            )
    if b_shape is not None and b_shape != (W_shape[0],):
        raise ValueError(
            f"convolution: b of shape {b_shape} does not fit W of shape {W_shape}; "
            f"b must have shape ({W_shape[0]},)"
        )


@register("Convolution")
def convolution_backward(ctx, gy):
    """y[n, o, p, q] = sum_{c, i, j} W[o, c, i, j] x_pad[n, c, p*sh + i*dh, q*sw + j*dw] + b[o]

    =>  dy[n, o, p, q]/dW[o, c, i, j] = that pixel of x_pad, dy[n, o, p, q]/d(that pixel) = W[o, c, i, j],
        dy[n, o, p, q]/db[o] = 1
    =>  gx = ConvolutionDataGrad(gy, W): every gy[n, o, p, q] W[o, c, i, j] added onto its pixel
        (padding dropped); gW = ConvolutionFilterGrad(x, gy): sum over n, p, q of gy[n, o, p, q]
        times that pixel; and, as b[o] is added at every n, p, q: gb = sum of gy over axes (0, 2, 3).
    """
    x, W = ctx.inputs[:2]
    f = ctx.function
    need = ctx.needs_input_grad
    gx = ConvolutionDataGrad(x.shape, f.pad, f.stride, f.dilation)(gy, W) if need[0] else None
    gW = ConvolutionFilterGrad(W.shape, f.pad, f.stride, f.dilation)(x, gy) if need[1] else None
    if len(need) == 2:
        return gx, gW
    gb = _sum(gy, axis=(0, 2, 3)) if need[2] else None
    return gx, gW, gb


@register_forward("Convolution")
def convolution_forward(ctx, tx, tW, tb=None):
    """y = conv(x, W) + b is bilinear in (x, W)  =>  dy = conv(dx, W) + conv(x, dW) + db

    =>  ty = conv(tx, W) + conv(x, tW) + tb[o] at every n, p, q.
    """
    x, W = ctx.inputs[:2]
    f = ctx.function
    ty = bilinear_tangent(Convolution(f.pad, f.stride, f.dilation), x, W, tx, tW)
    return tangent_sum(ty, None if tb is None else reshape(tb, (1, -1, 1, 1)))


@taylor.register("Convolution")
def convolution_taylor(ctx, x, W, b=None):
    """y = conv(x, W) + b: bilinear in (x, W), linear in b  =>  y_k = sum_{j=0..k} conv(x_j, W_{k-j}) + b_k."""
    y = series.bilinear(ctx.function.forward, x, W)
    return y if b is None else y + b[:, None, :, None, None]


transposed("Convolution", products=(0, 1))  # linear in (x, b) or in (W, b)


class ConvolutionDataGrad(_ConvolutionParams):
    """gx = the transpose of "convolve with W" applied to gy (a transposed convolution)."""

    def __init__(self, x_shape, pad, stride, dilation):
        super().__init__(pad, stride, dilation)
        self.x_shape = tuple(x_shape)

    def forward(self, gy, W):
        xp = get_array_module(gy)
        n, o, oh, ow = gy.shape
        # per image: (C*kh*kw, O) @ (O, OH*OW), then each column entry back onto its pixel
        gcol = (W.reshape(o, -1).T @ gy.reshape(n, o, oh * ow)).reshape((n,) + W.shape[1:] + (oh, ow))
        return xp.ascontiguousarray(col2im(gcol, self.x_shape, self.stride, self.pad, self.dilation))


@register("ConvolutionDataGrad")
def convolution_data_grad_backward(ctx, ggx):
    """gx = D(gy, W) is linear in gy and in W, with <ggx, D(gy, W)> = <conv(ggx, W), gy>

    =>  ggy = conv(ggx, W), and gW = ConvolutionFilterGrad(ggx, gy): the filter
    gradient of a convolution of ggx whose output gradient is gy.
    """
    gy, W = ctx.inputs
    f = ctx.function
    need_gy, need_W = ctx.needs_input_grad
    ggy = Convolution(f.pad, f.stride, f.dilation)(ggx, W) if need_gy else None
    gW = ConvolutionFilterGrad(W.shape, f.pad, f.stride, f.dilation)(ggx, gy) if need_W else None
    return ggy, gW


@register_forward("ConvolutionDataGrad")
def convolution_data_grad_forward(ctx, tgy, tW):
    """gx = D(gy, W) is bilinear  =>  d gx = D(d gy, W) + D(gy, dW)  =>  t = D(tgy, W) + D(gy, tW)."""
    gy, W = ctx.inputs
    f = ctx.function
    return bilinear_tangent(ConvolutionDataGrad(f.x_shape, f.pad, f.stride, f.dilation), gy, W, tgy, tW)


@taylor.register("ConvolutionDataGrad")
def convolution_data_grad_taylor(ctx, gy, W):
    """gx = D(gy, W) is bilinear  =>  gx_k = sum_{j=0..k} D(gy_j, W_{k-j})."""
    return series.bilinear(ctx.function.forward, gy, W)


transposed("ConvolutionDataGrad", products=(0, 1))


class ConvolutionFilterGrad(_ConvolutionParams):
    """gW[o, c, i, j] = sum over n, p, q of gy[n, o, p, q] times the windows of x."""

    def __init__(self, W_shape, pad, stride, dilation):
        super().__init__(pad, stride, dilation)
        self.W_shape = tuple(W_shape)

    def forward(self, x, gy):
        col = self.windows(x, self.W_shape[2:])  # (N, C, kh, kw, OH, OW)
        n, o, oh, ow = gy.shape
        # per image: (O, OH*OW) @ (OH*OW, C*kh*kw), summed over the images
        gW = gy.reshape(n, o, oh * ow) @ col.reshape(n, -1, oh * ow).transpose(0, 2, 1)
        return gW.sum(axis=0).reshape(self.W_shape)


@register("ConvolutionFilterGrad")
def convolution_filter_grad_backward(ctx, ggW):
    """gW = G(x, gy) is linear in x and in gy, with <ggW, G(x, gy)> = <conv(x, ggW), gy>

    =>  ggy = conv(x, ggW), and gx = ConvolutionDataGrad(gy, ggW).
    """
    x, gy = ctx.inputs
    f = ctx.function
    need_x, need_gy = ctx.needs_input_grad
    gx = ConvolutionDataGrad(x.shape, f.pad, f.stride, f.dilation)(gy, ggW) if need_x else None
    ggy = Convolution(f.pad, f.stride, f.dilation)(x, ggW) if need_gy else None
    return gx, ggy


@register_forward("ConvolutionFilterGrad")
def convolution_filter_grad_forward(ctx, tx, tgy):
    """gW = G(x, gy) is bilinear  =>  d gW = G(dx, gy) + G(x, d gy)  =>  t = G(tx, gy) + G(x, tgy)."""
    x, gy = ctx.inputs
    f = ctx.function
    return bilinear_tangent(ConvolutionFilterGrad(f.W_shape, f.pad, f.stride, f.dilation), x, gy, tx, tgy)


@taylor.register("ConvolutionFilterGrad")
def convolution_filter_grad_taylor(ctx, x, gy):
    """gW = G(x, gy) is bilinear  =>  gW_k = sum_{j=0..k} G(x_j, gy_{k-j})."""
    return series.bilinear(ctx.function.forward, x, gy)


transposed("ConvolutionFilterGrad", products=(0, 1))
