"""The course as a website (`make site`, docs/site/build.py): built once for this module, into a temporary folder.

It must show every lesson as executed now (outputs, graph pictures, plots), each exercise's task text, the
benchmarks with their plots and the README's guides; its "next" links follow the course order; and no page,
script or index of it may hold solution code, hidden tests or quiz keys. What counts as secret is derived from
solutions/ here, independently of the build script. The pages are opened in the headless Chromium of
tests/test_browser.py, served from 127.0.0.1 by a server this module starts and stops.
"""
from __future__ import annotations

import functools
import html.parser
import http.server
import json
import os
import re
import threading
from pathlib import Path

import nbformat
import pytest
import torch

import test_browser
from conftest import ROOT
from test_browser import ARTIFACTS, browser  # noqa: F401  (the browser fixture, shared)

pytestmark = pytest.mark.kernel
SOLUTION = re.compile(r"^[ \t]*### BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*### END SOLUTION", re.M | re.S)
HIDDEN = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n(.*?)^[ \t]*### END HIDDEN TESTS", re.M | re.S)
QUIZ_KEY = re.compile(r"""^\s*(q\d+)\s*=\s*["']([A-Za-z])["']\s*$""")
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "hidden=True")


# ------------------------------------------------------------------------------------ what must not leak

def _norm(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.splitlines())


def _public_text(root: Path) -> str:
    """What the site may show by right: the lessons, the release and the Markdown guides (also as rendered
    text: Markdown's backticks and emphasis gone)."""
    parts = []
    for nb_path in [*sorted((root / "lessons").glob("*.ipynb")), *sorted((root / "exercises").glob("*/*.ipynb"))]:
        parts += [cell.source for cell in nbformat.read(str(nb_path), as_version=4).cells]
    for md in [root / "README.md", root / "BENCHMARKS.md", root / "autograder" / "SECURITY.md",
               *sorted((root / "docs").glob("*.md"))]:
        if md.is_file():
            parts.append(md.read_text(encoding="utf-8"))
    text = "\n".join(parts)
    return _norm(text + "\n" + re.sub(r"[`*]", "", text))


def secrets(root: Path) -> dict[str, list[str]]:
    """Solution lines, hidden-test lines, quiz keys and quiz explanations of the course at `root`.

    Solution and hidden-test lines that the public material also contains word for word (a lesson may show the
    same loop) are not secrets; nor are lines under 16 characters (`else:`, `return gm`) or without any of
    ( . = [ (plain words, which a theme's scripts may hold too).
    """
    public = _public_text(root)
    found: dict[str, list[str]] = {"solution code": [], "hidden tests": [], "quiz keys": [], "quiz explanations": []}
    for nb_path in sorted((root / "solutions").glob("*/*.ipynb")):
        for cell in nbformat.read(str(nb_path), as_version=4).cells:
            if cell.cell_type != "code":
                continue
            for kind, pattern in (("solution code", SOLUTION), ("hidden tests", HIDDEN)):
                for region in pattern.findall(cell.source):
                    for line in _norm(region).splitlines():
                        key = QUIZ_KEY.match(line)
                        if key:
                            found["quiz keys"].append(f'{key.group(1)} = "{key.group(2)}"')
                        elif (len(line) >= 16 and re.search(r"[(.=\[]", line) and line not in public
                              and not line.startswith("#")):
                            found[kind].append(line)
    quizzes = root / "solutions" / "quizzes.json"
    if quizzes.is_file():
        for entry in json.loads(quizzes.read_text(encoding="utf-8")).values():
            for q in entry.get("questions", []):
                if len(q.get("explanation", "")) >= 20:
                    found["quiz explanations"].append(" ".join(q["explanation"].split()))
    return {kind: sorted(set(lines)) for kind, lines in found.items()}


