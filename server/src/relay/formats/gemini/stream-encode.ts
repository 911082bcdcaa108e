// Hub chunks → a Gemini client's stream: one GenerateContentResponse per event, as SSE (alt=sse) or as the
// elements of one JSON array written progressively (streamGenerateContent's default).
import type { ClientError, EncoderOptions, StreamEncoder } from '../codec.js';
import type { HubChunk, HubFinishReason, HubUsage } from '../../hub/types.js';
import { errorObject } from './errors.js';
import { finishFromHub } from './finish.js';
import { parseArgs } from './response.js';
import { usageFromHub } from './usage.js';
import type { GeminiPart } from './wire.js';

interface PendingCall {
  id?: string;
  name: string;
  arguments: string;
}

export function streamFromHub(opts: EncoderOptions): StreamEncoder {
  return new GeminiStreamEncoder(opts);
}

class GeminiStreamEncoder implements StreamEncoder {
  readonly contentType: string;
  private readonly sse: boolean;
  private events = 0;
  private closed = false;
  /** tool calls being assembled, by hub index: Gemini clients expect whole functionCall parts */
  private calls = new Map<number, PendingCall>();
  /** a signature waiting for the next answer part to ride on */
  private signature: string | undefined;
  private finish: HubFinishReason | null = null;
  private nativeFinish: string | undefined;
  private usage: HubUsage | null = null;

  constructor(private readonly opts: EncoderOptions) {
    this.sse = opts.framing !== 'json-array';
    this.contentType = this.sse ? 'text/event-stream' : 'application/json';
  }

  push(chunk: HubChunk): string {
    if (this.closed) return '';
    if (chunk.usage) this.usage = chunk.usage;
    if (chunk.native_finish_reason) this.nativeFinish = chunk.native_finish_reason;
    const parts: GeminiPart[] = [];
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      const d = choice.delta;
      if (d.reasoning_content) parts.push({ text: d.reasoning_content, thought: true });
      if (d.thinking_signature) this.signature = d.thinking_signature;
      if (d.content) {
        parts.push(...this.flushCalls());
        parts.push(this.signed({ text: d.content }));
      }
      for (const t of d.tool_calls ?? []) {
        if (!this.calls.has(t.index)) parts.push(...this.flushCalls());
        const call = this.calls.get(t.index) ?? { name: '', arguments: '' };
        if (t.id) call.id = t.id;
        if (t.function?.name) call.name += t.function.name;
        if (t.function?.arguments) call.arguments += t.function.arguments;
        this.calls.set(t.index, call);
      }
      if (choice.finish_reason) {
        this.finish = choice.finish_reason;
        parts.push(...this.flushCalls());
      }
    }
    return parts.length > 0 ? this.write(this.response(parts)) : '';
  }

  end(usage: HubUsage | null): string {
    if (this.closed) return '';
    const parts = this.flushCalls();
    if (this.signature !== undefined) parts.push(this.signed({ text: '' }));
    const last = this.response(parts.length > 0 ? parts : [{ text: '' }]);
    const candidate = (last.candidates as Record<string, unknown>[])[0];
    candidate.finishReason = finishFromHub(this.finish ?? 'stop', this.nativeFinish);
    candidate.index = 0;
    const finalUsage = usage ?? this.usage;
    if (finalUsage) last.usageMetadata = usageFromHub(finalUsage);
    return this.write(last) + this.close();
  }

  error(err: ClientError): string {
    if (this.closed) return '';
    return this.write(errorObject(err)) + this.close();
  }

  passEvent(data: string): string {
    if (this.closed) return '';
    const n = this.events++;
    if (this.sse) return `data: ${data}\r\n\r\n`;
    return (n === 0 ? '[' : ',\r\n') + data;
  }

  passEnd(): string {
    return this.closed ? '' : this.close();
  }

  /** Gives the pending signature to this part. */
  private signed(part: GeminiPart): GeminiPart {
    if (this.signature !== undefined) {
      part.thoughtSignature = this.signature;
      this.signature = undefined;
    }
    return part;
  }

  private flushCalls(): GeminiPart[] {
    const parts = [...this.calls.values()].map((c) =>
      this.signed({ functionCall: { ...(c.id ? { id: c.id } : {}), name: c.name, args: parseArgs(c.arguments) } }),
    );
    this.calls.clear();
    return parts;
  }

  private response(parts: GeminiPart[]): Record<string, unknown> {
    return {
      candidates: [{ content: { role: 'model', parts } }],
      modelVersion: this.opts.model,
      responseId: this.opts.id,
    };
  }

  private write(obj: unknown): string {
    const json = JSON.stringify(obj);
    const n = this.events++;
    if (this.sse) return `data: ${json}\r\n\r\n`;
    return (n === 0 ? '[' : ',\r\n') + json;
  }

  private close(): string {
    this.closed = true;
    if (this.sse) return '';
    return this.events === 0 ? '[]' : ']';
  }
}
