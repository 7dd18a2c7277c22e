"""The programs in the repository's Markdown files: fenced code blocks whose info string
names a program language and a role, as in

    ```python agent
    ```ts client

Every block in a program language must have a role (`agent` or `client`): a README example
that is not run is how examples rot, so an untagged one is an error. A ```` ```toml cargo ````
block is the `[dependencies]` a README tells Rust users to write; its README's Rust programs
are built with exactly it.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[2]
# Info-string language -> the language the harness builds.
LANGUAGES = {
    "rust": "rust",
    "python": "python",
    "py": "python",
    "ts": "ts",
    "typescript": "ts",
    "c": "c",
    "go": "go",
    "kotlin": "kotlin",
    "kt": "kotlin",
}
# Languages without a program role: fine untagged.
NOT_PROGRAMS = {"sh", "bash", "console", "text", "toml", "json", "jsonc", "make", "diff", "ini", "yaml", "xml", ""}
ROLES = ("agent", "client")
FENCE = re.compile(r"^(```+|~~~+)\s*([A-Za-z0-9_+-]*)\s*(.*?)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block."""

    path: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    language: str  # as normalised by LANGUAGES, or the info string's first word
    tags: Tuple[str, ...]
    text: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def role(self) -> Optional[str]:
        return next((tag for tag in self.tags if tag in ROLES), None)


def markdown_files() -> List[str]:
    """Tracked Markdown files, without the official schema's."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [p for p in out.stdout.split() if not p.startswith("schema/")]


def read_blocks(path: str) -> List[Block]:
    """The fenced code blocks of one Markdown file."""
    blocks: List[Block] = []
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, word, rest = opening.groups()
        body: List[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            body.append(lines[j])
            j += 1
        language = LANGUAGES.get(word.lower(), word.lower())
        blocks.append(Block(path, i + 1, language, tuple(rest.split()), "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def programs() -> Tuple[List[Block], Dict[str, Block], List[str]]:
    """Every program block, each Markdown file's `toml cargo` block, and the errors: program
    blocks without a role, and unknown tags."""
    found: List[Block] = []
    cargo: Dict[str, Block] = {}
    errors: List[str] = []
    for path in markdown_files():
        for block in read_blocks(path):
            if block.language == "toml" and "cargo" in block.tags:
                cargo[path] = block
            elif block.language in LANGUAGES.values():
                if block.role is None:
                    errors.append(
                        f"{block.where}: a {block.language} block without a role: tag it "
                        f"```{block.language} agent or ```{block.language} client so that make test runs it"
                    )
                else:
                    found.append(block)
            elif block.language not in NOT_PROGRAMS:
                errors.append(f"{block.where}: unknown code block language {block.language!r}")
    return found, cargo, errors
