# RIGHT: scales the new tensor F.gelu returned in place (mul_): it writes only a tensor of its own, never x.
def register_scaled_gelu(namespace: str):
    @torch.library.custom_op(f"{namespace}::scaled_gelu", mutates_args=())
    def scaled_gelu(x: Tensor, scale: float) -> Tensor:
        out = F.gelu(x)
        out.mul_(scale)
        return out

    scaled_gelu.register_fake(lambda x, scale: torch.empty_like(x))

    def setup_context(ctx, inputs, output):
        x, scale = inputs
        ctx.save_for_backward(x)
        ctx.scale = scale

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return torch.ops.aten.gelu_backward(grad * ctx.scale, x), None

    scaled_gelu.register_autograd(backward, setup_context=setup_context)
    return scaled_gelu
