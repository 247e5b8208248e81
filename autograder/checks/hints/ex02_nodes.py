"""The hints of ex02_nodes: `PROGRESSIVE`, three per graded function from a nudge to nearly the answer (`fxcourse hint`
shows the next one, in the format autograder/coursedata/hints.py describes), and `HINTS`, what its checks say when
an answer fails, by id (a template's {fields} are filled by the judge that names it)."""
from __future__ import annotations

__all__ = ["PROGRESSIVE", "HINTS"]

PROGRESSIVE: dict[str, list[str]] = {
    'op_histogram': [
        "Walk `gm.graph.nodes` and look at each node's `node.op`. The answer maps each opcode to the number of "
        'nodes that have it.',
        'Every node counts, including `placeholder`, `get_attr` and `output`. Only opcodes that occur become keys, '
        'so there are no zeros. Count nodes, not submodules: a module called twice is two `call_module` nodes.',
        'Start from an empty dict and add one to the entry of `node.op` for each node (`dict.get` with a default of '
        '0 helps). Return the dict itself, not a sorted list of its items.',
    ],
    'called_modules': [
        'Only `call_module` nodes call submodules, so keep the nodes of `gm.graph.nodes` whose `node.op` is '
        "'call_module'.",
        'For a call_module node, the qualified name is in `node.target`. `node.name` is a different string, and for '
        "nested modules they differ. Don't list what `gm.named_modules()` holds: a registered module the graph "
        'never calls is left out, and a module called twice is listed twice.',
        'Keep graph order and repeats: a list comprehension over `gm.graph.nodes` that keeps `node.target` for '
        'every `call_module` node, with no set, no sorting and no module objects.',
    ],
    'consumers': [
        'First find the node whose `node.name` equals `node_name`. Its `node.users` holds the nodes that read it.',
        '`node.users` covers uses inside lists and keyword arguments, and the output node, but it keeps them in '
        'creation order, not graph order. Look nodes up by `node.name`, never by `node.target`. An unknown name '
        'raises `KeyError` with the name in its message.',
        "Build a name-to-node dict from `gm.graph.nodes` and raise `KeyError(f'no node named {node_name!r}')` when "
        "the name is missing. Then walk `gm.graph.nodes` again and keep `n.name` for every `n` in the found node's "
        '`users`.',
    ],
    'graph_depth': [
        'You want the longest path, and `gm.graph.nodes` is already in topological order: every node comes after '
        'its inputs. One forward loop over the nodes is enough, with no graph search.',
        'Paths start only at placeholders, and with several inputs any of them can start one. A `get_attr` chain or '
        'a `torch.ones(...)` with no inputs starts nothing. Count edges, including the edge into `output`. Dead '
        'branches never reach the output, so they add nothing.',
        'Keep a dict `depth`. Placeholders get 0. Any node with inputs in `depth` (use `node.all_input_nodes`, not '
        'just `args[0]`) gets 1 plus the largest of theirs; other nodes get no entry. Return the depth of the '
        '`output` node.',
    ],
}

