// Incremental Server-Sent Events parser for the translated lane (the OpenAI native lane scans bytes instead:
// relay/stream/sse-scan.ts). Bytes arrive split anywhere, even inside a UTF-8 character or a CRLF; complete events come out.
import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  /** the `event:` field, when present */
  event?: string;
  /** the `data:` lines joined with "\n" */
  data: string;
}

export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private buf = '';

  /** Feeds bytes; returns the events completed by them. */
  push(chunk: Buffer | string): SseEvent[] {
    this.buf += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n\r\n|\n\n|\r\r/.exec(this.buf);
      if (!m) break;
      const block = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      const ev = parseBlock(block);
      if (ev) out.push(ev);
    }
    return out;
  }

  /** The end of the stream: a last event not followed by a blank line still counts. */
  end(): SseEvent[] {
    const rest = this.buf + this.decoder.end();
    this.buf = '';
    const ev = rest.trim() ? parseBlock(rest) : null;
    return ev ? [ev] : [];
  }
}

function parseBlock(block: string): SseEvent | null {
  let event: string | undefined;
  let data: string | null = null;
  for (const line of block.split(/\r\n|\n|\r/)) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data = data === null ? value : data + '\n' + value;
    else if (field === 'event') event = value;
  }
  if (data === null) return null;
  return event === undefined ? { data } : { event, data };
}
