@file:Suppress("UNCHECKED_CAST") // JSON objects read as maps
package acp_engine.v2

import acp_engine.JsonObject
import acp_engine.RequestError
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking

/**
 * A v2 agent on the typed v2 connection ([AgentSideConnection]): it says "echo: <text>" to
 * each prompt, acknowledging the prompt with a message id and telling the turn in state
 * updates after it (running, the chunk, idle with stopReason end_turn). Exits when its
 * client hangs up.
 */
fun main() = runBlocking {
    runAgent { client ->
        object : Agent {
            private var sessions = 0

            override suspend fun initialize(params: JsonObject): JsonObject {
                if ((params["info"] as? JsonObject)?.get("name") == null) throw RequestError.invalidParams()
                return mapOf("protocolVersion" to 2, "info" to mapOf("name" to "kotlin-v2-agent", "version" to "1.0.0"))
            }

            override suspend fun newSession(params: JsonObject): JsonObject = mapOf("sessionId" to "s${++sessions}")

            override suspend fun prompt(params: JsonObject): JsonObject {
                val text = (params["prompt"] as List<JsonObject>).joinToString("") { (it["text"] as? String) ?: "" }
                val sessionId = params["sessionId"]
                suspend fun update(update: JsonObject) = client.updateSession(mapOf("sessionId" to sessionId, "update" to update))
                this@runBlocking.launch {
                    delay(10)
                    update(mapOf("sessionUpdate" to "state_update", "state" to "running"))
                    update(
                        mapOf(
                            "sessionUpdate" to "agent_message_chunk",
                            "messageId" to "m2",
                            "content" to mapOf("type" to "text", "text" to "echo: $text"),
                        ),
                    )
                    update(mapOf("sessionUpdate" to "state_update", "state" to "idle", "stopReason" to "end_turn"))
                }
                return mapOf("messageId" to "m1")
            }
        }
    }
}
