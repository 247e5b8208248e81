"""The hints of ex06_fusing: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse
hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say
when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'fuse_linear_pair': [
        'Expand `second(first(x)) = W2 (W1 x + b1) + b2` and collect the terms. The result is one affine map, with '
        'a new weight and a new bias.',
        'The weight is `second.weight @ first.weight`, in that order, with shape (out2, in1). The bias is '
        '`second.weight @ b1 + b2`, where a missing bias counts as zero. Hidden cases use `bias=False` on either '
        'layer or both, and float64 layers.',
        "Build `nn.Linear(first.in_features, second.out_features, ...)` with the layers' dtype. Fill it with "
        '`copy_` of detached tensors under `torch.no_grad()`. Return that one new layer, not a Sequential, and '
        'never edit `first` or `second`.',
    ],
    'fuse_consecutive_linears': [
        'Collect the chains first, then rewrite. Walk `gm.graph.nodes` in order; from each Linear call not already '
        'in a chain, follow its single user for as long as that user is the next Linear call.',
        'Find Linears with `isinstance(gm.get_submodule(node.target), nn.Linear)`, never by name. A chain goes on '
        'only while `len(node.users) == 1` and that user is a Linear; a fork, a ReLU or `F.linear` ends it. Chains '
        'can have any length, and a module may also be called elsewhere.',
        'For each chain of two or more, fold the modules with `fuse_linear_pair` and register the result under a '
        "fresh name with `gm.add_submodule`, never over the old name. Insert one `call_module` on the chain's "
        'input, `replace_all_uses_with` it, and erase the old nodes last-first. Then clean up, lint and recompile.',
    ],
    'fold_bn_into_conv': [
        'In eval mode, BatchNorm is a per-channel affine map: `scale = gamma / sqrt(running_var + eps)`, applied '
        'with a shift. Fold it into each output channel of the conv.',
        'Scale the weight along the output channels (reshape to `(-1, 1, 1, 1)`). The new bias is `(b - '
        'running_mean) * scale + beta`. No conv bias means b = 0; `affine=False` means gamma = 1 and beta = 0. Use '
        'the running statistics and `bn.eps` (hidden cases: eps=0.1, tiny variances).',
        'Start from `copy.deepcopy(conv)`: it keeps stride, padding, dilation, groups and dtype, and leaves `conv` '
        'untouched. Under `torch.no_grad()`, overwrite its weight and set `fused.bias = nn.Parameter(...)`, since '
        'it always gets a bias.',
    ],
    'fuse_conv_bn': [
        'Check the mode before anything else. Then find the `BatchNorm2d` call_module nodes whose input (`args[0]`, '
        "or `kwargs['input']` for a call by keyword) is a `Conv2d` call_module node, and fold each valid pair with "
        '`fold_bn_into_conv`.',
        'Raise `ValueError` that names the culprit when `gm` or any BatchNorm2d the graph calls is in training mode '
        '(hidden: only bn2, only gm itself, a BatchNorm2d after a relu). Skip a pair when the conv output has another '
        'user, the conv is called from two or more sites, or `bn.running_mean is None`.',
        'Count call sites with a `Counter` of call_module targets. For a valid pair, '
        '`gm.add_submodule(conv_node.target, folded)`; this is safe because the conv has one site. Then make the '
        "BN's users read the conv node, erase the BN node, and clean up, lint and recompile.",
    ],
}

HINTS: dict[str, str] = {
    'ex06.has_users_chain_ends_at':
        "'{name}' has {users} users: a chain ends at a Linear whose output has more than one user, so fuse a Linear "
        'into the next one only when len(node.users) == 1',
    'ex06.linear_called_input_keyword_input':
        'a Linear called with its input by keyword ({target}(input=...)) is left alone: fuse only Linear calls with '
        'one positional argument and no kwargs',
    'ex06.chain_s_fused_layer_computes':
        "a chain's fused layer computes what the chain computed: W = W_last @ ... @ W_first, b = W_last @ (... (W_2 "
        '@ b_1 + b_2) ...) + b_last',
    'ex06.expected_linear_call_whose_only':
        'expected: a Linear call whose only user is a Linear call reading it (both modules called from one site) is '
        'fused with it, along the whole chain',
    'ex06.erase_old_nodes_chain_after':
        'erase the old nodes of a chain after replace_all_uses_with (or run gm.graph.eliminate_dead_code())',
    'ex06.features_out_features_must_match':
        "in_features and out_features must match the weight's (out, in) shape: build a fresh nn.Linear(in, out, "
        '...), or set both when a copied layer gets a new weight',
    'ex06.there_was_nothing_fuse_here':
        'there was nothing to fuse here: leave the graph as it is',
    'ex06.chains_any_length_become_one':
        'chains of any length become ONE layer: after fusing two Linears, keep going while the next node is a '
        'Linear that reads it',
    'ex06.count_call_sites_each_linear':
        'count the call sites of each Linear first (Counter(n.target for n in gm.graph.nodes if n.op == '
        "'call_module')) and fuse a link only when both modules are called once",
    'ex06.register_each_fused_layer_new':
        'register each fused layer as a new submodule under a fresh name (gm.add_submodule(name, fused) with a name '
        "gm has no attribute of, hasattr(gm, name) False: no submodule, parameter or buffer): an original name must "
        'keep naming what it named',
    'ex06.chain_ends_at_linear_whose':
        'a chain ends at a Linear whose output has more than one user: fuse a Linear into the next one only when '
        'len(node.users) == 1',
    'ex06.linear_called_input_keyword_input_2':
        'a Linear called with its input by keyword ({target}(input=...)) is left alone: fuse only Linear calls with '
        'one positional argument and no kwargs',
    'ex06.find_linear_calls_module_type':
        'find Linear calls by module type (isinstance(gm.get_submodule(node.target), nn.Linear)), not by their '
        'names',
    'ex06.fusing_means_one_nn_linear':
        'fusing means ONE nn.Linear computing x @ W.T + b; expected: fused weight W = second.weight @ first.weight, '
        'of shape (second.out_features, first.in_features), and fused bias b = second.weight @ first.bias + '
        'second.bias (W2 @ b1 + b2, a missing bias counting as zero)',
    'ex06.folding_means_one_nn_conv2d':
        "folding means ONE nn.Conv2d whose weight and bias absorb the BatchNorm; expected, with the BatchNorm's "
        "running_mean and running_var: scale = weight / sqrt(running_var + eps), W' = W * scale.reshape(-1, 1, 1, "
        "1), b' = (b - running_mean) * scale + bias",
    'ex06.fold_only_when_conv_output':
        'fold only when the conv output has exactly one user (len(conv_node.users) == 1)',
    'ex06.conv_module_called_from_more':
        'a conv module called from more than one site is left alone: count call_module nodes per target before '
        'folding (folding would overwrite the conv that the other site also calls)',
    'ex06.skip_batchnorm2d_whose_running_mean':
        'skip a BatchNorm2d whose running_mean is None (track_running_stats=False): in eval mode it still '
        'normalizes with batch statistics',
    'ex06.only_conv2d_folds':
        "only an nn.Conv2d folds: '{target}' is a {what}, whose weight is laid out otherwise, so its BatchNorm2d "
        'stays (test isinstance(module, nn.Conv2d), not a common base class of convs)',
    'ex06.fold_batchnorm2d_only_when_input':
        'fold a BatchNorm2d only when its input node is a call of an nn.Conv2d',
    'ex06.conv_has_groups_so_weight':
        'conv has groups={groups}, so its weight has {per_group} input channels per group: build the folded conv '
        'with every setting of conv (groups, dilation, padding_mode too), e.g. copy.deepcopy(conv), then set its '
        'weight and bias',
    'ex06.not_batchnorm2d_graph_calls_only':
        "'{name}' is not a BatchNorm2d that the graph calls ({what}): only gm.training and the BatchNorm2d modules "
        "the graph calls decide; tracing re-creates containers such as '{name}' as plain modules in training mode",
    'ex06.call_gm_recompile_after_changing':
        'call gm.recompile() after changing the graph',
    'ex06.do_not_change_input_modules':
        'do not change the input modules in place: build a new nn.Linear (copy.copy shares the parameters; '
        'copy.deepcopy or a fresh nn.Linear does not)',
    'ex06.features_out_features_must_match_2':
        "in_features and out_features must match the weight's (out, in) shape: build a fresh "
        'nn.Linear(first.in_features, second.out_features, ...), or set both when a copied layer gets a new weight',
    'ex06.keep_dtype_nn_linear_dtype':
        'keep the dtype: nn.Linear(..., dtype=first.weight.dtype), or copy tensors without casting',
    'ex06.do_not_change_inputs_place':
        'do not change the inputs in place: fold into a copy (copy.deepcopy(conv)) and leave conv and bn as they '
        'were',
    'ex06.set_bias_even_when_conv':
        "set a bias even when the conv had none: b' = (b - running_mean) * scale + bias, with b = 0",
    'ex06.give_folded_weight_bias_conv':
        "give the folded weight and bias conv.weight's dtype ({want}), e.g. "
        'nn.Parameter(shift.to(conv.weight.dtype))',
    'ex06.replace_batchnorm_node_s_uses':
        "replace the BatchNorm node's uses with the conv node, then erase only the BatchNorm node",
    'ex06.each_folded_pair_keeps_one':
        'each folded pair keeps one conv call: when you add a node for the folded conv, erase the old conv node',
    'ex06.expected_each_folded_conv_computes':
        'expected: each folded conv computes what its Conv2d -> BatchNorm2d pair computed in eval mode (what '
        'fold_bn_into_conv returns), and every other module computes what it did',
    'ex06.add_bn_eps_running_var':
        'add bn.eps to running_var before the square root: scale = weight / sqrt(running_var + eps)',
    'ex06.keep_dtype_original_layers_pass':
        'keep the dtype of the original layers ({dtype}): pass dtype=... when you build a module, and cast nothing',
    'ex06.only_calls_fusable_pattern_change':
        'only the {kinds_text} calls of a fusable pattern change; every other node stays',
    'ex06.check_first_out_features_second':
        'check first.out_features == second.in_features and raise ValueError(...) naming both widths',
    'ex06.w1_w2_has_wrong_orientation':
        'W1 @ W2 has the wrong orientation: the fused weight is second.weight @ first.weight',
    'ex06.first_bias_passes_through_second':
        'the first bias passes through the second layer: b = W2 @ b1 + b2 (both terms; a missing bias counts as '
        'zero)',
    'ex06.fused_weight_right_bias_not':
        'the fused weight is right; the bias is not: b = second.weight @ first.bias + second.bias (W2 @ b1 + b2), '
        'here {few}, yours {yours}',
    'ex06.fused_bias_right_weight_not':
        'the fused bias is right; the weight is not: W = second.weight @ first.weight, of shape '
        '(second.out_features, first.in_features)',
    'ex06.check_bn_running_mean_none':
        'check bn.running_mean is None (track_running_stats=False) first and raise ValueError',
    'ex06.keep_every_setting_conv_stride':
        'keep every setting of the conv (stride, padding, dilation, groups, padding_mode): start from '
        'copy.deepcopy(conv) and only replace its weight and bias',
    'ex06.say_which_module_trains':
        "say which module is in training mode: put its name, '{name}' here, in the ValueError's message (the caller "
        'has to know which one to switch to eval mode)',
    'ex06.leave_modules_gm_holds':
        "leave the module objects gm holds as they were: they are the traced model's own (symbolic_trace shares "
        "them), so '{name}' changed in place changes that model too. Build a new module and register it with "
        'gm.add_submodule',
    'ex06.raise_valueerror_when_gm_training':
        'raise ValueError when gm.training is True or a BatchNorm2d that the graph calls has .training True',
    'ex06.float64_results_are_compared_at':
        "float64 results are compared at float64's precision, and this difference is of float32's size: look for a "
        'step computed in float32 (a .float(), or torch.zeros(n) or torch.tensor(...) without dtype=)',
    'ex06.module_called_from_more_than':
        'a module called from more than one site must not be overwritten; register the fused module under a new '
        'name (gm.add_submodule) or leave the pair alone',
    'ex06.raise_valueerror_yourself_before_touching':
        'raise ValueError(...) yourself before touching the graph',
    'ex06.expected_batchnorm2d_whose_input_conv2d':
        'expected: a BatchNorm2d whose input is a Conv2d call with one user (that conv called from one site, the '
        'BatchNorm with running statistics) is folded into the conv, and the BatchNorm node erased',
    'ex06.match_nodes_module_type_isinstance':
        'match nodes by module type (isinstance(gm.get_submodule(node.target), nn.BatchNorm2d) and its input node '
        'calls an nn.Conv2d), not by name',
    'ex06.fused_layer_chain_has_right':
        "the fused layer '{target}' of the chain {names} has the right weight but not the right bias: b = W_last @ "
        '(... (W_2 @ b_1 + b_2) ...) + b_last, here {few}, yours {yours}',
    'ex06.fused_layer_chain_has_weights':
        "the fused layer '{target}' of the chain {names} has the weights multiplied the other way round: the later "
        "layer's weight goes on the left, W = W_last @ ... @ W_first",
    'ex06.folded_weight_conv_weight_weight':
        'the folded weight is conv.weight * weight / (running_var + eps): the scale divides by the standard '
        'deviation, scale = weight / sqrt(running_var + eps)',
    'ex06.folded_weight_right_bias_not':
        "the folded weight is right; the bias is not: b' = (b - running_mean) * scale + bias, with b = 0 when the "
        'conv has none; here {few}, yours {yours}',
    'ex06.folded_bias_right_weight_not':
        "the folded bias is right; the weight is not: W' = conv.weight * scale.reshape(-1, 1, 1, 1)",
    'ex06.scale_belongs_output_channels_dim':
        'the scale belongs to the OUTPUT channels (dim 0 of the weight): W * scale.reshape(-1, 1, 1, 1)',
    'ex06.linear_formula':
        'expected: fused weight W = second.weight @ first.weight, of shape (second.out_features, '
        'first.in_features), and fused bias b = second.weight @ first.bias + second.bias (W2 @ b1 + b2, a missing '
        'bias counting as zero)',
    'ex06.fused_layer_shares_memory_input':
        'build the fused layer from tensors of its own: a new nn.Linear filled with copy_ under torch.no_grad() (or '
        '.clone() what you take from first or second); nn.Parameter(second.bias) shares the memory of second.bias',
    'ex06.graph_still_reads_deleted_module':
        "node '{node}' still reads '{target}' (a get_attr node): delete only the submodules nothing in the graph uses "
        'any more, e.g. with gm.delete_all_unused_submodules(), not the fused Linears by name',
    'ex06.only_batchnorm2d_modes_decide':
        "'{name}' is a {what}, not a BatchNorm2d: only gm.training and the BatchNorm2d modules the graph calls decide "
        'whether fuse_conv_bn raises; a {what} stays as it is, in whatever mode',
    'ex06.batchnorm2d_called_by_keyword':
        "BatchNorm2d '{target}' is called with its input by keyword ({target}(input=...)), so its node.args is "
        "empty: take its input from node.kwargs['input'], or leave a call without one positional argument alone",
    'ex06.bn_formula':
        "expected, with the BatchNorm's running_mean and running_var: scale = weight / sqrt(running_var + eps), W' "
        "= W * scale.reshape(-1, 1, 1, 1), b' = (b - running_mean) * scale + bias",
}
