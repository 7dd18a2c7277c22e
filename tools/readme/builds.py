"""Build README programs outside the repository, from the installed artifacts only, the way
each package's README says: a cargo project with a path dependency (Rust), a fresh venv with
the wheel installed (Python, type-checked with mypy --strict), an npm project with the packed
tarball installed (TypeScript, compiled with tsc --strict), `make install` and pkg-config (C),
`make install`, pkg-config and a module that requires the Go package by a replace (Go), the
jar installed into the local Maven repository and a Maven project that depends on it (Kotlin).

Each builder takes the blocks of its language and a scratch directory, and returns for each
block either the command line that runs the program or why it could not be built.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Dict, List, Sequence, Union

from blocks import ROOT, Block

Built = Dict[Block, Union[List[str], str]]  # a command line, or the build error

WHEELS = ROOT / "target" / "wheels"
NPM_PACKS = ROOT / "target" / "npm"
TOOLS_VENV = ROOT / "target" / "python-venv"


def run(argv: Sequence[str], cwd: Path, env: Union[Dict[str, str], None] = None) -> str:
    """Run a build step; the error text (its output) if it failed, else ""."""
    done = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True)
    return "" if done.returncode == 0 else f"$ {' '.join(argv)}\n{done.stdout}{done.stderr}"


def program_name(block: Block) -> str:
    """A file name for a block: its README's folder, its role and its line."""
    folder = Path(block.path).parent.as_posix().replace("/", "-")
    return f"{folder if folder != '.' else 'top'}-{block.role}-{block.line}"


def newest(folder: Path, pattern: str) -> Path:
    candidates = sorted(folder.glob(pattern), key=lambda p: p.stat().st_mtime)
    if not candidates:
        raise FileNotFoundError(f"no {pattern} in {folder} (make test-python and make test-node build them)")
    return candidates[-1]


def build_rust(blocks: List[Block], cargo_blocks: Dict[str, Block], work: Path) -> Built:
    """One cargo project per README, with that README's `toml cargo` block as its
    dependencies (acp-engine's path pointed at core/), the repository's Cargo.lock, and the
    repository's target directory (so dependencies already built are reused)."""
    built: Built = {}
    by_readme: Dict[str, List[Block]] = {}
    for block in blocks:
        by_readme.setdefault(block.path, []).append(block)
    for readme, group in by_readme.items():
        if readme not in cargo_blocks:
            for block in group:
                built[block] = f"{readme} shows Rust programs but no ```toml cargo block with their [dependencies]"
            continue
        dependencies = re.sub(
            r'(acp-engine\s*=\s*\{[^}]*path\s*=\s*)"[^"]*"', rf'\1"{ROOT / "core"}"', cargo_blocks[readme].text
        )
        project = work / f"rust-{program_name(group[0])}"
        (project / "src" / "bin").mkdir(parents=True)
        name = project.name.lower()
        manifest = f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        (project / "Cargo.toml").write_text(manifest + dependencies + "\n[workspace]\n")
        (project / "Cargo.lock").write_bytes((ROOT / "Cargo.lock").read_bytes())
        for block in group:
            (project / "src" / "bin" / f"{program_name(block)}.rs").write_text(block.text)
        # No debug info: these programs only have to build and run, and their
        # build of the engine would otherwise be the largest one in target/.
        env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target"), CARGO_PROFILE_DEV_DEBUG="false")
        error = run(["cargo", "build", "--quiet", "--bins"], project, env)
        for block in group:
            built[block] = error or [str(ROOT / "target" / "debug" / program_name(block))]
    return built


def build_python(blocks: List[Block], work: Path) -> Built:
    """A fresh venv with only the wheel installed; each program type-checked with
    mypy --strict against that venv, then run by its interpreter."""
    venv = work / "python-venv"
    python = venv / "bin" / "python"
    error = run(["python3", "-m", "venv", str(venv)], work)
    if not error:
        wheel = newest(WHEELS, "acp_engine-*.whl")
        error = run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)], work)
    built: Built = {}
    for block in blocks:
        source = work / f"{program_name(block).replace('-', '_')}.py"
        source.write_text(block.text)
        mypy = [str(TOOLS_VENV / "bin" / "python"), "-m", "mypy", "--strict", "--no-incremental"]
        mypy += ["--python-executable", str(python), str(source)]
        built[block] = error or run(mypy, work) or [str(python), str(source)]
    return built


def build_ts(blocks: List[Block], work: Path) -> Built:
    """An npm project with the packed tarball and the TypeScript toolchain installed, the
    programs compiled with tsc --strict and run by node."""
    app = work / "node-app"
    (app / "src").mkdir(parents=True)
    (app / "package.json").write_text('{ "name": "readme-examples", "private": true, "type": "module" }\n')
    dev = json.loads((ROOT / "node" / "package.json").read_text())["devDependencies"]
    tools = [f"{name}@{dev[name]}" for name in ("typescript", "@types/node")]
    tarball = newest(NPM_PACKS, "acp-engine-*.tgz")
    error = run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", str(tarball), *tools], app)
    config = {
        "compilerOptions": {
            "strict": True,
            "target": "es2022",
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "outDir": "dist",
            "rootDir": "src",
            "types": ["node"],
        },
        "include": ["src"],
    }
    (app / "tsconfig.json").write_text(json.dumps(config, indent=2))
    for block in blocks:
        (app / "src" / f"{program_name(block)}.ts").write_text(block.text)
    error = error or run([str(app / "node_modules" / ".bin" / "tsc"), "-p", "."], app)
    return {block: error or ["node", str(app / "dist" / f"{program_name(block)}.js")] for block in blocks}


