# WRONG: no backward (the text: a backward so that gradients flow to x).
def register_scaled_gelu(namespace: str):
    @torch.library.custom_op(f"{namespace}::scaled_gelu", mutates_args=())
    def scaled_gelu_op(x: Tensor, scale: float) -> Tensor:
        return scale * F.gelu(x)

    @scaled_gelu_op.register_fake
    def _(x, scale):
        return torch.empty_like(x)

    return scaled_gelu_op
