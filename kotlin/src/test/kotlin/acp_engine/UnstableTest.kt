package acp_engine

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * The unstable protocol's methods (`@UnstableProtocol`) both ways, between a client in this
 * JVM and [UnstableAgent] in a child JVM: known on connections made with `unstable = true`,
 * unknown methods (-32601) on the others.
 */
@OptIn(UnstableProtocol::class)
class UnstableTest {
    /** Answers the agent's `mcp/message` with what it asked for. */
    private class McpClient : Client {
        override suspend fun requestPermission(params: JsonObject): JsonObject = throw RequestError.methodNotFound("")

        override suspend fun sessionUpdate(params: JsonObject) {}

        override suspend fun messageMcp(params: JsonObject): JsonObject = mapOf("_meta" to mapOf("asked" to params["method"]))
    }

    private fun spawn(unstable: Boolean, agentUnstable: Boolean = true): ClientSideConnection {
        val command = Peers.jvm("acp_engine.UnstableAgentKt", agentUnstable.toString())
        return spawnAgent(command.first(), command.drop(1), options = ConnectionOptions(unstable = unstable)) { McpClient() }
    }

    private val fork: JsonObject = mapOf("sessionId" to "s1", "cwd" to "/tmp")

    @Test
    fun `unstable methods both ways when both sides speak the unstable protocol`() = runBlocking {
        spawn(unstable = true).use { agent ->
            agent.initialize(mapOf("protocolVersion" to 1))
            // The agent's forkSession asks this client's messageMcp first, and answers with it.
            assertEquals("s1-fork-tools/list", agent.forkSession(fork)["sessionId"])
        }
    }

    @Test
    fun `without the unstable protocol they are unknown methods`() = runBlocking {
        // Refused by this side's engine before it is sent.
        spawn(unstable = false).use { agent ->
            agent.initialize(mapOf("protocolVersion" to 1))
            assertEquals(RequestError.Codes.METHOD_NOT_FOUND, assertThrows<RequestError> { runBlocking { agent.forkSession(fork) } }.code)
        }
        // Refused by the agent's engine: it does not speak the unstable protocol.
        spawn(unstable = true, agentUnstable = false).use { agent ->
            agent.initialize(mapOf("protocolVersion" to 1))
            assertEquals(RequestError.Codes.METHOD_NOT_FOUND, assertThrows<RequestError> { runBlocking { agent.forkSession(fork) } }.code)
        }
    }
}
