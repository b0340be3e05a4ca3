#!/usr/bin/env python3
"""Writes docs/c-api.md, the C API reference, from capi/include/tk/tk.h.

Every section of the header (`/*===--- Name ---*/`) becomes a section of the
page; every declaration in it is shown as the header writes it, under the
`/** ... */` comment before it. Only the header says what the API is, so the
page is generated, and `--check` (ctest's docs-generated) fails when it is
stale.

    tools/gen-capi-doc.py [--check]
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = os.path.join(ROOT, "capi", "include", "tk", "tk.h")
DOC = os.path.join(ROOT, "docs", "c-api.md")

INTRO = """# The C API (`tk.h`)

<!-- Generated from capi/include/tk/tk.h by tools/gen-capi-doc.py; edit the header, not this. -->

Everything a program calls, as `capi/include/tk/tk.h` declares it, section by section, each
declaration under its comment. Every call returns a `tk_status`; on failure
`tk_last_error()` holds a message naming what was wrong. Structs that grow carry a
`struct_size` the caller sets (`sizeof` of the struct it was built against), so an older
program keeps working with a newer library. `docs/guide.md` shows the calls in use.
"""


def strip_comment(text):
    """The prose of a `/** ... */` or `/* ... */` comment."""
    text = re.sub(r"^/\*\*?", "", text.strip())
    text = re.sub(r"\*/$", "", text)
    lines = [re.sub(r"^\s*\* ?", "", line) for line in text.split("\n")]
    return "\n".join(lines).strip()


def parse(source):
    """[(section, [(comment, declaration)])] in the header's order."""
    sections = []
    current = None
    pending = None
    depth = 0
    text = source
    i = 0
    n = len(text)
    buffer = []
    while i < n:
        if text.startswith("/*===---", i):
            end = text.index("*/", i) + 2
            title = re.sub(r"[-=*/\s]+$", "", text[i + 8:end]).strip()
            title = title.strip("- =")
            current = (title, [])
            sections.append(current)
            pending = None
            i = end
            continue
        if text.startswith("/**", i) and depth == 0 and not "".join(buffer).strip():
            end = text.index("*/", i) + 2
            pending = strip_comment(text[i:end])
            i = end
            continue
        if text.startswith("/*", i) and depth == 0 and not "".join(buffer).strip():
            end = text.index("*/", i) + 2
            i = end
            continue
        if text.startswith("//", i) or (text.startswith("#", i) and
                                       not "".join(buffer).strip()):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        c = text[i]
        if current is None:
            i += 1
            continue
        buffer.append(c)
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            so_far = "".join(buffer).strip()
            # A function defined in the header (the tk_arg_* helpers) ends
            # with its body.
            if depth == 0 and so_far.startswith("static inline"):
                current[1].append((pending, so_far))
                buffer = []
                pending = None
        elif c == ";" and depth == 0:
            declaration = "".join(buffer).strip()
            buffer = []
            if declaration and not declaration.startswith("}"):
                current[1].append((pending, declaration))
            pending = None
        i += 1
    return [s for s in sections if s[1]]


def render(sections):
    out = [INTRO]
    out.append("## Contents\n")
    for title, _ in sections:
        anchor = re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")
        out.append(f"- [{title}](#{anchor})")
    out.append("")
    for title, declarations in sections:
        out.append(f"## {title}\n")
        for comment, declaration in declarations:
            name = re.search(r"(tk_\w+)\s*\(", declaration)
            if not name or declaration.startswith("typedef"):
                name = re.search(r"(tk_\w+)\s*;$", declaration) or name
            if name:
                out.append(f"### `{name.group(1)}`\n")
            if comment:
                out.append(comment + "\n")
            out.append("```c\n" + declaration + "\n```\n")
    return "\n".join(out).rstrip() + "\n"


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        sys.exit("usage: tools/gen-capi-doc.py [--check]")
    with open(HEADER) as f:
        fresh = render(parse(f.read()))
    if check:
        current = open(DOC).read() if os.path.exists(DOC) else ""
        if current != fresh:
            sys.exit("gen-capi-doc: docs/c-api.md is stale against tk.h: "
                     "run tools/gen-capi-doc.py")
        return
    with open(DOC + ".partial", "w") as f:
        f.write(fresh)
    os.replace(DOC + ".partial", DOC)


if __name__ == "__main__":
    main()
