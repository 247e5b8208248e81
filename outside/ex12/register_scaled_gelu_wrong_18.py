# WRONG: backward forgets the factor scale (right only for scale == 1).
def register_scaled_gelu(namespace: str):
    @torch.library.custom_op(f"{namespace}::scaled_gelu", mutates_args=())
    def scaled_gelu_op(x: Tensor, scale: float) -> Tensor:
        return scale * F.gelu(x)

    @scaled_gelu_op.register_fake
    def _(x, scale):
        return torch.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.ops.aten.gelu_backward(grad, x), None

    scaled_gelu_op.register_autograd(backward, setup_context=setup_context)
    return scaled_gelu_op
