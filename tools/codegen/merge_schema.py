#!/usr/bin/env python3
"""Merge two sources of the ACP v1 JSON Schema, definition by definition, taking the newer.

    python3 tools/codegen/merge_schema.py --npm DIR --npm-label L --crate DIR --crate-label L \
        --out DIR --sources-md FILE

Sources (each a directory with ``schema.json`` and ``schema.unstable.json``):

* ``--npm``: the JSON the official TypeScript SDK bundles (``@agentclientprotocol/sdk``,
  ``package/schema/v1/``): the official generator's output, but only as new as the SDK.
* ``--crate``: the JSON derived with schemars from the Rust crate
  ``agent-client-protocol-schema`` (``tools/schema-derive/``), whose types are what the
  official generator turns into that JSON; it also holds ``meta.json`` and
  ``meta.unstable.json`` (the method-name tables), copied to the output as they are.

"Newer", per definition:

* present in the crate only: the crate's (added since the npm bundle);
* present in npm only: npm's while the merged schema still refers to it; a definition
  nothing refers to any more was replaced in the newer source and is dropped (so far
  only unstable ones: the crate's unstable features moved on);
* present in both: the crate's.  The crate is the newer protocol source as a whole: the
  npm bundle is the crate's types run through the same generator at some earlier crate
  version, so a definition that differs differs because the crate moved on.  That is a
  claim about versions, so it is checked, not assumed: the tool fails when a shared
  definition of the crate lacks a property, a variant, an enum value or a reference that
  npm's has (the protocol adds and never removes within v1; a loss means npm's bundle
  is the newer one for that definition, or the derivation is wrong).  ``--allow-loss``
  takes the crate's anyway and lists the losses.

The root of the schema (``$schema``, ``title``, the ``anyOf`` of messages) is the crate's
when it equals npm's but for prose, and otherwise the tool fails: the two were not
generated alike.  In the stable file, a loss (above) is fatal; in the unstable file, where
features may change or go at any time, losses are listed in SOURCES.md.

Stable and unstable stay two files as in ``schema/v1/``: ``schema.json`` merges the two
stable files, ``schema.unstable.json`` the two unstable ones (each the stable protocol plus
the unstable additions, as the official files are).  The tool checks that the merged
unstable file carries every definition of the merged stable one, and SOURCES.md describes
the unstable file only by what it layers on the stable one.

Outputs in ``--out``: ``schema.json``, ``schema.unstable.json``, the two meta files, and
``sources.json`` (per file, per definition: ``source`` -- ``crate`` or ``npm`` -- and
``status`` -- ``same``, ``changed``, ``docs`` (changed in prose only), ``added``,
``npm-only`` (kept: still referred to), ``dropped`` (npm's, referred to by nothing in the
merged schema: the newer source replaced it; not written)).  ``--sources-md``: the same, for people, with what changed against the npm
bundle (added, changed, promoted to stable, and what regenerated code will notice).

Without ``--crate`` (protocol version 2, which has no crate source yet): ``--npm`` as it
is, plus ``--extra``'s unstable additions, into ``--out``'s two schema files only.

Standard library only.  Deterministic: the same inputs give the same bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FILES = ("schema.json", "schema.unstable.json")
METAS = ("meta.json", "meta.unstable.json")


def load(path: Path) -> dict:
    with path.open(encoding="utf-8") as f:
        return json.load(f)


def dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def without_prose(node: Any) -> Any:
    """The schema without its documentation (descriptions and examples)."""
    if isinstance(node, dict):
        return {k: without_prose(v) for k, v in node.items() if k not in ("description", "examples")}
    if isinstance(node, list):
        return [without_prose(v) for v in node]
    return node


def features(node: Any, path: str = "") -> set[str]:
    """What a definition offers, as paths: properties, variants (by title or tag const),
    enum values and references.  A newer definition offers a superset of these."""
    out: set[str] = set()
    if isinstance(node, dict):
        for name, sub in (node.get("properties") or {}).items():
            out.add(f"{path}.{name}")
            out |= features(sub, f"{path}.{name}")
        for key in ("oneOf", "anyOf", "allOf"):
            for i, variant in enumerate(node.get(key) or []):
                out |= features(variant, f"{path}|{variant_name(variant, i)}")
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                out |= features(node[key], f"{path}[{key}]")
        for value in node.get("enum") or []:
            out.add(f"{path}={json.dumps(value)}")
        if "const" in node:
            out.add(f"{path}={json.dumps(node['const'])}")
        if "$ref" in node:
            out.add(f"{path}->{node['$ref'].rsplit('/', 1)[-1]}")
    return out


def variant_name(variant: Any, index: int) -> str:
    if not isinstance(variant, dict):
        return str(index)
    if "title" in variant:
        return variant["title"]
    for prop in (variant.get("properties") or {}).values():
        if isinstance(prop, dict) and "const" in prop:
            return json.dumps(prop["const"])
    if "const" in variant:
        return json.dumps(variant["const"])
    if "$ref" in variant:
        return variant["$ref"].rsplit("/", 1)[-1]
    return str(index)


def shape_changes(old: dict, new: dict) -> list[str]:
    """What regenerated code will notice: properties and variants added or removed,
    required fields added, a definition's kind changed."""
    notes: list[str] = []
    op, np_ = old.get("properties") or {}, new.get("properties") or {}
    oreq, nreq = set(old.get("required") or []), set(new.get("required") or [])
    for name in np_:
        if name not in op:
            notes.append(f"new {'REQUIRED ' if name in nreq else ''}property `{name}`")
    for name in op:
        if name not in np_:
            notes.append(f"property `{name}` REMOVED")
    for name in sorted(nreq - oreq):
        if name in op:
            notes.append(f"property `{name}` became REQUIRED")
    for name in sorted(oreq - nreq):
        if name in np_:
            notes.append(f"property `{name}` became optional")
    for key in ("oneOf", "anyOf"):
        ov = [variant_name(v, i) for i, v in enumerate(old.get(key) or [])]
        nv = [variant_name(v, i) for i, v in enumerate(new.get(key) or [])]
        added = [v for v in nv if v not in ov]
        removed = [v for v in ov if v not in nv]
        if added:
            notes.append(f"{key} variants added: {', '.join(added)}")
        if removed:
            notes.append(f"{key} variants REMOVED: {', '.join(removed)}")
    oe, ne = old.get("enum") or [], new.get("enum") or []
    if [v for v in ne if v not in oe]:
        notes.append(f"enum values added: {', '.join(json.dumps(v) for v in ne if v not in oe)}")
    if [v for v in oe if v not in ne]:
        notes.append(f"enum values REMOVED: {', '.join(json.dumps(v) for v in oe if v not in ne)}")
    for key in ("type", "format", "x-method", "x-side", "discriminator"):
        if old.get(key) != new.get(key):
            notes.append(f"`{key}`: {json.dumps(old.get(key))} -> {json.dumps(new.get(key))}")
    if not notes and without_prose(old) != without_prose(new):
        notes.append("nested schema changed")
    return notes


