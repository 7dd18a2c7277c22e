// The protocol's JSON Schemas (schema/v1, schema/v2 of the repository) into
// the package, where `acp-engine/schema/v{1,2}/schema*.json` name them.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
for (const version of ["v1", "v2"]) {
  mkdirSync(join(here, "schema", version), { recursive: true });
  for (const file of ["schema.json", "schema.unstable.json"]) {
    copyFileSync(join(here, "..", "schema", version, file), join(here, "schema", version, file));
  }
}
