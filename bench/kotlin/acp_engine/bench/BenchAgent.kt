// Benchmark agent on acp-engine's Kotlin package (see bench/README.md):
//     java -cp <class path> acp_engine.bench.BenchAgentKt
package acp_engine.bench

import acp_engine.Agent
import acp_engine.AgentSideConnection
import acp_engine.JsonObject
import acp_engine.RequestError
import acp_engine.runAgent
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking

const val CHUNK_TEXT = "chunk of agent text"
const val LARGE_SIZE = 16 * 1024 * 1024

class BenchAgent(private val client: AgentSideConnection) : Agent {
    override suspend fun initialize(params: JsonObject): JsonObject = mapOf("protocolVersion" to 1)

    override suspend fun newSession(params: JsonObject): JsonObject = mapOf("sessionId" to "bench-session")

    override suspend fun prompt(params: JsonObject): JsonObject {
        val sessionId = params["sessionId"] as String
        val first = (params["prompt"] as List<*>).firstOrNull() as? Map<*, *>
        val words = (first?.get("text") as? String ?: "").trim().split(" ")
        val n = words.getOrNull(1)?.toIntOrNull() ?: throw RequestError.invalidParams()
        val read = mapOf("sessionId" to sessionId, "path" to "/bench/file.txt")
        when (words[0]) {
            "stream" -> {
                val update = mapOf(
                    "sessionId" to sessionId,
                    "update" to mapOf(
                        "sessionUpdate" to "agent_message_chunk",
                        "content" to mapOf("type" to "text", "text" to CHUNK_TEXT),
                    ),
                )
                repeat(n) { client.sessionUpdate(update) }
            }
            "rpc" -> repeat(n) { client.readTextFile(read) }
            "perm" -> repeat(n) { i ->
                client.requestPermission(
                    mapOf(
                        "sessionId" to sessionId,
                        "toolCall" to mapOf("toolCallId" to "call-$i"),
                        "options" to listOf(mapOf("optionId" to "allow", "name" to "Allow", "kind" to "allow_once")),
                    ),
                )
            }
            "concurrent" -> coroutineScope { List(n) { async { client.readTextFile(read) } }.awaitAll() }
            "large" -> {
                val content = "x".repeat(LARGE_SIZE)
                repeat(n) {
                    client.writeTextFile(mapOf("sessionId" to sessionId, "path" to "/bench/large.txt", "content" to content))
                    val file = client.readTextFile(mapOf("sessionId" to sessionId, "path" to "/bench/large.txt"))
                    if ((file["content"] as String).length != LARGE_SIZE) throw RequestError.internalError()
                }
            }
            else -> throw RequestError.invalidParams()
        }
        return mapOf("stopReason" to "end_turn")
    }

    override suspend fun cancel(params: JsonObject) {}
}

fun main() = runBlocking { runAgent { BenchAgent(it) } }
