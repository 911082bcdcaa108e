// Hub chunks → the Responses API's typed SSE stream. Each output item is opened, streamed and closed in turn
// (reasoning, then the message, then each function call, in the order the upstream produced them), each event
// `event: <type>` + `data: <json>` with a sequence_number counting from 0; the stream ends with response.completed
// (or response.incomplete) carrying the whole response, and no `data: [DONE]`.
//
// Reasoning is written as a reasoning item's summary (response.reasoning_summary_part.* and
// response.reasoning_summary_text.*), the form OpenAI's own reasoning models stream and that clients display;
// the raw reasoning_text events are for open-weight models and fewer clients read them.
// A thinking signature (or a redacted block) closes its reasoning item with the signature as encrypted_content
// (reasoning.ts), so each signed block is one item a client can send back.
import type { HubChunk, HubFinishReason, HubUsage } from '../../hub/types.js';
import type { ClientError, StreamEncoder } from '../codec.js';
import {
  baseId,
  functionCallItem,
  itemId,
  messageItem,
  outputTextPart,
  reasoningItem,
  responseObject,
  statusFor,
  type ResponsesEncoderOptions,
} from './shape.js';
import { encryptedFromBlock } from './reasoning.js';

type OpenItem =
  | { kind: 'reasoning'; index: number; id: string; text: string; summaryOpen: boolean; encrypted?: string }
  | { kind: 'message'; index: number; id: string; text: string }
  | { kind: 'function_call'; index: number; id: string; hubIndex: number; callId: string; name: string; args: string };

export class ResponsesStreamEncoder implements StreamEncoder {
  readonly contentType = 'text/event-stream';
  private seq = 0;
  private started = false;
  private finished = false;
  private readonly base: string;
  private created = Math.floor(Date.now() / 1000);
  private current: OpenItem | null = null;
  /** the closed items, in output order, as response.completed lists them */
  private readonly done: Record<string, unknown>[] = [];
  private finish: HubFinishReason | null = null;
  private usage: HubUsage | null = null;

  constructor(private readonly o: ResponsesEncoderOptions) {
    this.base = baseId(o.id);
  }