def merge_file(npm: dict, crate: dict, allow_loss: bool) -> tuple[dict, dict, list[str]]:
    """One file: the merged schema, its sources, and the losses found."""
    npm_root = {k: v for k, v in npm.items() if k != "$defs"}
    crate_root = {k: v for k, v in crate.items() if k != "$defs"}
    if without_prose(npm_root) != without_prose(crate_root):
        raise SystemExit(
            "merge_schema: the roots of the two schemas differ beyond prose (keys "
            f"{sorted(npm_root)} vs {sorted(crate_root)}): the derivation does not match "
            "the official generator"
        )
    nd, cd = npm["$defs"], crate["$defs"]
    merged: dict[str, Any] = {}
    sources: dict[str, dict[str, str]] = {}
    losses: list[str] = []
    # The crate's order (the newer generator's), then what only npm has, in npm's order.
    for name in list(cd) + [n for n in nd if n not in cd]:
        if name in cd and name in nd:
            lost = sorted(features(nd[name]) - features(cd[name]))
            if lost:
                losses.append(f"`{name}`: the crate lacks {', '.join(lost)}")
            if cd[name] == nd[name]:
                status = "same"
            elif without_prose(cd[name]) == without_prose(nd[name]):
                status = "docs"
            else:
                status = "changed"
            merged[name], sources[name] = cd[name], {"source": "crate", "status": status}
        elif name in cd:
            merged[name], sources[name] = cd[name], {"source": "crate", "status": "added"}
        else:
            merged[name], sources[name] = nd[name], {"source": "npm", "status": "npm-only"}
    # A definition only npm has is kept while the merged schema still refers to it; one
    # nothing refers to any more was dropped by the newer source (an unstable feature
    # replaced), and goes.
    while True:
        used = refs(crate_root) | refs(merged)
        unused = [n for n, s in sources.items() if s["source"] == "npm" and n in merged and n not in used]
        if not unused:
            break
        for name in unused:
            del merged[name]
            sources[name] = {"source": "npm", "status": "dropped"}
    if losses and not allow_loss:
        raise SystemExit(
            "merge_schema: the crate is not newer than npm for these definitions "
            "(--allow-loss takes the crate's anyway):\n  " + "\n  ".join(losses)
        )
    return {**crate_root, "$defs": merged}, sources, losses


