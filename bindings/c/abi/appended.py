#!/usr/bin/env python3
"""Take the fields appended to acp_options, acp_handlers and acp_server_options out of an ABI
description (abidw's XML), for make abi-check (bindings/c/abi/check.sh).

    appended.py BASELINE CURRENT OUT

acp_options and acp_handlers start with struct_size, the caller's sizeof:
the library reads only the fields within it, so fields appended at the end
keep programs built against an older header working. abidiff would report
the larger struct as a change of every function that takes one. So OUT is
CURRENT with, in those two structs, the trailing fields that lie beyond the
baseline's size removed and the baseline's size restored: abidiff then sees
only what else changed (a field removed, moved, inserted before the end, or
of another type: an enum's values, a callback's parameters), and fails on it.
Prints one line per appended field.
"""
import sys
import xml.etree.ElementTree as ET

GROWING = ("acp_options", "acp_handlers", "acp_server_options")


def structs(tree, name):
    return [e for e in tree.iter("class-decl") if e.get("name") == name and e.get("size-in-bits")]


def members(struct):
    """(element, field name, offset in bits) of each data member, in order."""
    found = []
    for member in struct.findall("data-member"):
        field = member.find("var-decl")
        found.append((member, field.get("name") if field is not None else None,
                      int(member.get("layout-offset-in-bits", "-1"))))
    return found


def main(baseline_path, current_path, out_path):
    baseline = ET.parse(baseline_path)
    current = ET.parse(current_path)
    for name in GROWING:
        recorded = structs(baseline, name)
        if len(recorded) != 1:
            continue  # not in the baseline (or ambiguous): abidiff judges it as it is
        size = int(recorded[0].get("size-in-bits"))
        before = [(field, offset) for _, field, offset in members(recorded[0])]
        for struct in structs(current, name):
            now = members(struct)
            head, tail = now[: len(before)], now[len(before):]
            # Only a struct that begins with the recorded fields, where they
            # were, and whose other fields all lie beyond the recorded size
            # grew by appending; anything else is left for abidiff to report.
            if [(field, offset) for _, field, offset in head] != before:
                continue
            if not tail or any(offset < size for _, _, offset in tail):
                continue
            for member, field, _ in tail:
                print(f"appended to {name}: {field}")
                struct.remove(member)
            struct.set("size-in-bits", str(size))
    current.write(out_path, encoding="unicode")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
