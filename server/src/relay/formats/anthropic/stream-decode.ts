// An upstream's Claude SSE stream → hub chunks, event by event. Claude numbers content blocks across kinds (thinking,
// text, tool_use share one index sequence); the hub numbers tool calls alone, so each tool_use block gets the count
// of tool_use blocks before it.
import type { StreamDecoder } from '../codec.js';
import type { HubChunk, HubDelta, HubUsage } from '../../hub/types.js';
import { finishFromClaude } from './stop-reason.js';
import { mergeClaudeUsage, usageToHub } from './usage.js';
import type { ClaudeUsage } from './wire.js';

/** An `error` event inside a Claude stream: the relay reports the stream as failed. */
export class ClaudeStreamError extends Error {
  constructor(
    message: string,
    readonly type: string,
  ) {
    super(message);
  }
}

export function streamToHub(opts: { id: string; model: string }): StreamDecoder {
  return new ClaudeStreamDecoder(opts.id, opts.model);
}

class ClaudeStreamDecoder implements StreamDecoder {
  private readonly created = Math.floor(Date.now() / 1000);
  private readonly raw: Partial<ClaudeUsage> = {};
  private seenUsage = false;
  /** Claude block index → hub tool call index, for the tool_use blocks */
  private readonly toolIndexByBlock = new Map<number, number>();

  constructor(
    private id: string,
    private model: string,
  ) {}

  push(data: string, event?: string): HubChunk[] {
    let ev: any;
    try {
      ev = JSON.parse(data);
    } catch {
      return [];
    }
    switch (ev?.type ?? event) {
      case 'message_start':
        return this.messageStart(ev.message ?? {});
      case 'content_block_start':
        return this.blockStart(ev.index, ev.content_block ?? {});
      case 'content_block_delta':
        return this.blockDelta(ev.index, ev.delta ?? {});
      case 'message_delta':
        return this.messageDelta(ev);
      case 'error':
        throw new ClaudeStreamError(
          String(ev.error?.message ?? 'upstream stream error'),
          String(ev.error?.type ?? 'api_error'),
        );
      default:
        // ping, content_block_stop, message_stop and event types added later carry nothing for the hub
        return [];
    }
  }

  end(): HubChunk[] {
    return [];
  }

  usage(): HubUsage | null {
    return this.seenUsage ? usageToHub(this.raw) : null;
  }

  private messageStart(message: any): HubChunk[] {
    if (typeof message.id === 'string' && message.id) this.id = message.id;
    if (typeof message.model === 'string' && message.model) this.model = message.model;
    const chunk = this.chunk({ role: 'assistant', content: '' });
    if (this.takeUsage(message.usage)) chunk.usage = this.usage();
    return [chunk];
  }

  private blockStart(index: number, block: any): HubChunk[] {
    switch (block.type) {
      case 'text':
        return block.text ? [this.chunk({ content: block.text })] : [];
      case 'thinking':
        return block.thinking ? [this.chunk({ reasoning_content: block.thinking })] : [];
      case 'redacted_thinking':
        return [this.chunk({ redacted_thinking: String(block.data ?? '') })];
      case 'tool_use': {
        const toolIndex = this.toolIndexByBlock.size;
        this.toolIndexByBlock.set(index, toolIndex);
        const call = {
          index: toolIndex,
          id: block.id,
          type: 'function' as const,
          function: { name: block.name, arguments: '' },
        };
        return [this.chunk({ tool_calls: [call] })];
      }
      default:
        // server tool blocks (server_tool_use, web_search_tool_result…) have no hub form
        return [];
    }
  }

  private blockDelta(index: number, delta: any): HubChunk[] {
    switch (delta.type) {
      case 'text_delta':
        return delta.text ? [this.chunk({ content: delta.text })] : [];
      case 'thinking_delta':
        return delta.thinking ? [this.chunk({ reasoning_content: delta.thinking })] : [];
      case 'signature_delta':
        return delta.signature ? [this.chunk({ thinking_signature: delta.signature })] : [];
      case 'input_json_delta': {
        const toolIndex = this.toolIndexByBlock.get(index);
        if (toolIndex === undefined || !delta.partial_json) return [];
        return [this.chunk({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] })];
      }
      default:
        return [];
    }
  }

  private messageDelta(ev: any): HubChunk[] {
    const reason = ev.delta?.stop_reason;
    const chunk = this.chunk({}, finishFromClaude(reason));
    if (typeof reason === 'string') chunk.native_finish_reason = reason;
    if (ev.delta && 'stop_sequence' in ev.delta) chunk.stop_sequence = ev.delta.stop_sequence ?? null;
    if (this.takeUsage(ev.usage)) chunk.usage = this.usage();
    return [chunk];
  }

  private takeUsage(usage: unknown): boolean {
    if (!usage || typeof usage !== 'object') return false;
    mergeClaudeUsage(this.raw, usage);
    this.seenUsage = true;
    return true;
  }

  private chunk(delta: HubDelta, finish: HubChunk['choices'][number]['finish_reason'] = null): HubChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    };
  }
}
