package acp_engine

import java.util.logging.Logger

/**
 * What an [Agent] or [Client] (or a [ConnectionHandler]) also implements to hear of the
 * notifications from the peer whose params fail the ACP schema. The engine drops them: they
 * never reach `sessionUpdate` and the like, and a notification gets no answer. Without this
 * interface each is a warning on the `acp_engine` logger (`java.util.logging`). Unknown
 * notification methods are dropped without a word.
 *
 * ```kotlin
 * class MyClient : Client, InvalidNotificationListener {
 *     override fun onInvalidNotification(method: String, error: RequestError) { ... }
 *     ...
 * }
 * ```
 */
interface InvalidNotificationListener {
    /**
     * The peer sent notification [method] with params that fail the schema (for example
     * claude-agent-acp 0.23's `session/update` `usage_update` with `"used": null`); [error]
     * is the -32602 that says what failed (its [RequestError.data] names the field). Called
     * in order with the other notifications, on the connection's event thread.
     */
    fun onInvalidNotification(method: String, error: RequestError)
}

/** Tell [target] of a dropped notification, or log a warning when it does not listen. */
internal fun invalidNotification(target: Any?, method: String, error: RequestError) {
    if (target is InvalidNotificationListener) {
        try {
            target.onInvalidNotification(method, error)
        } catch (failed: Exception) {
            // Nothing answers a notification; the next event goes on.
        }
        return
    }
    val what = error.data?.let(Json::stringify) ?: error.message
    LOGGER.warning("dropped a $method notification that fails the schema: $what")
}

/** The package's logger. */
private val LOGGER: Logger = Logger.getLogger("acp_engine")
