// One socket write per head and body. cork() + write() + write() + uncork() goes through the Writable's buffered list
// and writev (an entry per chunk, the chunk array, a WriteWrap, latin1 strings encoded in C++); copying small parts
// into one Buffer from Node's pool and writing that costs less CPU per write (`node bench/socket-micro.mjs`:
// docs/perf/lean-http.md), and a relayed request makes two of them (upstream request, response) or more (a stream's
// events).
import type { Socket } from 'node:net';

/** Above this many bytes the parts are written one after the other (corked) instead of being copied together. */
const COPY_MAX = 16 * 1024;

/**
 * Writes `parts` in order as one write: strings are latin1 (a head, chunk framing: Node writes heads as latin1 too),
 * buffers as they are. `cb` runs once the last byte is handed to the OS, or with the socket's error. Returns
 * socket.write()'s answer (false: wait for `drain`).
 */
export function writeJoined(
  socket: Socket,
  parts: ReadonlyArray<string | Buffer>,
  cb?: (err?: Error | null) => void,
): boolean {
  let n = 0;
  for (const p of parts) n += p.length;
  if (n > COPY_MAX) {
    socket.cork();
    let ok = true;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      const last = i === parts.length - 1 ? cb : undefined;
      ok = typeof p === 'string' ? socket.write(p, 'latin1', last) : socket.write(p, last);
    }
    socket.uncork();
    return ok;
  }
  const buf = Buffer.allocUnsafe(n);
  let at = 0;
  for (const p of parts) at += typeof p === 'string' ? buf.write(p, at, 'latin1') : p.copy(buf, at);
  return socket.write(buf, cb);
}
