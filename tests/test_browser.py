"""The course in a real browser: JupyterLab driven by Debian's chromium through Playwright.

Each test run starts its own JupyterLab on a free loopback port, with a token, on a copy of lessons/ and
exercises/ in a temporary folder, with HOME and every Jupyter, IPython and matplotlib folder pointed there too.
The kernel keeps matplotlib's inline backend (MPLBACKEND is removed from its environment), so pictures reach
the page as PNG images, as they do for a learner.

Needs /usr/bin/chromium (or $FXCOURSE_CHROMIUM) and the playwright package (.ci/deps-browser.sh installs both; `playwright install` is
never used). Without them these tests skip, unless FXCOURSE_REQUIRE_BROWSER is set (CI sets it): then they fail.
Screenshots go to tests/artifacts/.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.browser

CHROMIUM = Path(os.environ.get("FXCOURSE_CHROMIUM", "/usr/bin/chromium"))  # Debian's; the override is for other systems
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
ARTIFACTS = ROOT / "tests" / "artifacts"
LESSON = "lessons/01_tracing.ipynb"
EXERCISE = "exercises/ex01_tracing/ex01_tracing.ipynb"
ANSWER = "def node_summary(gm):\n    return [(node.op, node.name) for node in gm.graph.nodes]\n"


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} is not installed (run .ci/deps-browser.sh)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (run .ci/deps-browser.sh)"
    return None


@pytest.fixture(scope="module", autouse=True)
def _browser_available():
    reason = _missing()
    if reason:
        if os.environ.get("FXCOURSE_REQUIRE_BROWSER"):
            pytest.fail(f"FXCOURSE_REQUIRE_BROWSER is set but {reason}", pytrace=False)
        pytest.skip(f"browser tests skipped: {reason}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _settings(settings_dir: Path) -> None:
    """User settings for a quiet, deterministic lab: no news or update pop-ups; every cell kept in the page."""
    files = {
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                             "checkForUpdates": False},
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    }
    for name, value in files.items():
        path = settings_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))


class Lab:
    """A JupyterLab server started for the tests, on a copy of the course."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="fxcourse-browser-"))
        self.root = self.tmp / "course"
        shutil.copytree(ROOT / "lessons", self.root / "lessons", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        shutil.copytree(ROOT / "exercises", self.root / "exercises",
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", ".fxcourse-hints.json", "*.backup-*"))
        home = self.tmp / "home"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_"))}
        env.pop("MPLBACKEND", None)  # the kernel must use the inline backend, so figures become PNG outputs
        dirs = {"HOME": "", "JUPYTER_CONFIG_DIR": ".jupyter", "JUPYTER_DATA_DIR": ".local/share/jupyter",
                "JUPYTER_RUNTIME_DIR": ".local/share/jupyter/runtime", "IPYTHONDIR": ".ipython",
                "MPLCONFIGDIR": ".mpl", "XDG_CACHE_HOME": ".cache", "XDG_CONFIG_HOME": ".config",
                "XDG_DATA_HOME": ".local/share", "JUPYTERLAB_SETTINGS_DIR": ".jupyter/lab/user-settings",
                "JUPYTERLAB_WORKSPACES_DIR": ".jupyter/lab/workspaces", "TORCHINDUCTOR_CACHE_DIR": ".inductor"}
        for var, sub in dirs.items():
            (home / sub).mkdir(parents=True, exist_ok=True)
            env[var] = str(home / sub)
        _settings(home / dirs["JUPYTERLAB_SETTINGS_DIR"])
        env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = self.tmp / "jupyterlab.log"
        cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
               f"--port={self.port}", "--port-retries=0", f"--IdentityProvider.token={self.token}",
               f"--ServerApp.root_dir={self.root}", "--LabApp.news_url="]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=env, cwd=self.root, start_new_session=True)
        self._wait_ready(120)

    def _wait_ready(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"JupyterLab did not answer in {timeout:g} s:\n{self.log_tail()}")

    def url(self, path: str) -> str:
        return f"{self.base}/lab/tree/{path}?token={self.token}"

    def log_tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:] if self.log.exists() else ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # JupyterLab shuts its kernels down on SIGTERM
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def lab():
    server = Lab()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, lab, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-last.png"))  # where it ended, pass or fail
    context.close()


# ----------------------------------------------------------------------------------------- page helpers

