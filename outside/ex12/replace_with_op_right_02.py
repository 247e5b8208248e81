# RIGHT: an fx.Transformer that swaps the target in call_function, keeps every other node's meta
# (a wrapped function that stays keeps its mark), and lints and recompiles the new GraphModule.
def replace_with_op(gm: fx.GraphModule, fn, op) -> fx.GraphModule:
    class Swap(fx.Transformer):
        def run_node(self, n):
            out = super().run_node(n)
            if isinstance(out, fx.Proxy):
                out.node.meta = dict(n.meta)
                if n.op == "call_function" and n.target is fn:
                    out.node.meta.pop("is_wrapped", None)
            return out

        def call_function(self, target, args, kwargs):
            return super().call_function(op if target is fn else target, args, kwargs)

    out = Swap(gm).transform()
    out.graph.lint()
    out.recompile()
    return out
