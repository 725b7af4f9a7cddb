"""Sphinx configuration of the track_gen documentation site (scripts/build-docs builds it).

The pages are the Markdown files of docs/ (through myst-parser), the C++ reference is Breathe over
Doxygen's XML of include/track_gen/*.hpp (docs/Doxyfile writes it to build-docs/doxygen/xml), and
the Python reference is autodoc over python/track_gen with torch and the compiled extension
mocked, so nothing here needs torch, CUDA or a build of the library.
"""
import logging
import os
import sys
import xml.etree.ElementTree as ET

_here = os.path.dirname(os.path.abspath(__file__))
_root = os.path.dirname(_here)
sys.path.insert(0, os.path.join(_root, "python"))

project = "track_gen"
author = "the track_gen authors"
copyright = "the track_gen authors"
release = version = "0.1.0"

extensions = [
    "myst_parser",
    "breathe",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxcontrib.mermaid",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = []

# Markdown: headings get anchors (the pages link to "page.md#a-heading"), and $...$ stays text.
myst_heading_anchors = 3
# architecture.md's diagram: a ```mermaid fence (GitHub draws it; here sphinxcontrib-mermaid does,
# with mermaid.js in the reader's browser).
myst_fence_as_directive = ["mermaid"]

# C++ reference: Breathe over Doxygen's XML (TRACK_GEN_DOXYGEN_XML overrides where it is).
_doxygen_xml = os.environ.get("TRACK_GEN_DOXYGEN_XML", os.path.join(_root, "build-docs", "doxygen", "xml"))
breathe_projects = {"track_gen": _doxygen_xml}
breathe_default_project = "track_gen"
breathe_domain_by_extension = {"hpp": "cpp"}
breathe_show_include = True

# Python reference: the package imports neither torch nor its extension until a call needs them;
# mock both anyway so that autodoc never needs them, and track_gen.envs' gymnasium and numpy.
autodoc_mock_imports = ["torch", "track_gen._C", "gymnasium", "numpy"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = "track_gen"


class _NamespaceOnEveryPage(logging.Filter):
    """Drops one warning and only that one: Breathe's ``doxygenfile`` renders each header's
    contents inside a declaration of its namespace (``.. cpp:type:: track_gen``), so every C++
    page after the first declares ``track_gen`` again and Sphinx reports a duplicate C++
    declaration. Duplicates of anything else (a class, a function) still fail the build. The
    namespaces are those of Doxygen's index."""

    def __init__(self, namespaces):
        super().__init__()
        self._lines = {f"Declaration is '.. cpp:type:: {name}'." for name in namespaces}

    def filter(self, record):
        if record.levelno < logging.WARNING or getattr(record, "type", None) != "duplicate_declaration":
            return True
        message = record.getMessage()
        return not (message.startswith("Duplicate C++ declaration")
                    and message.rsplit("\n", 1)[-1] in self._lines)


def _doxygen_namespaces():
    index = os.path.join(_doxygen_xml, "index.xml")
    if not os.path.exists(index):
        raise RuntimeError(f"{index} is missing: run doxygen first (scripts/build-docs does)")
    return [c.findtext("name") for c in ET.parse(index).getroot().iter("compound")
            if c.get("kind") == "namespace"]


def _check_header_pages(app):
    """Every public header has its page in api/ (track_gen.hpp only includes the others): a new
    header without one is a warning, so the build fails."""
    from sphinx.util import logging as sphinx_logging
    headers = {f[:-len(".hpp")] for f in os.listdir(os.path.join(_root, "include", "track_gen"))
               if f.endswith(".hpp") and f != "track_gen.hpp"}
    pages = {f[:-len(".rst")] for f in os.listdir(os.path.join(_here, "api")) if f.endswith(".rst")}
    for name in sorted(headers - pages):
        sphinx_logging.getLogger(__name__).warning(
            "include/track_gen/%s.hpp has no page: add docs/api/%s.rst (doxygenfile) to a toctree of "
            "docs/api/index.rst", name, name)


def setup(app):
    # Before Sphinx's own filters on its warning handler (they count and raise the warnings).
    only_once = _NamespaceOnEveryPage(_doxygen_namespaces())
    for handler in logging.getLogger("sphinx").handlers:
        handler.filters.insert(0, only_once)
    app.connect("builder-inited", _check_header_pages)
