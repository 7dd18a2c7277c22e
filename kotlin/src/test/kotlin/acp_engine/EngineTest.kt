package acp_engine

import java.io.BufferedWriter
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** The test client: records updates, and its file read hangs until cancelled. */
class RecordingClient : Client {
    val updates = Channel<String>(Channel.UNLIMITED)
    val readCancelled = CompletableDeferred<Unit>()

    override suspend fun requestPermission(params: JsonObject): JsonObject =
        mapOf("outcome" to mapOf("outcome" to "selected", "optionId" to "ok"))

    override suspend fun sessionUpdate(params: JsonObject) {
        val content = (params["update"] as Map<*, *>)["content"] as Map<*, *>
        updates.send(content["text"] as String)
    }

    /** What the client methods below were called with, in order. */
    val calls = java.util.concurrent.ConcurrentLinkedQueue<String>()

    override suspend fun readTextFile(params: JsonObject): JsonObject {
        calls += "readTextFile"
        if (params["path"] != "/hang") return mapOf("content" to "file text")
        try {
            awaitCancellation()
        } catch (cancelled: CancellationException) {
            readCancelled.complete(Unit)
            throw cancelled
        }
    }

    override suspend fun writeTextFile(params: JsonObject): JsonObject = emptyMap<String, Any?>().also { calls += "writeTextFile" }
    override suspend fun createTerminal(params: JsonObject): JsonObject = mapOf("terminalId" to "t1").also { calls += "createTerminal" }
    override suspend fun terminalOutput(params: JsonObject): JsonObject =
        mapOf("output" to "out", "truncated" to false).also { calls += "terminalOutput" }
    override suspend fun waitForTerminalExit(params: JsonObject): JsonObject = mapOf("exitCode" to 0).also { calls += "waitForTerminalExit" }
    override suspend fun killTerminal(params: JsonObject): JsonObject = emptyMap<String, Any?>().also { calls += "killTerminal" }
    override suspend fun releaseTerminal(params: JsonObject): JsonObject = emptyMap<String, Any?>().also { calls += "releaseTerminal" }
    override suspend fun createElicitation(params: JsonObject): JsonObject =
        mapOf("action" to mapOf("action" to "decline")).also { calls += "createElicitation" }
    override suspend fun completeElicitation(params: JsonObject) {
        calls += "completeElicitation"
    }
}

private fun prompt(sessionId: Any?, text: String): JsonObject =
    mapOf("sessionId" to sessionId, "prompt" to listOf(mapOf("type" to "text", "text" to text)))

/** The engine rules, seen from Kotlin, over real processes (a child JVM runs [TestAgent]). */
class EngineTest {
    private val client = RecordingClient()
    private var agent: ClientSideConnection? = null

    /** A [TestAgent] child served by [makeClient] (the recording [client] unless given), and its session. */
    private suspend fun start(makeClient: (ClientSideConnection) -> Client = { client }): Pair<ClientSideConnection, Any?> {
        val command = Peers.jvm("acp_engine.TestAgentKt")
        val agent = spawnAgent(command.first(), command.drop(1), makeClient = makeClient)
        this.agent = agent
        agent.initialize(mapOf("protocolVersion" to 1, "clientCapabilities" to emptyMap<String, Any?>()))
        val session = agent.newSession(mapOf("cwd" to "/tmp", "mcpServers" to emptyList<Any?>()))
        return agent to session["sessionId"]
    }

    @AfterEach
    fun close() {
        agent?.close()
    }

    @Test
    fun `a handler exception answers -32603 without its message, and the connection lives`() = runBlocking {
        withTimeout(30_000) {
            val (agent, session) = start()
            val error = assertThrows<RequestError> { agent.prompt(prompt(session, "throw")) }
            assertEquals(RequestError.Codes.INTERNAL_ERROR, error.code)
            assertFalse(error.toString().contains("secret"), error.toString())
            val refused = assertThrows<RequestError> { agent.prompt(prompt(session, "refuse")) }
            assertEquals(RequestError.Codes.INVALID_PARAMS, refused.code)
            assertEquals(mapOf("why" to "refused"), refused.data)
            assertEquals("end_turn", agent.prompt(prompt(session, "fine"))["stopReason"])
        }
    }

    @Test
    fun `updates arrive before the response of their turn`() = runBlocking {
        withTimeout(30_000) {
            val (agent, session) = start()
            repeat(3) {
                agent.prompt(prompt(session, "burst 500"))
                // Every update of the turn was handed over before prompt returned.
                val seen = generateSequence { client.updates.tryReceive().getOrNull() }.toList()
                assertEquals((0 until 500).map { "$it " }, seen)
            }
        }
    }

