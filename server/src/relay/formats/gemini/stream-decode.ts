// A Gemini stream (alt=sse events, or the elements of the JSON-array form) → hub chunks. Every event is a whole
// GenerateContentResponse holding the next parts; a functionCall part arrives whole, and usageMetadata is
// cumulative, so the last one seen is the usage.
import type { StreamDecoder } from '../codec.js';
import type { HubChunk, HubDelta, HubFinishReason, HubUsage } from '../../hub/types.js';
import { streamEventError } from './errors.js';
import { finishToHub } from './finish.js';
import { candidateParts, toolCallId } from './response.js';
import { usageToHub } from './usage.js';
import { imageMarkdown, isPlainObject } from './wire.js';

export function streamToHub(opts: { id: string; model: string }): StreamDecoder {
  return new GeminiStreamDecoder(opts.id, opts.model);
}

class GeminiStreamDecoder implements StreamDecoder {
  private readonly created = Math.floor(Date.now() / 1000);
  private started = false;
  private toolCalls = 0;
  private lastUsage: HubUsage | null = null;
  private usageSent: HubUsage | null = null;

  constructor(
    private readonly id: string,
    private readonly model: string,
  ) {}

  push(data: string): HubChunk[] {
    let event: any;
    try {
      event = JSON.parse(data);
    } catch {
      return [];
    }
    if (!isPlainObject(event)) return [];
    const error = streamEventError(event);
    if (error) throw error;
    const usage = usageToHub(event.usageMetadata);
    if (usage) this.lastUsage = usage;
    const out: HubChunk[] = [];
    const candidate: unknown = Array.isArray(event.candidates) ? event.candidates[0] : undefined;
    for (const part of candidateParts(candidate)) {
      const signature = typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined;
      if (part.thought === true) {
        // a thought part's own signature closes the thinking it carries, so it comes after the text
        const delta: HubDelta = {};
        if (typeof part.text === 'string' && part.text) delta.reasoning_content = part.text;
        if (signature) delta.thinking_signature = signature;
        if (Object.keys(delta).length > 0) out.push(this.chunk(delta));
        continue;
      }
      // on an answer or call part the signature closes the thinking before it: its own chunk, first
      if (signature) out.push(this.chunk({ thinking_signature: signature }));
      if (part.functionCall) {
        const index = this.toolCalls++;
        const { name, args } = part.functionCall;
        out.push(
          this.chunk({
            tool_calls: [
              {
                index,
                id: toolCallId(part, index),
                type: 'function',
                function: { name, arguments: JSON.stringify(args ?? {}) },
              },
            ],
          }),
        );
      } else if (typeof part.text === 'string' && part.text) out.push(this.chunk({ content: part.text }));
      else {
        const image = imageMarkdown(part);
        if (image) out.push(this.chunk({ content: image }));
      }
    }
    const reason: unknown = isPlainObject(candidate) ? candidate.finishReason : undefined;
    const blocked: unknown = isPlainObject(event.promptFeedback) ? event.promptFeedback.blockReason : undefined;
    if (typeof reason === 'string' && reason) out.push(this.finish(finishToHub(reason, this.toolCalls > 0), reason));
    else if (!candidate && typeof blocked === 'string' && blocked) out.push(this.finish('content_filter', blocked));
    return out;
  }

  end(): HubChunk[] {
    // usage that came after the finish chunk (or a stream cut before one) still reaches the hub
    if (!this.lastUsage || this.lastUsage === this.usageSent) return [];
    this.usageSent = this.lastUsage;
    return [{ ...this.base(), choices: [], usage: this.lastUsage }];
  }

  usage(): HubUsage | null {
    return this.lastUsage;
  }

  private base(): Omit<HubChunk, 'choices'> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model };
  }

  private chunk(delta: HubDelta): HubChunk {
    if (!this.started) {
      this.started = true;
      delta = { role: 'assistant', ...delta };
    }
    return { ...this.base(), choices: [{ index: 0, delta, finish_reason: null }] };
  }

  private finish(reason: HubFinishReason, native: string): HubChunk {
    const chunk = this.chunk({});
    chunk.choices[0].finish_reason = reason;
    chunk.native_finish_reason = native;
    if (this.lastUsage) {
      chunk.usage = this.lastUsage;
      this.usageSent = this.lastUsage;
    }
    return chunk;
  }
}
