package acp_engine

import kotlinx.coroutines.runBlocking

/**
 * A proxy of a proxy chain on [runProxy] that passes everything on and says on stderr
 * what crossed it, as `[kotlin-proxy] -> method` (from the client side) and `<- method`
 * (from the agent side): [ProxyTest] runs it in a child JVM in our conductor.
 */
class LoggingProxy : Proxy() {
    override suspend fun clientRequest(method: String, params: Any?, successor: Connection): Any? {
        System.err.println("[kotlin-proxy] -> $method")
        return super.clientRequest(method, params, successor)
    }

    override suspend fun agentRequest(method: String, params: Any?, predecessor: Connection): Any? {
        System.err.println("[kotlin-proxy] <- $method")
        return super.agentRequest(method, params, predecessor)
    }
}

fun main() = runBlocking { runProxy(LoggingProxy()) }
