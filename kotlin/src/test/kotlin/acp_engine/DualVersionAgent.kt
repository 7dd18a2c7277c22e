package acp_engine

import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking

/**
 * An agent for ACP v1 and the version 2 draft on one connection, on the plain [Connection]
 * as the agent side ([ConnectionSide.AGENT], [ConnectionOptions.protocolVersions] 1 and 2):
 * the engine selects the version at `initialize` and checks every message against it; the
 * handler answers in that version's shapes. On a prompt it says "echo: <text>": in v1 as
 * an update and the prompt's answer, in v2 as an acknowledgement with a message id and
 * state updates after it. With `--v2-only`, it speaks the version 2 draft alone. Exits when
 * its client hangs up.
 */
fun main(args: Array<String>) = runBlocking {
    val versions = if ("--v2-only" in args) listOf(2) else listOf(1, 2)
    lateinit var connection: Connection
    val info = mapOf("name" to "kotlin-dual-agent", "version" to "1.0.0")

    suspend fun update(sessionId: Any?, update: Map<String, Any?>) =
        connection.sendNotification(ClientMethods.SESSION_UPDATE, mapOf("sessionId" to sessionId, "update" to update))

    connection = Connection.stdio(ConnectionOptions(protocolVersions = versions), ConnectionSide.AGENT) {
        object : ConnectionHandler {
            override suspend fun handleRequest(method: String, params: Any?): Any? {
                @Suppress("UNCHECKED_CAST")
                val p = params as Map<String, Any?>
                return when (method) {
                    AgentMethods.INITIALIZE -> if (connection.protocolVersion == 2) {
                        mapOf("protocolVersion" to 2, "info" to info, "capabilities" to emptyMap<String, Any?>())
                    } else {
                        mapOf("protocolVersion" to 1, "agentCapabilities" to emptyMap<String, Any?>(), "agentInfo" to info)
                    }
                    AgentMethods.SESSION_NEW -> mapOf("sessionId" to "s1")
                    AgentMethods.SESSION_PROMPT -> {
                        @Suppress("UNCHECKED_CAST")
                        val text = (p["prompt"] as List<Map<String, Any?>>).joinToString("") { (it["text"] as? String) ?: "" }
                        val chunk = mapOf("sessionUpdate" to "agent_message_chunk", "content" to mapOf("type" to "text", "text" to "echo: $text"))
                        if (connection.protocolVersion == 1) {
                            update(p["sessionId"], chunk)
                            mapOf("stopReason" to "end_turn")
                        } else {
                            // v2 acknowledges the prompt; the turn goes on after the answer.
                            this@runBlocking.launch {
                                delay(10)
                                update(p["sessionId"], mapOf("sessionUpdate" to "state_update", "state" to "running"))
                                update(p["sessionId"], chunk + ("messageId" to "m2"))
                                update(p["sessionId"], mapOf("sessionUpdate" to "state_update", "state" to "idle", "stopReason" to "end_turn"))
                            }
                            mapOf("messageId" to "m1")
                        }
                    }
                    else -> throw RequestError.methodNotFound(method)
                }
            }
        }
    }
    connection.closed()
}
