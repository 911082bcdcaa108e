// POST /v1/responses (OpenAI Responses API), JSON and SSE. The stream is typed events (`event: response.…`) with no
// `data: [DONE]`; its usage rides on `response.completed` (or `.incomplete` / `.failed`) under `response.usage`:
// input_tokens (cache reads included, like prompt_tokens), output_tokens, input_tokens_details.cached_tokens.
// Billing uses that usage with the text formula; without it the output text is counted locally (new-api-compat.md
// §5.4).
// Two lanes (relay/attempt.ts): a channel whose upstream serves the Responses API (OpenAI, Azure: their adaptors'
// alsoSpeaks) gets the body as it is and the answer passes through, read only by the hooks below; every other channel
// gets it through the hub as a chat request (formats/responses/), which refuses with a 400 what only OpenAI can do
// (hosted tools, previous_response_id, …). Validation therefore stays lenient: what the translation refuses is
// still fine on a native lane.
import { countTextTokens } from '../../services/tokenizer.js';
import type { RelayMode, StreamDelta } from './mode.js';
import { normaliseUsage } from '../usage.js';

const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed', 'response.done']);

/** Text of `input` (string, or items whose content is a string or input_text parts) plus `instructions`. */
function inputText(body: Record<string, any>): string {
  let text = typeof body.instructions === 'string' ? body.instructions : '';
  const add = (s: unknown) => {
    if (typeof s === 'string' && s) text += (text ? '\n' : '') + s;
  };
  if (typeof body.input === 'string') add(body.input);
  else if (Array.isArray(body.input)) {
    for (const item of body.input) {
      if (typeof item === 'string') add(item);
      else if (typeof item?.content === 'string') add(item.content);
      else if (Array.isArray(item?.content)) for (const p of item.content) add(p?.text);
      else if (item?.type === 'function_call_output') add(item.output);
    }
  }
  return text;
}

function outputText(json: any): StreamDelta {
  let text = '';
  let toolCalls = 0;
  for (const item of Array.isArray(json?.output) ? json.output : []) {
    if (item?.type === 'function_call') {
      toolCalls++;
      text += String(item.name ?? '') + String(item.arguments ?? '');
    }
    for (const c of Array.isArray(item?.content) ? item.content : []) if (typeof c?.text === 'string') text += c.text;
  }
  return { text, toolCalls };
}

export const responsesMode: RelayMode = {
  name: 'responses',
  format: 'responses',
  hub: true,
  endpoint: 'responses',
  canStream: true,
  eventStream: true,
  validate(body) {
    if (!body.model) return 'model is required';
    const m = Number(body.max_output_tokens ?? 0);
    if (m < 0 || m > 2 ** 30) return 'max_output_tokens is invalid';
    return null;
  },
  promptTokens(body, model) {
    return countTextTokens(inputText(body), model);
  },
  // text only (images and files are not counted), joined by one byte where the body has at least three between
  promptBound: (_body, bodyBytes) => bodyBytes,
  responseText: outputText,
  chunkText(json) {
    const t = json?.type;
    if (
      (t === 'response.output_text.delta' || t === 'response.function_call_arguments.delta') &&
      typeof json.delta === 'string'
    ) {
      return { text: json.delta, toolCalls: 0 };
    }
    if (t === 'response.output_item.added' && json.item?.type === 'function_call')
      return { text: String(json.item.name ?? ''), toolCalls: 1 };
    return { text: '', toolCalls: 0 };
  },
  streamUsage(json) {
    if (!FINAL_EVENTS.has(json?.type)) return null;
    return normaliseUsage(json.response?.usage);
  },
};
