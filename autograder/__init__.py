"""The course's autograder (its layers: ARCHITECTURE.md); importing it spares every process one slow optional import."""
import sys as _sys

# jsonschema (under nbformat and nbgrader) imports the optional `rfc3987_syntax` format checker when it is
# installed, and that module compiles a grammar when imported: about 3 s in every process that reads a
# notebook. No schema the course validates (notebooks, nbgrader's metadata) uses the `iri` formats it checks,
# so the course's own processes go without it; jsonschema treats it as not installed.
if "rfc3987_syntax" not in _sys.modules:
    _sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
