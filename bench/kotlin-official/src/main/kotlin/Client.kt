// Benchmark client on the official Kotlin SDK (see bench/README.md):
//     java -cp <class path> official.bench.ClientKt --scenario S --n N -- <agent command...>
package official.bench

import bench.latency.Arrivals
import com.agentclientprotocol.client.Client
import com.agentclientprotocol.client.ClientInfo
import com.agentclientprotocol.common.ClientSessionOperations
import com.agentclientprotocol.common.Event
import com.agentclientprotocol.common.SessionCreationParameters
import com.agentclientprotocol.model.ClientCapabilities
import com.agentclientprotocol.model.ContentBlock
import com.agentclientprotocol.model.FileSystemCapability
import com.agentclientprotocol.model.PermissionOption
import com.agentclientprotocol.model.PermissionOptionId
import com.agentclientprotocol.model.ReadTextFileResponse
import com.agentclientprotocol.model.RequestPermissionOutcome
import com.agentclientprotocol.model.RequestPermissionResponse
import com.agentclientprotocol.model.SessionUpdate
import com.agentclientprotocol.model.StopReason
import com.agentclientprotocol.model.WriteTextFileResponse
import com.agentclientprotocol.protocol.Protocol
import com.agentclientprotocol.transport.StdioTransport
import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.io.asSink
import kotlinx.io.asSource
import kotlinx.io.buffered
import kotlinx.serialization.json.JsonElement

class BenchOperations(private val large: String?, val arrivals: Arrivals) : ClientSessionOperations {
    val count = AtomicLong()

    override suspend fun requestPermissions(
        toolCall: SessionUpdate.ToolCallUpdate,
        permissions: List<PermissionOption>,
        _meta: JsonElement?,
    ): RequestPermissionResponse {
        arrivals.arrived()
        count.incrementAndGet()
        return RequestPermissionResponse(RequestPermissionOutcome.Selected(PermissionOptionId("allow")))
    }

    // Updates of a prompt come as the prompt flow's events; only others come here.
    override suspend fun notify(notification: SessionUpdate, _meta: JsonElement?) {}

    override suspend fun fsReadTextFile(path: String, line: UInt?, limit: UInt?, _meta: JsonElement?): ReadTextFileResponse {
        if (large != null) return ReadTextFileResponse(large)
        arrivals.arrived()
        count.incrementAndGet()
        return ReadTextFileResponse("hello")
    }

    override suspend fun fsWriteTextFile(path: String, content: String, _meta: JsonElement?): WriteTextFileResponse {
        if (content.length == LARGE_SIZE) count.incrementAndGet()
        return WriteTextFileResponse()
    }
}

fun main(args: Array<String>) {
    val t0 = System.nanoTime()
    val scenario = args[args.indexOf("--scenario") + 1]
    val n = args[args.indexOf("--n") + 1].toLong()
    val agentArgv = args.drop(args.indexOf("--") + 1)
    val operations = BenchOperations(if (scenario == "large") "x".repeat(LARGE_SIZE) else null, Arrivals(scenario))
    val process = ProcessBuilder(agentArgv).redirectError(ProcessBuilder.Redirect.INHERIT).start()
    val ok = runBlocking {
        val transport = StdioTransport(
            this, Dispatchers.IO, process.inputStream.asSource().buffered(), process.outputStream.asSink().buffered(), "client",
        )
        val protocol = Protocol(this, transport)
        val client = Client(protocol)
        protocol.start()
        val fs = FileSystemCapability(readTextFile = true, writeTextFile = true)
        client.initialize(ClientInfo(capabilities = ClientCapabilities(fs = fs)))
        val session = client.newSession(SessionCreationParameters("/tmp", emptyList())) { _, _ -> operations }
        val setup = (System.nanoTime() - t0) / 1e9
        var run = setup
        var stopReason: StopReason? = StopReason.END_TURN
        if (scenario == "setup") {
            operations.count.set(n)
        } else {
            val t1 = System.nanoTime()
            stopReason = null
            session.prompt(listOf(ContentBlock.Text("$scenario $n"))).collect { event ->
                when (event) {
                    is Event.SessionUpdateEvent -> operations.count.incrementAndGet()
                    is Event.PromptResponseEvent -> stopReason = event.response.stopReason
                }
            }
            run = (System.nanoTime() - t1) / 1e9
        }
        val count = operations.count.get()
        val ok = count == n && stopReason == StopReason.END_TURN
        println(
            """{"client": "official-kotlin", "scenario": "$scenario", "n": $n, "setup_s": $setup, "run_s": $run, """ +
                """"count": $count, "ok": $ok${operations.arrivals.jsonFields()}}""",
        )
        protocol.close()
        ok
    }
    process.outputStream.close()
    process.waitFor()
    exitProcess(if (ok) 0 else 1)
}
