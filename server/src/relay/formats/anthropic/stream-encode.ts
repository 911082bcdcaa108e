// Hub chunks → the SSE stream a Claude client expects, in Claude's order: message_start, ping; for each content block
// content_block_start, its deltas, content_block_stop (thinking, then text, then one block per tool call, indexes
// counting up); message_delta with the stop reason and usage; message_stop.
import type { ClientError, EncoderOptions, StreamEncoder } from '../codec.js';
import type { HubChunk, HubToolCallDelta, HubUsage } from '../../hub/types.js';
import { claudeErrorJson, claudeErrorType } from './errors.js';
import { claudeMessageId, claudeToolUseId } from './ids.js';
import { claudeStopReason } from './stop-reason.js';
import { usageFromHub } from './usage.js';

/** `signed`: the thinking block got its signature, so more reasoning starts a new block */
type OpenBlock = { kind: 'thinking'; signed?: boolean } | { kind: 'text' } | { kind: 'tool'; toolIndex: number };

export function streamFromHub(opts: EncoderOptions): StreamEncoder {
  return new ClaudeStreamEncoder(opts);
}

function sse(type: string, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

class ClaudeStreamEncoder implements StreamEncoder {
  readonly contentType = 'text/event-stream';
  private started = false;
  private finished = false;
  private open: OpenBlock | null = null;
  private nextIndex = 0;
  /** hub tool call indexes that already had their block (a late delta for one of them cannot reopen it) */
  private readonly toolsSeen = new Set<number>();
  private finish: HubChunk['choices'][number]['finish_reason'] = null;
  private native: string | undefined;
  private stopSequence: string | null = null;
  private lastUsage: HubUsage | null = null;

  constructor(private readonly opts: EncoderOptions) {}

  push(chunk: HubChunk): string {
    if (chunk.usage) this.lastUsage = chunk.usage;
    let out = this.start(chunk);
    for (const choice of chunk.choices) {
      const d = choice.delta;
      if (d.reasoning_content)
        out += this.ensure('thinking') + this.delta({ type: 'thinking_delta', thinking: d.reasoning_content });
      if (d.thinking_signature) out += this.signature(d.thinking_signature);
      if (d.redacted_thinking !== undefined) out += this.redacted(d.redacted_thinking);
      if (d.content) out += this.ensure('text') + this.delta({ type: 'text_delta', text: d.content });
      for (const call of d.tool_calls ?? []) out += this.toolCall(call);
      if (choice.finish_reason) this.finish = choice.finish_reason;
    }
    if (chunk.native_finish_reason) this.native = chunk.native_finish_reason;
    if (chunk.stop_sequence !== undefined) this.stopSequence = chunk.stop_sequence;
    return out;
  }

  end(usage: HubUsage | null): string {
    if (this.finished) return '';
    let out = this.start(null) + this.close();
    const u = usageFromHub(usage ?? this.lastUsage);
    const stop_reason = claudeStopReason(this.finish, this.native, this.stopSequence);
    out += sse('message_delta', {
      delta: { stop_reason, stop_sequence: this.stopSequence },
      usage: {
        output_tokens: u.output_tokens,
        input_tokens: u.input_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
      },
    });
    this.finished = true;
    return out + sse('message_stop', {});
  }

  passEvent(data: string, event?: string): string {
    if (this.finished) return '';
    let name = event;
    if (!name) {
      try {
        name = String(JSON.parse(data)?.type ?? '');
      } catch {
        name = '';
      }
    }
    if (name === 'message_stop') this.finished = true;
    return name ? `event: ${name}\ndata: ${data}\n\n` : `data: ${data}\n\n`;
  }

  passEnd(): string {
    return '';
  }

  error(err: ClientError): string {
    this.finished = true;
    return `event: error\ndata: ${claudeErrorJson(claudeErrorType(err.status), err.message)}\n\n`;
  }

  /**
   * message_start, once, before anything else, with the input side of the usage when it is already known; then a
   * ping, as Anthropic sends one right after it (clients that wait for it, or count events, see the same sequence)
   */
  private start(chunk: HubChunk | null): string {
    if (this.started) return '';
    this.started = true;
    const u = usageFromHub(chunk?.usage ?? this.lastUsage);
    const message = {
      id: claudeMessageId(chunk?.id, this.opts.id),
      type: 'message',
      role: 'assistant',
      model: this.opts.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: u.input_tokens,
        cache_creation_input_tokens: u.cache_creation_input_tokens,
        cache_read_input_tokens: u.cache_read_input_tokens,
        output_tokens: 0,
      },
    };
    return sse('message_start', { message }) + sse('ping', {});
  }

  /** Makes sure a block of this kind is open, closing a block of another kind first. */
  private ensure(kind: 'thinking' | 'text'): string {
    if (this.open?.kind === kind && !(this.open.kind === 'thinking' && this.open.signed)) return '';
    const out = this.close();
    const block = kind === 'thinking' ? { type: 'thinking', thinking: '', signature: '' } : { type: 'text', text: '' };
    this.open = { kind };
    return out + sse('content_block_start', { index: this.nextIndex, content_block: block });
  }

  private signature(signature: string): string {
    const out = this.ensure('thinking') + this.delta({ type: 'signature_delta', signature });
    if (this.open?.kind === 'thinking') this.open.signed = true;
    return out;
  }

  private redacted(data: string): string {
    const out =
      this.close() +
      sse('content_block_start', { index: this.nextIndex, content_block: { type: 'redacted_thinking', data } });
    return out + sse('content_block_stop', { index: this.nextIndex++ });
  }

  private toolCall(call: HubToolCallDelta): string {
    let out = '';
    const isOpen = this.open?.kind === 'tool' && this.open.toolIndex === call.index;
    if (!isOpen) {
      // OpenAI-style streams send each call's deltas together, so a delta for an already closed call is not expected;
      // Claude cannot reopen a block, so such a fragment is dropped
      if (this.toolsSeen.has(call.index)) return '';
      this.toolsSeen.add(call.index);
      out += this.close();
      const block = {
        type: 'tool_use',
        id: call.id || claudeToolUseId(this.opts.id, call.index),
        name: call.function?.name ?? '',
        input: {},
      };
      this.open = { kind: 'tool', toolIndex: call.index };
      out += sse('content_block_start', { index: this.nextIndex, content_block: block });
    }
    const args = call.function?.arguments;
    if (args) out += this.delta({ type: 'input_json_delta', partial_json: args });
    return out;
  }

  private delta(delta: Record<string, unknown>): string {
    return sse('content_block_delta', { index: this.nextIndex, delta });
  }

  private close(): string {
    if (!this.open) return '';
    this.open = null;
    return sse('content_block_stop', { index: this.nextIndex++ });
  }
}
