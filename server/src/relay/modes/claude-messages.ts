// Anthropic Messages as a client format: POST /v1/messages from Claude clients (the Anthropic SDK, Claude Code). The
// body is Claude's; validation, counting and the translated lane go through the hub (formats/anthropic/), and on a
// Claude channel the bytes pass through with only the usage read (message_start and message_delta carry it).
import { anthropicCodec, validateClaudeRequest } from '../formats/anthropic/index.js';
import { lenientTexts } from '../formats/lenient-texts.js';
import { FormatError } from '../formats/codec.js';
import type { HubRequest } from '../hub/types.js';
import { messageTexts } from '../../services/sensitive-words.js';
import {
  chatPromptBound,
  countChatPromptTokens,
  countTextTokens,
  type ChatMessageLike,
} from '../../services/tokenizer.js';
import type { UpstreamUsage } from '../hub/usage.js';
import { usageOfHub } from '../hub/usage.js';
import { extractUsageObject } from '../usage.js';
import type { RelayMode, StreamDelta } from './mode.js';

/** The hub form of a Claude body, once per body object (validation, counting and the sensitive-word check share it). */
const hubs = new WeakMap<object, HubRequest>();
export function claudeHub(body: Record<string, any>): HubRequest {
  let hub = hubs.get(body);
  if (!hub) {
    hub = anthropicCodec.requestToHub(body);
    hubs.set(body, hub);
  }
  return hub;
}

/** The hub form, or null for a request that only a provider of Claude's format can take as it is. */
function convertible(body: Record<string, any>): HubRequest | null {
  try {
    return claudeHub(body);
  } catch (e) {
    if (e instanceof FormatError) return null;
    throw e;
  }
}

function blocksText(blocks: unknown): StreamDelta {
  let text = '';
  let toolCalls = 0;
  if (Array.isArray(blocks))
    for (const b of blocks as any[]) {
      if (b?.type === 'text' && typeof b.text === 'string') text += b.text;
      else if (b?.type === 'thinking' && typeof b.thinking === 'string') text += b.thinking;
      else if (b?.type === 'tool_use') {
        toolCalls++;
        text += (b.name ?? '') + JSON.stringify(b.input ?? {});
      }
    }
  return { text, toolCalls };
}

/** Claude usage (whole or a message_delta's part) → the relay's usage, merged over what was seen before. */
function claudeUsage(u: any, prev: UpstreamUsage | null): UpstreamUsage | null {
  if (!u || typeof u !== 'object') return prev;
  // a message_delta may repeat only output_tokens: the input side seen in message_start stays
  const merged = {
    input_tokens: u.input_tokens ?? (prev ? prev.prompt_tokens - prev.cached_tokens : 0),
    output_tokens: u.output_tokens ?? prev?.completion_tokens ?? 0,
    cache_read_input_tokens: u.cache_read_input_tokens ?? prev?.cached_tokens ?? 0,
    cache_creation_input_tokens: u.cache_creation_input_tokens ?? prev?.cache_creation_tokens ?? 0,
  };
  const hub = anthropicCodec.usageToHub(merged);
  return usageOfHub(hub, true) ?? prev;
}

export const claudeMessagesMode: RelayMode = {
  name: 'claude messages',
  format: 'anthropic',
  hub: true,
  checksCompletion: true,
  hubOf: claudeHub,
  endpoint: 'chat',
  canStream: true,
  eventStream: true,
  streamTerminal: Buffer.from('"type":"message_stop"'),
  // Anthropic's own checks only: a block the hub cannot convert is refused on a translated lane (attempt.ts), not
  // here, so that it still reaches a provider of Claude's format unchanged
  validate(body) {
    try {
      validateClaudeRequest(body);
      return null;
    } catch (e) {
      if (e instanceof FormatError) return e.message;
      throw e;
    }
  },
  maxTokens: (body) => Number(body.max_tokens) || 0,
  promptTexts(body) {
    const hub = convertible(body);
    return hub ? messageTexts(hub.messages) : lenientTexts({ system: body.system, messages: body.messages });
  },
  promptTokens(body, model) {
    const hub = convertible(body);
    if (hub) return countChatPromptTokens(hub.messages as ChatMessageLike[], model, hub.tools);
    return countTextTokens([...lenientTexts({ system: body.system, messages: body.messages })].join('\n'), model);
  },
  promptBound(body, bodyBytes) {
    const hub = convertible(body);
    return hub ? chatPromptBound(hub.messages, hub.tools, bodyBytes) : -1;
  },
  responseText: (json) => blocksText(json?.content),
  chunkText(json) {
    const d = json?.type === 'content_block_delta' ? json.delta : null;
    if (d?.type === 'text_delta') return { text: String(d.text ?? ''), toolCalls: 0 };
    if (d?.type === 'thinking_delta') return { text: String(d.thinking ?? ''), toolCalls: 0 };
    if (d?.type === 'input_json_delta') return { text: String(d.partial_json ?? ''), toolCalls: 0 };
    if (json?.type === 'content_block_start' && json.content_block?.type === 'tool_use')
      return { text: String(json.content_block.name ?? ''), toolCalls: 1 };
    return { text: '', toolCalls: 0 };
  },
  // only the usage object is parsed, as for OpenAI answers (usage.ts)
  responseUsage: (buf) => claudeUsage(extractUsageObject(buf), null),
  streamUsage(json, prev) {
    if (json?.type === 'message_start') return claudeUsage(json.message?.usage, prev);
    if (json?.type === 'message_delta') return claudeUsage(json.usage, prev);
    return prev;
  },
};