HINTS: dict[str, str] = {
    'ex02.build_dict_such_collections_counter':
        "build a dict such as {'placeholder': 1, 'call_module': 2, ...}; a collections.Counter is fine too",
    'ex02.return_list_such_layers_0':
        "return a list such as ['layers.0', 'layers.1']",
    'ex02.raise_keyerror_naming_when_no':
        'raise KeyError naming {name!r} when no node has that name, instead of returning None',
    'ex02.end_return_list_function_returned':
        'end with `return` and the list: the function returned None',
    'ex02.return_list_names_such_relu':
        "return a list of names such as ['relu', 'add']",
    'ex02.return_number_edges_int':
        'return the number of edges as an int',
    'ex02.key_dict_node_op_string':
        "key the dict by node.op, a string such as 'call_module'",
    'ex02.count_1_collections_counter':
        'count with += 1 or collections.Counter',
    'ex02.return_call_module_node_s':
        "return the call_module node's target (a string such as 'layers.0'), not the module object",
    'ex02.return_call_module_node_s_2':
        "return the call_module node's target (a string such as 'layers.0'), not the Node itself",
    'ex02.return_call_module_node_s_3':
        "return the call_module node's target (a string such as 'layers.0'), not a {name}",
    'ex02.return_users_names_user_name':
        "return the users' names (user.name), not the Node objects",
    'ex02.return_users_names_user_name_2':
        "return the users' names (user.name), not a {name}",
    'ex02.qualified_name_node_target_such':
        "the qualified name is node.target (such as 'layers.0'); node.name is the node's own identifier (such as "
        "'layers_0'), which need not match",
    'ex02.module_called_twice_appears_twice':
        "a module called twice appears twice: keep repeats (one entry per call_module node, where a list of gm's "
        'submodules has one entry per module)',
    'ex02.list_graph_s_call_module':
        "list the graph's call_module nodes, not the submodules of gm: a module can be called twice, or not at all",
    'ex02.keep_graph_order_walk_gm':
        'keep graph order: walk gm.graph.nodes and do not sort',
    'ex02.return_full_qualified_name_blocks':
        "return the full qualified name ('blocks.0.proj'), not its last part",
    'ex02.only_call_module_nodes_functions':
        'only call_module nodes: functions and methods are not module calls',
    'ex02.look_nodes_up_node_name':
        'look nodes up by node.name: {target!r} is the target of {name!r}, not a node name',
    'ex02.raise_keyerror_node_name_keyerror':
        'raise KeyError(node_name) (or KeyError with a message naming it) when no node has that name',
    'ex02.list_each_consumer_once_even':
        'list each consumer once, even when it uses the node in two arguments (h * h): node.users is a dict with '
        'one key per user',
    'ex02.return_them_graph_order_node':
        'return them in graph order: node.users keeps the order in which the uses were created, which after '
        'inserting nodes is not the order of gm.graph.nodes',
    'ex02.return_them_graph_order_order':
        'return them in graph order (the order of gm.graph.nodes)',
    'ex02.output_node_user_too_reads':
        'the output node is a user too: it reads the node it returns',
    'ex02.uses_inside_lists_torch_cat':
        'uses inside lists (torch.cat([h, x])) and keyword arguments (other=h) count too: read node.users (or '
        'node.all_input_nodes of each candidate), not only node.args',
    'ex02.consumers_are_nodes_read_this':
        'consumers are the nodes that read this node (node.users), not the nodes it reads',
    'ex02.follow_every_input_node_node':
        'follow every input of a node (node.all_input_nodes), not only args[0]',
    'ex02.inputs_passed_keyword_arguments_other':
        'inputs passed as keyword arguments (other=h) or inside lists count too: follow node.all_input_nodes, not '
        'only the Node entries of node.args',
    'ex02.take_longest_path_not_shortest':
        'take the longest path, not the shortest: a skip connection is a shortcut, the depth goes the long way '
        'round',
    'ex02.paths_start_at_placeholders_only':
        'paths start at placeholders only: get_attr nodes and calls without node inputs (torch.ones(3)) are not '
        'starts',
    'ex02.every_placeholder_start_not_only':
        'every placeholder is a start, not only the first one',
    'ex02.path_must_end_at_output':
        'the path must end at the output node: nodes that never reach it (dead code) do not count',
    'ex02.number_nodes_not_depth_branches':
        'the number of nodes is not the depth: branches run side by side, take the longest path through '
        'node.all_input_nodes',
    'ex02.count_edges_not_nodes_x':
        'count edges, not nodes: x -> fc -> output has depth 2',
    'ex02.edge_into_output_node_counts':
        'the edge into the output node counts too',
    'ex02.key_dict_node_op_not':
        'key the dict by node.op, not by {what}',
    'ex02.key_dict_node_op_one':
        'key the dict by node.op, one of {ops}',
    'ex02.list_only_opcodes_occur_graph':
        'list only the opcodes that occur in the graph',
    'ex02.placeholder_output_nodes_count_too':
        'placeholder and output nodes count too',
    'ex02.every_node_counts_nodes_too':
        'every node counts, {op} nodes too: key each node by its own node.op',
    'ex02.name_node_message_example_raise':
        'name the node in the message, for example raise KeyError(f"no node named {node_name!r}")',
    'ex02.get_attr_through_submodule_stays':
        "a get_attr node stays a get_attr when its target runs through a submodule: {name} reads the tensor "
        "{target!r}, it calls no module; key each node by its own node.op",
    'ex02.unused_call_still_calls':
        'a call_module node whose result nobody uses still calls its module ({names}): list every call_module '
        'node, with users or without',
    'ex02.count_call_module_nodes_gm':
        'count call_module nodes in gm.graph.nodes: a module called twice is two nodes, and containers such as '
        'nn.Sequential are never called',
}
