"""Build the course as a static website: `make site` (or `python docs/site/build.py [--out DIR] [--jobs N]`).

1. Stage a Sphinx source tree in DIR-src (default build/site-src), laid out like the repository:
   - index.md: the README, with the course path (each lesson and its exercise, in order) after its first part;
   - lessons/NN_topic.ipynb: every lesson executed now, top to bottom, in a fresh kernel (the course's own
     executor, autograder.grader.jail.headless.execute: IPC transport, a temporary working folder per lesson).
     Lessons are kept in git
     without outputs; nothing shown on the site comes from an earlier run;
   - exercises/exNN_topic/exNN_topic.ipynb: the task text of each exercise, from the release (exercises/, never
     solutions/), without its graded test cells and empty quiz-answer stubs, not executed;
   - BENCHMARKS.md with benchmarks/plots/*.png, docs/*.md, and every Markdown page or picture those link to.
2. Render it with Sphinx and myst-nb into DIR (default build/site; open DIR/index.html).

Lessons run in parallel (--jobs, default: the number of cores, at most 2): each has its own kernel, working folder
and caches, and none reads another's files. Jupyter, IPython, matplotlib and torch's compiler caches write into a
temporary home that is removed afterwards.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import copy
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

import autograder  # noqa: E402,F401  (before nbformat: it spares the build jsonschema's optional grammar)
import nbformat  # noqa: E402

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}
STUB_LINES = {"# YOUR CODE HERE", "raise NotImplementedError()"}
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


class BuildError(Exception):
    """The site cannot be built; the message says which file and why."""


# ------------------------------------------------------------------------------------------------ course

def number(stem: str) -> str:
    """'01' for 01_tracing and ex01_tracing."""
    m = re.match(r"(?:ex)?(\d+)_", stem)
    if not m:
        raise BuildError(f"cannot tell the number of {stem!r}: expected NN_topic or exNN_topic")
    return m.group(1)


def course_path(root: Path) -> list[tuple[str, Path | None, Path | None]]:
    """(number, lesson notebook, exercise release notebook) in course order."""
    lessons = {number(p.stem): p for p in sorted((root / "lessons").glob("*.ipynb"))}
    exercises = {number(p.name): p / f"{p.name}.ipynb" for p in sorted((root / "exercises").iterdir())
                 if (p / f"{p.name}.ipynb").is_file()} if (root / "exercises").is_dir() else {}
    if not lessons:
        raise BuildError(f"no lessons in {root / 'lessons'}")
    return [(n, lessons.get(n), exercises.get(n)) for n in sorted(set(lessons) | set(exercises))]


def title_of(nb) -> str:
    """The first Markdown heading of a notebook."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if m:
                return m.group(1).strip()
    raise BuildError("a notebook without a '# Title' heading")


# ----------------------------------------------------------------------------------------------- lessons

def _execute_one(lesson: str, out: str, timeout: float) -> float:
    """Run one lesson in a fresh kernel inside its own temporary folder; write it with its outputs to `out`."""
    from autograder.grader.jail.headless import execute

    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fxcourse-site-run-") as cwd:
        nb = execute(lesson, timeout=timeout, cwd=cwd)
    for cell in nb.cells:  # the run's timing records are not content
        cell.metadata.pop("execution", None)
    nbformat.write(nb, out)
    return time.monotonic() - start


def execute_lessons(lessons: list[Path], stage: Path, jobs: int, timeout: float) -> None:
    (stage / "lessons").mkdir(parents=True, exist_ok=True)
    failures = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(_execute_one, str(p), str(stage / "lessons" / p.name), timeout): p for p in lessons}
        for future in concurrent.futures.as_completed(futures):
            lesson = futures[future]
            try:
                took = future.result()
                print(f"site: ran {lesson.relative_to(ROOT)} in {took:.1f} s", flush=True)
            except Exception as exc:  # a cell error, a timeout, a kernel that died: name the lesson
                last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1][:400]
                print(f"site: FAILED {lesson.relative_to(ROOT)}: {last}", flush=True)
                failures.append(f"{lesson.relative_to(ROOT)}: {last}")
    if failures:
        raise BuildError("lessons failed to run, so the site would show broken output:\n  " + "\n  ".join(failures))


# --------------------------------------------------------------------------------------------- exercises