def open_notebook(page, lab: Lab, path: str) -> None:
    page.goto(lab.url(path))
    # the shown notebook's cells: a notebook the workspace kept open from an earlier test stays hidden in the page
    cells(page).first.wait_for(state="visible", timeout=120_000)
    wait_kernel_idle(page, 120)


def wait_kernel_idle(page, timeout: float) -> None:
    """Until the notebook's kernel exists, is idle, and no cell is running or queued.

    The status bar names the kernel and its state ("Python 3 (ipykernel) | Idle"); the toolbar's execution
    indicator is no witness, it reads idle too while the bar still says "No Kernel | Initializing"."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = page.evaluate("""() => {
            const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
            if (!panel) return 'no panel';
            const kernel = [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                .map(e => e.textContent.trim()).find(t => t.includes(' | '));
            const ind = panel.querySelector('.jp-Notebook-ExecutionIndicator');
            const status = ind ? ind.getAttribute('data-status') : null;
            const busy = [...panel.querySelectorAll('.jp-InputArea-prompt')].some(p => p.textContent.includes('*'));
            const ready = kernel && kernel.endsWith('| Idle') && !kernel.startsWith('No Kernel');
            return ready && status === 'idle' && !busy ? 'idle' : `kernel=${kernel} status=${status} busy=${busy}`;
        }""")
        if state == "idle":
            return
        time.sleep(0.5)
    raise AssertionError(f"the kernel did not become idle in {timeout:g} s ({state})")


def close_dialog(page) -> None:
    """Close a dialog the lab shows over the page with its default button, as a learner does, and say so in a warning.

    The lab opens one on its own when, say, a kernel died and restarts ("Kernel Restarting") or the server stopped
    answering for a while; a menu click would land on the dialog and wait in vain. What it said is kept: pytest lists
    the warning, and a cell the restart lost runs again (the tests check what ran, not how often)."""
    dialog = page.locator(".jp-Dialog")
    if not dialog.count():
        return
    text = " ".join(dialog.first.inner_text().split())
    warnings.warn(f"JupyterLab showed a dialog, closed with its default button: {text[:300]!r}")
    accept = dialog.first.locator("button.jp-mod-accept")
    if accept.count():
        accept.first.click()
    else:
        page.keyboard.press("Escape")
    dialog.first.wait_for(state="detached", timeout=30_000)


def run_menu(page, menu: str, item: str) -> None:
    close_dialog(page)
    page.locator(".lm-MenuBar-itemLabel", has_text=menu).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


def code_prompts(page) -> list[str]:
    """The input prompt of every code cell in the shown notebook: '[ ]:', '[*]:' or '[7]:'."""
    return page.evaluate("""() => {
        const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
        if (!panel) return [];
        return [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent.trim());
    }""")


def run_all_cells(page, timeout: float) -> None:
    """Run All Cells from the menu, as a learner does, and wait until every code cell has run.

    A menu click that lands while the lab is still settling can do nothing (the kernel then reads idle at once),
    or queue the cells and drop them again (their prompts go to [*] and back to [ ] with no cell run). So the
    command is given again (at most three times in all) until, once the kernel is idle with no cell queued, the
    prompts have changed and show cells run.
    """
    end = time.monotonic() + timeout
    for attempt in range(3):
        before = code_prompts(page)
        run_menu(page, "Run", "Run All Cells")
        started = time.monotonic() + 15
        while time.monotonic() < started:
            now = code_prompts(page)
            if now != before or any("*" in p for p in now):
                break
            time.sleep(0.3)
        else:
            page.keyboard.press("Escape")  # close a menu left open, then try again
            continue
        wait_kernel_idle(page, max(1.0, end - time.monotonic()))  # Run All queues every cell ([*]) at once
        after = code_prompts(page)
        if after != before and any(any(ch.isdigit() for ch in p) for p in after):
            return
    raise AssertionError(f"Run All Cells ran no cell in three tries; prompts: {code_prompts(page)[:5]}")


def cells(page):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")


def cell_with(page, text: str):
    return cells(page).filter(has=page.locator(".cm-content", has_text=text)).first


def type_into(page, cell, text: str) -> None:
    """Replace a cell's source by `text`, typed as a learner types it (select all, delete, type)."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


def run_cell(page, cell, timeout: float) -> None:
    """Select a cell and run it with Shift+Enter, as a learner does; then wait until this cell has run (its
    prompt shows a new execution count) and the kernel is idle. A key press the page lost (the cell never
    queued) is pressed again, once."""
    prompt = cell.locator(".jp-InputArea-prompt").first
    before = prompt.inner_text()

    def ran() -> bool:
        text = prompt.inner_text()
        return text != before and "*" not in text and any(ch.isdigit() for ch in text)
    for attempt in range(2):
        prompt.click()
        page.keyboard.press("Shift+Enter")
        end = time.monotonic() + (10 if attempt == 0 else timeout)
        while time.monotonic() < end and not ran():
            if "*" in prompt.inner_text():  # queued or running: it will run, wait for as long as it takes
                end = max(end, time.monotonic() + timeout)
            time.sleep(0.2)
        if ran():
            wait_kernel_idle(page, timeout)
            return
    raise AssertionError(f"the cell did not run in {timeout:g} s (its prompt shows {prompt.inner_text()!r})")


def save(page, lab: Lab, path: str) -> dict:
    """Save with Ctrl+S and return the notebook as written to disk."""
    file = lab.root / path
    before = file.stat().st_mtime_ns
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    end = time.monotonic() + 30
    while file.stat().st_mtime_ns == before and time.monotonic() < end:
        time.sleep(0.2)
    assert file.stat().st_mtime_ns != before, f"{path} was not saved"
    time.sleep(0.3)
    return json.loads(file.read_text())


def shot(page, name: str, element=None) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    if element is not None:
        element.scroll_into_view_if_needed()
    page.screenshot(path=str(path))
    return path


# ------------------------------------------------------------------------------------------------ tests

def test_lesson_01_runs_top_to_bottom_and_shows_graph_pictures(page, lab):
    open_notebook(page, lab, LESSON)
    shot(page, "lesson01-opened.png")
    started = time.monotonic()
    run_all_cells(page, 240)
    took = time.monotonic() - started

    outputs = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output")
    assert outputs.count() > 10
    errors = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output", has_text="Traceback")
    assert errors.count() == 0, errors.first.inner_text()[:2000]
    images = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img")
    assert images.count() >= 2, "expected the drawn graphs (draw_graph, draw_diff) as pictures"
    first = images.first
    first.scroll_into_view_if_needed()
    size = first.evaluate("img => [img.naturalWidth, img.naturalHeight, img.src.slice(0, 22)]")
    assert size[0] > 200 and size[1] > 100 and size[2] == "data:image/png;base64,", size
    shot(page, "lesson01-graph.png", first)

    nb = save(page, lab, LESSON)  # what the browser ran, as written to disk
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] for c in code), "not every code cell ran"
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    pngs = [o for c in code for o in c["outputs"] if "image/png" in o.get("data", {})]
    assert len(pngs) >= 2
    print(f"lesson 01 ran in the browser in {took:.1f} s")


