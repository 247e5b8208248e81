# WRONG: the fake kernel always answers float32 (torch.empty(x.shape)), wrong for a float64 input.
def register_scaled_gelu(namespace: str):
    @torch.library.custom_op(f"{namespace}::scaled_gelu", mutates_args=())
    def scaled_gelu_op(x: Tensor, scale: float) -> Tensor:
        return scale * F.gelu(x)

    @scaled_gelu_op.register_fake
    def _(x, scale):
        return torch.empty(x.shape)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scale = inputs[1]

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        cdf = 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
        pdf = torch.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
        return grad * ctx.scale * (cdf + x * pdf), None

    scaled_gelu_op.register_autograd(backward, setup_context=setup_context)
    return scaled_gelu_op
