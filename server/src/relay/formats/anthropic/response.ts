// A whole Claude message ↔ hub answer.
import type { EncoderOptions } from '../codec.js';
import type { HubResponse, HubThinkingBlock, HubToolCall } from '../../hub/types.js';
import { claudeMessageId, claudeToolUseId } from './ids.js';
import { claudeStopReason, finishFromClaude } from './stop-reason.js';
import { parseToolInput } from './tool-input.js';
import { usageFromHub, usageToHub } from './usage.js';
import type { ClaudeContentBlock } from './wire.js';

/** An upstream's Claude message → hub answer. */
export function responseToHub(body: any, model: string): HubResponse {
  const blocks: any[] = Array.isArray(body?.content) ? body.content : [];
  const texts: string[] = [];
  const calls: HubToolCall[] = [];
  const thinking: HubThinkingBlock[] = [];
  for (const b of blocks) {
    if (b?.type === 'text') texts.push(String(b.text ?? ''));
    else if (b?.type === 'thinking') thinking.push({ thinking: String(b.thinking ?? ''), signature: b.signature });
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
  if (msg?.content) content.push({ type: 'text', text: msg.content });
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
