// A real MCP server on the official MCP TypeScript SDK (@modelcontextprotocol/sdk),
// on stdio, for the MCP-over-ACP tests (interop/mcp.sh): one tool, `add`, and a
// log line on stderr per call.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "interop-mcp-server", version: "1.0.0" });
server.registerTool(
  "add",
  { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => {
    process.stderr.write(`[mcp-server] add ${a} ${b}\n`);
    return { content: [{ type: "text", text: String(a + b) }] };
  },
);
await server.connect(new StdioServerTransport());
