package acp_engine

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.selects.select
import acp_engine.ffi.AcpException
import acp_engine.ffi.NativeProxyStreams
import acp_engine.ffi.Side

/**
 * What a proxy of a proxy chain (editor -> conductor -> proxy ... -> agent) does with the
 * messages that cross it. Its predecessor (toward the client) and successor (toward the
 * agent) are reached through its one connection to the conductor, which the engine splits
 * in two: the `proxy/successor` envelopes, the id spaces and the cancellations crossing the
 * proxy are the engine's, so a proxy is two plain [Connection]s. Every method passes the
 * message on unchanged: override what you change. Requests run concurrently;
 * notifications one at a time in arrival order, per direction. A request's coroutine is
 * cancelled when the request it serves is, which cancels the request it passed on.
 */
open class Proxy {
    /** A request from the client side (`initialize` included), on its way to the agent. */
    open suspend fun clientRequest(method: String, params: Any?, successor: Connection): Any? =
        successor.sendRequest(method, params)

    /** A notification from the client side, on its way to the agent. */
    open suspend fun clientNotification(method: String, params: Any?, successor: Connection) =
        successor.sendNotification(method, params)

    /** A request from the agent side (a permission request, a file read...), on its way to the client. */
    open suspend fun agentRequest(method: String, params: Any?, predecessor: Connection): Any? =
        predecessor.sendRequest(method, params)

    /** A notification from the agent side, on its way to the client. */
    open suspend fun agentNotification(method: String, params: Any?, predecessor: Connection) =
        predecessor.sendNotification(method, params)
}

/**
 * Serve [proxy] on this process's stdin and stdout (a conductor launched it) until either
 * side closes; [options] apply to both connections.
 *
 * ```kotlin
 * fun main() = runBlocking { runProxy(object : Proxy() {}) }
 * ```
 */
suspend fun runProxy(proxy: Proxy, options: ConnectionOptions = ConnectionOptions()) {
    val streams = NativeProxyStreams.stdio()
    val toAgent = CompletableDeferred<Connection>()
    val predecessor = Connection.open(
        { proxyHalf(streams, false, options) },
        { _: Unit, method, params -> proxy.clientRequest(method, params, toAgent.await()) },
        { _: Unit, method, params -> proxy.clientNotification(method, params, toAgent.await()) },
        { },
    ).first
    val successor = try {
        Connection.open(
            { proxyHalf(streams, true, options) },
            { _: Unit, method, params -> proxy.agentRequest(method, params, predecessor) },
            { _: Unit, method, params -> proxy.agentNotification(method, params, predecessor) },
            { },
        ).first
    } catch (error: Throwable) {
        predecessor.close()
        throw error
    }
    toAgent.complete(successor)
    coroutineScope {
        val ends = listOf(async { predecessor.closed() }, async { successor.closed() })
        select { ends.forEach { end -> end.onAwait { } } }
        predecessor.close()
        successor.close()
    }
}

private fun proxyHalf(streams: NativeProxyStreams, successor: Boolean, options: ConnectionOptions) = try {
    streams.open(successor, Connection.settings(Side.RAW, options))
} catch (error: AcpException) {
    throw RequestError.from(error)
}
