package acp_engine

import kotlin.coroutines.CoroutineContext

/**
 * Marks a notification handler's coroutines. Notifications are handled one at a time on
 * the connection's event thread, which also delivers the answers to our requests: a
 * request sent and awaited there would wait for itself. [Calls.request] refuses it at
 * once with [WAIT_IN_NOTIFICATION] instead of hanging, as the Go package does.
 */
internal object InNotification : CoroutineContext.Element, CoroutineContext.Key<InNotification> {
    override val key: CoroutineContext.Key<*> get() = this

    const val WAIT_IN_NOTIFICATION =
        "a notification handler cannot wait for an answer from the peer (it is delivered after " +
            "the handler returns); send the request from another coroutine (launch it on a scope of yours)"
}
