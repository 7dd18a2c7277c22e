// An ACP client built on acp_engine's Client interface: spawns the agent given
// on the command line and runs two turns against it, "Say hello" (serving
// permission, file and terminal requests for real, printing the streamed
// reply) and "cancel me" (it cancels the turn while the agent waits for
// permission). It shows notices and context compactions (and says so in its
// capabilities). Prints `interop ok` when every check passed.
//
//     java -cp <class path> acp_engine.examples.ExampleClientKt <agent command> [args...]
//     java -cp <class path> acp_engine.examples.ExampleClientKt ws://127.0.0.1:8080/acp
package acp_engine.examples

import acp_engine.Client
import acp_engine.ClientSideConnection
import acp_engine.JsonObject
import acp_engine.RequestError
import acp_engine.spawnAgent
import java.io.File
import java.nio.file.Files
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.GlobalScope
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext

/** A command the agent runs through us, with its output collected. */
private class Terminal(val process: Process) {
    val output = StringBuffer()

    @OptIn(kotlinx.coroutines.DelicateCoroutinesApi::class)
    val done: Deferred<Int> = GlobalScope.async(Dispatchers.IO) {
        process.inputStream.reader().use { reader ->
            val buffer = CharArray(65536)
            while (true) {
                val n = reader.read(buffer)
                if (n < 0) break
                output.append(buffer, 0, n)
            }
        }
        process.waitFor()
    }

    fun exitStatus(): JsonObject? =
        if (done.isCompleted) mapOf("exitCode" to process.exitValue(), "signal" to null) else null
}

class ExampleClient : Client {
    val reply = StringBuffer()
    val news = mutableListOf<JsonObject>() // notices and compactions, in order

    @Volatile
    var answerPermissions = true
    val permissionAsked = Channel<String>(Channel.UNLIMITED)
    private val terminals = ConcurrentHashMap<String, Terminal>()
    private val nextTerminal = AtomicLong(1)

    override suspend fun requestPermission(params: JsonObject): JsonObject {
        permissionAsked.send(params["sessionId"] as String)
        if (!answerPermissions) awaitCancellation()
        val allow = (params["options"] as List<*>).map { it as Map<*, *> }.first { it["kind"] == "allow_once" }
        return mapOf("outcome" to mapOf("outcome" to "selected", "optionId" to allow["optionId"]))
    }

    override suspend fun sessionUpdate(params: JsonObject) {
        @Suppress("UNCHECKED_CAST")
        val update = params["update"] as JsonObject
        when (update["sessionUpdate"]) {
            "agent_message_chunk" -> {
                val content = update["content"] as Map<*, *>
                if (content["type"] == "text") {
                    reply.append(content["text"] as String)
                    print(content["text"])
                    System.out.flush()
                }
            }
            "notice" -> {
                println("[${update["severity"]} notice: ${update["title"]}]")
                news.add(update)
            }
            "compaction_update" -> {
                println("[compaction ${update["compactionId"]}: ${update["status"]}]")
                news.add(update)
            }
            "compaction_summary_chunk" -> news.add(update)
        }
    }

    override suspend fun readTextFile(params: JsonObject): JsonObject {
        val path = params["path"] as String
        val lines = try {
            withContext(Dispatchers.IO) { File(path).readText() }.split(Regex("(?<=\n)"))
        } catch (error: java.io.IOException) {
            throw RequestError.resourceNotFound(path)
        }.filter { it.isNotEmpty() }
        val start = maxOf(((params["line"] as? Number)?.toInt() ?: 1) - 1, 0)
        val limit = (params["limit"] as? Number)?.toInt()
        val end = if (limit == null) lines.size else minOf(lines.size, start + limit)
        return mapOf("content" to lines.subList(minOf(start, lines.size), maxOf(end, minOf(start, lines.size))).joinToString(""))
    }

    override suspend fun writeTextFile(params: JsonObject): JsonObject {
        withContext(Dispatchers.IO) { File(params["path"] as String).writeText(params["content"] as String) }
        return emptyMap()
    }

    override suspend fun createTerminal(params: JsonObject): JsonObject {
        val command = listOf(params["command"] as String) + ((params["args"] as? List<*>)?.map { it as String } ?: emptyList())
        val builder = ProcessBuilder(command).redirectErrorStream(true)
        (params["cwd"] as? String)?.let { builder.directory(File(it)) }
        val process = withContext(Dispatchers.IO) { builder.start() }
        val terminalId = "term-${nextTerminal.getAndIncrement()}"
        terminals[terminalId] = Terminal(process)
        return mapOf("terminalId" to terminalId)
    }

