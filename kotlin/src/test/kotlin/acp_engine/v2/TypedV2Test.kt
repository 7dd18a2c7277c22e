@file:Suppress("UNCHECKED_CAST") // JSON objects read as maps
package acp_engine.v2

import acp_engine.JsonObject
import acp_engine.Peers
import acp_engine.RequestError
import java.io.File
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * ACP v2's typed connections (package `acp_engine.v2`) against the official TypeScript SDK
 * 2.4.0's `experimental/v2` (interop/ts, installed by interop/setup.sh): [EchoAgent] in a
 * child JVM under the official v2 client, and a typed v2 client driving the official router
 * agent, through initialize, a session and a turn told in state updates.
 */
class TypedV2Test {
    private fun officialTs(script: String): String {
        val ts = File("../interop/ts")
        check(File(ts, "node_modules/@agentclientprotocol/sdk").isDirectory) { "the official TypeScript SDK is not installed: run interop/setup.sh" }
        return File(ts, script).path
    }

    @Test
    fun `the official v2 client drives a typed v2 agent`() {
        val (status, out, err) = Peers.run(listOf("node", officialTs("v2-client.mjs")) + Peers.jvm("acp_engine.v2.EchoAgentKt"))
        assertEquals(0, status, "$out $err")
        assertEquals("v2 ok", out.trim().lines().last(), err)
        assertTrue("agent said \"echo: Hello\"" in err, err)
    }

    @Test
    fun `a typed v2 client drives the official router agent`() = runBlocking {
        val said = StringBuilder()
        val ended = CompletableDeferred<Any?>()
        val client = object : Client {
            override suspend fun requestPermission(params: JsonObject): JsonObject =
                throw RequestError.methodNotFound(ClientMethods.SESSION_REQUEST_PERMISSION)

            override suspend fun updateSession(params: JsonObject) {
                val update = params["update"] as JsonObject
                when (update["sessionUpdate"]) {
                    "agent_message_chunk" -> said.append((update["content"] as JsonObject)["text"])
                    "state_update" -> if (update["state"] == "idle") ended.complete(update["stopReason"])
                }
            }
        }
        spawnAgent("node", listOf(officialTs("dual-agent.mjs"))) { client }.use { agent ->
            withTimeout(TimeUnit.SECONDS.toMillis(30)) {
                val initialized = agent.initialize(
                    mapOf("protocolVersion" to 2, "info" to mapOf("name" to "kotlin-v2-client", "version" to "1.0.0")),
                )
                assertEquals(2L, (initialized["protocolVersion"] as Number).toLong())
                assertEquals("official-dual-agent", (initialized["info"] as JsonObject)["name"])
                val session = agent.newSession(mapOf("cwd" to "/tmp"))
                val acknowledged = agent.prompt(
                    mapOf("sessionId" to session["sessionId"], "prompt" to listOf(mapOf("type" to "text", "text" to "Hello"))),
                )
                assertTrue(acknowledged["messageId"] is String, "$acknowledged")
                assertEquals("end_turn", ended.await())
            }
        }
        assertEquals("echo: Hello", said.toString())
    }
}
