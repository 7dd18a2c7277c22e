package acp_engine

import acp_engine.ffi.NativeConnection
import java.util.concurrent.ConcurrentHashMap
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.launch

/** How one of our requests ended: its [result], or the [error] it failed with. */
internal class Outcome(val result: Any?, val error: RequestError?)

/**
 * A connection's requests in flight both ways: ours waiting for their outcome (which
 * arrives among the engine's events), and the peer's being answered by coroutines.
 */
internal class Calls(private val native: NativeConnection, private val text: TextConnection) {
    /** Handlers of the peer's requests run here ([HandlerDispatcher]). */
    private val scope = CoroutineScope(SupervisorJob() + HandlerDispatcher)

    /**
     * Our requests by id: the caller's [CompletableDeferred] while it waits, or the
     * [Outcome] when that arrived before the caller registered (the engine's events are
     * handled on another thread, and may be quicker than the sender), or [GAVE_UP] for a
     * request its caller cancelled, until its outcome arrives.
     */
    private val ours = ConcurrentHashMap<Long, Any>()

    private companion object {
        val GAVE_UP = Any()
    }

    /** The peer's requests being handled, by token. */
    private val theirs = ConcurrentHashMap<Long, Job>()

    /**
     * Send a request and wait for its outcome; cancelling the caller cancels it on the
     * peer (`$/cancel_request`).
     */
    suspend fun request(method: String, params: String?): Any? {
        val context = currentCoroutineContext()
        check(context[InNotification] == null) { InNotification.WAIT_IN_NOTIFICATION }
        check(!blocksEventThread(context)) { HandlerDispatcher.WAIT_BLOCKING_EVENT_THREAD }
        val id = text.sendRequest(method, params)
        val answer = CompletableDeferred<Outcome>()
        var arrived: Outcome? = null
        ours.compute(id) { _, current ->
            if (current is Outcome) {
                arrived = current
                null
            } else {
                answer
            }
        }
        val outcome = arrived ?: try {
            answer.await()
        } catch (cancelled: CancellationException) {
            // Its outcome still arrives (-32800, or the answer if that was quicker): dropped then.
            if (ours.replace(id, answer, GAVE_UP)) native.cancelRequest(id)
            throw cancelled
        }
        outcome.error?.let { throw it }
        return outcome.result
    }

    /** Our request [id] ended. */
    fun settle(id: Long, outcome: Outcome) {
        var waiter: CompletableDeferred<Outcome>? = null
        ours.compute(id) { _, current ->
            @Suppress("UNCHECKED_CAST")
            waiter = current as? CompletableDeferred<Outcome>
            if (current == null) outcome else null
        }
        waiter?.complete(outcome)
    }

    /**
     * Answer the peer's request [token] with what [handle] returns, on a coroutine of its
     * own. A [RequestError] answers with itself; any other exception with -32603 alone (what
     * it says stays here).
     */
    fun serve(token: Long, handle: suspend () -> Any?) {
        val job = scope.launch(start = CoroutineStart.LAZY) {
            val (body, isError) = try {
                Json.stringify(handle()) to false
            } catch (cancelled: CancellationException) {
                theirs.remove(token)
                throw cancelled
            } catch (error: RequestError) {
                error.toJson() to true
            } catch (error: Throwable) {
                RequestError.internalError().toJson() to true
            }
            theirs.remove(token)
            text.respond(token, body, isError)
        }
        theirs[token] = job
        job.start()
    }

    /** The peer cancelled its request [token] (or the connection closed): stop its handler. */
    fun stop(token: Long) {
        theirs.remove(token)?.cancel()
    }

    /** The connection closed: every request of ours still waiting fails, every handler stops. */
    fun closeAll(reason: String) {
        val closed = Outcome(null, RequestError(RequestError.Codes.CONNECTION_CLOSED, reason))
        for (id in ours.keys) {
            @Suppress("UNCHECKED_CAST")
            (ours.remove(id) as? CompletableDeferred<Outcome>)?.complete(closed)
        }
        for (token in theirs.keys) stop(token)
    }
}

/**
 * Where handlers of the peer's requests run: on an event thread when one starts or wakes
 * them (a request's arrival, the answer it waited for), otherwise on [Dispatchers.Default].
 * A handler that answers at once, or an agent's loop of requests, then costs no thread
 * wake-up per message (a wake-up costs more than the rest of a round trip). Blocking code
 * there holds up the connection's events: it belongs in `withContext(Dispatchers.IO)`.
 */
internal object HandlerDispatcher : CoroutineDispatcher() {
    override fun isDispatchNeeded(context: CoroutineContext): Boolean = Thread.currentThread() !is EventThread

    override fun dispatch(context: CoroutineContext, block: Runnable) = Dispatchers.Default.dispatch(context, block)

    const val WAIT_BLOCKING_EVENT_THREAD =
        "runBlocking on a connection's event thread cannot wait for an answer from the peer (that " +
            "thread delivers it); a handler runs there until it suspends: call the request from the " +
            "handler itself, or move blocking code to withContext(Dispatchers.IO)"
}

/**
 * Whether a request awaited in [context] would block an event thread in `runBlocking` until
 * an answer only that thread can deliver (kotlinx.coroutines names no public type for its
 * blocking loop; its class name is stable since 1.0).
 */
private fun blocksEventThread(context: CoroutineContext): Boolean =
    Thread.currentThread() is EventThread &&
        context[ContinuationInterceptor]?.javaClass?.name == "kotlinx.coroutines.BlockingEventLoop"