class _Text(html.parser.HTMLParser):
    """All the text of a page (entities resolved, tags gone), and separately the text of its code blocks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.all: list[str] = []
        self.code: list[str] = []
        self._pre = 0

    def handle_starttag(self, tag, attrs):
        if tag == "pre":
            self._pre += 1
            self.code.append("\n")

    def handle_endtag(self, tag):
        if tag == "pre" and self._pre:
            self._pre -= 1

    def handle_data(self, data):
        self.all.append(data)
        if self._pre:
            self.code.append(data)


def leaks(site: Path, found: dict[str, list[str]]) -> list[str]:
    """Every secret found in any text file of the built site, as 'file: kind: text'."""
    hits = []
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        try:
            raw = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # pictures, fonts
        if path.suffix == ".html":
            parser = _Text()
            parser.feed(raw)
            text, code = _norm("".join(parser.all)), _norm("".join(parser.code))
        else:
            text = code = _norm(raw)
        rel = path.relative_to(site)
        hits += [f"{rel}: marker: {m}" for m in MARKERS if m in text or m in raw]
        for kind in ("solution code", "hidden tests", "quiz explanations"):
            hits += [f"{rel}: {kind}: {line}" for line in found[kind] if line in text]
        # A key is a secret as an assignment in code; the exercises' prose shows the format with an example.
        for key in found["quiz keys"]:
            name, letter = key.split(" = ")
            if re.search(rf"\b{name}\s*=\s*{re.escape(letter)}", code):
                hits.append(f"{rel}: quiz key: {key}")
    return hits


# ------------------------------------------------------------------------------------------------ the site

@pytest.fixture(scope="module")
def site(site_build) -> Path:
    """The site as docs/site/build.py builds it (conftest's site_build: once per test run, its lessons executed
    now; test_course's lesson test reads the same executed lessons)."""
    assert site_build.returncode == 0, f"make site failed:\n{site_build.stdout[-4000:]}\n{site_build.stderr[-4000:]}"
    assert (site_build.out / "index.html").is_file()
    return site_build.out


def course_order() -> list[str]:
    """The pages of the course path, in order: lesson NN, then exercise NN, for every NN."""
    pages = {}
    for lesson in (ROOT / "lessons").glob("*.ipynb"):
        pages[(lesson.name[:2], 0)] = f"lessons/{lesson.stem}.html"
    for ex in (ROOT / "exercises").glob("ex*/*.ipynb"):
        pages[(ex.parent.name[2:4], 1)] = f"exercises/{ex.parent.name}/{ex.stem}.html"
    return [pages[k] for k in sorted(pages)]


def test_every_lesson_and_exercise_has_a_page_and_lessons_show_this_runs_outputs(site):
    for page in course_order():
        assert (site / page).is_file(), f"no page {page}"
    for lesson in sorted((ROOT / "lessons").glob("*.ipynb")):
        page = (site / "lessons" / f"{lesson.stem}.html").read_text(encoding="utf-8")
        assert page.count('class="cell_output') >= 5, f"{lesson.name}: its page shows almost no outputs"
        executed = nbformat.read(str(site.parent / "html-src" / "lessons" / lesson.name), as_version=4)
        code = [c for c in executed.cells if c.cell_type == "code"]
        assert all(c.execution_count for c in code), f"{lesson.name}: not every cell ran for the site"
        assert not [o for c in code for o in c.outputs if o.output_type == "error"], f"{lesson.name}: an error"
    # Executed by this build, with the torch running the tests (lesson 01 prints its version).
    assert f"torch {torch.__version__}" in (site / "lessons" / "01_tracing.html").read_text(encoding="utf-8")
    bench = (site / "BENCHMARKS.html").read_text(encoding="utf-8")
    for plot in sorted((ROOT / "benchmarks" / "plots").glob("*.png")):
        assert f"_images/{plot.name}" in bench and (site / "_images" / plot.name).is_file(), plot.name
    front = (site / "index.html").read_text(encoding="utf-8")
    for heading in ("The course path", "Learners", "Instructors"):
        assert heading in front, f"the front page has no {heading!r}"


def test_every_guide_in_docs_is_a_page_with_its_pictures(site):
    guides = sorted((ROOT / "docs").glob("*.md"))
    assert "report.md" in {g.name for g in guides}
    for guide in guides:
        page = (site / "docs" / f"{guide.stem}.html").read_text(encoding="utf-8")
        for picture in re.findall(r"!\[[^\]]*\]\(([^)\s]+\.png)\)", guide.read_text(encoding="utf-8")):
            name = Path(picture).name
            assert f"_images/{name}" in page and (site / "_images" / name).is_file(), (guide.name, name)


def test_site_holds_no_solution_code_hidden_tests_or_quiz_keys(site):
    found = secrets(ROOT)
    assert len(found["solution code"]) >= 20 and len(found["hidden tests"]) >= 20 and len(found["quiz keys"]) >= 4, \
        {k: len(v) for k, v in found.items()}
    hits = leaks(site, found)
    assert not hits, "the site shows what only instructors may see:\n" + "\n".join(hits[:40])


def test_leak_scan_finds_solution_lines_inside_highlighted_code_and_keys_in_code_cells(tmp_path):
    found = secrets(ROOT)
    line = found["solution code"][0]
    spans = " ".join(f'<span class="n">{word.replace("<", "&lt;")}</span>' for word in line.split())
    (tmp_path / "a.html").write_text(f"<html><body><pre>{spans}</pre></body></html>")
    (tmp_path / "b.html").write_text('<p>Set <code>q1</code>, for example <code>q1 = "A"</code>.</p>'
                                     '<pre><span class="n">q2</span> <span class="o">=</span> <span>"Z"</span></pre>')
    key = found["quiz keys"][0]
    (tmp_path / "c.js").write_text(f"var x = 1;\n    {key}\n")
    hits = leaks(tmp_path, found)
    assert any(h.startswith("a.html: solution code") for h in hits), hits
    assert not any(h.startswith("b.html") for h in hits), hits  # prose examples and other letters are no keys
    assert any(h.startswith("c.js: quiz key") for h in hits), hits


# ----------------------------------------------------------------------------------------- in the browser

class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def served(site):
    """The built site over HTTP on a free loopback port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(10)


@pytest.fixture
def page(request, served):
    reason = test_browser._missing()
    if reason:
        if os.environ.get("FXCOURSE_REQUIRE_BROWSER"):
            pytest.fail(f"FXCOURSE_REQUIRE_BROWSER is set but {reason}", pytrace=False)
        pytest.skip(f"browser tests skipped: {reason}")
    context = request.getfixturevalue("browser").new_context(viewport={"width": 1300, "height": 950})
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-last.png"))
    context.close()


IMAGES = """sel => [...document.querySelectorAll(sel)].map(img =>
    [img.getAttribute('src'), img.complete ? img.naturalWidth : -1, img.complete ? img.naturalHeight : -1])"""


@pytest.mark.browser
def test_lesson_pages_show_their_pictures(page, served, site):
    for lesson in sorted((ROOT / "lessons").glob("*.ipynb")):
        page.goto(f"{served}/lessons/{lesson.stem}.html", wait_until="load")
        images = page.evaluate(IMAGES, ".cell_output img")
        executed = nbformat.read(str(site.parent / "html-src" / "lessons" / lesson.name), as_version=4)
        pictures = sum("image/png" in o.get("data", {}) for c in executed.cells if c.cell_type == "code"
                       for o in c.outputs)
        assert len(images) == pictures > 0, f"{lesson.name}: {len(images)} pictures on the page, {pictures} made"
        broken = [src for src, w, h in images if w <= 0 or h <= 0]
        assert not broken, f"{lesson.name}: pictures that do not show: {broken}"
        if lesson.stem.startswith("01"):
            assert len(images) >= 2 and all(w > 200 and h > 100 for _, w, h in images), images
            first = page.locator(".cell_output img").first
            first.scroll_into_view_if_needed()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "site-lesson01-graph.png"))
    page.goto(f"{served}/BENCHMARKS.html", wait_until="load")
    plots = page.evaluate(IMAGES, "article img")
    assert len(plots) >= len(list((ROOT / "benchmarks" / "plots").glob("*.png"))) and all(w > 0 for _, w, _ in plots)


@pytest.mark.browser
def test_next_links_follow_the_course_order(page, served):
    page.goto(f"{served}/index.html", wait_until="load")
    visited = []
    for _ in range(100):
        nxt = page.locator("a.right-next")
        if nxt.count() == 0:
            break
        nxt.first.click()
        page.wait_for_load_state("load")
        visited.append(page.url.removeprefix(served + "/").split("#")[0])
    order = course_order()
    assert visited[:len(order)] == order, visited
    assert "BENCHMARKS.html" in visited[len(order):], visited
    # and back again: "previous" from the last exercise leads to its lesson
    page.goto(f"{served}/{order[-1]}", wait_until="load")
    page.locator("a.left-prev").first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith(order[-2]), page.url
