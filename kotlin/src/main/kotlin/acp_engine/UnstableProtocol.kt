package acp_engine

/**
 * Marks the methods of the unstable protocol (`session/fork`, `providers/list`, ...): they
 * may change or go in any release of the protocol. The engine knows them only on a connection
 * made with `ConnectionOptions(unstable = true)`; elsewhere they are unknown methods (-32601).
 * Opt in with `@OptIn(UnstableProtocol::class)` to implement or call them.
 */
@RequiresOptIn(message = "A method of the unstable ACP protocol: it may change or go in any release.")
@Retention(AnnotationRetention.BINARY)
@Target(AnnotationTarget.FUNCTION)
annotation class UnstableProtocol
