// Benchmark agent on the official Kotlin SDK (com.agentclientprotocol:acp-jvm
// 0.10.5; see bench/README.md):  java -cp <class path> official.bench.AgentKt
package official.bench

import com.agentclientprotocol.agent.Agent
import com.agentclientprotocol.agent.AgentInfo
import com.agentclientprotocol.agent.AgentSession
import com.agentclientprotocol.agent.AgentSupport
import com.agentclientprotocol.agent.client
import com.agentclientprotocol.client.ClientInfo
import com.agentclientprotocol.common.Event
import com.agentclientprotocol.common.SessionCreationParameters
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.PermissionOption
import com.agentclientprotocol.model.PermissionOptionId
import com.agentclientprotocol.model.PermissionOptionKind
import com.agentclientprotocol.model.PromptResponse
import com.agentclientprotocol.model.SessionId
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.ToolCallId
import com.agentclientprotocol.protocol.Protocol
import com.agentclientprotocol.protocol.acpFail
import com.agentclientprotocol.transport.StdioTransport
import kotlin.system.exitProcess
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.runBlocking
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered
import kotlinx.serialization.json.JsonElement

const val LARGE_SIZE = 16 * 1024 * 1024

class BenchSession : AgentSession {
    override val sessionId = SessionId("bench-session")

    override suspend fun prompt(content: List<ContentBlock>, _meta: JsonElement?): Flow<Event> = flow {
        val words = ((content.firstOrNull() as? ContentBlock.Text)?.text ?: "").trim().split(" ")
        val n = words.getOrNull(1)?.toIntOrNull() ?: acpFail("unknown scenario")
        val client = currentCoroutineContext().client
        when (words[0]) {
            "stream" -> repeat(n) {
                emit(Event.SessionUpdateEvent(SessionUpdate.AgentMessageChunk(ContentBlock.Text("chunk of agent text"))))
            }
            "rpc" -> repeat(n) { client.fsReadTextFile("/bench/file.txt") }
            "perm" -> repeat(n) { i ->
                client.requestPermissions(
                    SessionUpdate.ToolCallUpdate(ToolCallId("call-$i")),
                    listOf(PermissionOption(PermissionOptionId("allow"), "Allow", PermissionOptionKind.ALLOW_ONCE)),
                )
            }
            "concurrent" -> coroutineScope { List(n) { async { client.fsReadTextFile("/bench/file.txt") } }.awaitAll() }
            "large" -> {
                val big = "x".repeat(LARGE_SIZE)
                repeat(n) {
                    client.fsWriteTextFile("/bench/large.txt", big)
                    if (client.fsReadTextFile("/bench/large.txt").content.length != LARGE_SIZE) acpFail("bad length")
                }
            }
            else -> acpFail("unknown scenario")
        }
        emit(Event.PromptResponseEvent(PromptResponse(StopReason.END_TURN)))
    }
}

class BenchSupport : AgentSupport {
    override suspend fun initialize(clientInfo: ClientInfo) = AgentInfo()

    override suspend fun createSession(sessionParameters: SessionCreationParameters): AgentSession = BenchSession()

    override suspend fun loadSession(sessionId: SessionId, sessionParameters: SessionCreationParameters): AgentSession =
        acpFail("no session/load")
}

fun main() {
    // A single-threaded parent scope: the SDK registers its listener in a
    // coroutine, and a message read before that would be lost otherwise.
    runBlocking {
        val transport = StdioTransport(
            this, Dispatchers.IO, System.`in`.asSource().buffered(), System.out.asSink().buffered(), "agent",
        )
        val closed = CompletableDeferred<Unit>()
        transport.onClose { closed.complete(Unit) }
        val protocol = Protocol(this, transport)
        Agent(protocol, BenchSupport())
        protocol.start()
        closed.await()
        protocol.close()
    }
    exitProcess(0)
}
