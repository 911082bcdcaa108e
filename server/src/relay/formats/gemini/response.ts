// Whole answers: a Gemini GenerateContentResponse ↔ hub response.
import { randomUUID } from 'node:crypto';
import type { EncoderOptions } from '../codec.js';
import type { HubResponse, HubResponseMessage, HubToolCall } from '../../hub/types.js';
import { finishFromHub, finishToHub } from './finish.js';
import { placeSignatures, thinkingFromParts } from './thinking.js';
import { usageFromHub, usageToHub } from './usage.js';
import { imageMarkdown, isPlainObject, type GeminiPart } from './wire.js';

export function makeResponseId(): string {
  return 'chatcmpl-' + randomUUID().replace(/-/g, '');
}

/** The parts of a response's first candidate (the hub answers with one choice). */
export function candidateParts(candidate: unknown): GeminiPart[] {
  const parts = isPlainObject(candidate) && isPlainObject(candidate.content) ? candidate.content.parts : undefined;
  return Array.isArray(parts) ? parts.filter(isPlainObject) : [];
}

/** Gemini gives calls no id on most models: `call_<index>` in the answer's order stands in. */
export function toolCallId(part: GeminiPart, index: number): string {
  return part.functionCall?.id || `call_${index}`;
}

export function responseToHub(body: any, model: string): HubResponse {
  const candidate: unknown = Array.isArray(body?.candidates) ? body.candidates[0] : undefined;
  const parts = candidateParts(candidate);
  const message: HubResponseMessage = { role: 'assistant', content: null };
  const calls: HubToolCall[] = [];
  let text = '';
  for (const part of parts) {
    if (part.functionCall)
      calls.push({
        id: toolCallId(part, calls.length),
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    else if (typeof part.text === 'string' && !part.thought) text += part.text;
    else if (!part.thought) text += imageMarkdown(part) ?? '';
  }
  message.content = text || calls.length === 0 ? text : null;
  const blocks = thinkingFromParts(parts);
  const reasoning = blocks.map((b) => b.thinking).join('');
  if (reasoning) message.reasoning_content = reasoning;
  if (blocks.length > 0) message.thinking_blocks = blocks;
  if (calls.length > 0) message.tool_calls = calls;

  const nativeReason: unknown = isPlainObject(candidate) ? candidate.finishReason : undefined;
  const blockReason: unknown = body?.promptFeedback?.blockReason;
  let native: string | undefined;
  let finish: HubResponse['choices'][number]['finish_reason'] = null;
  if (typeof nativeReason === 'string') {
    native = nativeReason;
    finish = finishToHub(nativeReason, calls.length > 0);
  } else if (!candidate && typeof blockReason === 'string') {
    // the prompt itself was blocked: no candidate at all
    native = blockReason;
    finish = 'content_filter';
  }
  const hub: HubResponse = {
    id: typeof body?.responseId === 'string' && body.responseId ? body.responseId : makeResponseId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finish }],
  };
  const usage = usageToHub(body?.usageMetadata);
  if (usage) hub.usage = usage;
  if (native) hub.native_finish_reason = native;
  return hub;
}

/** A hub answer message → Gemini parts: thoughts first, then text, then calls, with the signatures placed. */
export function messageToParts(message: HubResponseMessage): GeminiPart[] {
  const parts: GeminiPart[] = [];
  const blocks = message.thinking_blocks;
  if (blocks?.length) {
    for (const b of blocks) if (b.thinking) parts.push({ text: b.thinking, thought: true });
  } else if (message.reasoning_content) parts.push({ text: message.reasoning_content, thought: true });
  if (message.content) parts.push({ text: message.content });
  for (const call of message.tool_calls ?? [])
    parts.push({ functionCall: { id: call.id, name: call.function.name, args: parseArgs(call.function.arguments) } });
  const signatures = (blocks ?? []).map((b) => b.signature).filter((s): s is string => !!s);
  return placeSignatures(parts, signatures);
}

export function parseArgs(args: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args || '{}');
    return isPlainObject(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

export function responseFromHub(hub: HubResponse, opts: EncoderOptions): Record<string, unknown> {
  const choice = hub.choices[0];
  const parts = choice ? messageToParts(choice.message) : [];
  const candidate: Record<string, unknown> = {
    content: { role: 'model', parts: parts.length > 0 ? parts : [{ text: '' }] },
    finishReason: finishFromHub(choice?.finish_reason ?? 'stop', hub.native_finish_reason),
    index: 0,
  };
  const out: Record<string, unknown> = { candidates: [candidate] };
  if (hub.usage) out.usageMetadata = usageFromHub(hub.usage);
  out.modelVersion = opts.model;
  out.responseId = opts.id;
  return out;
}
