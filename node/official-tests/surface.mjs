// The public surface of the official TypeScript SDK 2.4.0 against
// acp-engine's: for every entry point of its package.json `exports` (the
// bundled JSON schemas aside), every name it exports, value or type, as
// TypeScript's checker reads the two packages' declarations; and every value
// name at run time. A name ours lacks fails the run unless it is listed below
// with the reason; a listed name ours has fails it too (the list stays true).
//
// Usage: node surface.mjs   (last line: "N entry points, M names, K missing as listed, U unexpected")

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const OFFICIAL = "official-sdk-2";
const OURS = "acp-engine";
// node/'s own TypeScript (node/test.sh installs it first).
const ts = createRequire(resolve(here, "..", "package.json"))("typescript");

/** What ours lacks, by entry point, and why. */
const PLAN_FILE = {
  why: "the unstable schema of agent-client-protocol-schema 1.20.0, newer than the npm bundle's, dropped it (schema/v1/SOURCES.md)",
  names: ["PlanFile"],
};
const LISTED = {
  "./unstable": [PLAN_FILE],
  "./experimental/nes": [
    PLAN_FILE,
    {
      why: "zod schemas: the engine checks every message against the schema itself",
      names: ["validate", "zAgentCapabilities", "zClientCapabilities", "zInitializeRequest", "zInitializeResponse"],
    },
    {
      why: "a type only the official package's NES schema has (it ships no JSON of it): the position encodings of the NES capabilities, which the v1 capability objects acp-engine's schema takes from the newer crate do not have",
      names: ["PositionEncodingKind"],
    },
  ],
};

const manifest = JSON.parse(readFileSync(join(here, "node_modules", OFFICIAL, "package.json"), "utf8"));
const entries = Object.keys(manifest.exports).filter((entry) => !entry.endsWith(".json"));
const specifier = (pkg, entry) => (entry === "." ? pkg : `${pkg}${entry.slice(1)}`);

/** Each entry point's exported names, types and values alike, from the declarations. */
function declaredNames() {
  mkdirSync(join(here, "work"), { recursive: true });
  const probe = join(here, "work", "surface-probe.mts");
  const lines = entries.flatMap((entry, index) => [
    `import * as official${index} from "${specifier(OFFICIAL, entry)}";`,
    `import * as ours${index} from "${specifier(OURS, entry)}";`,
  ]);
  writeFileSync(probe, `${lines.join("\n")}\n`);
  try {
    const program = ts.createProgram([probe], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
      noEmit: true,
      types: [],
    });
    const checker = program.getTypeChecker();
    const names = new Map();
    for (const statement of program.getSourceFile(probe).statements) {
      const module = checker.getSymbolAtLocation(statement.moduleSpecifier);
      const text = statement.moduleSpecifier.text;
      names.set(text, module === undefined ? null : new Set(checker.getExportsOfModule(module).map((symbol) => symbol.name)));
    }
    return names;
  } finally {
    rmSync(probe, { force: true });
  }
}

/** Each entry point's value names at run time (null: it does not load here). */
async function runtimeNames(spec) {
  try {
    return new Set(Object.keys(await import(spec)));
  } catch {
    return null;
  }
}

const declared = declaredNames();
const unexpected = [];
let names = 0;
let missingAsListed = 0;
for (const entry of entries) {
  const listed = new Set((LISTED[entry] ?? []).flatMap((group) => group.names));
  const official = declared.get(specifier(OFFICIAL, entry));
  const ours = declared.get(specifier(OURS, entry));
  if (official === null) throw new Error(`the official ${entry} does not resolve`);
  if (ours === null) {
    unexpected.push(`${entry}: acp-engine has no such entry point`);
    continue;
  }
  const [officialValues, ourValues] = [await runtimeNames(specifier(OFFICIAL, entry)), await runtimeNames(specifier(OURS, entry))];
  // The official mcp-server needs its optional peer, which is not installed here: declarations only.
  const values = officialValues === null ? [] : [...officialValues].filter((name) => !ourValues?.has(name));
  const missing = new Set([...[...official].filter((name) => !ours.has(name)), ...values]);
  names += official.size;
  for (const name of missing) {
    if (listed.has(name)) missingAsListed += 1;
    else unexpected.push(`${entry}: ${name} is missing${values.includes(name) ? " at run time" : ""}`);
  }
  for (const name of listed) {
    if (!missing.has(name)) unexpected.push(`${entry}: ${name} is listed as missing, and acp-engine has it`);
  }
}
for (const line of unexpected) console.log(line);
console.log(`${entries.length} entry points, ${names} names, ${missingAsListed} missing as listed, ${unexpected.length} unexpected`);
process.exit(unexpected.length === 0 ? 0 : 1);
