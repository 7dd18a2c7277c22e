// `acp-engine view` in a real browser (Debian's Chromium, driven by
// playwright-core): the page of a real session's trace shows every message,
// filters by method, pairs a permission request with its response on
// click, and filters to a turn; a 100,000-message trace loads, filters and
// scrolls to its end (timings printed, not asserted). Screenshots are kept
// in target/view-test/. Exit status 1 on the first failed check.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const tool = join(root, "target", "debug", "acp-engine");
const examples = join(root, "target", "debug", "examples");
const out = join(root, "target", "view-test");
mkdirSync(out, { recursive: true });

let failed = 0;
function check(ok, what) {
  console.log(`${ok ? "PASS" : "FAIL"} ${what}`);
  if (!ok) failed++;
}

function view(trace, page) {
  execFileSync(tool, ["view", trace, "-o", page], { stdio: "inherit" });
  return "file://" + page;
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  await realSession(browser);
  await hundredThousand(browser);
} finally {
  await browser.close();
}
console.log(failed ? `${failed} checks failed` : "all checks passed");
process.exit(failed ? 1 : 0);

/** A session of our example client and agent, traced, then viewed. */
async function realSession(browser) {
  const trace = join(out, "session.jsonl");
  execFileSync(join(examples, "client"), [tool, "trace", "--out", trace, "--", join(examples, "agent")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  const records = readFileSync(trace, "utf8").trim().split("\n").map((line) => JSON.parse(line));
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(view(trace, join(out, "session.html")));
  await page.waitForSelector("body[data-ready=true]", { timeout: 30_000 });
  const total = records.length;
  check((await page.textContent("#shown")) === `${total} of ${total} shown`, `all ${total} messages listed`);
  check((await page.locator("#rows .row").count()) === total, "every row drawn (the page is taller than the trace)");

  const update = records.find((r) => r.kind === "notification" && r.session)?.method;
  const updates = records.filter((r) => r.method === update).length;
  await page.selectOption("#filter-method", update);
  check((await page.textContent("#shown")) === `${updates} of ${total} shown`, `filter by method: ${updates} ${update}`);
  const methods = await page.locator("#rows .row .method").allTextContents();
  check(methods.length === updates && methods.every((m) => m === update), "only that method is listed");
  const whats = await page.locator("#rows .row .what").allTextContents();
  check(whats.length === updates && whats.every((w) => /^[a-z_]+/.test(w)) &&
        whats.some((w) => w.startsWith("agent_message_chunk: ")),
        `each update row says its kind, and a message chunk its text (${whats[0]})`);
  check((await page.textContent("#legend")).includes("client to agent"), "a legend for the directions");
  await page.selectOption("#filter-method", "");

  const permissionMethod = await page.locator("#rows .row.permission .method").first().textContent();
  await page.locator("#rows .row.permission").first().click();
  const detail = await page.textContent("#detail-json");
  check(detail.includes(`"${permissionMethod}"`), `a click shows the ${permissionMethod} request's JSON`);
  const pair = await page.textContent("#detail-pair");
  check(pair !== null && JSON.parse(pair).id !== undefined && (await page.textContent("#detail-body")).includes("its response"),
    "and the response it got, paired");
  check((await page.locator("#rows .row.paired").count()) === 1, "the paired response is marked in the list");
  await page.screenshot({ path: join(out, "session.png") });

  await page.locator("#turns .turn", { hasText: "turn 1" }).first().click();
  const shownText = await page.textContent("#shown");
  const inTurn = Number(shownText.split(" ")[0]);
  check(inTurn > 0 && inTurn < total, `a turn's messages only (${shownText})`);
  const sessions = await page.locator("#rows .row .session").allTextContents();
  check(sessions.every((s) => s.endsWith("· 1")), "all of turn 1");
  check(errors.length === 0, `no script errors${errors.length ? ": " + errors.join("; ") : ""}`);
  await page.close();
}

/** 100,000 messages: three sessions of prompt turns with updates,
 * permission round trips, some errors and violations. */
async function hundredThousand(browser) {
  const n = 100_000;
  const trace = join(out, "big.jsonl");
  const lines = [];
  let seq = 0;
  let id = 0;
  let violations = 0;
  const push = (record) => lines.push(JSON.stringify({ seq: ++seq, unix_ms: 1.7e12 + seq, elapsed_us: seq * 50, ...record }));
  while (seq < n) {
    const session = `session-${seq % 3}`;
    const prompt = ++id;
    const message = { jsonrpc: "2.0", id: prompt, method: "session/prompt", params: { sessionId: session, prompt: [] } };
    push({ dir: "client_to_agent", bytes: 100, kind: "request", id: prompt, method: "session/prompt", session, verdict: "ok", message });
    for (let k = 0; k < 20; k++) {
      const late = k === 7 && seq % 9 === 0;
      if (late) violations++;
      push({ dir: "agent_to_client", bytes: 150, kind: "notification", method: "session/update", session,
        verdict: late ? "violation" : "ok", problems: late ? [{ rule: "update_after_turn", detail: "synthetic" }] : undefined,
        message: { jsonrpc: "2.0", method: "session/update", params: { sessionId: session, update: { text: `chunk ${k}` } } } });
    }
    push({ dir: "agent_to_client", bytes: 80, kind: seq % 5 === 0 ? "error" : "response", id: prompt, method: "session/prompt",
      session, latency_us: 1000, verdict: "ok", message: { jsonrpc: "2.0", id: prompt, result: {} } });
  }
  writeFileSync(trace, lines.join("\n") + "\n");
  const total = lines.length;
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let started = Date.now();
  await page.goto(view(trace, join(out, "big.html")));
  await page.waitForSelector("body[data-ready=true]", { timeout: 120_000 });
  const loadMs = Date.now() - started;
  check((await page.textContent("#shown")) === `${total.toLocaleString("en")} of ${total.toLocaleString("en")} shown`,
    `a ${total}-message trace loads`);
  check((await page.locator("#rows .row").count()) < 200, "only the rows in view are in the page");

  started = Date.now();
  await page.check("#filter-problems");
  await page.waitForFunction(() => document.querySelectorAll("#rows .row").length > 0);
  const filterMs = Date.now() - started;
  const errors = lines.filter((line) => line.includes('"kind":"error"')).length;
  const expected = violations + errors;
  check((await page.textContent("#shown")).startsWith(`${expected.toLocaleString("en")} of`),
    `problems only: ${expected} (violations and error responses)`);
  const flagged = await page.locator("#rows .row.violation .what").first().textContent();
  check(/^⚠ [a-z_]+/.test(flagged), `a problem row names the rule it broke (${flagged})`);
  await page.uncheck("#filter-problems");

  started = Date.now();
  await page.evaluate(() => { const v = document.getElementById("viewport"); v.scrollTop = v.scrollHeight; });
  const reached = await page
    .waitForFunction((last) => [...document.querySelectorAll("#rows .row .seq")].some((s) => s.textContent === String(last)),
      total, { timeout: 30_000 })
    .then(() => true, () => false);
  const scrollMs = Date.now() - started;
  check(reached, `scrolled to the last message (#${total}), drawn`);
  await page.screenshot({ path: join(out, "big.png") });
  console.log(`${total.toLocaleString("en")}-message trace: page loaded and drawn in ${loadMs} ms, "problems only" in ${filterMs} ms, ` +
    `scroll to the end in ${scrollMs} ms (Chromium ${browser.version()})`);
  await page.close();
}
