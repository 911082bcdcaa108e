// A whole Claude message ↔ hub answer.
import type { EncoderOptions } from '../codec.js';
import type { HubCitation, HubResponse, HubThinkingBlock, HubToolCall } from '../../hub/types.js';
import { claudeMessageId, claudeToolUseId } from './ids.js';
import { claudeStopReason, finishFromClaude } from './stop-reason.js';
import { parseToolInput } from './tool-input.js';
import { usageFromHub, usageToHub } from './usage.js';
import type { ClaudeContentBlock, ClaudeTextBlock } from './wire.js';

/** One of Claude's citations of a text block that starts at `offset` in the joined answer text. */
function citationToHub(c: any, offset: number, text: string): HubCitation {
  const out: HubCitation = { start_index: offset, end_index: offset + text.length, claude: c };
  if (typeof c?.url === 'string') out.url = c.url;
  const title = c?.title ?? c?.document_title;
  if (typeof title === 'string') out.title = title;
  if (typeof c?.cited_text === 'string') out.cited_text = c.cited_text;
  return out;
}

/**
 * The answer text as Claude's text blocks: Claude cites per block, so the text is cut again at the spans its
 * citations came with, each cited span a block with its citations (other vendors' citations have no Claude form).
 */
function textBlocks(text: string, citations: HubCitation[] = []): ClaudeTextBlock[] {
  const spans = new Map<string, { start: number; end: number; cited: Record<string, unknown>[] }>();
  for (const c of citations) {
    if (!c.claude || c.start_index === undefined || c.end_index === undefined) continue;
    const key = `${c.start_index}:${c.end_index}`;
    const span = spans.get(key) ?? { start: c.start_index, end: c.end_index, cited: [] };
    span.cited.push(c.claude);
    spans.set(key, span);
  }
  const blocks: ClaudeTextBlock[] = [];
  let at = 0;
  for (const span of [...spans.values()].sort((a, b) => a.start - b.start)) {
    // an overlapping or out-of-range span cannot be a block of its own
    if (span.start < at || span.end > text.length || span.end <= span.start) continue;
    if (span.start > at) blocks.push({ type: 'text', text: text.slice(at, span.start) });
    blocks.push({ type: 'text', text: text.slice(span.start, span.end), citations: span.cited });
    at = span.end;
  }
  if (at < text.length || blocks.length === 0) blocks.push({ type: 'text', text: text.slice(at) });
  return blocks;
}

/** An upstream's Claude message → hub answer. */
export function responseToHub(body: any, model: string): HubResponse {
  const blocks: any[] = Array.isArray(body?.content) ? body.content : [];
  const texts: string[] = [];
  const calls: HubToolCall[] = [];
  const thinking: HubThinkingBlock[] = [];
  const citations: HubCitation[] = [];
  let offset = 0;
  for (const b of blocks) {
    if (b?.type === 'text') {
      const text = String(b.text ?? '');
      if (Array.isArray(b.citations)) citations.push(...b.citations.map((c: any) => citationToHub(c, offset, text)));
      texts.push(text);
      offset += text.length;
    } else if (b?.type === 'thinking') thinking.push({ thinking: String(b.thinking ?? ''), signature: b.signature });
    else if (b?.type === 'redacted_thinking') thinking.push({ thinking: '', redacted: String(b.data ?? '') });
    else if (b?.type === 'tool_use')
      calls.push({
        id: String(b.id ?? ''),
        type: 'function',
        function: { name: String(b.name ?? ''), arguments: JSON.stringify(b.input ?? {}) },
      });
  }
  const message: HubResponse['choices'][number]['message'] = {
    role: 'assistant',
    content: texts.length ? texts.join('') : calls.length ? null : '',
  };
  if (thinking.length) {
    message.thinking_blocks = thinking;
    message.reasoning_content = thinking.map((t) => t.thinking).join('');
  }
  if (calls.length) message.tool_calls = calls;
  if (citations.length) message.citations = citations;

  const hub: HubResponse = {
    id: String(body?.id ?? ''),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof body?.model === 'string' ? body.model : model,
    choices: [{ index: 0, message, finish_reason: finishFromClaude(body?.stop_reason) }],
  };
  const usage = usageToHub(body?.usage);
  if (usage) hub.usage = usage;
  if (typeof body?.stop_reason === 'string') hub.native_finish_reason = body.stop_reason;
  if (body?.stop_sequence !== undefined) hub.stop_sequence = body.stop_sequence;
  return hub;
}

/** Hub answer → the Claude message a Claude client expects. */
export function responseFromHub(hub: HubResponse, opts: EncoderOptions): Record<string, unknown> {
  const choice = hub.choices[0];
  const msg = choice?.message;
  const content: ClaudeContentBlock[] = [];
  if (msg?.thinking_blocks?.length) {
    for (const t of msg.thinking_blocks)
      content.push(
        t.redacted !== undefined
          ? { type: 'redacted_thinking', data: t.redacted }
          : { type: 'thinking', thinking: t.thinking, signature: t.signature ?? '' },
      );
  } else if (msg?.reasoning_content) {
    // another vendor's reasoning has no signature; the client still gets to see it
    content.push({ type: 'thinking', thinking: msg.reasoning_content, signature: '' });
  }
  if (msg?.content) content.push(...textBlocks(msg.content, msg.citations));
  (msg?.tool_calls ?? []).forEach((call, i) =>
    content.push({
      type: 'tool_use',
      id: call.id || claudeToolUseId(opts.id, i),
      name: call.function.name,
      input: parseToolInput(call.function.arguments),
    }),
  );
  const stopSequence = hub.stop_sequence ?? null;
  return {
    id: claudeMessageId(hub.id, opts.id),
    type: 'message',
    role: 'assistant',
    model: opts.model,
    content,
    stop_reason: claudeStopReason(choice?.finish_reason ?? null, hub.native_finish_reason, stopSequence),
    stop_sequence: stopSequence,
    usage: usageFromHub(hub.usage),
  };
}
