package acp_engine

/**
 * A JSON object as this package hands it over: a map from names to JSON values.
 *
 * JSON values are Kotlin values: `null`, [Boolean], [Number] (integers that fit
 * read as [Long], others as [Double]), [String], [List] of JSON values, and
 * [Map] of [String] to JSON values (a [JsonObject]).
 */
typealias JsonObject = Map<String, Any?>

/** Reads and writes JSON text as Kotlin values (see [JsonObject]). */
object Json {
    /** Parse [text] as one JSON value; throws [IllegalArgumentException] if it is not JSON. */
    fun parse(text: String): Any? {
        val reader = Reader(text)
        reader.space()
        val value = reader.value()
        reader.space()
        require(reader.at == text.length) { "trailing characters at ${reader.at}" }
        return value
    }

    /** Parse [text] as a JSON object (`null` and absent text read as an empty object). */
    fun parseObject(text: String?): JsonObject {
        if (text == null) return emptyMap()
        @Suppress("UNCHECKED_CAST")
        return when (val value = parse(text)) {
            null -> emptyMap()
            is Map<*, *> -> value as JsonObject
            else -> throw IllegalArgumentException("not a JSON object: ${text.take(40)}")
        }
    }

    /** The JSON text of [value] (see [JsonObject] for what a JSON value is). */
    fun stringify(value: Any?): String = StringBuilder().also { write(it, value) }.toString()

    private fun write(out: StringBuilder, value: Any?) {
        when (value) {
            null -> out.append("null")
            is Boolean -> out.append(value)
            is Double -> if (value.isFinite()) out.append(value) else out.append("null")
            is Float -> write(out, value.toDouble())
            is Number -> out.append(value.toLong())
            is String -> string(out, value)
            is Map<*, *> -> {
                out.append('{')
                var first = true
                for ((key, item) in value) {
                    if (!first) out.append(',')
                    first = false
                    string(out, key.toString())
                    out.append(':')
                    write(out, item)
                }
                out.append('}')
            }
            is Iterable<*> -> {
                out.append('[')
                var first = true
                for (item in value) {
                    if (!first) out.append(',')
                    first = false
                    write(out, item)
                }
                out.append(']')
            }
            is Array<*> -> write(out, value.asList())
            else -> throw IllegalArgumentException("not a JSON value: ${value::class.qualifiedName}")
        }
    }

    private fun string(out: StringBuilder, text: String) {
        out.append('"')
        // Runs that need no escape are copied whole.
        var run = 0
        for (i in text.indices) {
            val c = text[i]
            if (c >= ' ' && c != '"' && c != '\\') continue
            out.append(text, run, i)
            run = i + 1
            when (c) {
                '"' -> out.append("\\\"")
                '\\' -> out.append("\\\\")
                '\n' -> out.append("\\n")
                '\r' -> out.append("\\r")
                '\t' -> out.append("\\t")
                else -> out.append("\\u").append(String.format("%04x", c.code))
            }
        }
        out.append(text, run, text.length).append('"')
    }

    private class Reader(val text: String) {
        var at = 0

        fun space() {
            while (at < text.length && text[at].let { it == ' ' || it == '\n' || it == '\r' || it == '\t' }) at++
        }

        fun fail(what: String): Nothing = throw IllegalArgumentException("$what at $at")

        fun value(): Any? {
            if (at >= text.length) fail("unexpected end")
            return when (val c = text[at]) {
                '{' -> obj()
                '[' -> array()
                '"' -> string()
                't' -> literal("true", true)
                'f' -> literal("false", false)
                'n' -> literal("null", null)
                else -> if (c == '-' || c in '0'..'9') number() else fail("unexpected '$c'")
            }
        }

        fun literal(word: String, value: Any?): Any? {
            if (!text.startsWith(word, at)) fail("expected $word")
            at += word.length
            return value
        }

        fun obj(): JsonObject {
            val map = LinkedHashMap<String, Any?>()
            at++
            space()
            if (text.getOrNull(at) == '}') { at++; return map }
            while (true) {
                space()
                if (text.getOrNull(at) != '"') fail("expected a name")
                val key = string()
                space()
                if (text.getOrNull(at) != ':') fail("expected ':'")
                at++
                space()
                map[key] = value()
                space()
                when (text.getOrNull(at)) {
                    ',' -> at++
                    '}' -> { at++; return map }
                    else -> fail("expected ',' or '}'")
                }
            }
        }

        fun array(): List<Any?> {
            val list = ArrayList<Any?>()
            at++
            space()
            if (text.getOrNull(at) == ']') { at++; return list }
            while (true) {
                space()
                list.add(value())
                space()
                when (text.getOrNull(at)) {
                    ',' -> at++
                    ']' -> { at++; return list }
                    else -> fail("expected ',' or ']'")
                }
            }
        }

        fun string(): String {
            at++
            // A string without escapes (the usual case) is one substring.
            val start = at
            while (at < text.length && text[at] != '"' && text[at] != '\\') at++
            if (text.getOrNull(at) == '"') return text.substring(start, at++)
            val out = StringBuilder().append(text, start, at)
            while (true) {
                if (at >= text.length) fail("unterminated string")
                val c = text[at++]
                when (c) {
                    '"' -> return out.toString()
                    '\\' -> {
                        if (at >= text.length) fail("unterminated escape")
                        when (val e = text[at++]) {
                            '"', '\\', '/' -> out.append(e)
                            'b' -> out.append('\b')
                            'f' -> out.append('\u000c')
                            'n' -> out.append('\n')
                            'r' -> out.append('\r')
                            't' -> out.append('\t')
                            'u' -> {
                                if (at + 4 > text.length) fail("bad \\u escape")
                                out.append(text.substring(at, at + 4).toInt(16).toChar())
                                at += 4
                            }
                            else -> fail("bad escape")
                        }
                    }
                    else -> {
                        // Copy the run up to the next quote or escape whole.
                        val run = at - 1
                        while (at < text.length && text[at] != '"' && text[at] != '\\') at++
                        out.append(text, run, at)
                    }
                }
            }
        }

        fun number(): Number {
            val start = at
            if (text[at] == '-') at++
            while (at < text.length && text[at] in "0123456789.eE+-") at++
            val token = text.substring(start, at)
            if (token.none { it == '.' || it == 'e' || it == 'E' }) token.toLongOrNull()?.let { return it }
            return token.toDoubleOrNull() ?: fail("bad number")
        }
    }
}