    @Test
    fun `a notification handler that waits for an answer is refused at once instead of hanging`() = runBlocking {
        withTimeout(30_000) {
            val refusal = CompletableDeferred<String?>()
            val (connection, session) = start { peer ->
                object : Client by client {
                    override suspend fun sessionUpdate(params: JsonObject) {
                        if (refusal.isCompleted) return
                        val failure = runCatching { peer.extMethod("_test/echo", emptyMap<String, Any?>()) }.exceptionOrNull()
                        refusal.complete(failure?.message)
                    }
                }
            }
            assertEquals("end_turn", connection.prompt(prompt(session, "burst 3"))["stopReason"])
            assertEquals(InNotification.WAIT_IN_NOTIFICATION, refusal.await())
            // The connection goes on: the same request from outside a notification handler.
            assertEquals(mapOf("method" to "_test/echo", "params" to mapOf("x" to 1L)), connection.extMethod("_test/echo", mapOf("x" to 1L)))
        }
    }

    @Test
    fun `a request handler blocking in runBlocking for an answer is refused at once instead of hanging`() = runBlocking {
        withTimeout(30_000) {
            val refusal = CompletableDeferred<String?>()
            val (connection, session) = start { peer ->
                object : Client by client {
                    override suspend fun readTextFile(params: JsonObject): JsonObject {
                        // Handlers run on the event thread until they suspend: blocking it to
                        // wait for the peer's answer would wait for itself.
                        val failure = runCatching {
                            runBlocking { peer.extMethod("_test/echo", emptyMap<String, Any?>()) }
                        }.exceptionOrNull()
                        refusal.complete(failure?.message)
                        // What such a handler should do instead: suspend for the answer.
                        val echoed = peer.extMethod("_test/echo", mapOf("x" to 2L))
                        return mapOf("content" to Json.stringify(echoed))
                    }
                }
            }
            assertEquals("end_turn", connection.prompt(prompt(session, "every-client-method"))["stopReason"])
            assertEquals(HandlerDispatcher.WAIT_BLOCKING_EVENT_THREAD, refusal.await())
        }
    }

    @Test
    fun `extension methods both ways and outbound checks`() = runBlocking {
        withTimeout(30_000) {
            val (agent, session) = start()
            val echoed = agent.extMethod("_test/echo", mapOf("x" to listOf(1L, "two", null)))
            assertEquals(mapOf("method" to "_test/echo", "params" to mapOf("x" to listOf(1L, "two", null))), echoed)
            // What we send is checked before it leaves: -32602 naming the field, -32601.
            val bad = assertThrows<RequestError> { agent.newSession(mapOf("cwd" to 5)) }
            assertEquals(RequestError.Codes.INVALID_PARAMS, bad.code)
            assertNotNull(bad.data)
            val unknown = assertThrows<RequestError> { agent.connection.sendRequest("session/nope", emptyMap<String, Any?>()) }
            assertEquals(RequestError.Codes.METHOD_NOT_FOUND, unknown.code)
            // Notifications too (they take the direct path into the engine).
            val badNotice = assertThrows<RequestError> { agent.cancel(mapOf("sessionId" to 5)) }
            assertEquals(RequestError.Codes.INVALID_PARAMS, badNotice.code)
            assertNotNull(badNotice.data)
            // Text beyond ASCII crosses intact both ways.
            val text = "héllo ✓ 🚀 \u0000 \"quoted\""
            agent.prompt(prompt(session, "say $text"))
            assertEquals(text, client.updates.receive())
            assertEquals("end_turn", agent.prompt(prompt(session, "fine"))["stopReason"])
        }
    }