def refs(node: Any) -> set[str]:
    """The definitions a schema (or part of one) refers to."""
    if isinstance(node, dict):
        out = {node["$ref"].rsplit("/", 1)[-1]} if isinstance(node.get("$ref"), str) else set()
        for value in node.values():
            out |= refs(value)
        return out
    if isinstance(node, list):
        return set().union(*(refs(v) for v in node)) if node else set()
    return set()


def methods(schema: dict) -> dict[str, str]:
    """Wire method -> side, from the x-method / x-side annotations."""
    return {
        d["x-method"]: d.get("x-side", "?")
        for d in schema["$defs"].values()
        if isinstance(d, dict) and "x-method" in d
    }


def report(args, npm: dict, merged: dict, sources: dict, losses: dict) -> str:
    ns, nu = npm["schema.json"]["$defs"], npm["schema.unstable.json"]["$defs"]
    ms, mu = merged["schema.json"]["$defs"], merged["schema.unstable.json"]["$defs"]
    ss, su = sources["schema.json"], sources["schema.unstable.json"]
    lines = [
        "# Where schema/v1 comes from",
        "",
        "Written by `tools/codegen/merge_schema.py` (`make update-schema`); do not edit by hand.",
        "",
        f"- **npm**: `{args.npm_label}`, `package/schema/v1/` (the official generator's JSON; `schema/upstream/npm/v1/`).",
        f"- **crate**: `{args.crate_label}`, its types run through schemars by",
        "  `tools/schema-derive/` with the official generator's settings (`schema/upstream/crate/v1/`).",
    ]
    if args.extra:
        lines += [
            f"- **pypi**: `{args.extra_label}`: the unstable methods only the official Python SDK has (generated",
            "  from a newer schema release), its pydantic models as JSON Schema in schemars' shape by",
            "  `tools/schema-derive-py/` (`schema/upstream/pypi/v1/`); only definitions neither other source",
            "  has, added to the unstable file.",
        ]
    lines += [
        "",
        "Per definition: present in one source, that one; in both, the crate's (the newer",
        "protocol source: it carries every npm definition, and the merge fails if a shared",
        "definition of the crate lacks a property, variant, enum value or reference npm's has).",
        "`sources.json` has the same per definition, machine-readable.",
        "",
        "| file | definitions | from crate (same / prose only / changed / added) | npm only (kept / dropped) | methods |",
        "|---|---|---|---|---|",
    ]
    for file, src, m in (("schema.json", ss, ms), ("schema.unstable.json", su, mu)):
        count = {s: sum(1 for v in src.values() if v["status"] == s and v["source"] != "pypi")
                 for s in ("same", "docs", "changed", "added", "npm-only", "dropped")}
        lines.append(
            f"| `{file}` | {len(m)} | {count['same']} / {count['docs']} / {count['changed']} / {count['added']} "
            f"| {count['npm-only']} / {count['dropped']} | {len(methods(merged[file]))} |"
        )
    for file, loss in losses.items():
        if loss:
            lines += ["", f"What the crate's `{file}` no longer has of npm's (unstable features may change or go):", ""]
            lines += [f"- {x}" for x in loss]

    def section(title: str, names: list[str], describe) -> None:
        lines.extend(["", f"### {title} ({len(names)})", ""])
        lines.extend(f"- `{n}`{describe(n)}" for n in names) if names else lines.append("None.")

    def method_of(defs: dict, n: str) -> str:
        d = defs[n]
        return f" — `{d['x-method']}` ({d.get('x-side')})" if isinstance(d, dict) and "x-method" in d else ""

    lines += ["", "## Stable (`schema.json`) against the npm bundle's stable"]
    promoted = [n for n in ms if n not in ns and n in nu]
    added = [n for n in ms if n not in ns and n not in nu]
    section("Promoted to stable (unstable in the npm bundle)", promoted, lambda n: method_of(ms, n))
    section("Added (in neither npm file)", added, lambda n: method_of(ms, n))
    changed = [n for n in ms if ss[n]["status"] == "changed"]
    section("Changed", changed, lambda n: ": " + "; ".join(shape_changes(ns[n], ms[n])))
    section("Prose only", [n for n in ms if ss[n]["status"] == "docs"], lambda n: "")
    section("Removed", [n for n in ns if n not in ms], lambda n: "")
    new_methods = {m: s for m, s in methods(merged["schema.json"]).items() if m not in methods(npm["schema.json"])}
    lines += ["", "Methods new to stable: " + (", ".join(f"`{m}` ({s})" for m, s in sorted(new_methods.items())) or "none") + "."]

    lines += [
        "",
        "## Unstable (`schema.unstable.json`): what it layers on the merged stable",
        "",
        "The file holds the stable protocol too (as the official one does); listed here is",
        "only what differs from the merged `schema.json`, against the npm bundle's unstable.",
    ]
    layered = [n for n in mu if n not in ms]
    section(
        "Unstable-only definitions",
        layered,
        lambda n: (" (new)" if n not in nu else (" (changed)" if su[n]["status"] == "changed" else "")) + method_of(mu, n),
    )
    extended = [n for n in mu if n in ms and mu[n] != ms[n] and without_prose(mu[n]) != without_prose(ms[n])]
    section("Stable definitions the unstable features extend", extended, lambda n: ": " + "; ".join(shape_changes(ms[n], mu[n])))
    section(
        "Gone from unstable (in the npm bundle's unstable, in neither merged file)",
        [n for n in nu if n not in mu],
        lambda n: "",
    )
    section(
        "Changed against the npm bundle's unstable",
        [n for n in mu if n in nu and su[n]["status"] == "changed"],
        lambda n: ": " + "; ".join(shape_changes(nu[n], mu[n])),
    )
    new_u = {m: s for m, s in methods(merged["schema.unstable.json"]).items() if m not in methods(npm["schema.unstable.json"])}
    lines += ["", "Methods new to unstable: " + (", ".join(f"`{m}` ({s})" for m, s in sorted(new_u.items())) or "none") + "."]
    return "\n".join(lines) + "\n"


