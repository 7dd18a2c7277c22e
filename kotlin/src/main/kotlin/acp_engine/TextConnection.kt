package acp_engine

import acp_engine.ffi.NativeConnection
import com.sun.jna.Native
import com.sun.jna.Pointer
import java.lang.ref.Cleaner
import java.lang.ref.Reference
import java.nio.ByteBuffer

/** The library uniffi's layer loads, for direct mapping (JNA keeps one instance per name). */
internal fun nativeLibrary(): String =
    System.getProperty("uniffi.component.acp_engine_uniffi.libraryOverride") ?: "acp_engine_uniffi"

/**
 * A connection's messages, through the engine's text connection: the C ABI's
 * `acp_text_connection_*` (`bindings/c/src/text.rs`), which the native library exports
 * beside uniffi's functions, called with JNA's direct mapping. A uniffi call crosses several
 * times and allocates tracked native memory for each, tens of microseconds per message; these
 * cross once per message, and once per batch of events.
 *
 * It holds its own reference to the native connection, released when it is unreachable:
 * every call keeps it reachable until the native function returned.
 */
internal class TextConnection(native: NativeConnection) {
    /** The `acp_text_connection*` (a pointer is 64 bits on every platform JNA runs us on). */
    private val pointer = native.textConnection().toLong()

    init {
        val pointer = pointer
        CLEANER.register(this) { TextCalls.acp_text_connection_free(pointer) }
    }

    /**
     * Send a notification: null when it is queued for writing, or the ticket of a parked
     * send to wait for. Throws the engine's refusal.
     */
    fun sendNotification(method: String, params: String?): Long? {
        val sent = send(method, params, TextCalls::acp_text_connection_send_notification)
        return if (sent == QUEUED) null else checked(sent)
    }

    /** Send a request; its id (its outcome arrives among the events). Throws the engine's refusal. */
    fun sendRequest(method: String, params: String?): Long =
        checked(send(method, params, TextCalls::acp_text_connection_send_request))

    /** [method] and [params] as UTF-8 bytes with their lengths, to one of the send functions. */
    private inline fun send(
        method: String,
        params: String?,
        call: (Long, ByteArray, Long, ByteArray?, Long) -> Long,
    ): Long {
        val methodBytes = method.encodeToByteArray()
        val paramsBytes = params?.encodeToByteArray()
        val sent = call(pointer, methodBytes, methodBytes.size.toLong(), paramsBytes, paramsBytes?.size?.toLong() ?: 0L)
        Reference.reachabilityFence(this)
        return sent
    }

    /**
     * Answer the peer's request [token] with [body], a result's JSON text or (with
     * [isError]) an error's. Nobody is told of a refusal here: the peer gets -32603.
     */
    fun respond(token: Long, body: String, isError: Boolean) {
        val bytes = body.encodeToByteArray()
        TextCalls.acp_text_connection_respond(pointer, token, bytes, bytes.size.toLong(), if (isError) 1 else 0)
        Reference.reachabilityFence(this)
    }

    /**
     * Wait for the next batch of events (see `EventKinds`): its length, written to [buffer]
     * when it fits (otherwise the same batch comes with the next call), or a negative number
     * once the batch with the close was taken and handled.
     */
    fun nextEvents(buffer: ByteBuffer): Long {
        val length = TextCalls.acp_text_connection_next_events(pointer, buffer, buffer.capacity().toLong())
        Reference.reachabilityFence(this)
        return length
    }

    /** [sent], unless it says the engine refused: then its reason is thrown. */
    private fun checked(sent: Long): Long {
        if (sent != REFUSED) return sent
        val json = TextCalls.acp_last_error_json()?.getString(0, "UTF-8")
            ?: throw IllegalStateException("the engine refused a send without saying why")
        throw RequestError.fromJson(Json.parse(json))
    }

    private companion object {
        /** `ACP_TEXT_QUEUED`. */
        const val QUEUED = -1L
        /** `ACP_TEXT_REFUSED`. */
        const val REFUSED = -2L
        val CLEANER: Cleaner = Cleaner.create()
    }
}

/** The C ABI's text-connection functions, directly mapped. */
@Suppress("FunctionName")
private object TextCalls {
    init {
        Native.register(TextCalls::class.java, nativeLibrary())
    }

    external fun acp_text_connection_send_notification(
        connection: Long,
        method: ByteArray,
        methodLen: Long,
        params: ByteArray?,
        paramsLen: Long,
    ): Long

    external fun acp_text_connection_send_request(
        connection: Long,
        method: ByteArray,
        methodLen: Long,
        params: ByteArray?,
        paramsLen: Long,
    ): Long

    external fun acp_text_connection_respond(connection: Long, token: Long, body: ByteArray, bodyLen: Long, isError: Int): Long

    external fun acp_text_connection_next_events(connection: Long, buffer: ByteBuffer, capacity: Long): Long

    external fun acp_text_connection_free(connection: Long)

    external fun acp_last_error_json(): Pointer?
}
