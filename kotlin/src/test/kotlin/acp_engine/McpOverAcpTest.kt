package acp_engine

import java.io.File
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * MCP-over-ACP ([McpOverAcpProvider], [McpOverAcpCaller]; the rules in the engine): [McpAgent]
 * under the official TypeScript SDK's MCP-over-ACP client (interop/ts: an
 * `@modelcontextprotocol/server` server and a handler of its own), and a Kotlin provider under
 * the official TypeScript agent, over real processes.
 */
@OptIn(UnstableProtocol::class)
class McpOverAcpTest {
    private val progress = "progress=notifications/progress:1,notifications/progress:2,notifications/progress:3"
    private val words = "tools=add add=5 count=3 $progress refused=-32602:Unknown tool: nope unavailable=-33001"

    private fun officialTs(script: String): String {
        val ts = File("../interop/ts")
        check(File(ts, "node_modules/@agentclientprotocol/sdk").isDirectory) { "the official TypeScript SDK is not installed: run interop/setup.sh" }
        return File(ts, script).path
    }

    @Test
    fun `the official TypeScript provider serves the Kotlin caller`() {
        val (status, out, err) = Peers.run(listOf("node", officialTs("mcp-over-acp-client.mjs")) + Peers.jvm("acp_engine.McpAgentKt"))
        assertEquals(0, status, "$out $err")
        val (said, verdict) = out.trim().lines().takeLast(2)
        assertEquals("mcp ok", verdict, err)
        assertEquals(words, said, "every progress notification, in order, before the answer")
    }

    private class ProvidingClient(val provider: McpOverAcpProvider) : Client {
        lateinit var connection: ClientSideConnection
        val said = StringBuilder()

        override suspend fun messageMcp(params: JsonObject): JsonObject = provider.handleRequest(connection, params)

        override suspend fun sessionUpdate(params: JsonObject) {
            said.append(((params["update"] as Map<*, *>)["content"] as Map<*, *>)["text"])
        }

        override suspend fun requestPermission(params: JsonObject): JsonObject = throw RequestError.methodNotFound(ClientMethods.SESSION_REQUEST_PERMISSION)
    }

    @Suppress("UNCHECKED_CAST")
    private suspend fun tools(context: McpOperationContext): JsonObject {
        if (context.method == "tools/list") return mapOf("result" to mapOf("tools" to listOf(mapOf("name" to "add", "inputSchema" to mapOf("type" to "object")))))
        val arguments = context.params!!["arguments"] as Map<String, Any?>
        val sum = (arguments["a"] as Number).toLong() + (arguments["b"] as Number).toLong()
        return mapOf("result" to mapOf("content" to listOf(mapOf("type" to "text", "text" to "$sum"))))
    }

    @Suppress("UNCHECKED_CAST")
    private suspend fun counter(context: McpOperationContext): JsonObject {
        if (context.params?.get("name") != "count") throw McpProtocolError(-32602, "Unknown tool: ${context.params?.get("name")}")
        val to = ((context.params["arguments"] as Map<String, Any?>)["to"] as Number).toInt()
        for (step in 1..to) context.notify("notifications/progress", mapOf("progress" to step, "total" to to))
        return mapOf("result" to mapOf("content" to listOf(mapOf("type" to "text", "text" to "$to"))))
    }

    @Test
    fun `the Kotlin provider serves the official TypeScript caller, and disposing cancels what runs`() = runBlocking {
        val provider = McpOverAcpProvider()
        val client = ProvidingClient(provider)
        ClientSideConnection.spawn("node", listOf(officialTs("mcp-over-acp-agent.mjs")), options = ConnectionOptions(unstable = true)) { client }.use { agent ->
            client.connection = agent
            val servers = listOf(provider.registerServer(agent, "tools") { tools(it) }, provider.registerServer(agent, "counter") { counter(it) })
            assertThrows<IllegalArgumentException> { provider.registerServer(agent, "again", serverId = servers[0].serverId) { tools(it) } }
            agent.initialize(mapOf("protocolVersion" to 1, "clientCapabilities" to emptyMap<String, Any?>()))
            val session = agent.newSession(mapOf("cwd" to "/", "mcpServers" to servers.map { it.declaration }))
            agent.prompt(mapOf("sessionId" to session["sessionId"], "prompt" to listOf(mapOf("type" to "text", "text" to "call"))))
            // The official caller drops notifications it handles after the answer: a prefix, in order.
            val said = client.said.toString()
            assertTrue(said.startsWith("tools=add add=5 count=3 progress=notifications/progress:1"), said)
            assertTrue(said.endsWith(" refused=-32602:Unknown tool: nope unavailable=-33001"), said)
            servers.forEach { it.dispose() }
        }
    }

    @Test
    fun `a disposed server's running handler is cancelled and the request answered -32800`() = runBlocking {
        val provider = McpOverAcpProvider()
        val client = ProvidingClient(provider)
        val command = Peers.jvm("acp_engine.McpAgentKt")
        ClientSideConnection.spawn(command.first(), command.drop(1), options = ConnectionOptions(unstable = true)) { client }.use { agent ->
            client.connection = agent
            val started = CompletableDeferred<Unit>()
            val cancelled = CompletableDeferred<Unit>()
            val registration = provider.registerServer(agent, "slow", serverId = "slow") {
                started.complete(Unit)
                try {
                    awaitCancellation()
                } finally {
                    cancelled.complete(Unit)
                }
            }
            val params = mapOf("serverId" to "slow", "requestId" to "r1", "method" to "tools/call", "params" to McpOverAcp.withRequestMeta(emptyMap()))
            coroutineScope {
                val answer = async { runCatching { provider.handleRequest(agent, params) } }
                started.await()
                registration.dispose()
                cancelled.await()
                val error = answer.await().exceptionOrNull() as RequestError
                assertEquals(-32800L, error.code, error.message)
            }
            val gone = assertThrows<RequestError> { runBlocking { provider.handleRequest(agent, params) } }
            assertEquals(RequestError.Codes.MCP_SERVER_UNAVAILABLE, gone.code)
        }
    }
}
