@file:Suppress("UNCHECKED_CAST") // JSON objects read as maps
package acp_engine

import java.io.File
import kotlinx.coroutines.runBlocking

/**
 * A proxy of a proxy chain on [runProxy]: the contract of the Rust example
 * core/examples/proxy.rs (interop/conductor.sh). It passes every message on unchanged,
 * except that with `--prefix TEXT` it puts a text block of its own before every prompt,
 * and says what crossed it on stderr (and with `--log FILE` in FILE) as
 * `[kotlin-proxy NAME] -> method` (from the client side) and `<- method` (from the agent
 * side). [ProxyTest] runs it in a child JVM in our conductor.
 */
class LoggingProxy(private val name: String, private val prefix: String?, private val log: File?) : Proxy() {
    private fun say(line: String) = synchronized(this) {
        val text = "[kotlin-proxy $name] $line"
        System.err.println(text)
        log?.appendText(text + "\n")
    }

    override suspend fun clientRequest(method: String, params: Any?, successor: Connection): Any? {
        say("-> $method")
        val passed = if (prefix != null && method == AgentMethods.SESSION_PROMPT && params is Map<*, *>) {
            val prompt = params["prompt"] as? List<Any?> ?: emptyList()
            params + ("prompt" to listOf(mapOf("type" to "text", "text" to prefix)) + prompt)
        } else {
            params
        }
        return super.clientRequest(method, passed, successor)
    }

    override suspend fun agentRequest(method: String, params: Any?, predecessor: Connection): Any? {
        say("<- $method")
        return super.agentRequest(method, params, predecessor)
    }
}

fun main(args: Array<String>) = runBlocking {
    val options = args.toList().chunked(2).associate { it[0] to it.getOrNull(1) }
    val prefix = options["--prefix"]
    val name = options["--name"] ?: prefix ?: "proxy"
    runProxy(LoggingProxy(name, prefix, options["--log"]?.let(::File)))
}
