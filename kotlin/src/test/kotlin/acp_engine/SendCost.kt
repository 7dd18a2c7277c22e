package acp_engine

import acp_engine.ffi.NativeConnection
import acp_engine.ffi.Settings
import acp_engine.ffi.Side
import acp_engine.ffi.SpawnConfig

/** A rough measurement, not a test: the cost of one notification sent from Kotlin. */
fun main(args: Array<String>) {
    val count = args.firstOrNull()?.toInt() ?: 100_000
    val params = Json.stringify(mapOf("sessionId" to "s", "update" to mapOf("sessionUpdate" to "agent_message_chunk", "content" to mapOf("type" to "text", "text" to "hello "))))
    for (side in listOf(Side.RAW, Side.AGENT)) {
        val native = NativeConnection.spawn(
            Settings(side, false, null, emptyList(), emptyList()),
            SpawnConfig("sh", listOf("-c", "cat > /dev/null"), emptyMap(), false, null, true, null),
        )
        val text = TextConnection(native)
        repeat(3) {
            val started = System.nanoTime()
            repeat(count) { text.sendNotification(ClientMethods.SESSION_UPDATE, params) }
            val seconds = (System.nanoTime() - started) / 1e9
            println("$side: $count notifications in ${"%.3f".format(seconds)} s: ${(count / seconds).toInt()}/s")
        }
        val started = System.nanoTime()
        repeat(count) { Json.stringify(mapOf("sessionId" to "s", "update" to mapOf("sessionUpdate" to "agent_message_chunk", "content" to mapOf("type" to "text", "text" to "hello $it")))) }
        println("Json.stringify: ${(count / ((System.nanoTime() - started) / 1e9)).toInt()}/s")
        var started2 = System.nanoTime()
        repeat(count) { native.isClosed() }
        println("isClosed: ${(count / ((System.nanoTime() - started2) / 1e9)).toInt()}/s")
        started2 = System.nanoTime()
        repeat(count) { acp_engine.ffi.standardError(-32601L, "x") }
        println("standardError (2 strings across): ${(count / ((System.nanoTime() - started2) / 1e9)).toInt()}/s")
        native.closeConnection()
    }
}
