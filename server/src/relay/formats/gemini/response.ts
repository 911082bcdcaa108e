// Whole answers: a Gemini GenerateContentResponse ↔ hub response.
import { randomUUID } from 'node:crypto';
import type { EncoderOptions } from '../codec.js';
import type { HubCitation, HubResponse, HubResponseMessage, HubToolCall } from '../../hub/types.js';
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

/** A byte offset into a part's UTF-8 text (how Gemini counts segments) as a UTF-16 index. */
function charIndex(text: string, byteOffset: unknown): number | undefined {
  if (typeof byteOffset !== 'number') return undefined;
  return Buffer.from(text, 'utf8').subarray(0, byteOffset).toString('utf8').length;
}

/**
 * The sources a candidate cites, into the hub message: grounding supports (each segment of the answer with the web
 * or retrieved chunks behind it) and citation metadata (`citationSources` on the Gemini API, `citations` on Vertex
 * AI); both kept as they came for a Gemini client. Offsets count in the text of the part the segment names.
 */
function citeSources(message: HubResponseMessage, candidate: Record<string, any>, parts: GeminiPart[]): void {
  const grounding = isPlainObject(candidate.groundingMetadata) ? candidate.groundingMetadata : undefined;
  const citationMeta = isPlainObject(candidate.citationMetadata) ? candidate.citationMetadata : undefined;
  if (!grounding && !citationMeta) return;
  message.gemini_grounding = {
    ...(grounding ? { groundingMetadata: grounding } : {}),
    ...(citationMeta ? { citationMetadata: citationMeta } : {}),
  };
  // where each visible text part starts in the message's content
  const starts: (number | undefined)[] = [];
  let at = 0;
  for (const p of parts) {
    const visible = typeof p.text === 'string' && !p.thought && !p.functionCall;
    starts.push(visible ? at : undefined);
    if (visible) at += p.text!.length;
  }
  const span = (partIndex: unknown, start: unknown, end: unknown) => {
    const i = typeof partIndex === 'number' ? partIndex : starts.findIndex((s) => s !== undefined);
    const base = starts[i];
    const text = parts[i]?.text;
    if (base === undefined || typeof text !== 'string') return {};
    return { start_index: base + (charIndex(text, start ?? 0) ?? 0), end_index: base + (charIndex(text, end) ?? 0) };
  };
  const citations: HubCitation[] = [];
  const chunks: any[] = Array.isArray(grounding?.groundingChunks) ? grounding.groundingChunks : [];
  for (const support of Array.isArray(grounding?.groundingSupports) ? grounding.groundingSupports : []) {
    const seg = isPlainObject(support?.segment) ? support.segment : {};
    for (const index of Array.isArray(support?.groundingChunkIndices) ? support.groundingChunkIndices : []) {
      const source = chunks[index]?.web ?? chunks[index]?.retrievedContext;
      if (!isPlainObject(source)) continue;
      citations.push({
        ...span(seg.partIndex, seg.startIndex, seg.endIndex),
        ...(typeof source.uri === 'string' ? { url: source.uri } : {}),
        ...(typeof source.title === 'string' ? { title: source.title } : {}),
        ...(typeof seg.text === 'string' ? { cited_text: seg.text } : {}),
      });
    }
  }
  const sources = citationMeta?.citationSources ?? citationMeta?.citations;
  for (const c of Array.isArray(sources) ? sources : []) {
    if (!isPlainObject(c)) continue;
    citations.push({
      ...span(undefined, c.startIndex, c.endIndex),
      ...(typeof c.uri === 'string' ? { url: c.uri } : {}),
      ...(typeof c.title === 'string' ? { title: c.title } : {}),
    });
  }
  if (citations.length) message.citations = citations;
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
  if (isPlainObject(candidate)) citeSources(message, candidate, parts);

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
  const grounding = choice?.message.gemini_grounding;
  if (grounding?.groundingMetadata !== undefined) candidate.groundingMetadata = grounding.groundingMetadata;
  if (grounding?.citationMetadata !== undefined) candidate.citationMetadata = grounding.citationMetadata;
  const out: Record<string, unknown> = { candidates: [candidate] };
  if (hub.usage) out.usageMetadata = usageFromHub(hub.usage);
  out.modelVersion = opts.model;
  out.responseId = opts.id;
  return out;
}