    @Test
    fun `every method both ways`() = runBlocking {
        withTimeout(30_000) {
            val (agent, session) = start()
            val s = mapOf("sessionId" to session)
            val calls = listOf(
                "authenticate" to suspend { agent.authenticate(mapOf("methodId" to "m")) },
                "loadSession" to suspend { agent.loadSession(s + mapOf("cwd" to "/", "mcpServers" to emptyList<Any?>())) },
                "listSessions" to suspend { agent.listSessions(emptyMap()) },
                "deleteSession" to suspend { agent.deleteSession(s) },
                "resumeSession" to suspend { agent.resumeSession(s + mapOf("cwd" to "/")) },
                "closeSession" to suspend { agent.closeSession(s) },
                "setSessionMode" to suspend { agent.setSessionMode(s + mapOf("modeId" to "m")) },
                "setSessionConfigOption" to suspend {
                    agent.setSessionConfigOption(s + mapOf("configId" to "c", "value" to "v"))
                },
            )
            for ((name, call) in calls) {
                assertEquals(name, (call()["_meta"] as Map<*, *>)["called"], name)
            }
            // A method the agent does not implement: -32601 from the Agent interface's default.
            assertEquals(RequestError.Codes.METHOD_NOT_FOUND, assertThrows<RequestError> { agent.logout(emptyMap()) }.code)
            agent.cancel(s)

            // The agent calls every client method (TerminalHandle for the terminal ones).
            assertEquals("end_turn", agent.prompt(prompt(session, "every-client-method"))["stopReason"])
            val results = Json.parse(client.updates.receive()) as List<*>
            assertEquals("file text", results[0])
            assertEquals(mapOf("outcome" to "selected", "optionId" to "ok"), results[2])
            assertEquals("t1", results[3])
            assertEquals(
                listOf(
                    "readTextFile", "writeTextFile", "createTerminal", "terminalOutput", "waitForTerminalExit",
                    "killTerminal", "releaseTerminal", "createElicitation", "completeElicitation",
                ),
                generateSequence { client.calls.poll() }.toList(),
                "results: $results",
            )
        }
    }

    @Test
    fun `a cancelled coroutine cancels its request on the peer`() = runBlocking {
        withTimeout(30_000) {
            val (agent, session) = start()
            val turn = async { agent.prompt(prompt(session, "hang")) }
            // Cancel once the handler runs (a cancel that arrives before the request is
            // dispatched never starts it).
            assertEquals("prompt started", client.updates.receive())
            turn.cancel()
            // The agent's prompt coroutine was cancelled by the $/cancel_request we sent.
            assertEquals("prompt cancelled", client.updates.receive())
            assertTrue(turn.isCancelled)
            assertEquals("end_turn", agent.prompt(prompt(session, "fine"))["stopReason"])
        }
    }

    @Test
    fun `the peer cancelling a request cancels the handler coroutine`() = runBlocking {
        withTimeout(30_000) {
            val (agent, session) = start()
            assertEquals("end_turn", agent.prompt(prompt(session, "cancel-client"))["stopReason"])
            withTimeout(5_000) { client.readCancelled.await() }
        }
    }

    @Test
    fun `a peer that crashes fails every pending request at once`() = runBlocking {
        withTimeout(30_000) {
            val (agent, session) = start()
            val hanging = (1..3).map { async { runCatching { agent.prompt(prompt(session, "hang")) } } }
            delay(200)
            val started = System.nanoTime()
            val crash = runCatching { agent.prompt(prompt(session, "crash")) }
            for (outcome in hanging.map { it.await() } + crash) {
                val error = outcome.exceptionOrNull() as RequestError
                assertTrue(error.isConnectionClosed, error.toString())
            }
            val millis = (System.nanoTime() - started) / 1_000_000
            assertTrue(millis < 2_000, "pending requests failed after $millis ms")
            withTimeout(5_000) { agent.closed() }
            assertTrue(agent.connection.isClosed)
            val late = assertThrows<RequestError> { agent.prompt(prompt(session, "fine")) }
            assertTrue(late.isConnectionClosed, late.toString())
            val lateNotice = assertThrows<RequestError> { agent.cancel(mapOf("sessionId" to session)) }
            assertTrue(lateNotice.isConnectionClosed, lateNotice.toString())
        }
    }
}

