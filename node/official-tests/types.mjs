// Programs typed against the official TypeScript SDK 2.4.0 as its users write
// them (types/*.ts), compiled unedited with `tsc --strict` twice: with
// `@agentclientprotocol/sdk` installed as the official package, which shows
// they are right, and as acp-engine (node_modules/acp-engine, the installed
// tarball node/test.sh copies here), as an npm `overrides` entry installs it.
// Both must compile: a type of ours narrower or wider than the official one
// where a program can tell fails here.
//
// Usage: node types.mjs   (last line: "N programs compile on the official SDK and on acp-engine")

import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const node = resolve(here, "..");
// node/'s own TypeScript and Node types (node/test.sh installs them first).
const tsc = createRequire(join(node, "package.json")).resolve("typescript/bin/tsc");
const programs = readdirSync(join(here, "types")).filter((name) => name.endsWith(".ts"));
const packages = { "the official SDK 2.4.0": "official-sdk-2", "acp-engine": "acp-engine" };

let failures = 0;
for (const [label, installed] of Object.entries(packages)) {
  const dir = mkdtempSync(join(tmpdir(), "acp-types-"));
  try {
    mkdirSync(join(dir, "node_modules", "@agentclientprotocol"), { recursive: true });
    symlinkSync(join(here, "node_modules", installed), join(dir, "node_modules", "@agentclientprotocol", "sdk"));
    for (const program of programs) cpSync(join(here, "types", program), join(dir, program));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2022", "ESNext.Disposable", "DOM"],
          types: ["node"],
          typeRoots: [join(node, "node_modules", "@types")],
        },
        files: programs,
      }),
    );
    const run = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir, encoding: "utf8" });
    if (run.status === 0) {
      console.log(`PASSED on ${label}: ${programs.join(", ")}`);
    } else {
      failures += 1;
      console.log(`FAILED on ${label}:\n${run.stdout}${run.stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  failures === 0
    ? `${programs.length === 1 ? "1 program compiles" : `${programs.length} programs compile`} on the official SDK and on acp-engine`
    : `${failures} of ${Object.keys(packages).length} packages fail to compile the programs`,
);
process.exit(failures === 0 ? 0 : 1);
