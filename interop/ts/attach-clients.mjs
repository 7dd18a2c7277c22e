#!/usr/bin/env node
// Two of the official TypeScript SDK's clients, unchanged, on one session
// of `acp-engine serve --attach` running the durable example agent
// (core/examples/durable_agent.rs): the controller starts the session and
// runs a turn; the observer's plain `session/load` attaches it, and it gets
// that turn back as history, then the controller's next turn as it
// happens. That turn asks permission: both clients are asked, the observer
// answers, and the controller's request is withdrawn (its handler's signal
// aborts). The observer's own prompt is refused.
//
// Usage: node attach-clients.mjs http://host:port/acp [COOKIE]   (or ws://...)
// COOKIE (`ACP_BACKEND=backend-2`, say) goes with both clients' requests:
// through a load balancer it leads them to the same backend.
// Prints "attach ok" and exits 0, or the reason on stderr and exits 1.

import * as acp from "@agentclientprotocol/sdk";

import { remoteStream } from "./remote-stream.mjs";

const [url, cookie] = process.argv.slice(2);
const headers = cookie ? { Cookie: cookie } : {};

/**
 * A client that keeps its session/update texts in order, and answers
 * permission requests with `answer`, or (answer null) waits until the
 * request is withdrawn and counts that.
 */
async function open(name, answer) {
  const peer = { updates: [], asked: 0, withdrawn: 0 };
  const app = acp
    .client({ name })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      peer.updates.push([params.update.sessionUpdate, params.update.content?.text ?? ""]);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ signal }) => {
      peer.asked += 1;
      if (answer !== null) return { outcome: { outcome: "selected", optionId: answer } };
      // Withdrawn maybe before this handler runs: the signal is aborted already.
      return new Promise((_, reject) => {
        const withdrawn = () => {
          peer.withdrawn += 1;
          reject(signal.reason);
        };
        if (signal.aborted) withdrawn();
        else signal.addEventListener("abort", withdrawn);
      });
    });
  peer.conn = app.connect(await remoteStream(url, headers));
  peer.agent = peer.conn.agent;
  await peer.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  return peer;
}

async function until(what, done) {
  for (let tries = 0; tries < 1000 && !done(); tries++) await new Promise((r) => setTimeout(r, 10));
  if (!done()) throw new Error(`timed out waiting for ${what}`);
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const texts = (updates) => updates.map(([, text]) => text);

try {
  const controller = await open("ts-controller", null);
  const { sessionId } = await controller.agent.request(acp.methods.agent.session.new, { cwd: "/", mcpServers: [] });
  const prompt = (peer, text) =>
    peer.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  await prompt(controller, "first");
  const firstReply = texts(controller.updates).join("");

  const observer = await open("ts-observer", "allow");
  const loaded = await observer.agent.request(acp.methods.agent.session.load, { sessionId, cwd: "/", mcpServers: [] });
  if (loaded?._meta?.["acpEngine/attach"]?.role !== "observer") {
    throw new Error(`session/load did not attach: ${JSON.stringify(loaded)}`);
  }
  const history = [["user_message_chunk", "first"], ...controller.updates];
  await until("the history", () => observer.updates.length >= history.length);
  if (!same(observer.updates, history)) {
    throw new Error(`the observer got ${JSON.stringify(observer.updates)}, not ${JSON.stringify(history)}`);
  }

  // The controller's next turn asks permission: the observer answers it.
  const before = controller.updates.length;
  const answer = await prompt(controller, "ask");
  if (answer.stopReason !== "end_turn") throw new Error(`ask: stop reason ${answer.stopReason}`);
  const reply = texts(controller.updates.slice(before)).join("");
  if (!/^ask \(allow, turn 2, agent \d+\)$/.test(reply)) throw new Error(`ask: reply ${JSON.stringify(reply)}`);
  await until("the withdrawal", () => controller.withdrawn === 1);
  if (controller.asked !== 1 || observer.asked !== 1) {
    throw new Error(`asked: controller ${controller.asked}, observer ${observer.asked}; each once`);
  }
  const live = [["user_message_chunk", "ask"], ...controller.updates.slice(before)];
  await until("the live turn", () => observer.updates.length >= history.length + live.length);
  if (!same(observer.updates.slice(history.length), live)) {
    throw new Error(`the observer saw ${JSON.stringify(observer.updates)}, the controller ${JSON.stringify(live)}`);
  }

  // An observer may not prompt.
  const refused = await prompt(observer, "mine").then(
    () => null,
    (error) => error,
  );
  if (refused?.code !== -32600) throw new Error(`the observer's prompt: ${JSON.stringify(refused)}`);
  if (!firstReply.startsWith("first (turn 1")) throw new Error(`first reply ${firstReply}`);
  observer.conn.close();
  controller.conn.close();
  console.log("attach ok");
  process.exit(0);
} catch (error) {
  console.error(`FAIL: ${error?.stack ?? error}`);
  process.exit(1);
}