def dump_sources(args, sources: dict) -> str:
    """sources.json, one definition a line."""
    lines = ["{", f'  "npm": {json.dumps(args.npm_label)},', f'  "crate": {json.dumps(args.crate_label)},']
    if args.extra:
        lines.append(f'  "pypi": {json.dumps(args.extra_label)},')
    for i, f in enumerate(FILES):
        entries = [f"    {json.dumps(n)}: {json.dumps(v)}" for n, v in sources[f].items()]
        lines += [f"  {json.dumps(f)}: {{", ",\n".join(entries), "  }" + ("," if i + 1 < len(FILES) else "")]
    return "\n".join(lines + ["}"]) + "\n"


# Where a method's params / result go in the JSON-RPC envelopes: (side that handles it,
# kind) -> envelope of the params, envelope of the result.
ENVELOPES = {
    ("agent", "request"): ("ClientRequest", "AgentResponse"),
    ("agent", "notification"): ("ClientNotification", None),
    ("client", "request"): ("AgentRequest", "ClientResponse"),
    ("client", "notification"): ("AgentNotification", None),
}


def variant_list(envelope: Any, defs: dict, side: str) -> list:
    """The envelope's list of method variants (those referring to ``side``'s definitions)."""
    if isinstance(envelope, dict):
        for key, value in envelope.items():
            if key in ("anyOf", "oneOf") and all(isinstance(v, dict) and "allOf" in v for v in value) and any(
                defs.get(name, {}).get("x-side") == side for name in refs(value)
            ):
                return value
            found = variant_list(value, defs, side)
            if found is not None:
                return found
    elif isinstance(envelope, list):
        for value in envelope:
            found = variant_list(value, defs, side)
            if found is not None:
                return found
    return None  # type: ignore[return-value]