def test_exercise_answer_then_check_in_the_notebook(page, lab):
    open_notebook(page, lab, EXERCISE)

    # Fill the answer cell of node_summary, as a learner types it.
    answer = cell_with(page, "def node_summary")
    type_into(page, answer, ANSWER)
    assert "gm.graph.nodes" in answer.locator(".cm-content").inner_text()

    # Run the setup cell, the answer and its test cell.
    run_cell(page, cell_with(page, "from fxplayground import"), 120)
    run_cell(page, answer, 60)
    test_cell = cell_with(page, 'run_check("ex01_tracing", "node_summary"')
    run_cell(page, test_cell, 60)
    assert "node_summary: 2 visible case(s) passed" in test_cell.locator(".jp-OutputArea").inner_text()

    # New cells below it, typed and run as a learner does (Alt+Enter: run, then a new cell below).
    test_cell.locator(".jp-InputArea-prompt").first.click()
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.insert_text('from autograder.inline import check, hint\ncheck("node_summary")')
    page.keyboard.press("Alt+Enter")
    wait_kernel_idle(page, 60)
    table = page.locator(".fxcourse-check").first
    table.wait_for(state="visible")
    assert table.get_attribute("data-passed") == "true"
    row = table.locator("tr[data-check='node_summary']")
    assert row.get_attribute("data-passed") == "true" and "passed" in row.inner_text()
    shot(page, "ex01-check-node_summary.png", table)

    # The whole notebook: node_summary passes, the rest says what to do; then the first hint.
    page.keyboard.insert_text("check()")
    page.keyboard.press("Alt+Enter")
    wait_kernel_idle(page, 60)
    full = page.locator(".fxcourse-check").nth(1)
    full.wait_for(state="visible")
    states = {r.get_attribute("data-check"): r.get_attribute("data-passed")
              for r in full.locator("tr[data-check]").all()}
    assert states == {"node_summary": "true", "count_nodes": "false", "outputs_match": "false",
                      "q1": "false", "q2": "false", "q3": "false"}, states
    text = full.inner_text()
    assert "count_nodes is not defined in this kernel yet" in text and "hint('count_nodes')" in text

    page.keyboard.insert_text('hint("count_nodes")')
    page.keyboard.press("Shift+Enter")
    wait_kernel_idle(page, 60)
    tip = page.locator(".fxcourse-hint").first
    tip.wait_for(state="visible")
    assert "Hint 1 of 3 for count_nodes" in tip.inner_text()
    full.scroll_into_view_if_needed()
    shot(page, "ex01-check-all-and-hint.png")


