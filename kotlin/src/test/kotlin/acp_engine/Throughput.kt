package acp_engine

import kotlinx.coroutines.runBlocking

/**
 * A rough measurement, not a test: a Kotlin client prompts the [TestAgent] (a child JVM)
 * for bursts of `session/update` notifications and prints how many arrive per second.
 *
 *     java -cp <test class path> acp_engine.ThroughputKt [count]
 */
fun main(args: Array<String>) = runBlocking {
    val count = args.firstOrNull()?.toInt() ?: 20_000
    val client = RecordingClient()
    val command = Peers.jvm("acp_engine.TestAgentKt").filter { it != "-XX:TieredStopAtLevel=1" }
    val agent = spawnAgent(command.first(), command.drop(1)) { client }
    agent.use {
        agent.initialize(mapOf("protocolVersion" to 1))
        val session = agent.newSession(mapOf("cwd" to "/tmp", "mcpServers" to emptyList<Any?>()))["sessionId"]
        repeat(4) { round ->
            val started = System.nanoTime()
            agent.prompt(mapOf("sessionId" to session, "prompt" to listOf(mapOf("type" to "text", "text" to "burst $count"))))
            val seconds = (System.nanoTime() - started) / 1e9
            var seen = 0
            while (client.updates.tryReceive().isSuccess) seen++
            println("round $round: $seen updates in ${"%.3f".format(seconds)} s: ${(seen / seconds).toInt()} msg/s")
        }
        val requests = 2_000
        val started = System.nanoTime()
        repeat(requests) { agent.extMethod("_test/echo", mapOf("i" to it)) }
        val seconds = (System.nanoTime() - started) / 1e9
        println("$requests sequential requests in ${"%.3f".format(seconds)} s: ${(requests / seconds).toInt()} req/s")
    }
}
