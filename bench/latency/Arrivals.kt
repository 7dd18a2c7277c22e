// Round-trip latencies as a benchmark client sees them (rpc, perm): from one
// request's arrival to the next's, as bench/floor measures them. Shared by
// the Kotlin clients, ours and the official SDK's (each pom adds this folder).
package bench.latency

import java.util.concurrent.ConcurrentLinkedQueue

/** When each request arrived; empty, and free, when not [timed]. */
class Arrivals(scenario: String) {
    private val timed = scenario == "rpc" || scenario == "perm"
    private val at = ConcurrentLinkedQueue<Long>()

    /** A request arrived. */
    fun arrived() {
        if (timed) at.add(System.nanoTime())
    }

    /** `, "p50_us": …, "p99_us": …` for the result line (empty when not timed). */
    fun jsonFields(): String {
        val times = at.toList()
        if (times.size < 2) return ""
        val trips = times.zipWithNext { a, b -> (b - a) / 1e3 }.sorted()
        return """, "p50_us": ${trips[trips.size / 2]}, "p99_us": ${trips[trips.size * 99 / 100]}"""
    }
}
