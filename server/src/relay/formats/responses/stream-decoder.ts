// A Responses-speaking upstream's SSE stream → hub chunks. Only the events that carry content matter: text and
// refusal deltas become content, reasoning summary/text deltas become reasoning_content, function_call items become
// tool calls; the terminal response.completed / response.incomplete gives the finish reason and the usage.
import type { HubChunk, HubDelta, HubFinishReason, HubUsage } from '../../hub/types.js';
import type { StreamDecoder } from '../codec.js';
import { openaiUsageToHub } from '../openai/index.js';
import { finishFromResponse } from './response.js';

export class ResponsesStreamDecoder implements StreamDecoder {
  private last: HubUsage | null = null;
  private created = Math.floor(Date.now() / 1000);
  /** function_call items by their item id → the hub tool-call index and how many argument bytes were streamed */
  private readonly calls = new Map<string, { index: number; streamed: boolean }>();
  private reasoningParts = 0;

  constructor(private readonly opts: { id: string; model: string }) {}

  push(data: string, event?: string): HubChunk[] {
    const j = JSON.parse(data);
    const type: string = j?.type ?? event ?? '';
    switch (type) {
      case 'response.created':
        if (Number(j.response?.created_at)) this.created = Number(j.response.created_at);
        return [this.chunk({ role: 'assistant', content: '' })];
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return j.delta ? [this.chunk({ content: String(j.delta) })] : [];
      case 'response.reasoning_summary_part.added':
      case 'response.reasoning_text.delta':
      case 'response.reasoning_summary_text.delta':
        return this.reasoning(type, j);
      case 'response.output_item.added':
        return j.item?.type === 'function_call' ? [this.openCall(j.item)] : [];
      case 'response.function_call_arguments.delta': {
        const call = this.calls.get(j.item_id);
        if (!call || !j.delta) return [];
        call.streamed = true;
        return [this.chunk({ tool_calls: [{ index: call.index, function: { arguments: String(j.delta) } }] })];
      }
      case 'response.output_item.done':
        return j.item?.type === 'function_call' ? this.closeCall(j.item) : [];
      case 'response.completed':
      case 'response.incomplete':
        return [this.finish(j.response)];
      case 'response.failed':
        throw new Error(String(j.response?.error?.message ?? 'upstream response failed'));
      case 'error':
        throw new Error(String(j.message ?? j.error?.message ?? 'upstream stream error'));
      default:
        return [];
    }
  }

  end(): HubChunk[] {
    return [];
  }

  usage(): HubUsage | null {
    return this.last;
  }

  private reasoning(type: string, j: any): HubChunk[] {
    // summary parts are separate paragraphs: a blank line between them keeps them apart in reasoning_content
    if (type === 'response.reasoning_summary_part.added') {
      return this.reasoningParts++ > 0 ? [this.chunk({ reasoning_content: '\n\n' })] : [];
    }
    return j.delta ? [this.chunk({ reasoning_content: String(j.delta) })] : [];
  }

  private openCall(item: any): HubChunk {
    const index = this.calls.size;
    this.calls.set(String(item.id ?? item.call_id), { index, streamed: Boolean(item.arguments) });
    return this.chunk({
      tool_calls: [
        {
          index,
          id: String(item.call_id ?? item.id ?? ''),
          type: 'function',
          function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
        },
      ],
    });
  }

  /** An upstream that sends a call's arguments only in its done item (no deltas) still gets them through. */
  private closeCall(item: any): HubChunk[] {
    const call = this.calls.get(String(item.id ?? item.call_id));
    if (!call) return [this.openCall(item)];
    if (call.streamed || !item.arguments) return [];
    call.streamed = true;
    return [this.chunk({ tool_calls: [{ index: call.index, function: { arguments: String(item.arguments) } }] })];
  }

  private finish(r: any): HubChunk {
    const usage = openaiUsageToHub(r?.usage);
    if (usage) this.last = usage;
    const reason: HubFinishReason = finishFromResponse(r, this.calls.size > 0);
    const c = this.chunk({}, reason);
    if (usage) c.usage = usage;
    if (r?.status === 'incomplete' && r.incomplete_details?.reason)
      c.native_finish_reason = String(r.incomplete_details.reason);
    return c;
  }

  private chunk(delta: HubDelta, finish: HubFinishReason | null = null): HubChunk {
    return {
      id: `chatcmpl-${this.opts.id}`,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.opts.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    };
  }
}
