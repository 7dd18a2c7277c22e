package acp_engine

import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/**
 * [ConnectionOptions.uncheckedMethods]: methods outside the ACP schema sent and received as
 * they are, between a client in this JVM and [UncheckedAgent] in a child JVM. Listed on both
 * sides, the legacy `session/set_model` reaches the agent's `extMethod` and a listed
 * notification the client's `extNotification`; not listed here, the send is refused before
 * it leaves (-32601); not listed on the agent, its engine answers -32601.
 */
class UncheckedTest {
    /** Records the notifications outside the schema it gets. */
    private class LegacyClient : Client {
        val notes = Channel<String>(Channel.UNLIMITED)

        override suspend fun requestPermission(params: JsonObject): JsonObject = throw RequestError.methodNotFound("")

        override suspend fun sessionUpdate(params: JsonObject) {}

        override suspend fun extNotification(method: String, params: JsonObject) {
            notes.send("$method ${params["modelId"]}")
        }
    }

    private fun spawn(client: LegacyClient, listed: Boolean, agentListed: Boolean = true): ClientSideConnection {
        val command = Peers.jvm("acp_engine.UncheckedAgentKt", *(if (agentListed) LEGACY.toTypedArray() else emptyArray()))
        val options = ConnectionOptions(uncheckedMethods = if (listed) LEGACY else emptyList())
        return spawnAgent(command.first(), command.drop(1), options = options) { client }
    }

    @Test
    fun `listed on both sides they go out as they are and reach the ext handlers`() = runBlocking {
        val client = LegacyClient()
        spawn(client, listed = true).use { agent ->
            agent.initialize(mapOf("protocolVersion" to 1))
            assertEquals(emptyMap<String, Any?>(), agent.extMethod(SET_MODEL, MODEL))
            assertEquals("$MODEL_CHOSEN fast", withTimeout(10_000) { client.notes.receive() })
            // The schema's methods are still checked.
            val bad = assertThrows<RequestError> { runBlocking { agent.newSession(mapOf("cwd" to 5)) } }
            assertEquals(RequestError.Codes.INVALID_PARAMS, bad.code)
        }
    }

    @Test
    fun `not listed they are unknown methods`() = runBlocking {
        // Refused by this side's engine before it is sent (the agent would take it).
        spawn(LegacyClient(), listed = false).use { agent ->
            agent.initialize(mapOf("protocolVersion" to 1))
            val refused = assertThrows<RequestError> { runBlocking { agent.extMethod(SET_MODEL, MODEL) } }
            assertEquals(RequestError.Codes.METHOD_NOT_FOUND, refused.code)
            assertEquals(mapOf("method" to SET_MODEL), refused.data)
            val notification = assertThrows<RequestError> { runBlocking { agent.extNotification(SET_MODEL, MODEL) } }
            assertEquals(RequestError.Codes.METHOD_NOT_FOUND, notification.code)
        }
        // Refused by the agent's engine: the agent does not list it.
        spawn(LegacyClient(), listed = true, agentListed = false).use { agent ->
            agent.initialize(mapOf("protocolVersion" to 1))
            val unknown = assertThrows<RequestError> { runBlocking { agent.extMethod(SET_MODEL, MODEL) } }
            assertEquals(RequestError.Codes.METHOD_NOT_FOUND, unknown.code)
        }
    }

    companion object {
        /** The legacy model selection, which real agents still take. */
        const val SET_MODEL = "session/set_model"

        /** A notification outside the schema, from the agent. */
        const val MODEL_CHOSEN = "legacy/model_chosen"

        val LEGACY = listOf(SET_MODEL, MODEL_CHOSEN)

        val MODEL: JsonObject = mapOf("sessionId" to "s1", "modelId" to "fast")
    }
}
