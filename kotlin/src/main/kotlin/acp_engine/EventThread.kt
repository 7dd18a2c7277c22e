package acp_engine

import java.nio.ByteBuffer

/**
 * A connection's event thread: it waits in the engine for the next batch of events and
 * hands it to [events], until the batch with the close was handled. The batch crosses with
 * one call of a plain C function ([TextConnection.nextEvents], JNA's direct mapping) into a
 * buffer of this thread's: a callback from an engine thread would cross JNA's callback
 * proxy instead, which costs more than the rest of a request's round trip. A daemon: it
 * never keeps the JVM alive.
 */
internal class EventThread(private val text: TextConnection, private val events: Events<*>) : Thread("acp-engine-events") {
    init {
        isDaemon = true
    }

    override fun run() {
        var buffer = ByteBuffer.allocateDirect(USUAL_SIZE)
        while (true) {
            val length = text.nextEvents(buffer)
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