def add_extra(merged: dict, sources: dict, extra: dict) -> None:
    """Definitions only the extra source has, into the unstable file: added as they are,
    each method's params / result listed in the JSON-RPC envelopes."""
    defs = merged["$defs"]
    added = [name for name in extra["$defs"] if name not in defs]
    for name in added:
        defs[name] = extra["$defs"][name]
        sources[name] = {"source": "pypi", "status": "added"}
    for method in extra["x-methods"]:
        if method["params"] not in added:
            continue
        for envelope, name in zip(ENVELOPES[(method["side"], method["kind"])], (method["params"], method["result"])):
            if envelope is None:
                continue
            variants = variant_list(defs[envelope], defs, method["side"])
            if variants is None:
                raise SystemExit(f"merge_schema: no method list in {envelope} for {method['method']}")
            variants.append({"title": name, "allOf": [{"$ref": f"#/$defs/{name}"}]})
    dangling = sorted(refs(merged) - defs.keys())
    if dangling:
        raise SystemExit(f"merge_schema: the extra definitions refer to unknown ones: {dangling}")


def extend(npm_dir: Path, extra: Path | None, out: Path) -> None:
    """The npm schema as it is, plus the extra source's unstable additions (v2): the stable
    file copied byte for byte, the unstable one rewritten only when something was added."""
    out.mkdir(parents=True, exist_ok=True)
    for f in FILES:
        text = (npm_dir / f).read_text(encoding="utf-8")
        if f == "schema.unstable.json" and extra is not None:
            schema = json.loads(text)
            add_extra(schema, {}, load(extra / "schema.unstable.json"))
            text = dump(schema)
        (out / f).write_text(text, encoding="utf-8")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--npm", type=Path, required=True)
    p.add_argument("--npm-label", required=True)
    p.add_argument("--crate", type=Path, help="without it: --npm as it is, plus --extra (v2)")
    p.add_argument("--crate-label")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--sources-md", type=Path)
    p.add_argument("--extra", type=Path, help="a directory whose schema.unstable.json adds unstable definitions")
    p.add_argument("--extra-label")
    p.add_argument("--allow-loss", action="store_true")
    args = p.parse_args()

    if args.crate is None:
        extend(args.npm, args.extra, args.out)
        return
    npm = {f: load(args.npm / f) for f in FILES}
    crate = {f: load(args.crate / f) for f in FILES}
    merged, sources, losses = {}, {}, {}
    for f in FILES:
        # Unstable definitions may change or go at any time: losses there are listed, not fatal.
        allow = args.allow_loss or f == "schema.unstable.json"
        merged[f], sources[f], losses[f] = merge_file(npm[f], crate[f], allow)
    if args.extra:
        add_extra(merged["schema.unstable.json"], sources["schema.unstable.json"], load(args.extra / "schema.unstable.json"))
    missing = [n for n in merged["schema.json"]["$defs"] if n not in merged["schema.unstable.json"]["$defs"]]
    if missing:
        raise SystemExit(f"merge_schema: the merged unstable schema lacks stable definitions: {missing}")

    args.out.mkdir(parents=True, exist_ok=True)
    for f in FILES:
        (args.out / f).write_text(dump(merged[f]), encoding="utf-8")
    for f in METAS:
        (args.out / f).write_text(dump(load(args.crate / f)), encoding="utf-8")
    (args.out / "sources.json").write_text(dump_sources(args, sources), encoding="utf-8")
    args.sources_md.write_text(report(args, npm, merged, sources, losses), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
