package acp_engine

import acp_engine.ffi.AcpException
import acp_engine.ffi.takeSendRefusal
import com.sun.jna.Native

/** The library uniffi's layer loads, for direct mapping (JNA keeps one instance per name). */
internal fun nativeLibrary(): String =
    System.getProperty("uniffi.component.acp_engine_uniffi.libraryOverride") ?: "acp_engine_uniffi"

/**
 * Notifications, requests and answers go to the engine through plain C functions, called
 * with JNA's direct mapping: a uniffi call crosses several times and allocates tracked
 * native memory for each, which costs tens of microseconds per message (see
 * `bindings/uniffi/src/direct.rs`).
 */
internal object DirectSend {
    private const val SENT = -1L
    private const val REFUSED = -2L

    init {
        Native.register(DirectSend::class.java, nativeLibrary())
    }

    @Suppress("FunctionName")
    private external fun acp_uniffi_send_notification(
        connection: Long,
        method: ByteArray,
        methodLen: Long,
        params: ByteArray?,
        paramsLen: Long,
    ): Long

    @Suppress("FunctionName")
    private external fun acp_uniffi_send_request(
        connection: Long,
        method: ByteArray,
        methodLen: Long,
        params: ByteArray?,
        paramsLen: Long,
    ): Long

    @Suppress("FunctionName")
    private external fun acp_uniffi_respond(connection: Long, token: Long, body: ByteArray, bodyLen: Long, isError: Int): Long

    /**
     * Send a notification on the connection numbered [connection]: null when it is queued
     * for writing, or the ticket of a parked send to wait for. Throws the engine's refusal.
     */
    fun sendNotification(connection: Long, method: String, params: String?): Long? {
        val methodBytes = method.encodeToByteArray()
        val paramsBytes = params?.encodeToByteArray()
        val sent = acp_uniffi_send_notification(
            connection, methodBytes, methodBytes.size.toLong(), paramsBytes, paramsBytes?.size?.toLong() ?: 0L,
        )
        return if (sent == SENT) null else checked(sent)
    }

    /** Send a request; its id (its outcome arrives among the events). Throws the engine's refusal. */
    fun sendRequest(connection: Long, method: String, params: String?): Long {
        val methodBytes = method.encodeToByteArray()
        val paramsBytes = params?.encodeToByteArray()
        return checked(
            acp_uniffi_send_request(
                connection, methodBytes, methodBytes.size.toLong(), paramsBytes, paramsBytes?.size?.toLong() ?: 0L,
            ),
        )
    }

    /** Answer the peer's request [token] with [body], a result's JSON text or (with [isError]) an error's. */
    fun respond(connection: Long, token: Long, body: String, isError: Boolean) {
        val bytes = body.encodeToByteArray()
        acp_uniffi_respond(connection, token, bytes, bytes.size.toLong(), if (isError) 1 else 0)
    }

    /** [sent], unless it says the engine refused: then its reason is thrown. */
    private fun checked(sent: Long): Long {
        if (sent != REFUSED) return sent
        try {
            takeSendRefusal()
        } catch (error: AcpException) {
            throw RequestError.from(error)
        }
        throw IllegalStateException("the engine refused a send without saying why")
    }
}
