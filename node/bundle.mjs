// Bundles tsc's output (build/) into the package's dist/: one file per entry
// point in package.json's "exports", plus the chunks they share.
//
// Why: Node's ESM loader costs about 1 ms per module, and the root entry point
// is 28 modules; bundled, `import "acp-engine"` takes about 10 ms instead of
// 30, paid by every process that loads the package (an agent spawned per
// session pays it on every start). Shared chunks keep one copy of each class,
// so `instanceof` holds across entry points. The declarations (.d.ts) stay
// tsc's, file for file.
//
// Every other entry point loads the root first (`withRoot`): esbuild makes a
// chunk per set of entry points that reach a module, so the root's modules
// fall into one chunk, and `import "acp-engine"` reads two files rather than
// seven (about 2 ms less per process). The others share most of the root's
// code anyway (`common.js`, the dispatcher, the app API), and are used next to
// it (the WebSocket client with `client()`).

import { build } from "esbuild";
import { cpSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = dirname(fileURLToPath(import.meta.url));
const tscDir = join(packageDir, "build");
const distDir = join(packageDir, "dist");
const packageJson = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));

const ROOT = "index";
const WITH_ROOT = "with-root:";

/** esbuild's entry points, named by their path under dist/ without ".js". */
function entryPoints() {
  const entries = {};
  for (const target of Object.values(packageJson.exports)) {
    if (typeof target !== "object") continue; // the schema files and package.json
    const name = target.import.replace(/^\.\/dist\//, "").replace(/\.js$/, "");
    const source = join(tscDir, `${name}.js`);
    entries[name] = name === ROOT ? source : `${WITH_ROOT}${source}`;
  }
  return entries;
}

/** An entry point's module for esbuild: `with-root:<path>` loads the root,
 * then re-exports what the module at <path> exports (see the top of this
 * file). */
const withRoot = {
  name: "with-root",
  setup(build) {
    build.onResolve({ filter: /^with-root:/ }, (args) => ({ path: args.path.slice(WITH_ROOT.length), namespace: "with-root" }));
    build.onLoad({ filter: /.*/, namespace: "with-root" }, (args) => ({
      contents: `import ${JSON.stringify(join(tscDir, `${ROOT}.js`))};\nexport * from ${JSON.stringify(args.path)};\n`,
      resolveDir: tscDir,
    }));
  },
};

/** The addon is loaded by a path relative to the file that loads it
 * (native.ts: "../native.cjs"), so that file must sit directly in dist/. */
function checkAddonPath(outputs) {
  const loaders = outputs.filter((file) => readFileSync(file, "utf8").includes('"../native.cjs"'));
  const misplaced = loaders.filter((file) => dirname(file) !== distDir);
  if (loaders.length === 0 || misplaced.length > 0) {
    throw new Error(`the addon loader must be bundled into a file directly in dist/, found in: ${loaders.map((f) => relative(packageDir, f)).join(", ") || "no file"}`);
  }
}

rmSync(distDir, { recursive: true, force: true });
const result = await build({
  entryPoints: entryPoints(),
  outdir: distDir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  packages: "external", // the optional MCP SDK peer stays the user's
  chunkNames: "[name]-[hash]",
  metafile: true,
  logLevel: "warning",
  plugins: [withRoot],
});
checkAddonPath(Object.keys(result.metafile.outputs).map((file) => join(packageDir, file)));
cpSync(tscDir, distDir, {
  recursive: true,
  filter: (source) => source.endsWith(".d.ts") || statSync(source).isDirectory(),
});
