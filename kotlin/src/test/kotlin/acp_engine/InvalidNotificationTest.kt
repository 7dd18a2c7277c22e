package acp_engine

import java.util.logging.Handler
import java.util.logging.LogRecord
import java.util.logging.Logger
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * A notification whose params fail the ACP schema: the engine drops it and the handler hears
 * of it. The agent, a child `sh`, writes claude-agent-acp 0.23's `session/update`
 * `usage_update` with `"used": null` (fails the schema), a notification of a method no schema
 * has (dropped quietly), then a valid `agent_message_chunk`, and waits for EOF. A [Client]
 * that is an [InvalidNotificationListener] gets (`session/update`, -32602 naming `used`)
 * before the valid update reaches `sessionUpdate`; without it, the drop is a warning on the
 * `acp_engine` logger.
 */
class InvalidNotificationTest {
    /** Records the message chunks and the invalid notifications it hears of. */
    private open class RecordingClient : Client {
        val chunks = Channel<String>(Channel.UNLIMITED)

        override suspend fun requestPermission(params: JsonObject): JsonObject = throw RequestError.methodNotFound("")

        override suspend fun sessionUpdate(params: JsonObject) {
            @Suppress("UNCHECKED_CAST")
            val update = params["update"] as Map<String, Any?>
            if (update["sessionUpdate"] == "agent_message_chunk") {
                @Suppress("UNCHECKED_CAST")
                chunks.send((update["content"] as Map<String, Any?>)["text"] as String)
            }
        }
    }

    private class HearingClient : RecordingClient(), InvalidNotificationListener {
        val invalid = mutableListOf<Triple<String, Long, String>>()

        override fun onInvalidNotification(method: String, error: RequestError) {
            synchronized(invalid) { invalid.add(Triple(method, error.code, Json.stringify(error.data))) }
        }
    }

    private fun spawnBadAgent(client: Client): ClientSideConnection = spawnAgent(
        "sh",
        listOf("-c", "printf '%s\\n' \"\$1\" \"\$2\" \"\$3\"; exec cat >/dev/null", "sh", BAD_UPDATE, UNKNOWN, GOOD_UPDATE),
    ) { client }

    @Test
    fun `a notification that fails the schema reaches onInvalidNotification`() = runBlocking {
        val client = HearingClient()
        spawnBadAgent(client).use {
            assertEquals("after", withTimeout(10_000) { client.chunks.receive() })
        }
        // Heard before the valid update (in order, on the same thread); the unknown one not at all.
        val invalid = synchronized(client.invalid) { client.invalid.toList() }
        assertEquals(1, invalid.size, "$invalid")
        val (method, code, data) = invalid[0]
        assertEquals("session/update", method)
        assertEquals(RequestError.Codes.INVALID_PARAMS, code)
        assertTrue("used" in data, data)
    }

    @Test
    fun `without a listener it is a warning on the acp_engine logger`() = runBlocking {
        val logger = Logger.getLogger("acp_engine")
        val warnings = mutableListOf<String>()
        val handler = object : Handler() {
            override fun publish(record: LogRecord) {
                synchronized(warnings) { warnings.add("${record.level} ${record.message}") }
            }

            override fun flush() {}

            override fun close() {}
        }
        logger.addHandler(handler)
        try {
            val client = RecordingClient()
            spawnBadAgent(client).use {
                assertEquals("after", withTimeout(10_000) { client.chunks.receive() })
            }
        } finally {
            logger.removeHandler(handler)
        }
        val logged = synchronized(warnings) { warnings.toList() }
        assertEquals(1, logged.size, "$logged")
        assertTrue(logged[0].startsWith("WARNING dropped a session/update notification that fails the schema: "), logged[0])
        assertTrue("used" in logged[0], logged[0])
    }

    companion object {
        const val BAD_UPDATE = """{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"usage_update","used":null,"size":10}}}"""
        const val UNKNOWN = """{"jsonrpc":"2.0","method":"no/such_notification","params":{}}"""
        const val GOOD_UPDATE = """{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}}}"""
    }
}