def exercise_page(release: Path, lesson_title: str | None) -> nbformat.NotebookNode:
    """The task text of a released exercise: graded test cells and empty answer stubs removed."""
    nb = nbformat.read(str(release), as_version=4)
    if "BEGIN SOLUTION" in release.read_text() or "BEGIN HIDDEN TESTS" in release.read_text():
        raise BuildError(f"{release} holds solution or hidden-test markers: it is not a release "
                         "(run `fxcourse generate`)")
    cells = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            continue  # a test cell: grader plumbing, and in the instructor source the home of hidden tests
        if cell.cell_type == "code":
            kept = [line for line in cell.source.splitlines() if line.strip() not in STUB_LINES]
            if meta.get("solution") and not "".join(kept).strip():
                continue  # a quiz answer stub: nothing but "YOUR CODE HERE"
        cell = copy.deepcopy(cell)
        cell.metadata.pop("nbgrader", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    name = release.parent.name
    where = f"`exercises/{name}/{name}.ipynb`"
    note = ("```{note}\nThis page is the task text only. Work the exercise in JupyterLab (`make lab`, then open "
            f"{where}); each function's cell is checked by the cell below it there, and `fxcourse check {where[1:-1]}` "
            "gives the score with the hidden tests.")
    if lesson_title:
        note += f" It follows *{lesson_title}*."
    note += "\n```"
    cells.insert(1, nbformat.v4.new_markdown_cell(note))
    nb.cells = cells
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in ("kernelspec", "language_info")}
    return nb


# ------------------------------------------------------------------------------------------------- pages

def front_page(readme: str, path: list[tuple[str, Path | None, Path | None]], guides: list[str]) -> str:
    """The README with the course path after its first part, and the site's table of contents."""
    rows = ["## The course path", "",
            "Each lesson runs top to bottom as shown here (executed when this site was built), then its exercise "
            "asks you to write the tools yourself.", "",
            "| # | lesson | exercise |", "|---|---|---|"]
    toc = []
    for n, lesson, exercise in path:
        cells = []
        for nb_path, rel in ((lesson, lesson and f"lessons/{lesson.name}"),
                             (exercise, exercise and f"exercises/{exercise.parent.name}/{exercise.name}")):
            if nb_path is None:
                cells.append("")
                continue
            cells.append(f"[{title_of(nbformat.read(str(nb_path), as_version=4))}]({rel})")
            toc.append(rel.removesuffix(".ipynb"))
        rows.append(f"| {n} | {cells[0]} | {cells[1]} |")
    table = "\n".join(rows) + "\n"
    m = re.search(r"^## ", readme, re.M)
    text = readme[:m.start()] + table + "\n" + readme[m.start():] if m else readme + "\n" + table
    text += "\n```{toctree}\n:hidden:\n:caption: Course\n\n" + "\n".join(toc) + "\n```\n"
    if guides:
        text += "\n```{toctree}\n:hidden:\n:caption: Guides and measurements\n\n" + "\n".join(guides) + "\n```\n"
    return text