    private fun terminal(params: JsonObject): Terminal {
        val id = params["terminalId"] as String
        return terminals[id] ?: throw RequestError.resourceNotFound(id)
    }

    override suspend fun terminalOutput(params: JsonObject): JsonObject {
        val terminal = terminal(params)
        val status = terminal.exitStatus()
        return mapOf("output" to terminal.output.toString(), "truncated" to false) +
            (if (status != null) mapOf("exitStatus" to status) else emptyMap())
    }

    override suspend fun waitForTerminalExit(params: JsonObject): JsonObject {
        val code = terminal(params).done.await()
        return mapOf("exitCode" to code, "signal" to null)
    }

    override suspend fun killTerminal(params: JsonObject): JsonObject {
        terminal(params).process.destroyForcibly()
        return emptyMap()
    }

    override suspend fun releaseTerminal(params: JsonObject): JsonObject {
        terminals.remove(params["terminalId"] as String)?.process?.destroyForcibly()
        return emptyMap()
    }
}

private fun prompt(sessionId: String, text: String): JsonObject =
    mapOf("sessionId" to sessionId, "prompt" to listOf(mapOf("type" to "text", "text" to text)))

private class CheckFailed(what: String) : Exception("check failed: $what")

private fun check(ok: Boolean, what: String) {
    if (!ok) throw CheckFailed(what)
}

/** Run both turns against `command args` (or a remote agent's URL); true when every check passed. */
suspend fun runExampleClient(command: String, args: List<String>): Boolean {
    val cwd = withContext(Dispatchers.IO) { Files.createTempDirectory("acp-engine-kotlin-client-").toFile() }
    try {
        File(cwd, "hello.txt").writeText("Hello from the client's file\n")
        val client = ExampleClient()
        val agent: ClientSideConnection = if (command.contains("://")) {
            ClientSideConnection.remote(command, System.getenv("ACP_ENGINE_TOKEN")) { client }
        } else {
            spawnAgent(command, args) { client }
        }
        agent.use {
            val initialized = agent.initialize(
                mapOf(
                    "protocolVersion" to 1,
                    "clientCapabilities" to mapOf(
                        "fs" to mapOf("readTextFile" to true, "writeTextFile" to true),
                        "terminal" to true,
                        "session" to mapOf("notices" to emptyMap<String, Any?>(), "compaction" to emptyMap<String, Any?>()),
                    ),
                    "clientInfo" to mapOf("name" to "acp-engine-kotlin-interop-client", "version" to "1.0.0"),
                ),
            )
            check(initialized["protocolVersion"] == 1L, "the agent speaks protocol version 1")
            val info = initialized["agentInfo"] as? Map<*, *>
            println("connected to ${info?.get("name") ?: "an agent"}")
            val session = agent.newSession(mapOf("cwd" to cwd.path, "mcpServers" to emptyList<Any?>()))
            val sessionId = session["sessionId"] as String

            println("> Say hello")
            var turn = agent.prompt(prompt(sessionId, "Say hello"))
            println("\n< stop reason: ${turn["stopReason"]}")
            check(turn["stopReason"] == "end_turn", "the first turn ends with end_turn")
            val text = client.reply.toString()
            check("Hello from the client's file" in text, "the agent read hello.txt through us")
            check("terminal said: hi" in text, "the agent ran `echo hi` in our terminal")
            check(File(cwd, "written.txt").readText() == "written by agent", "the agent wrote written.txt through us")
            check(client.news.size == 4 || System.getenv("ACP_INTEROP_NEWS") != "1", "the notice and compaction updates arrived")

            println("> cancel me")
            client.answerPermissions = false
            while (client.permissionAsked.tryReceive().isSuccess) Unit
            turn = coroutineScope {
                val turnJob = async { agent.prompt(prompt(sessionId, "cancel me")) }
                // The agent asks permission and waits; we cancel instead of answering.
                client.permissionAsked.receive()
                agent.cancel(mapOf("sessionId" to sessionId))
                turnJob.await()
            }
            println("< stop reason: ${turn["stopReason"]}")
            check(turn["stopReason"] == "cancelled", "the cancelled turn ends with cancelled")
        }
    } catch (failed: CheckFailed) {
        System.err.println("client: ${failed.message}")
        return false
    } finally {
        // The session's directory goes whether the checks passed or not.
        cwd.deleteRecursively()
    }
    println("interop ok")
    return true
}

fun main(args: Array<String>) {
    if (args.isEmpty()) {
        System.err.println("usage: ExampleClientKt <agent command> [args...] | ws://host:port/acp")
        exitProcess(2)
    }
    if (!runBlocking { runExampleClient(args[0], args.drop(1)) }) exitProcess(1)
}
