// Shared by the TS interop peers: an optional trace of every JSON-RPC
// message on stderr (ACP_INTEROP_TRACE=1), wrapped around an ACP stream.

/** Wrap `stream` ({readable, writable} of messages) so each message is logged with `log`. */
export function traced(stream, log) {
  if (!process.env.ACP_INTEROP_TRACE) return stream;
  const show = (msg) => {
    const text = JSON.stringify(msg);
    return text.length > 600 ? `${text.slice(0, 600)}...` : text;
  };
  const tap = (arrow) =>
    new TransformStream({
      transform(msg, controller) {
        log(arrow, show(msg));
        controller.enqueue(msg);
      },
    });
  const inbound = tap("<-");
  const outbound = tap("->");
  void outbound.readable.pipeTo(stream.writable).catch(() => {});
  return { readable: stream.readable.pipeThrough(inbound), writable: outbound.writable };
}