def build_c(blocks: List[Block], work: Path) -> Built:
    """`make install` into a scratch prefix, each program compiled with exactly the
    pkg-config line the README gives (strict warnings on), run without LD_LIBRARY_PATH."""
    prefix = work / "c-prefix"
    error = run(["make", "-s", "install", f"PREFIX={prefix}"], ROOT)
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags: List[str] = []
    if not error:
        done = subprocess.run(["pkg-config", "--cflags", "--libs", "acp_engine"], env=env, capture_output=True, text=True)
        error = "" if done.returncode == 0 else f"pkg-config: {done.stderr}"
        flags = done.stdout.split()
    built: Built = {}
    for block in blocks:
        source = work / f"{program_name(block)}.c"
        source.write_text(block.text)
        binary = work / program_name(block)
        compile_ = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", str(binary), str(source), *flags]
        built[block] = error or run(compile_, work) or [str(binary)]
    return built


def build_go(blocks: List[Block], work: Path) -> Built:
    """`make install` into a scratch prefix; one Go module per program that requires the
    Go package with a `replace` to the repository's go/ (as go/README.md says), vetted and
    built with cgo finding the library through pkg-config only."""
    prefix = work / "go-prefix"
    error = run(["make", "-s", "install", f"PREFIX={prefix}"], ROOT)
    # No -mod=mod: the steps are go/README.md's, `go mod tidy` among them.
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"), GOTOOLCHAIN="local")
    built: Built = {}
    for block in blocks:
        module = work / program_name(block)
        module.mkdir()
        (module / "main.go").write_text(block.text)
        (module / "go.mod").write_text(
            "module example.com/readme\n\ngo 1.21\n\n"
            "require github.com/acp-engine/acp-engine/go v0.0.0\n\n"
            f"replace github.com/acp-engine/acp-engine/go => {ROOT / 'go'}\n"
        )
        binary = module / "program"
        built[block] = (
            error
            or run(["go", "mod", "tidy"], module, env)
            or run(["go", "vet", "./..."], module, env)
            or run(["go", "build", "-o", str(binary), "."], module, env)
            or [str(binary)]
        )
    return built


KOTLIN_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>readme</artifactId>
  <version>1</version>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
    <kotlin.version>{kotlin}</kotlin.version>
  </properties>
  <dependencies>
    <dependency>
      <groupId>dev.acp-engine</groupId>
      <artifactId>acp-engine</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
  <build>
    <sourceDirectory>src/main/kotlin</sourceDirectory>
    <plugins>
      <plugin>
        <groupId>org.jetbrains.kotlin</groupId>
        <artifactId>kotlin-maven-plugin</artifactId>
        <version>${{kotlin.version}}</version>
        <configuration><jvmTarget>17</jvmTarget><args><arg>-Werror</arg></args></configuration>
        <executions><execution><id>compile</id><goals><goal>compile</goal></goals></execution></executions>
      </plugin>
    </plugins>
  </build>
</project>
"""


def pom_value(tag: str) -> str:
    """A value of kotlin/pom.xml (the first `<tag>`), so the programs build against what it installs."""
    found = re.search(rf"<{tag}>([^<]+)</{tag}>", (ROOT / "kotlin" / "pom.xml").read_text())
    if not found:
        raise ValueError(f"no <{tag}> in kotlin/pom.xml")
    return found.group(1)


def build_kotlin(blocks: List[Block], work: Path) -> Built:
    """The jar installed into the local Maven repository as kotlin/README.md says (after
    kotlin/build.sh, which make test-kotlin runs); one Maven project per program that
    depends on it by its coordinates, compiled with warnings as errors and run on the
    class path Maven resolved."""
    error = run(["mvn", "-q", "-B", "-Dstyle.color=never", "-DskipTests", "install"], ROOT / "kotlin")
    pom = KOTLIN_POM.format(kotlin=pom_value("kotlin.version"), version=pom_value("version"))
    built: Built = {}
    for block in blocks:
        project = work / program_name(block)
        sources = project / "src" / "main" / "kotlin"
        sources.mkdir(parents=True)
        (sources / "Main.kt").write_text(block.text)
        (project / "pom.xml").write_text(pom)
        failed = error or run(
            ["mvn", "-q", "-B", "-Dstyle.color=never", "compile",
             "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath",
             "-Dmdep.outputFile=classpath.txt"],
            project,
        )
        if failed:
            built[block] = failed
            continue
        classpath = f"{project / 'target' / 'classes'}:{(project / 'classpath.txt').read_text().strip()}"
        built[block] = ["java", "-cp", classpath, "MainKt"]
    return built