  push(chunk: HubChunk): string {
    if (this.finished) return '';
    let out = this.start(chunk.created);
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) return out;
    const d = choice.delta;
    if (d.reasoning_content) out += this.reasoningDelta(d.reasoning_content);
    if (d.thinking_signature)
      out += this.closeReasoning(encryptedFromBlock({ thinking: '', signature: d.thinking_signature }));
    if (d.redacted_thinking !== undefined)
      out += this.closeReasoning(encryptedFromBlock({ thinking: '', redacted: d.redacted_thinking }));
    if (d.content) out += this.textDelta(d.content);
    for (const t of d.tool_calls ?? []) out += this.toolCallDelta(t);
    if (choice.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  end(usage: HubUsage | null): string {
    if (this.finished) return '';
    let out = this.start();
    out += this.closeCurrent();
    // an answer that produced nothing still shows its (empty) message, as the whole answer does
    if (this.done.length === 0) out += this.openMessage() + this.closeCurrent();
    this.finished = true;
    const { status, incomplete_details } = statusFor(this.finish ?? 'stop');
    const response = this.response(status, { incomplete_details, usage: usage ?? this.usage });
    const type = status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    return out + this.event(type, { response });
  }

  error(err: ClientError): string {
    if (this.finished) return '';
    this.finished = true;
    const code = err.code == null ? null : String(err.code);
    let out = this.event('error', { code, message: err.message, param: err.param ?? null });
    // response.failed only makes sense for a response the client was told about
    if (this.started)
      out += this.event('response.failed', {
        response: this.response('failed', { error: { code: code ?? 'server_error', message: err.message } }),
      });
    return out;
  }

  private start(created?: number): string {
    if (this.started) return '';
    this.started = true;
    if (created) this.created = created;
    const response = this.response('in_progress', {});
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private response(
    status: 'in_progress' | 'completed' | 'incomplete' | 'failed',
    extra: {
      incomplete_details?: { reason: string } | null;
      error?: { code: string; message: string };
      usage?: HubUsage | null;
    },
  ): Record<string, unknown> {
    return responseObject(this.o, {
      status,
      incomplete_details: extra.incomplete_details ?? null,
      error: extra.error ?? null,
      output: status === 'in_progress' ? [] : [...this.done],
      usage: extra.usage ?? null,
      created: this.created,
    });
  }

  private openReasoning(): string {
    const out = this.closeCurrent();
    const index = this.done.length;
    const id = itemId('rs', this.base, index);
    this.current = { kind: 'reasoning', index, id, text: '', summaryOpen: false };
    return out + this.event('response.output_item.added', { output_index: index, item: reasoningItem(id, '') });
  }

  private reasoningDelta(delta: string): string {
    let out = '';
    if (this.current?.kind !== 'reasoning') out += this.openReasoning();
    const item = this.current as Extract<OpenItem, { kind: 'reasoning' }>;
    if (!item.summaryOpen) {
      item.summaryOpen = true;
      out += this.event('response.reasoning_summary_part.added', {
        item_id: item.id,
        output_index: item.index,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
    }
    item.text += delta;
    return (
      out +
      this.event('response.reasoning_summary_text.delta', {
        item_id: item.id,
        output_index: item.index,
        summary_index: 0,
        delta,
      })
    );
  }

  /**
   * A signature ends its thinking block: the open reasoning item closes carrying it, and the next reasoning opens a
   * new item. A signature or redacted block with no reasoning open (Gemini signs without thought text) is an item
   * of its own, without summary.
   */
  private closeReasoning(encrypted: string | undefined): string {
    if (encrypted === undefined) return '';
    let out = '';
    if (this.current?.kind !== 'reasoning') out += this.openReasoning();
    (this.current as Extract<OpenItem, { kind: 'reasoning' }>).encrypted = encrypted;
    return out + this.closeCurrent();
  }

  private openMessage(): string {
    const index = this.done.length;
    const item = { kind: 'message' as const, index, id: itemId('msg', this.base, index), text: '' };
    this.current = item;
    return (
      this.event('response.output_item.added', { output_index: index, item: messageItem(item.id, '', 'in_progress') }) +
      this.event('response.content_part.added', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: outputTextPart(''),
      })
    );
  }

  private textDelta(delta: string): string {
    let out = '';
    if (this.current?.kind !== 'message') out += this.closeCurrent() + this.openMessage();
    const item = this.current as Extract<OpenItem, { kind: 'message' }>;
    item.text += delta;
    return (
      out +
      this.event('response.output_text.delta', {
        item_id: item.id,
        output_index: item.index,
        content_index: 0,
        delta,
        logprobs: [],
      })
    );
  }

  private toolCallDelta(t: NonNullable<HubChunk['choices'][number]['delta']['tool_calls']>[number]): string {
    let out = '';
    const cur = this.current;
    // upstreams stream one call after another; a new index (or a new id) starts the next function_call item
    if (cur?.kind !== 'function_call' || cur.hubIndex !== t.index || (t.id && cur.callId && t.id !== cur.callId)) {
      out += this.closeCurrent();
      const index = this.done.length;
      const item: OpenItem = {
        kind: 'function_call',
        index,
        id: itemId('fc', this.base, index),
        hubIndex: t.index,
        callId: t.id ?? `call_${this.base}_${index}`,
        name: t.function?.name ?? '',
        args: '',
      };
      this.current = item;
      out += this.event('response.output_item.added', {
        output_index: index,
        item: functionCallItem(item.id, { call_id: item.callId, name: item.name, arguments: '' }, 'in_progress'),
      });
    } else if (t.function?.name && !cur.name) cur.name = t.function.name;
    const item = this.current as Extract<OpenItem, { kind: 'function_call' }>;
    const delta = t.function?.arguments;
    if (!delta) return out;
    item.args += delta;
    return (
      out + this.event('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta })
    );
  }

  private closeCurrent(): string {
    const item = this.current;
    if (!item) return '';
    this.current = null;
    const at = { item_id: item.id, output_index: item.index };
    let out = '';
    let whole: Record<string, unknown>;
    if (item.kind === 'reasoning') {
      if (item.summaryOpen) {
        const part = { type: 'summary_text', text: item.text };
        out += this.event('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text });
        out += this.event('response.reasoning_summary_part.done', { ...at, summary_index: 0, part });
      }
      whole = reasoningItem(item.id, item.text, item.encrypted);
    } else if (item.kind === 'message') {
      out += this.event('response.output_text.done', { ...at, content_index: 0, text: item.text, logprobs: [] });
      out += this.event('response.content_part.done', { ...at, content_index: 0, part: outputTextPart(item.text) });
      whole = messageItem(item.id, item.text, 'completed');
    } else {
      out += this.event('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.args });
      whole = functionCallItem(item.id, { call_id: item.callId, name: item.name, arguments: item.args }, 'completed');
    }
    this.done.push(whole);
    return out + this.event('response.output_item.done', { output_index: item.index, item: whole });
  }

  private event(type: string, payload: Record<string, unknown>): string {
    const data = { type, ...payload, sequence_number: this.seq++ };
    return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  }
}
