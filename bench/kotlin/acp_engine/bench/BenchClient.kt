// Benchmark client on acp-engine's Kotlin package (see bench/README.md):
//     java -cp <class path> acp_engine.bench.BenchClientKt --scenario S --n N -- <agent command...>
package acp_engine.bench

import acp_engine.Client
import acp_engine.JsonObject
import acp_engine.spawnAgent
import bench.latency.Arrivals
import java.util.concurrent.atomic.AtomicLong
import kotlin.system.exitProcess
import kotlinx.coroutines.runBlocking

class BenchClient(private val large: String?, val arrivals: Arrivals) : Client {
    val count = AtomicLong()

    override suspend fun requestPermission(params: JsonObject): JsonObject {
        arrivals.arrived()
        count.incrementAndGet()
        return mapOf("outcome" to mapOf("outcome" to "selected", "optionId" to "allow"))
    }

    override suspend fun sessionUpdate(params: JsonObject) {
        count.incrementAndGet()
    }

    override suspend fun readTextFile(params: JsonObject): JsonObject {
        if (large != null) return mapOf("content" to large)
        arrivals.arrived()
        count.incrementAndGet()
        return mapOf("content" to "hello")
    }

    override suspend fun writeTextFile(params: JsonObject): JsonObject {
        if ((params["content"] as String).length == LARGE_SIZE) count.incrementAndGet()
        return emptyMap()
    }
}

fun main(args: Array<String>) {
    val t0 = System.nanoTime()
    val scenario = args[args.indexOf("--scenario") + 1]
    val n = args[args.indexOf("--n") + 1].toLong()
    val agentArgv = args.drop(args.indexOf("--") + 1)
    val client = BenchClient(if (scenario == "large") "x".repeat(LARGE_SIZE) else null, Arrivals(scenario))
    val ok = runBlocking {
        spawnAgent(agentArgv[0], agentArgv.drop(1)) { client }.use { agent ->
            agent.initialize(
                mapOf(
                    "protocolVersion" to 1,
                    "clientCapabilities" to mapOf("fs" to mapOf("readTextFile" to true, "writeTextFile" to true)),
                ),
            )
            val session = agent.newSession(mapOf("cwd" to "/tmp", "mcpServers" to emptyList<Any?>()))
            val setup = (System.nanoTime() - t0) / 1e9
            var run = setup
            var stopReason = "end_turn"
            if (scenario == "setup") {
                client.count.set(n)
            } else {
                val t1 = System.nanoTime()
                val outcome = agent.prompt(
                    mapOf(
                        "sessionId" to session["sessionId"],
                        "prompt" to listOf(mapOf("type" to "text", "text" to "$scenario $n")),
                    ),
                )
                run = (System.nanoTime() - t1) / 1e9
                stopReason = outcome["stopReason"] as String
            }
            val count = client.count.get()
            val ok = count == n && stopReason == "end_turn"
            println(
                """{"client": "kotlin", "scenario": "$scenario", "n": $n, "setup_s": $setup, "run_s": $run, """ +
                    """"count": $count, "ok": $ok${client.arrivals.jsonFields()}}""",
            )
            ok
        }
    }
    exitProcess(if (ok) 0 else 1)
}
