// Incremental server-sent-events reader for the playground stream (spec §7 Chat): chunks may split lines anywhere;
// each event's data lines are joined; `data: [DONE]` ends the stream.

export type SseItem = { kind: 'data'; data: string } | { kind: 'done' };

export class SseParser {
  private buffer = '';
  private dataLines: string[] = [];
  private finished = false;

  /** Feeds a decoded chunk; returns the complete events it finished. */
  push(chunk: string): SseItem[] {
    if (this.finished) return [];
    this.buffer += chunk;
    const out: SseItem[] = [];
    let nl: number;
    while (!this.finished && (nl = this.buffer.search(/\r\n|\r|\n/)) !== -1) {
      const line = this.buffer.slice(0, nl);
      const sepLen = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      // A lone trailing \r may be the first half of \r\n: wait for more input.
      if (this.buffer[nl] === '\r' && sepLen === 1 && nl === this.buffer.length - 1) break;
      this.buffer = this.buffer.slice(nl + sepLen);
      this.line(line, out);
    }
    return out;
  }

  /** Flushes an unterminated last event when the body ends. */
  end(): SseItem[] {
    const out: SseItem[] = [];
    if (this.finished) return out;
    if (this.buffer !== '') {
      this.line(this.buffer, out);
      this.buffer = '';
    }
    if (!this.finished) this.dispatch(out);
    return out;
  }

  get done(): boolean {
    return this.finished;
  }

  private line(line: string, out: SseItem[]): void {
    if (line === '') {
      this.dispatch(out);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      // Some upstreams omit the blank separator line; a [DONE] line ends the stream regardless.
      if (value.trim() === '[DONE]') {
        this.dispatch(out);
        this.finished = true;
        out.push({ kind: 'done' });
        return;
      }
      this.dataLines.push(value);
    }
  }

  private dispatch(out: SseItem[]): void {
    if (this.dataLines.length === 0) return;
    out.push({ kind: 'data', data: this.dataLines.join('\n') });
    this.dataLines = [];
  }
}

export interface ChunkResult {
  content: string;
  reasoning: string;
  error?: string;
}

/** Extracts choices[0].delta.content (and reasoning_content) from one event, or an error message. */
export function readChunk(data: string): ChunkResult {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return { content: '', reasoning: '', error: data };
  }
  const o = v as {
    error?: { message?: string } | string;
    choices?: { delta?: { content?: string | null; reasoning_content?: string | null } }[];
  };
  if (o && o.error) {
    const msg = typeof o.error === 'string' ? o.error : (o.error.message ?? JSON.stringify(o.error));
    return { content: '', reasoning: '', error: msg };
  }
  const delta = o?.choices?.[0]?.delta;
  return { content: delta?.content ?? '', reasoning: delta?.reasoning_content ?? '' };
}

export type MessageStatus = 'loading' | 'incomplete' | 'complete' | 'error';

export interface ChatMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  reasoning?: string;
  status?: MessageStatus;
}

/** Request body of POST /pg/chat/completions (spec §7 Chat). max_tokens 0 means "not set" and is omitted. */
export function buildChatBody(opts: {
  system: string;
  history: ChatMessage[];
  model: string;
  group: string;
  temperature: number;
  maxTokens: number;
}): Record<string, unknown> {
  const messages: { role: string; content: string }[] = [];
  if (opts.system.trim()) messages.push({ role: 'system', content: opts.system });
  for (const m of opts.history) {
    if (m.role === 'system' || m.status === 'error' || m.status === 'loading') continue;
    if (m.role === 'assistant' && m.content === '') continue;
    messages.push({ role: m.role, content: m.content });
  }
  const body: Record<string, unknown> = {
    messages,
    stream: true,
    model: opts.model,
    group: opts.group,
    temperature: opts.temperature,
  };
  const max = Math.trunc(opts.maxTokens);
  if (max > 0) body.max_tokens = max;
  return body;
}

/**
 * Streams one reply: calls onDelta for every content piece; resolves when [DONE] or the body ends.
 * Throws on HTTP errors or an error event (the message is the upstream's error text).
 */
export async function streamChat(res: Response, onDelta: (content: string, reasoning: string) => void): Promise<void> {
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    let msg = text || `HTTP ${res.status}`;
    try {
      const j = JSON.parse(text) as { error?: { message?: string }; message?: string };
      msg = j.error?.message ?? j.message ?? msg;
    } catch {
      /* not JSON */
    }
    throw new Error(msg);
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const handle = (items: SseItem[]) => {
    for (const item of items) {
      if (item.kind === 'done') return true;
      const r = readChunk(item.data);
      if (r.error !== undefined) throw new Error(r.error);
      if (r.content || r.reasoning) onDelta(r.content, r.reasoning);
    }
    return false;
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) {
      handle(parser.push(decoder.decode()));
      handle(parser.end());
      return;
    }
    if (handle(parser.push(decoder.decode(value, { stream: true })))) {
      await reader.cancel().catch(() => undefined);
      return;
    }
  }
}
