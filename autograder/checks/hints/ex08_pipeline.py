"""The hints of ex08_pipeline: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse
hint` shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say
when an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'run_pipeline': [
        'Use two loops: rounds 1 to `max_rounds` outside, `passes` inside. Save `gm.code` at the start of each '
        'round and compare it at the end.',
        'Always continue with what a pass returns (`gm = p(gm)`). Right after each pass, run `gm.graph.lint()` in a '
        "`try` and raise a `RuntimeError` that names the pass. For callable objects, use `getattr(p, '__name__', "
        'type(p).__name__)`. Then `gm.recompile()`.',
        'Return `gm` when a round leaves `gm.code` unchanged; compare code, not node counts or objects. No passes '
        'returns in round 1. Past `max_rounds` (default 10), raise a `RuntimeError` with the number: with 4, a pass '
        'that changes 3 times settles, and one that changes 4 times raises.',
    ],
    'optimize_for_inference': [
        'Take `copy.deepcopy(model)` and put it in eval mode before `fx.symbolic_trace`; tracing freezes `if '
        'self.training` and `F.dropout(training=...)`. Then run helper passes with your `run_pipeline`: dropout, '
        'conv+BN, Linear chains, dead code.',
        'Remove every dropout module kind and functional call. Fold conv+BN (keep `eps`) and fuse Linears only when '
        'the first output has one user and each module has one call site. For dead code, use '
        '`graph.eliminate_dead_code()` and `gm.delete_all_unused_submodules()`.',
        'Fuse one pair at a time into the second module, so that repeated rounds fold longer chains. Let the fixed '
        'point sort out the order (e.g. dropout between conv and BN). Then `gm.eval()` (new modules start in '
        'training mode), check against the copy on `example_inputs`, and return `gm`.',
    ],
}

HINTS: dict[str, str] = {
    'ex08.this_case_reaches_fixed_point':
        'this case reaches its fixed point: {converges}',
    'ex08.after_max_rounds_rounds_all':
        'after max_rounds rounds that all changed gm.code, raise a RuntimeError that says no fixed point was '
        'reached in max_rounds rounds',
    'ex08.max_rounds_defaults_10_after':
        'max_rounds defaults to 10; after that many changing rounds, raise a RuntimeError that says so',
    'ex08.lint_right_after_each_pass':
        'lint right after each pass, and when it fails raise a RuntimeError whose message names that pass',
    'ex08.lint_right_after_each_pass_2':
        "lint right after each pass, so that the error names the pass that just ran: this one names '{named}', but "
        "'{wanted}' broke the graph",
    'ex08.call_gm_graph_lint_right':
        'call gm.graph.lint() right after each pass; when it fails, raise a RuntimeError whose message names that '
        'pass',
    'ex08.catch_error_gm_graph_lint':
        'catch the error of gm.graph.lint() and raise a RuntimeError whose message names the pass that just ran: '
        "lint's own message does not say which pass broke the graph",
    'ex08.run_compare_modules_model_eval':
        'run compare_modules(model.eval(), gm, example_inputs) after each pass to find the pass that changes the '
        'numbers',
    'ex08.check_what_each_pass_returns':
        'check what each pass returns before using it: when it is not a GraphModule (a pass that forgot `return gm` '
        'returns None), raise TypeError naming the pass',
    'ex08.call_gm_graph_lint_right_2':
        'call gm.graph.lint() right after every pass; when it fails, raise a RuntimeError whose message names that '
        'pass: here the next pass repairs the graph, so a lint at the end of the round finds nothing',
    'ex08.call_gm_graph_lint_right_3':
        'call gm.graph.lint() right after every pass; when it fails, raise a RuntimeError whose message names that '
        'pass',
    'ex08.not_only_none_graphmodule':
        'a pass that returns {returns} is broken too, not only one that returns None: test '
        'isinstance(result, fx.GraphModule) right after the call and raise TypeError naming the pass',
    'ex08.lint_graphmodule_pass_returned':
        "the pass '{wanted}' returns a new GraphModule: carry on with it first (gm = p(gm)), then lint and "
        'recompile that one; a lint of the GraphModule you passed to it checks a graph the pipeline no longer uses',
    'ex08.check_what_pass_returned_right':
        'check what the pass returned right after calling it: when it is not a GraphModule (isinstance(result, '
        'fx.GraphModule)), raise TypeError naming the pass; your {raised} came later, from using the None it '
        'returned',
    'ex08.max_rounds_defaults_message_says':
        'max_rounds defaults to {wanted}: the message says {said}, so the pipeline gave up after another number of '
        'rounds (or says another number)',
    'ex08.name_pass_message_raise_typeerror':
        'name the pass in the message: raise TypeError(f"pass {name!r} returned ...")',
    'ex08.name_pass_getattr_p_name':
        "name a pass by getattr(p, '__name__', type(p).__name__): callable objects have no __name__",
    'ex08.max_rounds_was_given_give':
        'max_rounds={wanted} was given: give up after that many rounds, and say so in the message',
    'ex08.say_message_how_many_rounds':
        "say in the message how many rounds ran without a fixed point: for example 'no fixed point after "
        "max_rounds={wanted} rounds'",
    'ex08.raise_subclass_fine_not':
        'raise a {expected} (a subclass is fine), not a {raised}',
    'ex08.code_seen_before_is_no_fixed_point':
        'a round that brings back the code of an earlier round is no fixed point: only a round that leaves gm.code '
        'as that round found it is one; passes that undo each other round after round never settle, and after '
        'max_rounds changing rounds run_pipeline raises a RuntimeError',
    'ex08.run_passes_on_every_call_keep_nothing':
        'run the passes on the GraphModule each call is given: keep nothing from an earlier call (another '
        'GraphModule with the same code may hold other weights, and the passes may log or count their calls)',
    'ex08.lint_before_recompile':
        'call gm.graph.lint() right after the pass and before gm.recompile(): recompiling a broken graph fails with '
        'an error of its own that names no pass, and lint says what is broken',
    'ex08.erase_dropout_node_not_module':
        'erase the dropout\'s node from the graph (after node.replace_all_uses_with(its input)); a module that does '
        'nothing in its place still leaves a call in the graph',
    'ex08.leave_caller_s_model_mode_or_eval':
        "leave the mode of the caller's model as it was, or in eval mode: work on copy.deepcopy(model) and put the "
        'copy in eval mode, so there is nothing to switch back',
    'ex08.fold_only_bn_with_running_stats':
        'a BatchNorm2d made with track_running_stats=False has no running statistics (running_mean is None): in '
        "eval mode too it normalises with the batch's own, which no conv weight can hold, so leave it unfolded",
    'ex08.raise_runtimeerror_message_says_what':
        'raise RuntimeError(...) with a message that says what went wrong and where',
    'ex08.call_gm_recompile_after_every':
        'call gm.recompile() after every pass',
    'ex08.nn_not_nn_dropout_nor':
        'nn.{mod_kind} is not nn.Dropout nor a subclass of it: test for every dropout module type (nn.Dropout, '
        'nn.Dropout1d/2d/3d, nn.AlphaDropout, nn.FeatureAlphaDropout)',
    'ex08.dropout_does_nothing_eval_mode':
        'dropout does nothing in eval mode: point its users at its input and erase the node',
    'ex08.this_dropout_was_traced_training':
        'this dropout was traced with training=True: put the copy in eval mode before tracing (F.dropout(..., '
        'training=self.training) reads the mode once, when tracing), then remove it',
    'ex08.remove_every_functional_dropout_too':
        'remove every functional dropout too ({target} here): F.dropout, F.dropout1d/2d/3d, F.alpha_dropout, '
        'F.feature_alpha_dropout, torch.dropout',
    'ex08.f_dropout_call_function_node':
        'F.dropout is a call_function node, not a module: remove those too',
    'ex08.end_every_pass_gm_graph':
        'end every pass with gm.graph.lint() to find the pass that breaks the graph',
    'ex08.return_graphmodule_last_pass_returned':
        'return the GraphModule that the last pass returned (gm = p(gm)), not the one you were given',
    'ex08.caller_s_batchnorm_statistics_moved':
        "the caller's BatchNorm statistics moved: something ran the caller's model in training mode; run only a "
        'copy, in eval mode (copy.deepcopy(model).eval())',
    'ex08.work_copy_deepcopy_model_folding':
        "work on copy.deepcopy(model): folding must not rewrite the weights of the caller's model",
    'ex08.call_eval_result_modules_you':
        'call .eval() on the result: modules you create start in training mode, and so do the container modules '
        "symbolic_trace creates for nested names like 'layers.0'",
    'ex08.conv_module_called_from_more':
        'a conv module called from more than one site keeps its BatchNorms: count the call sites of each conv '
        '(call_module nodes per target) and fold only into a conv called once',
    'ex08.gm_graph_eliminate_dead_code':
        'gm.graph.eliminate_dead_code() removes nodes whose results nobody uses',
    'ex08.gm_delete_all_unused_submodules':
        'gm.delete_all_unused_submodules() drops submodules the graph no longer calls',
    'ex08.run_passes_order_given_each':
        'run the passes in the order given, each once per round',
    'ex08.remove_dropout_first_then_dead':
        'remove dropout first, then dead code, then fold and fuse; or run the passes until nothing changes '
        '(run_pipeline)',
    'ex08.fold_bn_into_conv_conv':
        "fold_bn_into_conv(conv, bn) gives the folded conv; install it in place of the conv, point the BatchNorm's "
        'users at the conv node and erase the BatchNorm node',
    'ex08.walk_nodes_order_fuse_each':
        'walk the nodes in order and fuse each pair into the second node, so a chain of any length collapses (or '
        'run the fusion until nothing changes)',
    'ex08.fuse_linear_pair_first_second':
        "fuse_linear_pair(first, second) gives one Linear for the pair: install it as the second node's module, "
        "feed the second node the first one's input and erase the first node",
    'ex08.keep_going_round_after_round':
        'keep going round after round until a whole round leaves gm.code unchanged',
    'ex08.detect_fixed_point_comparing_gm':
        'detect the fixed point by comparing gm.code before and after a round: a pass may change the graph without '
        'changing its number of nodes',
    'ex08.call_gm_recompile_after_every_2':
        'call gm.recompile() after every pass, so gm.code is current even when a pass forgot to',
    'ex08.pass_may_return_new_graphmodule':
        'a pass may return a new GraphModule: keep what it returns (gm = p(gm))',
    'ex08.batchnorm_training_mode_normalises_batch':
        'BatchNorm in training mode normalises with batch statistics: put the copy in eval mode',
    'ex08.put_copy_eval_mode_before':
        'put the copy in eval mode *before* tracing: a Python `if self.training:` is decided once, when tracing, '
        'and frozen into the graph',
    'ex08.fold_divides_sqrt_running_var':
        'the fold divides by sqrt(running_var + eps): keep bn.eps',
    'ex08.conv2d_module_called_from_two':
        'a Conv2d module called from two sites is shared: folding a BatchNorm into it changes the other call too; '
        'count the call sites of a conv before folding (fold only when it is called once and its output has one '
        'user)',
    'ex08.conv_output_feeds_more_than':
        "fold a BatchNorm2d into its conv only when the conv's output is used by nothing else: a folded conv "
        'gives the normalised values to every user of its output; count the users of the conv node '
        '(len(node.users) == 1)',
    'ex08.fold_only_into_conv2d':
        'fold only into an nn.Conv2d (isinstance(m, nn.Conv2d)): another conv, such as an nn.ConvTranspose2d, holds '
        "its input channels in dim 0 of its weight, so fold_bn_into_conv's formula scales the wrong channels",
    'ex08.own_check_failed_on_case':
        'your own check of the numbers failed on this model, which is built to test one rule: {advice}',
    'ex08.subclass_nn_linear_is_linear':
        '{kind} is a subclass of nn.Linear, so it is a Linear: test isinstance(m, nn.Linear) (as calls_module '
        'does), not type(m) is nn.Linear',
    'ex08.linear_module_called_from_two':
        'a Linear module called from two sites is shared: fusing into it in place changes the other call too; fuse '
        'only when both modules are called once',
}
