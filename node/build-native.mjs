// The native addon (bindings/node), release, built by cargo into target/release:
// the directory every other release consumer (the C library, maturin, uniffi, the
// bench) builds into, so they all share one build of the engine. `napi build` always
// passes --target, which compiles the engine and all its dependencies a second time
// under target/<triple>/. The loader (native.cjs) and the declarations (native.d.cts)
// come from napi-rs's own API, as `napi build --platform --js native.cjs --dts
// native.d.cts` writes them.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateTypeDef, parseTriple, readNapiConfig, writeJsBinding } from "@napi-rs/cli";

const here = dirname(fileURLToPath(import.meta.url));
const crate = "acp-engine-node";
const cargo = process.env.CARGO ?? "cargo";

function output(command, args) {
  const done = spawnSync(command, args, { cwd: here, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (done.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${done.status ?? done.signal})`);
  return done.stdout;
}

// Written through a temporary name and renamed: a process that has the addon
// loaded keeps its copy.
function replace(path, write) {
  const temporary = `${path}.${process.pid}.tmp`;
  write(temporary);
  renameSync(temporary, path);
}

const targetDir = JSON.parse(output(cargo, ["metadata", "--format-version", "1", "--no-deps"])).target_directory;
const host = parseTriple(/^host: (.*)$/m.exec(output("rustc", ["-vV"]))[1]);
const config = await readNapiConfig(join(here, "package.json"));

// napi-derive writes each #[napi] item's declaration into this folder while it
// compiles the crate; if the folder lost them, force that crate's build (napi-build's
// build script reruns when NAPI_FORCE_BUILD_<CRATE> changes), as `napi build` does.
const typeDefDir = join(targetDir, "napi-rs", `${crate}-release`);
mkdirSync(typeDefDir, { recursive: true });
const env = { ...process.env, NAPI_TYPE_DEF_TMP_FOLDER: typeDefDir };
if (!existsSync(join(typeDefDir, crate))) env[`NAPI_FORCE_BUILD_${crate.toUpperCase().replaceAll("-", "_")}`] = String(Date.now());
const built = spawnSync(cargo, ["build", "--release", "-p", crate, "--lib"], { cwd: here, env, stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);

const library = crate.replaceAll("-", "_");
const artifact = { darwin: `lib${library}.dylib`, win32: `${library}.dll` }[host.platform] ?? `lib${library}.so`;
const addon = join(here, `${config.binaryName}.${host.platformArchABI}.node`);
replace(addon, (temporary) => copyFileSync(join(targetDir, "release", artifact), temporary));
const { exports, dts } = await generateTypeDef({
  typeDefDir,
  configDtsHeader: config.dtsHeader,
  configDtsHeaderFile: config.dtsHeaderFile,
  constEnum: config.constEnum,
  runtimeStringEnum: config.runtimeStringEnum,
  cwd: here,
});
replace(join(here, "native.d.cts"), (temporary) => writeFileSync(temporary, dts));
await writeJsBinding({
  platform: true,
  idents: exports,
  jsBinding: "native.cjs",
  binaryName: config.binaryName,
  packageName: config.packageName,
  version: config.packageJson.version,
  outputDir: here,
});
