#!/usr/bin/env python3
"""Checks that the code in README.md and docs/guide/*.md is the examples' code.

A ```cpp block introduced by a line "From [examples/NAME](...)" must consist
of lines of examples/NAME (compared without leading and trailing blanks),
so the text cannot drift from the programs the tests build and run. Any
other ```cpp block in those files is an error: code shown to users is code
that is compiled. Usage: check_excerpts.py <source dir>; exits 1 naming
each line that is not in its example.
"""
import pathlib
import re
import sys

BLOCK = re.compile(r"(?:From \[examples/(?P<name>[\w.]+)\][^\n]*\n(?:[^\n]+\n)*\n)?```cpp\n(?P<code>.*?)```", re.S)


def main(root: pathlib.Path) -> int:
    failures = []
    for doc in [root / "README.md", *sorted((root / "docs" / "guide").glob("*.md"))]:
        text = doc.read_text()
        for block in BLOCK.finditer(text):
            line_no = text.count("\n", 0, block.start("code"))
            if block.group("name") is None:
                failures.append(f"{doc.relative_to(root)}:{line_no}: a cpp block that names no example")
                continue
            example = root / "examples" / block.group("name")
            known = {line.strip() for line in example.read_text().splitlines()}
            for k, line in enumerate(block.group("code").splitlines(), start=line_no + 1):
                if line.strip() and line.strip() not in known:
                    failures.append(f"{doc.relative_to(root)}:{k}: not in {example.name}: {line.strip()}")
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