def test_a_part_ii_exercise_checks_in_the_notebook(page, lab):
    """ex09 (torch.compile graphs) in the browser: its answer runs its test cell there, and the notebook's own
    "Check your work" cell lists Part II's functions and quiz questions."""
    from autograder.coursedata.exercises import functions
    from autograder.course.notebook import answer_cells, grade_id, read_notebook

    source = next(c.source for c in answer_cells(read_notebook(ROOT / "solutions/ex09_dynamo/ex09_dynamo.ipynb"))
                  if grade_id(c) == "capture_graphs")
    solution = "\n".join(line for line in source.splitlines() if "### " not in line) + "\n"
    open_notebook(page, lab, "exercises/ex09_dynamo/ex09_dynamo.ipynb")
    answer = cell_with(page, "def capture_graphs")
    type_into(page, answer, solution)
    run_cell(page, cell_with(page, "import torch._dynamo"), 120)
    run_cell(page, answer, 60)
    test_cell = cell_with(page, 'run_check("ex09_dynamo", "capture_graphs"')
    run_cell(page, test_cell, 120)
    assert "capture_graphs:" in test_cell.locator(".jp-OutputArea").inner_text()
    assert "passed" in test_cell.locator(".jp-OutputArea").inner_text()

    run_cell(page, cell_with(page, "check()"), 120)
    table = page.locator(".fxcourse-check").first
    table.wait_for(state="visible")
    states = {r.get_attribute("data-check"): r.get_attribute("data-passed")
              for r in table.locator("tr[data-check]").all()}
    expected = {f: "false" for f in functions("ex09_dynamo")} | {f"q{i}": "false" for i in range(1, 5)}
    assert states == expected | {"capture_graphs": "true"}, states
    assert "graph_break_count is not defined in this kernel yet" in table.inner_text()
    shot(page, "ex09-check-all.png", table)


def test_a_dialog_the_lab_opens_on_its_own_is_closed_and_named(page, lab):
    """The kernel killed from outside, as the machine's out-of-memory killer would: the lab restarts it and says so
    in a dialog over the page. Run All still runs every cell, and the dialog's words reach pytest as a warning."""
    scratch = lab.root / "scratch.ipynb"
    scratch.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": "x = 6 * 7\nx",
                                              "outputs": [], "execution_count": None}],
                                   "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                               "language": "python"}},
                                   "nbformat": 4, "nbformat_minor": 5}))
    open_notebook(page, lab, "scratch.ipynb")
    with urllib.request.urlopen(f"{lab.base}/api/sessions?token={lab.token}", timeout=10) as r:
        kernel = next(s["kernel"]["id"] for s in json.load(r) if s["path"] == "scratch.ipynb")
    pids = subprocess.run(["pgrep", "-f", f"kernel-{kernel}"], capture_output=True, text=True).stdout.split()
    assert pids, f"no process of kernel {kernel}"
    for pid in pids:
        os.kill(int(pid), 9)
    page.locator(".jp-Dialog").first.wait_for(state="visible", timeout=60_000)
    with pytest.warns(UserWarning, match="JupyterLab showed a dialog") as shown:
        run_all_cells(page, 120)
    print("the dialog:", shown[0].message)
    assert page.locator(".jp-Dialog").count() == 0
    assert code_prompts(page) == ["[1]:"]
    assert "42" in cells(page).first.locator(".jp-OutputArea").inner_text()
