package acp_engine

import acp_engine.ffi.uniffiRustFutureContinuationCallbackImpl
import com.sun.jna.CallbackThreadInitializer
import com.sun.jna.Native

/**
 * The engine's threads call into the JVM (to resume a future). By
 * default JNA attaches such a native thread for each call and detaches it afterwards,
 * which costs more than the call; these callbacks keep the engine's few threads attached,
 * as daemon threads (they never keep the JVM alive).
 */
internal object NativeThreads {
    private val initializer = CallbackThreadInitializer(true, false, "acp-engine")

    init {
        Native.setCallbackThreadInitializer(uniffiRustFutureContinuationCallbackImpl, initializer)
    }

    /** Apply the settings (once, before the first connection). */
    fun setUp() = Unit
}
