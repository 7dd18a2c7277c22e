package acp_engine

import acp_engine.ffi.takeSendRefusal
import com.sun.jna.Native

/**
 * Notifications go to the engine through one plain C function, called with JNA's direct
 * mapping: a uniffi call crosses several times and allocates tracked native memory for
 * each, which costs tens of microseconds per notification (see `bindings/uniffi/src/direct.rs`).
 */
internal object DirectSend {
    private const val SENT = -1L
    private const val REFUSED = -2L

    init {
        // The library uniffi's layer loads (JNA keeps one instance per name).
        val name = System.getProperty("uniffi.component.acp_engine_uniffi.libraryOverride") ?: "acp_engine_uniffi"
        Native.register(DirectSend::class.java, name)
    }

    @Suppress("FunctionName")
    private external fun acp_uniffi_send_notification(
        connection: Long,
        method: ByteArray,
        methodLen: Long,
        params: ByteArray?,
        paramsLen: Long,
    ): Long

    /**
     * Send a notification on the connection numbered [connection]: null when it is queued
     * for writing, or the ticket of a parked send to wait for. Throws the engine's refusal.
     */
    fun sendNotification(connection: Long, method: String, params: String?): Long? {
        val methodBytes = method.encodeToByteArray()
        val paramsBytes = params?.encodeToByteArray()
        return when (val sent = acp_uniffi_send_notification(
            connection, methodBytes, methodBytes.size.toLong(), paramsBytes, paramsBytes?.size?.toLong() ?: 0L,
        )) {
            SENT -> null
            REFUSED -> {
                takeSendRefusal()
                throw IllegalStateException("the engine refused a notification without saying why")
            }
            else -> sent
        }
    }
}
