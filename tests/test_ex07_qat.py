"""Does the ex07_qat check library pass the solution, fail the stubs, kill every mutant with its hint, and
never let a torch warning decide a verdict? Plus the torch 2.13 behaviour lesson 07 and the statement rely on."""
from __future__ import annotations

import copy
import io
import os
import tempfile
import warnings

import pytest
import torch
import torch.nn.functional as F

from autograder.checks import ex07_qat as checks
from autograder.checks.framework import collect_evidence, get_check, judge_evidence, run_check
from autograder.coursedata.exercises import functions
from fxcourse_instructor.mutants import load
from exercise_suite import exercise_tests

A = "ex07_qat"
FUNCTIONS = functions(A)
MUTANTS = load(A)[0]

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py

# fixtures nb, solution; the tests every exercise has (tests/exercise_suite.py), test cells worth 2 to 4 points,
# evidence of the visible cases and two hidden ones, each answer's own evidence unwrapped
globals().update(exercise_tests(A, points=(2, 4), evidence_unwrapped=True,
                                evidence_cases=lambda check: check.cases(False) + check.cases(True)[:2]))


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


# ----------------------------------------------------------------------------- warnings never decide

@pytest.mark.parametrize("function", ("prepare_for_qat", "to_int8"))
def test_torch_warnings_never_fail_a_check(solution, function):
    """With every warning turned into an error, the solution still passes: torch 2.13 warns on each call."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = run_check(A, function, solution[function], hidden=True)
    assert all(r.passed for r in results)


def test_torch_2_13_does_warn_here(solution):
    """The warnings the lesson explains are real: if torch stops printing them, lesson 07 section 2 must change."""
    from fxplayground import QATNet
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepared = solution["prepare_for_qat"](QATNet(), (torch.randn(2, 16),))
        prepared(torch.randn(4, 16))
        solution["to_int8"](prepared)
    texts = {f"{w.category.__name__}: {str(w.message)[:40]}" for w in caught}
    assert any(t.startswith("DeprecationWarning: torch.ao.quantization is deprecated") for t in texts), texts
    assert any("Please use quant_min and quant_max" in t for t in texts), texts


# --------------------------------------------------------------------------------- mutants and alternatives

def test_the_curriculum_s_wrong_snippet_is_among_the_mutants():
    whys = " | ".join(m.why for m in MUTANTS).lower()
    assert "wrong snippet 6" in whys


# ------------------------------------------------------------------------------------ the checks themselves

@pytest.mark.parametrize("function", FUNCTIONS)
def test_cases_are_deterministic(function):
    """The worker and the judge each call case.make(): both must build the same weights and data."""
    check = get_check(A, function)
    for hidden in (False, True):
        for case in check.cases(hidden):
            a, b = _quiet(case.make), _quiet(case.make)
            for x, y in zip(a, b):
                if isinstance(x, torch.nn.Module):
                    sa, sb = x.state_dict(), y.state_dict()
                    assert sa.keys() == sb.keys(), case.label
                    assert all(torch.equal(sa[k], sb[k]) for k in sa if isinstance(sa[k], torch.Tensor)), case.label
                elif isinstance(x, tuple):
                    assert all(torch.equal(p, q) for p, q in zip(x, y)), case.label


def test_a_prepared_model_returned_as_is_is_not_int8(solution):
    check = get_check(A, "to_int8")
    case = check.cases(False)[0]
    result = judge_evidence(check, case, collect_evidence(check, lambda p: p, case))
    assert not result.passed and "fake-quantize" in result.message


def test_fake_quant_count_handmade_graph_counts_nodes_not_modules():
    """One module called twice counts twice; the learnable fake-quant counts; the observer does not."""
    gm = checks._handmade()
    assert checks._count_reference(gm) == 3
    assert sum(isinstance(m, torch.ao.quantization.FakeQuantizeBase) for m in gm.modules()) == 2


# ------------------------------------------------------------------------------- qat_finetune, as stated

def _finetune_case(index: int = 0, hidden: bool = False):
    return _quiet(get_check(A, "qat_finetune").cases(hidden)[index].make)


def test_qat_finetune_lowers_the_loss_in_place_and_stays_in_train_mode(solution):
    prepared, batches, steps, lr = _finetune_case()
    before = {n: p.detach().clone() for n, p in prepared.named_parameters()}
    loss_before = checks._loss(prepared, batches)
    result = _quiet(solution["qat_finetune"], prepared, batches, steps, lr)
    assert result is prepared
    assert prepared.training
    assert any(not torch.equal(before[n], p) for n, p in prepared.named_parameters())
    assert checks._loss(prepared, batches) < loss_before


def test_qat_finetune_takes_exactly_steps_sgd_steps_cycling_the_batches(solution):
    """A hand-written loop from the same weights lands on the same parameters; steps-1 or steps+1 do not."""
    prepared, batches, steps, lr = _finetune_case()
    assert steps > len(batches)  # the visible case cycles
    reference = copy.deepcopy(prepared)
    _quiet(solution["qat_finetune"], prepared, batches, steps, lr)

    def manual(model, n):
        model.train()
        for i in range(n):
            x, y = batches[i % len(batches)]
            model.zero_grad()
            F.cross_entropy(model(x), y).backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= lr * p.grad
        return dict(model.named_parameters())

    for n, expect_equal in ((steps, True), (steps - 1, False), (steps + 1, False)):
        got = manual(copy.deepcopy(reference), n)
        same = all(torch.allclose(got[k], p, atol=1e-6) for k, p in prepared.named_parameters())
        assert same == expect_equal, n


def test_qat_finetune_with_zero_steps_changes_nothing_but_the_mode(solution):
    prepared, batches, _, lr = _finetune_case(0, hidden=True)  # ConvBNNet handed over in eval mode
    assert not prepared.training
    state = copy.deepcopy(prepared.state_dict())
    _quiet(solution["qat_finetune"], prepared, batches, 0, lr)
    assert prepared.training
    assert all(torch.equal(state[k], v) for k, v in prepared.state_dict().items())


# --------------------------------------------------------------------- torch 2.13 behaviour relied upon

def test_fake_quant_keeps_observing_in_eval_mode_until_disable_observer():
    """Quiz q3 and the lesson: .eval() does not freeze the scales; disable_observer does."""
    (prepared,) = _quiet(get_check(A, "to_int8").cases(False)[0].make)
    prepared.eval()
    fq = prepared.activation_post_process_0
    s0 = fq.scale.clone()
    with torch.no_grad():
        prepared(prepared.input_for_checks * 10)
    assert not torch.equal(fq.scale, s0)
    prepared.apply(torch.ao.quantization.disable_observer)
    s1 = fq.scale.clone()
    with torch.no_grad():
        prepared(prepared.input_for_checks * 100)
    assert torch.equal(fq.scale, s1)


def test_converted_outputs_are_within_a_few_steps_of_the_fake_quant_model():
    """The to_int8 statement promises 'about one output quantization step' on data the observers saw."""
    check = get_check(A, "to_int8")
    for case in check.cases(False) + check.cases(True):
        ref = _quiet(checks._int8_reference, case)
        assert checks._max_diff(ref["outputs"], ref["fake"]) <= 4 * ref["out_scale"], case.label


def test_wrong_snippet_6_runs_on_torch_2_13_with_a_future_warning():
    """Lesson 07 runs `prepare_qat_fx(symbolic_trace(Net()), {'': default_qat_qconfig}, None)`."""
    from torch.ao.quantization import default_qat_qconfig
    from torch.ao.quantization.quantize_fx import prepare_qat_fx
    from torch.fx import symbolic_trace

    from fxplayground import Net
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prepared = prepare_qat_fx(symbolic_trace(Net()), {"": default_qat_qconfig}, None)
        silently_eval = prepare_qat_fx(symbolic_trace(Net().eval()), {"": default_qat_qconfig}, None)
    assert any(w.category is FutureWarning and "QConfig dictionary" in str(w.message) for w in caught)
    assert prepared.training and not silently_eval.training
    assert prepared.fc1.weight_fake_quant.qscheme == torch.per_tensor_symmetric


def test_state_dict_size_depends_on_the_file_name_but_not_on_a_bytesio():
    """The statement says io.BytesIO: a file's name is written into torch.save's zip archive."""
    from fxplayground import QATNet
    sd = QATNet().state_dict()
    sizes = []
    for _ in range(2):
        buf = io.BytesIO()
        torch.save(sd, buf)
        sizes.append(buf.tell())
    with tempfile.TemporaryDirectory() as d:
        short, long = os.path.join(d, "m.pt"), os.path.join(d, "a_much_longer_file_name.pt")
        torch.save(sd, short)
        torch.save(sd, long)
        assert os.path.getsize(short) != os.path.getsize(long)
    assert sizes[0] == sizes[1]


def test_the_hand_built_qconfig_mapping_alternative_is_torch_s_default_mapping(solution):
    """The alternative that writes the QAT mapping out entry by entry is right on every backend, not only on the
    cases the checks happen to run: each entry equals get_default_qat_qconfig_mapping(backend)'s."""
    from torch.ao.quantization import get_default_qat_qconfig_mapping
    from torch.ao.quantization.qconfig import qconfig_equals
    alternative = next(a for a in load(A)[1] if a.function == "prepare_for_qat" and "by hand" in a.why)
    ns = dict(solution)
    exec(compile(alternative.source, "<alternative>", "exec"), ns)  # noqa: S102 (course code)
    for backend in ("x86", "fbgemm", "qnnpack", "onednn"):
        mine, default = _quiet(ns["qat_mapping"], backend), _quiet(get_default_qat_qconfig_mapping, backend)
        assert qconfig_equals(mine.global_qconfig, default.global_qconfig), backend
        assert list(mine.object_type_qconfigs) == list(default.object_type_qconfigs), backend
        assert all(qconfig_equals(q, default.object_type_qconfigs[k]) for k, q in mine.object_type_qconfigs.items())
        assert not (default.module_name_qconfigs or default.module_name_regex_qconfigs)
