#!/usr/bin/env python3
"""Checks the API reference doxygen wrote (its XML): that it documents the
public classes and functions, and that no internal name (weft::detail, a
weft/detail/ header) made it in. Exit status 1, naming them, if one did.
Doxygen itself fails the build on a public name without its comment
(docs/api/Doxyfile.in: WARN_IF_UNDOCUMENTED, WARN_AS_ERROR)."""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

xml_dir = Path(sys.argv[1])
index = ET.parse(xml_dir / "index.xml").getroot()
leaks, classes, members = [], 0, 0
for compound in index.findall("compound"):
    kind, name = compound.get("kind"), compound.findtext("name", "")
    if kind in ("class", "struct", "union", "namespace", "file", "dir") and (
            "detail" in name.split("::") or "detail/" in name or name == "detail"):
        leaks.append(f"{kind} {name}")
    if kind in ("class", "struct", "union"):
        # Private nested types are listed in the index, not in the reference.
        d = ET.parse(xml_dir / (compound.get("refid") + ".xml")).getroot().find("compounddef")
        if d is not None and d.get("prot") == "public":
            classes += 1
    for member in compound.findall("member"):
        members += 1
        mname = member.findtext("name", "")
        if "detail::" in mname:
            leaks.append(f"{member.get('kind')} {name}::{mname}")
if leaks:
    print("check_reference: internal names in the API reference:\n  " + "\n  ".join(leaks))
    sys.exit(1)
if classes == 0 or members == 0:
    print(f"check_reference: the reference is empty ({classes} classes, {members} members)")
    sys.exit(1)
print(f"check_reference: {classes} classes and structs, {members} members; no detail:: name")
