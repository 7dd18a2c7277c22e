// Loads the acp-engine addon built for this platform (acp-engine.<platform>.node,
// as named by `napi build --platform`).
"use strict";

const fs = require("node:fs");
const path = require("node:path");

function libc() {
  if (process.platform !== "linux") return "";
  try {
    const report = process.report && process.report.getReport();
    const header = report && (typeof report === "string" ? JSON.parse(report) : report).header;
    return header && header.glibcVersionRuntime ? "-gnu" : "-musl";
  } catch {
    return "-gnu";
  }
}

function load() {
  const preferred = `acp-engine.${process.platform}-${process.arch}${libc()}.node`;
  const candidates = [preferred];
  for (const name of fs.readdirSync(__dirname)) {
    if (name.startsWith("acp-engine.") && name.endsWith(".node") && name !== preferred) candidates.push(name);
  }
  const errors = [];
  for (const name of candidates) {
    const file = path.join(__dirname, name);
    if (!fs.existsSync(file)) continue;
    try {
      return require(file);
    } catch (error) {
      errors.push(`${name}: ${error.message}`);
    }
  }
  throw new Error(
    `acp-engine: no native addon for ${process.platform}-${process.arch} in ${__dirname}` +
      (errors.length ? ` (${errors.join("; ")})` : ""),
  );
}

module.exports = load();
