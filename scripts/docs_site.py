"""The docs site's API reference, written from the docstrings while MkDocs builds.

MkDocs (``mkdocs.yml``) loads this file as a hook. Before the pages are read it adds one
page per section of docs/api.md (``reference/<section>.md``), and lists them in the
navigation: each public name with its signature and its whole docstring, the prose as
Markdown and the ``>>>`` examples as code. The sections and their names are make_api_docs.py's, so the site, docs/api.md and
tests/test_docstrings.py list the same names; nothing generated is kept in git.

It also gives the pages that link outside docs/ (the benchmarks' README) a page of the
site to link to, since a link out of the site would be a dead end there.

Needs chainrule importable with SciPy (the `scipy` extra), as make_api_docs.py does.
"""

import re
import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_api_docs as api  # noqa: E402

REFERENCE = "reference"
_OUTSIDE = {"../benchmarks/README.md": "benchmarks.md"}


def slug(title):
    """A section's file name: ``Methods of Tensor`` -> ``methods-of-tensor``."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def reference_pages():
    """``{path: markdown}`` for the reference: an index, then a page per section."""
    sections = api.sections()
    index = ["# API reference", "",
             "Every public name of chainrule, one page per module or topic, with the "
             "whole docstring and its examples (they run in the test suite, so they "
             "show what the code prints). The examples assume `import numpy as np` "
             "and `import chainrule as cr`.", "",
             "| page | module | what is there |", "| --- | --- | --- |"]
    pages = {}
    for section in sections:
        name = f"{REFERENCE}/{slug(section.title)}.md"
        about = api.markdown_text(section.about or "")
        index.append(f"| [{section.title}]({slug(section.title)}.md) | "
                     f"`{section.module}` | {about.replace('|', '/')} |")
        pages[name] = render_section(section)
    pages[f"{REFERENCE}/index.md"] = "\n".join(index) + "\n"
    return pages


def render_section(section):
    parts = [f"# {section.title}", "", f"`{section.module}`", ""]
    if section.about:
        parts += [api.markdown_text(section.about), ""]
    for entry in section.entries:
        parts += render_entry(entry)
    return "\n".join(parts).rstrip() + "\n"


def render_entry(entry):
    """A name's heading (its anchor is the name), what kind it is, and its docstring."""
    anchor = re.sub(r"[^A-Za-z0-9_.-]", "", entry.display).replace(".", "-")
    heading = [f"## `{entry.display}` {{ #{anchor} }}", ""]
    if entry.kind == "constant":
        return heading + [f"A constant: `{_short(repr(entry.obj))}`", ""]
    kind = {"module": "module", "class": "class", "property": "property",
            "method": "method"}.get(entry.kind, "function")
    lines = heading
    if entry.signature:
        lines += ["```python", f"{entry.display}{entry.signature}", "```", ""]
    lines += [f"*{kind}*", ""]
    return lines + docstring_markdown(entry.doc) + [""]


def _short(text):
    return text if len(text) <= 80 else text[:77] + "..."


def docstring_markdown(doc):
    """A docstring as Markdown: prose paragraphs through make_api_docs' escaping,
    ``>>>`` sessions as Python console blocks, indented blocks as code."""
    if not doc:
        return ["(no docstring)"]
    out, prose, lines, i = [], [], doc.splitlines(), 0

    def flush():
        if prose:
            text = " ".join(line.strip() for line in prose)
            out.extend([api.markdown_text(text[:-1] if text.endswith("::") else text), ""])
            prose.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(">>>"):
            flush()
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += ["```pycon"] + _dedent(block) + ["```", ""]
            continue
        if line.startswith((" ", "\t")) and stripped and not prose:
            flush()
            block = []
            while i < len(lines) and (lines[i].startswith((" ", "\t")) or not lines[i].strip()):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["```text"] + _dedent(block) + ["```", ""]
            continue
        if not stripped:
            flush()
        else:
            prose.append(line)
        i += 1
    flush()
    return out


def _dedent(block):
    depth = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
    return [b[depth:] for b in block]


# ---------------------------------------------------------------------------------------
# MkDocs' hooks
# ---------------------------------------------------------------------------------------

def reference_nav():
    """The API reference's entries of the site's navigation: the index, then each
    section's page, in docs/api.md's order."""
    return [f"{REFERENCE}/index.md"] + [
        {section.title: f"{REFERENCE}/{slug(section.title)}.md"}
        for section in api.sections()]


def on_config(config):
    """mkdocs.yml names the reference by its index alone; its pages are listed here, so
    that a new section of docs/api.md is in the navigation without a line written."""
    for i, item in enumerate(config["nav"]):
        if isinstance(item, dict) and item.get("API reference") == f"{REFERENCE}/index.md":
            config["nav"][i] = {"API reference": reference_nav()}
    return config


def on_files(files, config):
    for path, text in reference_pages().items():
        files.append(File.generated(config, path, content=text))
    for outside, page in _OUTSIDE.items():
        source = (ROOT / "docs" / outside).resolve().read_text(encoding="utf-8")
        files.append(File.generated(config, page, content=source))
    return files


def on_page_markdown(markdown, page, config, files):
    for outside, inside in _OUTSIDE.items():
        markdown = markdown.replace(f"]({outside})", f"]({inside})")
    return markdown
