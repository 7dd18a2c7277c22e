package acp_engine

import kotlinx.coroutines.runBlocking

/**
 * An agent that calls the MCP servers its client offers over the ACP connection itself, on
 * [McpOverAcpCaller]: the Kotlin twin of interop/ts/mcp-over-acp-agent.mjs (the same calls, the
 * same words), which [McpOverAcpTest] runs under the official TypeScript client.
 */
@OptIn(UnstableProtocol::class)
class McpAgent(private val client: AgentSideConnection) : Agent {
    private val caller = McpOverAcpCaller(clientInfo = mapOf("name" to "kotlin-mcp-agent", "version" to "1.0.0"))
    private val servers = mutableMapOf<String, Map<String, String>>()

    override suspend fun initialize(params: JsonObject): JsonObject =
        mapOf("protocolVersion" to 1, "agentCapabilities" to mapOf("mcpCapabilities" to mapOf("acp" to true)), "authMethods" to emptyList<Any>())

    override suspend fun newSession(params: JsonObject): JsonObject {
        val sessionId = "s${servers.size + 1}"
        servers[sessionId] = (params["mcpServers"] as List<*>).filter(McpOverAcp::isServerAcp)
            .associate { server -> (server as Map<*, *>)["name"] as String to server["serverId"] as String }
        return mapOf("sessionId" to sessionId)
    }

    override suspend fun cancel(params: JsonObject) {}

    override suspend fun messageMcp(params: JsonObject) = caller.handleNotification(client, params)

    @Suppress("UNCHECKED_CAST")
    override suspend fun prompt(params: JsonObject): JsonObject {
        val byName = servers.getValue(params["sessionId"] as String)
        fun text(outcome: JsonObject) = (((outcome["result"] as Map<*, *>)["content"] as List<*>)[0] as Map<*, *>)["text"]
        val listed = caller.request(client, byName.getValue("tools"), "tools/list", emptyMap())
        val tools = ((listed["result"] as Map<*, *>)["tools"] as List<Map<*, *>>).joinToString(",") { it["name"] as String }
        val added = caller.request(client, byName.getValue("tools"), "tools/call", mapOf("name" to "add", "arguments" to mapOf("a" to 2, "b" to 3)))
        val progress = mutableListOf<String>()
        val counted = caller.request(client, byName.getValue("counter"), "tools/call", mapOf("name" to "count", "arguments" to mapOf("to" to 3))) {
            progress += "${it["method"]}:${(it["params"] as Map<*, *>)["progress"]}"
        }
        val refused = caller.request(client, byName.getValue("counter"), "tools/call", mapOf("name" to "nope"))["error"] as Map<*, *>
        val unavailable = try {
            caller.request(client, "nobody-declared-this", "tools/list", emptyMap())
            "none"
        } catch (error: RequestError) {
            error.code.toString()
        }
        val words = "tools=$tools add=${text(added)} count=${text(counted)} progress=${progress.joinToString(",")} " +
            "refused=${refused["code"]}:${refused["message"]} unavailable=$unavailable"
        client.sessionUpdate(
            mapOf("sessionId" to params["sessionId"], "update" to mapOf("sessionUpdate" to "agent_message_chunk", "content" to mapOf("type" to "text", "text" to words))),
        )
        return mapOf("stopReason" to "end_turn")
    }
}

fun main() = runBlocking {
    runAgent(ConnectionOptions(unstable = true)) { client -> McpAgent(client) }
}
