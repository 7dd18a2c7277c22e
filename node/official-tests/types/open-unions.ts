// A program typed against the official TypeScript SDK 2.4.0, as its users write it: the
// open unions' catch-all variants, which a program builds (v2: a `_`-prefixed tag) and
// receives (v2: `UnknownVariant`). types.mjs compiles it unedited twice, with
// `@agentclientprotocol/sdk` installed as the official package and as acp-engine (the
// `overrides` switch node/README.md describes): both must pass `tsc --strict`.
import type * as acp from "@agentclientprotocol/sdk";
import type * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import type * as v2Unstable from "@agentclientprotocol/sdk/experimental/v2/unstable";

// v1: a property schema of a kind this program's own elicitation form understands.
export const rating: acp.ElicitationPropertySchema = { type: "rating", stars: 5 };

// v2: custom variants a program builds and sends.
export const subject: v2.RequestPermissionSubject = { type: "_deploy", target: "staging" };
export const command: v2.AvailableCommand = { type: "_macro", name: "fmt", description: "format", steps: 3 };
export const work: v2Unstable.BackgroundWork = { type: "_indexer", progress: 0.5 };

// v2: a received value is told apart by its tag; what no variant names is kept as it came
// (so a known tag's properties may be of a variant this version does not know).
export function describe(block: v2.ContentBlock): string {
  switch (block.type) {
    case "text":
      return String(block.text);
    case "_vendor":
      return `custom ${String(block["payload"])}`;
    default:
      return block.type;
  }
}

// v2: a variant a newer peer sent, passed on as received.
export function forward(update: v2.UnknownVariant<{ type: string; [key: string]: unknown }>): v2.ContentBlock {
  return update;
}
