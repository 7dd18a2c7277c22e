package acp_engine

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.DelicateCoroutinesApi
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlin.system.exitProcess

/**
 * The agent the engine tests run in a child JVM. What a prompt does depends on its text:
 * `throw` throws a plain exception, `hang` says "prompt started" in a session update, waits
 * until cancelled and then says so with another, `crash` exits the process, `burst N` sends N updates before it answers,
 * `cancel-client` starts a file read on the client and cancels it, `say TEXT` sends TEXT
 * as an update.
 */
class TestAgent(private val client: AgentSideConnection) : Agent {
    override suspend fun initialize(params: JsonObject): JsonObject =
        mapOf("protocolVersion" to 1, "agentCapabilities" to emptyMap<String, Any?>())

    override suspend fun newSession(params: JsonObject): JsonObject = mapOf("sessionId" to "s-${params["cwd"]}")

    private suspend fun say(sessionId: Any?, text: String) = client.sessionUpdate(
        mapOf(
            "sessionId" to sessionId,
            "update" to mapOf("sessionUpdate" to "agent_message_chunk", "content" to mapOf("type" to "text", "text" to text)),
        ),
    )

    @OptIn(DelicateCoroutinesApi::class)
    override suspend fun prompt(params: JsonObject): JsonObject {
        val sessionId = params["sessionId"]
        val text = ((params["prompt"] as List<*>).first() as Map<*, *>)["text"] as String
        when {
            text == "throw" -> throw IllegalStateException("a secret the peer must not see")
            text == "refuse" -> throw RequestError.invalidParams(mapOf("why" to "refused"))
            text == "hang" -> try {
                say(sessionId, "prompt started")
                awaitCancellation()
            } catch (cancelled: CancellationException) {
                // The engine cancelled this coroutine ($/cancel_request): tell the client.
                GlobalScope.launch { say(sessionId, "prompt cancelled") }
                throw cancelled
            }
            text == "crash" -> {
                delay(100)
                exitProcess(3)
            }
            text.startsWith("burst ") -> {
                val started = System.nanoTime()
                repeat(text.removePrefix("burst ").toInt()) { say(sessionId, "$it ") }
                if (System.getenv("ACP_TEST_TIMING") != null) {
                    System.err.println("agent: burst sent in ${(System.nanoTime() - started) / 1_000_000} ms")
                }
            }
            text.startsWith("say ") -> say(sessionId, text.removePrefix("say "))
            text == "every-client-method" -> say(sessionId, Json.stringify(everyClientMethod(sessionId)))
            text == "cancel-client" -> {
                val read = GlobalScope.launch {
                    runCatching { client.readTextFile(mapOf("sessionId" to sessionId, "path" to "/hang")) }
                }
                delay(300)
                read.cancel()
                read.join()
            }
        }
        return mapOf("stopReason" to "end_turn")
    }

    override suspend fun cancel(params: JsonObject) {}

    // Every optional method but `logout` (which answers -32601 by default) says which it was.
    private fun called(method: String, params: JsonObject, result: JsonObject = emptyMap()) =
        result + mapOf("_meta" to mapOf("called" to method, "params" to params))

    override suspend fun authenticate(params: JsonObject) = called("authenticate", params)
    override suspend fun loadSession(params: JsonObject) = called("loadSession", params)
    override suspend fun listSessions(params: JsonObject) = called("listSessions", params, mapOf("sessions" to emptyList<Any?>()))
    override suspend fun deleteSession(params: JsonObject) = called("deleteSession", params)
    override suspend fun resumeSession(params: JsonObject) = called("resumeSession", params)
    override suspend fun closeSession(params: JsonObject) = called("closeSession", params)
    override suspend fun setSessionMode(params: JsonObject) = called("setSessionMode", params)
    override suspend fun setSessionConfigOption(params: JsonObject) =
        called("setSessionConfigOption", params, mapOf("configOptions" to emptyList<Any?>()))

    /** Call every client method; what came back, in order. */
    private suspend fun everyClientMethod(sessionId: Any?): List<Any?> {
        val s = mapOf("sessionId" to sessionId)
        val results = mutableListOf<Any?>()
        results += client.readTextFile(s + mapOf("path" to "/etc/hostname"))["content"]
        results += client.writeTextFile(s + mapOf("path" to "/tmp/x", "content" to "y"))
        val permission = client.requestPermission(
            s + mapOf(
                "toolCall" to mapOf("toolCallId" to "c1"),
                "options" to listOf(mapOf("optionId" to "ok", "name" to "OK", "kind" to "allow_once")),
            ),
        )
        results += permission["outcome"]
        val terminal = client.createTerminal(s + mapOf("command" to "true"))
        results += terminal.terminalId
        results += terminal.currentOutput()["output"]
        results += terminal.waitForExit()["exitCode"]
        results += terminal.kill()
        results += terminal.release()
        results += runCatching { client.createElicitation(s + mapOf("message" to "?", "mode" to "form", "requestedSchema" to mapOf("type" to "object", "properties" to emptyMap<String, Any?>()))) }
            .getOrElse { (it as RequestError).code }
        client.completeElicitation(mapOf("elicitationId" to "e1"))
        return results
    }

    override suspend fun extMethod(method: String, params: JsonObject): JsonObject =
        mapOf("method" to method, "params" to params)
}

fun main() = runBlocking { runAgent { client -> TestAgent(client) } }
