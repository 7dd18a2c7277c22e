// A proxy for ACP proxy chains on acp-engine's `Proxy` / `runProxy`: the
// contract of core/examples/proxy.rs (interop/conductor.sh). It passes every
// message on unchanged, except that with `--prefix TEXT` it puts a text
// block of its own before every prompt; it says what crossed it on stderr
// (and with `--log FILE` in FILE) as `[node-proxy NAME] -> method` (from the
// client side) and `<- method` (from the agent side).
//
//   node proxy.mjs [--name NAME] [--prefix TEXT] [--log FILE]
import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";

import { AGENT_METHODS, Proxy, forwardRequest, runProxy } from "acp-engine";

const { values } = parseArgs({ options: { name: { type: "string" }, prefix: { type: "string" }, log: { type: "string" } } });
const name = values.name ?? values.prefix ?? "proxy";

class Prefixer extends Proxy {
  say(line) {
    const text = `[node-proxy ${name}] ${line}\n`;
    process.stderr.write(text);
    if (values.log) appendFileSync(values.log, text);
  }

  clientRequest(method, params, successor, context) {
    this.say(`-> ${method}`);
    if (values.prefix !== undefined && method === AGENT_METHODS.session_prompt) {
      params = { ...params, prompt: [{ type: "text", text: values.prefix }, ...params.prompt] };
    }
    return forwardRequest(successor, method, params, context.signal);
  }

  agentRequest(method, params, predecessor, context) {
    this.say(`<- ${method}`);
    return super.agentRequest(method, params, predecessor, context);
  }
}

await runProxy(new Prefixer());
process.stderr.write(`[node-proxy ${name}] closed\n`);