def stage_markdown(src: Path, stage: Path, pages: dict[Path, Path], queue: list[Path]) -> None:
    """Copy one Markdown file into the stage, keeping its links working: linked pictures are copied, linked
    Markdown files become pages too, links to the course's notebooks point at their pages, and links to other
    files of the repository (code, folders) become plain text."""
    text = src.read_text(encoding="utf-8")

    def fix(m: re.Match) -> str:
        bang, label, target = m.groups()
        if re.match(r"[a-z]+:|#|/", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        resolved = (src.parent / path).resolve()
        try:
            rel = resolved.relative_to(ROOT)
        except ValueError:
            return label
        if resolved.suffix.lower() in IMAGE_SUFFIXES and resolved.is_file():
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(resolved, stage / rel)
            return m.group(0)
        if resolved.suffix == ".md" and resolved.is_file():
            if resolved not in pages:
                pages[resolved] = stage / ("index.md" if rel == Path("README.md") else rel)
                queue.append(resolved)
            new = os.path.relpath(pages[resolved], (stage / src.relative_to(ROOT)).parent)
            return f"{bang}[{label}]({new}{'#' + anchor if anchor else ''})"
        if resolved.suffix == ".ipynb" and rel.parts[0] in ("lessons", "exercises") and resolved.is_file():
            return m.group(0)
        return f"`{label}`" if not label.startswith("`") else label

    out = pages[src]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(LINK.sub(fix, text), encoding="utf-8")


def stage(out_src: Path, jobs: int, timeout: float) -> None:
    if out_src.exists():
        shutil.rmtree(out_src)
    out_src.mkdir(parents=True)
    path = course_path(ROOT)

    lessons = [lesson for _, lesson, _ in path if lesson is not None]
    start = time.monotonic()
    execute_lessons(lessons, out_src, jobs, timeout)
    print(f"site: {len(lessons)} lessons ran in {time.monotonic() - start:.1f} s with {jobs} at a time", flush=True)

    titles = {n: title_of(nbformat.read(str(lesson), as_version=4)) for n, lesson, _ in path if lesson}
    for n, _, exercise in path:
        if exercise is not None:
            target = out_src / "exercises" / exercise.parent.name / exercise.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(exercise_page(exercise, titles.get(n)), str(target))

    # Markdown: the guides and measurements, then everything they link to.
    pages: dict[Path, Path] = {}
    queue: list[Path] = []
    guides = [ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "autograder" / "SECURITY.md"]
    guides = [g for g in guides if g.is_file()]
    for md in guides:
        pages[md] = out_src / md.relative_to(ROOT)
        queue.append(md)
    readme = ROOT / "README.md"
    pages[readme] = out_src / "index.md"
    queue.insert(0, readme)
    while queue:
        stage_markdown(queue.pop(0), out_src, pages, queue)
    extra = [p for p in pages if p != readme and p not in guides]
    toc = [str(pages[p].relative_to(out_src).with_suffix("")) for p in guides + extra]
    index = out_src / "index.md"
    index.write_text(front_page(index.read_text(encoding="utf-8"), path, toc), encoding="utf-8")


def render(out_src: Path, out: Path) -> None:
    """Sphinx writes into the stage first (myst-nb puts its copies of the notebooks beside the output folder,
    jupyter_execute/, so that stays in the stage too), then the HTML moves to `out`."""
    html = out_src / "_html"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-E", "-q", "-c", str(HERE), "-d",
           str(out_src / ".doctrees"), str(out_src), str(html)]
    r = subprocess.run(cmd)
    if r.returncode != 0:
        raise BuildError(f"sphinx-build failed with exit code {r.returncode}: {' '.join(cmd)}")
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(html), str(out))


def private_home() -> tempfile.TemporaryDirectory:
    """Point HOME and every Jupyter, IPython, matplotlib and compiler cache at a temporary folder."""
    home = tempfile.TemporaryDirectory(prefix="fxcourse-site-home-")
    dirs = {"HOME": "", "JUPYTER_CONFIG_DIR": ".jupyter", "JUPYTER_DATA_DIR": ".local/share/jupyter",
            "JUPYTER_RUNTIME_DIR": ".local/share/jupyter/runtime", "IPYTHONDIR": ".ipython", "MPLCONFIGDIR": ".mpl",
            "XDG_CACHE_HOME": ".cache", "XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share",
            "TORCHINDUCTOR_CACHE_DIR": ".inductor", "TRITON_CACHE_DIR": ".triton"}
    for var, sub in dirs.items():
        (Path(home.name) / sub).mkdir(parents=True, exist_ok=True)
        os.environ[var] = str(Path(home.name) / sub)
    os.environ["JUPYTER_PLATFORM_DIRS"] = "1"
    os.environ.pop("MPLBACKEND", None)  # kernels keep the inline backend, so plots become PNG outputs
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH")
                                            else "")
    bin_dir = str(Path(sys.executable).parent)
    os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    return home


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="build.py", description="Build the course as a static website.")
    p.add_argument("--out", type=Path, default=ROOT / "build" / "site", help="the site's folder (default build/site)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="lessons executed at a time (default: cores, at most 2)")
    p.add_argument("--timeout", type=float, default=600, help="seconds a lesson cell may take (default 600)")
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error(f"--jobs must be 1 or more, not {args.jobs}")
    out = args.out.resolve()
    out_src = out.with_name(out.name + "-src")
    start = time.monotonic()
    with private_home():
        try:
            stage(out_src, args.jobs, args.timeout)
            render(out_src, out)
        except (BuildError, OSError) as exc:  # OSError: a course file vanished or cannot be read or written
            print(f"site: error: {exc}", file=sys.stderr)
            return 1
    print(f"site: built {out / 'index.html'} in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
