#!/usr/bin/env python3
"""Checks the relative links of the repository's Markdown: README.md, CONTRIBUTING.md and
the book's sources (docs/src/**/*.md, the atlas pages included through docs/src/atlas).

Every link or image `[text](target)` whose target is not a URL (http:, https:, mailto:)
must name a file or directory that exists, relative to the file that links it, and a
`#anchor` must name a heading of its target (or of the file itself for `#anchor` alone),
with anchors made as mdBook and GitHub make them: lower case, punctuation dropped, spaces
to hyphens, `-1`, `-2` … for repeated headings. Links inside code (fenced blocks and
`inline code`) are not links. Prints every broken link as FILE:LINE: and exits 1 if any.

    scripts/check-links.py [FILE.md ...]     (default: the files above)
"""
import os
import re
import sys
import unicodedata

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(heading):
    """mdBook's (and GitHub's) anchor of a heading's text."""
    text = re.sub(r"<[^>]+>", "", heading)                   # inline HTML
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)     # links keep their text
    text = text.strip().lower()
    out = []
    for ch in text:
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch == " ":
            out.append("-")
        elif unicodedata.category(ch).startswith("L") or unicodedata.category(ch).startswith("N"):
            out.append(ch)
    return "".join(out)


def lines_outside_code(path):
    """(line number, text) of the lines outside fenced blocks, inline code blanked."""
    inside = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                inside = not inside
                continue
            if not inside:
                yield number, re.sub(r"`[^`]*`", "``", line)


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, found = {}, set()
        for _, line in lines_outside_code(path):
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(2).replace("``", ""))
            # the heading's own text with its inline code kept
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        for m in re.finditer(r'id="([^"]+)"', open(path, encoding="utf-8").read()):
            found.add(m.group(1))
        _anchors[path] = found
    return _anchors[path]


def headings_with_code(path):
    """Anchors computed from the raw heading text (inline code included)."""
    seen, found = {}, set()
    inside = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                inside = not inside
                continue
            if inside:
                continue
            m = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(2).replace("`", ""))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
    return found


def check(path):
    broken = []
    for number, line in lines_outside_code(path):
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                continue
            file_part, _, anchor = target.partition("#")
            if file_part:
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if not os.path.exists(dest):
                    broken.append(f"{path}:{number}: {target}: no such file")
                    continue
            else:
                dest = path
            if anchor and dest.endswith(".md"):
                if anchor not in anchors(dest) | headings_with_code(dest):
                    broken.append(f"{path}:{number}: {target}: no heading #{anchor} in {dest}")
    return broken


def default_files():
    files = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "CONTRIBUTING.md")]
    for base, _, names in os.walk(os.path.join(ROOT, "docs", "src"), followlinks=True):
        files += [os.path.join(base, n) for n in sorted(names) if n.endswith(".md")]
    return [f for f in files if os.path.exists(f)]


def main():
    files = sys.argv[1:] or default_files()
    broken = []
    for f in files:
        broken += check(os.path.relpath(f))
    for b in broken:
        print(b)
    print(f"links: {len(files)} files checked, {len(broken)} broken link(s)")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
