package acp_engine

import com.sun.jna.Native
import java.nio.ByteBuffer

/**
 * A connection's event thread: it waits in the engine for the next batch of events and
 * hands it to [events], until the batch with the close was handled. The batch crosses with
 * one call of a plain C function (`acp_uniffi_next_events`, JNA's direct mapping) into a
 * buffer of this thread's: a callback from an engine thread would cross JNA's callback
 * proxy instead, which costs more than the rest of a request's round trip. A daemon: it
 * never keeps the JVM alive.
 */
internal class EventThread(private val directId: Long, private val events: Events<*>) : Thread("acp-engine-events") {
    init {
        isDaemon = true
    }

    override fun run() {
        var buffer = ByteBuffer.allocateDirect(USUAL_SIZE)
        while (true) {
            val length = NextEvents.acp_uniffi_next_events(directId, buffer, buffer.capacity().toLong())
            if (length < 0) return
            if (length > buffer.capacity()) {
                // Too large: the same batch comes again, into a buffer that holds it.
                buffer = ByteBuffer.allocateDirect(length.toInt())
                continue
            }
            val bytes = ByteArray(length.toInt())
            buffer.get(0, bytes)
            if (buffer.capacity() > USUAL_SIZE) buffer = ByteBuffer.allocateDirect(USUAL_SIZE)
            events.handle(bytes.decodeToString())
        }
    }

    private companion object {
        /** Room for a usual batch; a larger one gets a buffer of its own size, once. */
        const val USUAL_SIZE = 64 * 1024
    }
}

/** `acp_uniffi_next_events` (`bindings/uniffi/src/pull.rs`), directly mapped. */
private object NextEvents {
    init {
        Native.register(NextEvents::class.java, nativeLibrary())
    }

    @Suppress("FunctionName")
    external fun acp_uniffi_next_events(connection: Long, buffer: ByteBuffer, capacity: Long): Long
}
