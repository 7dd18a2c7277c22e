// An ACP agent on this process's stdio, built on acp_engine's Agent interface.
//
// On a prompt it streams a reply, asks the user's permission, reads a file
// through the client, writes one, runs `echo hi` in a client terminal and
// reports what it said. The prompt `cancel me` instead waits on a permission
// request until the client cancels the turn, and ends it with stop reason
// `cancelled`. To a client that can show them (it advertises
// `session.notices` and `session.compaction`), the turn also reports a notice
// and a context compaction. (This is the interop contract: see interop/README.md.)
//
//     java -cp <class path> acp_engine.examples.ExampleAgentKt
package acp_engine.examples

import acp_engine.Agent
import acp_engine.AgentSideConnection
import acp_engine.JsonObject
import acp_engine.RequestError
import acp_engine.runAgent
import java.io.File
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong
import kotlinx.coroutines.runBlocking

/** A notice, and a context compaction from start to end with its summary. */
private val COMPACTION: List<JsonObject> = listOf(
    mapOf(
        "sessionUpdate" to "notice",
        "severity" to "info",
        "title" to "Context compacted",
        "description" to "Older messages were summarized.",
    ),
    mapOf("sessionUpdate" to "compaction_update", "compactionId" to "compaction-1", "status" to "in_progress"),
    mapOf(
        "sessionUpdate" to "compaction_summary_chunk",
        "compactionId" to "compaction-1",
        "content" to mapOf("type" to "text", "text" to "The user asked for a greeting."),
    ),
    mapOf("sessionUpdate" to "compaction_update", "compactionId" to "compaction-1", "status" to "completed"),
)

class ExampleAgent(private val client: AgentSideConnection) : Agent {
    private val sessions = ConcurrentHashMap<String, String>() // session id -> cwd
    private val nextSession = AtomicLong(1)

    @Volatile
    private var clientShowsNews = false // notices and compactions (its capabilities)

    // What the client said it can do: an agent asks only for that.
    @Volatile
    private var clientReads = false

    @Volatile
    private var clientWrites = false

    @Volatile
    private var clientTerminals = false

    override suspend fun initialize(params: JsonObject): JsonObject {
        val capabilities = params["clientCapabilities"] as? Map<*, *>
        val fs = capabilities?.get("fs") as? Map<*, *>
        clientReads = fs?.get("readTextFile") == true
        clientWrites = fs?.get("writeTextFile") == true
        clientTerminals = capabilities?.get("terminal") == true
        val session = capabilities?.get("session") as? Map<*, *>
        clientShowsNews = session?.get("notices") != null && session["compaction"] != null
        return mapOf(
            "protocolVersion" to 1,
            "agentCapabilities" to emptyMap<String, Any?>(),
            "authMethods" to emptyList<Any?>(),
            "agentInfo" to mapOf("name" to "acp-engine-kotlin-example-agent", "version" to "0.1.0"),
        )
    }

    override suspend fun newSession(params: JsonObject): JsonObject {
        val sessionId = "session-${nextSession.getAndIncrement()}"
        sessions[sessionId] = params["cwd"] as String
        return mapOf("sessionId" to sessionId)
    }

    override suspend fun prompt(params: JsonObject): JsonObject {
        val sessionId = params["sessionId"] as String
        val cwd = sessions[sessionId] ?: throw RequestError.resourceNotFound(sessionId)
        val text = (params["prompt"] as List<*>).filterIsInstance<Map<*, *>>()
            .filter { it["type"] == "text" }.joinToString("") { it["text"] as String }
        val stopReason = if (text.trim() == "cancel me") {
            // Waits until the client cancels the turn, which answers the
            // permission request `cancelled`.
            if (askPermission(sessionId) == null) "cancelled" else "end_turn"
        } else {
            sayHello(sessionId, cwd)
        }
        return mapOf("stopReason" to stopReason)
    }

    override suspend fun cancel(params: JsonObject) {
        System.err.println("[agent] the client cancelled the turn of ${params["sessionId"]}")
    }

    private suspend fun say(sessionId: String, text: String) {
        client.sessionUpdate(
            mapOf(
                "sessionId" to sessionId,
                "update" to mapOf("sessionUpdate" to "agent_message_chunk", "content" to mapOf("type" to "text", "text" to text)),
            ),
        )
    }

    /** Ask to read hello.txt: the user's choice, or null if the turn was cancelled. */
    private suspend fun askPermission(sessionId: String): Boolean? {
        val response = client.requestPermission(
            mapOf(
                "sessionId" to sessionId,
                "toolCall" to mapOf("toolCallId" to "call-1", "title" to "Read hello.txt", "kind" to "read", "status" to "pending"),
                "options" to listOf(
                    mapOf("optionId" to "allow", "name" to "Allow", "kind" to "allow_once"),
                    mapOf("optionId" to "reject", "name" to "Reject", "kind" to "reject_once"),
                ),
            ),
        )
        val outcome = response["outcome"] as Map<*, *>
        return if (outcome["outcome"] == "selected") outcome["optionId"] == "allow" else null
    }

    private suspend fun sayHello(sessionId: String, cwd: String): String {
        if (clientShowsNews) {
            for (update in COMPACTION) client.sessionUpdate(mapOf("sessionId" to sessionId, "update" to update))
        }
        say(sessionId, "Hello! ")
        if (!clientReads) {
            say(sessionId, "(this client cannot read files: nothing read)")
        } else {
            readHello(sessionId, cwd)?.let { return it }
        }
        if (clientWrites) {
            client.writeTextFile(
                mapOf("sessionId" to sessionId, "path" to File(cwd, "written.txt").path, "content" to "written by agent"),
            )
        }
        if (clientTerminals) runEcho(sessionId)
        return "end_turn"
    }

    /** Ask to read hello.txt, read it and say what it holds; the stop reason when the turn ends there. */
    private suspend fun readHello(sessionId: String, cwd: String): String? {
        when (askPermission(sessionId)) {
            null -> return "cancelled"
            false -> {
                say(sessionId, "You did not let me read hello.txt.")
                return "end_turn"
            }
            true -> {}
        }
        val file = client.readTextFile(mapOf("sessionId" to sessionId, "path" to File(cwd, "hello.txt").path))
        say(sessionId, file["content"] as String)
        return null
    }

    /** `echo hi` in a terminal of the client's; says what it printed. */
    private suspend fun runEcho(sessionId: String) {
        val terminal = client.createTerminal(mapOf("sessionId" to sessionId, "command" to "echo", "args" to listOf("hi")))
        try {
            terminal.waitForExit()
            val output = terminal.currentOutput()
            say(sessionId, "terminal said: ${(output["output"] as String).trim()}")
        } finally {
            terminal.release()
        }
    }
}

fun main() = runBlocking { runAgent { client -> ExampleAgent(client) } }
