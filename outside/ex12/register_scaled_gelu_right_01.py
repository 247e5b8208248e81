# RIGHT: a NumPy kernel like the lesson's, with the fake kernel and autograd registered through the
# torch.library functions by the qualified name (not the decorators on the returned object).
def register_scaled_gelu(namespace: str):
    import numpy as np

    name = f"{namespace}::scaled_gelu"
    erf = np.vectorize(math.erf)

    def kernel(x: Tensor, scale: float) -> Tensor:
        a = x.detach().cpu().numpy()
        out = scale * 0.5 * a * (1.0 + erf(a / math.sqrt(2.0)))
        return torch.from_numpy(np.asarray(out, dtype=a.dtype)).to(x.device)

    op = torch.library.custom_op(name, kernel, mutates_args=())
    torch.library.register_fake(name, lambda x, scale: x.new_empty(x.shape))

    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(x)
        ctx.scale = scale

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.ops.aten.gelu_backward(grad, x) * ctx.scale, None

    torch.library.register_autograd(name, backward, setup_context=setup_context)
    return op
