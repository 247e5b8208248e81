# Sphinx configuration of the course's website. Build it with `make site` (docs/site/build.py), not by hand:
# the build script stages the source tree (README front page, lessons executed just before, exercise task text
# from the release, benchmarks and guides) and then runs Sphinx with this folder as its configuration.
#
# Why Sphinx with myst-nb: it is the Executable Books project's notebook engine (the one under Jupyter Book 1),
# pure Python and installed from PyPI with pip like the rest of the course, with no Node.js toolchain (Jupyter
# Book 2 is built on the Node-based mystmd) and a maintained release line (mkdocs-jupyter depends on MkDocs,
# whose 1.x line has had no release since 2024). myst-nb renders every output a lesson produces: text,
# HTML tables, and the PNG pictures of graphs and plots. It can execute notebooks itself, but only one after
# another inside Sphinx's read phase; the build script runs the lessons two at a time with the course's own
# executor instead, so myst-nb only renders here (nb_execution_mode = "off").
import sys
from pathlib import Path

# The course package before myst-nb reads a notebook: importing it spares Sphinx's process jsonschema's
# optional grammar (autograder/__init__.py says why).
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import autograder  # noqa: E402,F401

project = "fxcourse"
author = "fxcourse"
copyright = "fxcourse authors"
html_title = "fxcourse: learn torch.fx by doing"

extensions = ["myst_nb"]
nb_execution_mode = "off"  # docs/site/build.py executed every lesson a moment ago, into the staged copy
nb_merge_streams = True  # one block for consecutive prints, as in JupyterLab
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

exclude_patterns = [".doctrees", "_html", "jupyter_execute", "**/.ipynb_checkpoints"]  # build.py's scratch
suppress_warnings = ["myst.header"]  # lessons go from a title straight to ### where the prose wants it

html_theme = "sphinx_book_theme"
html_theme_options = {
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
}
html_copy_source = False  # the notebooks live in the repository; the site shows them rendered
html_show_sourcelink = False
html_last_updated_fmt = None