/** A plain JSON-RPC connection: any method, any params, no schema. */
class RawConnectionTest {
    @Test
    fun `a raw connection talks to the agent and serves its requests`() = runBlocking {
        withTimeout(30_000) {
            val updates = Channel<Any?>(Channel.UNLIMITED)
            val command = Peers.jvm("acp_engine.TestAgentKt")
            val connection = Connection.spawn(command.first(), command.drop(1)) {
                object : ConnectionHandler {
                    override suspend fun handleNotification(method: String, params: Any?) {
                        updates.send(method)
                    }
                }
            }
            connection.use {
                val result = connection.sendRequest(AgentMethods.INITIALIZE, mapOf("protocolVersion" to 1)) as Map<*, *>
                assertEquals(1L, result["protocolVersion"])
                // Nothing is checked on a raw connection: the agent's engine answers -32602.
                val bad = assertThrows<RequestError> { connection.sendRequest(AgentMethods.SESSION_NEW, listOf(1, 2)) }
                assertEquals(RequestError.Codes.INVALID_PARAMS, bad.code)
                val session = (connection.sendRequest(AgentMethods.SESSION_NEW, mapOf("cwd" to "/", "mcpServers" to emptyList<Any?>())) as Map<*, *>)["sessionId"]
                // The agent's request to us: our handler's default answers -32601, which fails its turn.
                val turn = runCatching {
                    connection.sendRequest(AgentMethods.SESSION_PROMPT, prompt(session, "every-client-method"))
                }
                assertEquals(RequestError.Codes.METHOD_NOT_FOUND, (turn.exceptionOrNull() as RequestError).code)
                connection.sendRequest(AgentMethods.SESSION_PROMPT, prompt(session, "burst 2"))
                assertEquals(listOf<Any?>(ClientMethods.SESSION_UPDATE, ClientMethods.SESSION_UPDATE), listOf(updates.receive(), updates.receive()))
            }
            connection.closed()
            assertTrue(connection.isClosed)
        }
    }
}

/** The Kotlin agent on the wire, driven line by line. */
class WireTest {
    private val process = ProcessBuilder(Peers.jvm("acp_engine.TestAgentKt")).redirectError(ProcessBuilder.Redirect.INHERIT).start()
    private val input: BufferedWriter = process.outputStream.bufferedWriter()
    private val lines = LinkedBlockingQueue<String>()

    init {
        Thread {
            process.inputStream.bufferedReader().forEachLine { lines.put(it) }
        }.apply { isDaemon = true }.start()
    }

    private fun send(line: String) {
        input.write(line)
        input.write("\n")
        input.flush()
    }

    @Suppress("UNCHECKED_CAST")
    private fun next(): JsonObject =
        Json.parse(lines.poll(20, TimeUnit.SECONDS) ?: throw AssertionError("no answer")) as JsonObject

    @Suppress("UNCHECKED_CAST")
    private fun error(message: JsonObject): JsonObject = message["error"] as? JsonObject ?: throw AssertionError("not an error: $message")

    @AfterEach
    fun stop() {
        input.close()
        assertTrue(process.waitFor(10, TimeUnit.SECONDS), "the agent JVM did not exit after its stdin closed")
        assertEquals(0, process.exitValue())
    }

    @Test
    fun `validation errors, inbound cancel and a clean exit`() {
        send("""{"jsonrpc":"2.0","id":1,"method":"${AgentMethods.INITIALIZE}","params":{"protocolVersion":1}}""")
        assertEquals(1L, (next()["result"] as Map<*, *>)["protocolVersion"])
        send("""{"jsonrpc":"2.0","id":2,"method":"session/nope","params":{}}""")
        assertEquals(-32601L, error(next())["code"])
        send("""{"jsonrpc":"2.0","id":3,"method":"${AgentMethods.SESSION_NEW}","params":{"cwd":5,"mcpServers":[]}}""")
        val invalid = error(next())
        assertEquals(-32602L, invalid["code"])
        assertNotNull(invalid["data"])
        send("""not json""")
        assertEquals(-32700L, error(next())["code"])
        send("""{"jsonrpc":"2.0","id":4,"method":"${AgentMethods.SESSION_PROMPT}","params":{"sessionId":"s","prompt":[{"type":"text","text":"throw"}]}}""")
        val thrown = next()
        assertEquals(4L, thrown["id"])
        assertEquals(-32603L, error(thrown)["code"])
        assertFalse(Json.stringify(thrown).contains("secret"))
        // A prompt that waits, cancelled: -32800, and the handler's coroutine saw it.
        send("""{"jsonrpc":"2.0","id":5,"method":"${AgentMethods.SESSION_PROMPT}","params":{"sessionId":"s","prompt":[{"type":"text","text":"hang"}]}}""")
        assertEquals(ClientMethods.SESSION_UPDATE, next()["method"]) // "prompt started": it runs
        send("""{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}""")
        val answers = listOf(next(), next())
        val cancelled = answers.single { it["id"] == 5L }
        assertEquals(-32800L, error(cancelled)["code"])
        val update = answers.single { it["method"] != null }
        assertEquals(ClientMethods.SESSION_UPDATE, update["method"])
        send("""{"jsonrpc":"2.0","id":6,"method":"${AgentMethods.SESSION_PROMPT}","params":{"sessionId":"s","prompt":[{"type":"text","text":"fine"}]}}""")
        assertEquals("end_turn", (next()["result"] as Map<*, *>)["stopReason"])
    }
}
