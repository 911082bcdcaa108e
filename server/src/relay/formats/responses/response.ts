// Whole (non-stream) answers: hub → a Responses `response` object for a client, and a Responses-speaking upstream's
// `response` object → hub.
import type { HubFinishReason, HubResponse, HubResponseMessage, HubToolCall } from '../../hub/types.js';
import { openaiUsageToHub } from '../openai/index.js';
import {
  baseId,
  functionCallItem,
  itemId,
  messageItem,
  reasoningItem,
  responseObject,
  statusFor,
  type ResponsesEncoderOptions,
} from './shape.js';
import { encryptedFromBlock, hubThinkingBlocks } from './reasoning.js';

export function responseFromHub(hub: HubResponse, opts: ResponsesEncoderOptions): Record<string, unknown> {
  const choice = hub.choices[0];
  const msg: HubResponseMessage = choice?.message ?? { role: 'assistant', content: null };
  const base = baseId(opts.id);
  const output: Record<string, unknown>[] = [];
  // one reasoning item per thinking block, so each signature comes back with the text it signs
  for (const block of hubThinkingBlocks(msg)) {
    const encrypted = encryptedFromBlock(block);
    if (block.thinking || encrypted)
      output.push(reasoningItem(itemId('rs', base, output.length), block.thinking, encrypted));
  }
  const calls = msg.tool_calls ?? [];
  // an answer with neither text nor calls still has its (empty) message, so the client sees one output item
  if (msg.content || calls.length === 0)
    output.push(messageItem(itemId('msg', base, output.length), msg.content ?? '', 'completed'));
  for (const c of calls)
    output.push(
      functionCallItem(
        itemId('fc', base, output.length),
        { call_id: c.id, name: c.function.name, arguments: c.function.arguments },
        'completed',
      ),
    );
  return responseObject(opts, {
    ...statusFor(choice?.finish_reason ?? 'stop'),
    output,
    usage: hub.usage ?? null,
    created: hub.created,
  });
}

/** How a Responses answer ended, in hub terms: calls win, then the incomplete reason. */
export function finishFromResponse(r: any, hasCalls: boolean): HubFinishReason {
  if (hasCalls) return 'tool_calls';
  if (r?.status === 'incomplete') {
    return r.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
  }
  return 'stop';
}

export function responseToHub(body: any, model: string): HubResponse {
  if (!body || !Array.isArray(body.output)) throw new Error('upstream answer has no output');
  let text = '';
  let reasoning = '';
  const calls: HubToolCall[] = [];
  for (const item of body.output) {
    if (item?.type === 'message') {
      for (const p of item.content ?? []) {
        if (p?.type === 'output_text') text += String(p.text ?? '');
        else if (p?.type === 'refusal') text += String(p.refusal ?? '');
      }
    } else if (item?.type === 'reasoning') {
      const parts = [...(item.summary ?? []), ...(item.content ?? [])].map((s: any) => String(s?.text ?? ''));
      reasoning += (reasoning ? '\n\n' : '') + parts.filter(Boolean).join('\n\n');
    } else if (item?.type === 'function_call') {
      calls.push({
        id: String(item.call_id ?? item.id ?? ''),
        type: 'function',
        function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
      });
    }
  }
  const message: HubResponseMessage = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.length) message.tool_calls = calls;
  const out: HubResponse = {
    id: String(body.id ?? ''),
    object: 'chat.completion',
    created: Number(body.created_at) || Math.floor(Date.now() / 1000),
    model: String(body.model ?? model),
    choices: [{ index: 0, message, finish_reason: finishFromResponse(body, calls.length > 0) }],
  };
  const usage = openaiUsageToHub(body.usage);
  if (usage) out.usage = usage;
  if (body.status === 'incomplete' && body.incomplete_details?.reason)
    out.native_finish_reason = String(body.incomplete_details.reason);
  return out;
}
