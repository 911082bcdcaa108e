// Gemini as a client format: POST /v1beta/models/{model}:{action} from Gemini clients (@google/genai, Gemini CLI).
// The model is in the path; generateContent and streamGenerateContent (SSE with alt=sse, else one JSON array) go
// through the hub when the channel is not Gemini's, and pass through on a Gemini channel with the usage read from
// usageMetadata. Gemini streams are decoded event by event: their usage is not in a `"usage"` field.
import { geminiCodec } from '../formats/gemini/index.js';
import { FormatError } from '../formats/codec.js';
import type { HubRequest } from '../hub/types.js';
import { messageTexts, inputTexts } from '../../services/sensitive-words.js';
import {
  chatPromptBound,
  countChatPromptTokens,
  countInputTokens,
  countTextTokens,
  type ChatMessageLike,
} from '../../services/tokenizer.js';
import { lenientTexts } from '../formats/lenient-texts.js';
import { usageOfHub } from '../hub/usage.js';
import type { RelayMode, StreamDelta } from './mode.js';
import { geminiBatchEmbedOnOpenAI, geminiEmbedContentOnOpenAI } from './embeddings-translate.js';

const hubs = new WeakMap<object, HubRequest>();
export function geminiHub(body: Record<string, any>): HubRequest {
  let hub = hubs.get(body);
  if (!hub) {
    hub = geminiCodec.requestToHub(body);
    hubs.set(body, hub);
  }
  return hub;
}

/** The hub form, or null for a request that only a Gemini provider can take as it is. */
function convertible(body: Record<string, any>): HubRequest | null {
  try {
    return geminiHub(body);
  } catch (e) {
    if (e instanceof FormatError) return null;
    throw e;
  }
}

function partsText(json: any): StreamDelta {
  let text = '';
  let toolCalls = 0;
  for (const c of json?.candidates ?? [])
    for (const p of c?.content?.parts ?? []) {
      if (typeof p?.text === 'string') text += p.text;
      if (p?.functionCall) {
        toolCalls++;
        text += (p.functionCall.name ?? '') + JSON.stringify(p.functionCall.args ?? {});
      }
    }
  return { text, toolCalls };
}

const generate: Omit<RelayMode, 'name'> = {
  format: 'gemini',
  hub: true,
  hubOf: geminiHub,
  endpoint: 'chat',
  canStream: false,
  checksCompletion: true,
  // Gemini's first check only: what the hub cannot convert is refused on a translated lane (attempt.ts), and still
  // reaches a Gemini provider unchanged
  validate(body) {
    const contents = body.contents;
    if (!Array.isArray(contents) || contents.length === 0)
      return '* GenerateContentRequest.contents: contents is not specified';
    return null;
  },
  maxTokens: (body) => Number(body?.generationConfig?.maxOutputTokens) || 0,
  promptTexts(body) {
    const hub = convertible(body);
    return hub ? messageTexts(hub.messages) : lenientTexts({ s: body.systemInstruction, c: body.contents });
  },
  promptTokens(body, model) {
    const hub = convertible(body);
    if (hub) return countChatPromptTokens(hub.messages as ChatMessageLike[], model, hub.tools);
    return countTextTokens([...lenientTexts({ s: body.systemInstruction, c: body.contents })].join('\n'), model);
  },
  promptBound(body, bodyBytes) {
    const hub = convertible(body);
    return hub ? chatPromptBound(hub.messages, hub.tools, bodyBytes) : -1;
  },
  responseText: partsText,
  chunkText: partsText,
  responseUsage(buf) {
    try {
      return usageOfHub(geminiCodec.usageToHub(JSON.parse(buf.toString('utf8'))?.usageMetadata), false);
    } catch {
      return null;
    }
  },
};

export const geminiGenerateMode: RelayMode = { ...generate, name: 'gemini generateContent' };
/** its client stream is SSE with `alt=sse`, else one JSON array: the Gemini format reads that from the request's URL */
export const geminiStreamMode: RelayMode = {
  ...generate,
  name: 'gemini streamGenerateContent',
  canStream: true,
  alwaysStream: true,
};

/** The texts of an embedContent / batchEmbedContents body. */
function embedTexts(body: Record<string, any>): string[] {
  const contents = Array.isArray(body.requests) ? body.requests.map((r: any) => r?.content) : [body.content];
  const out: string[] = [];
  for (const c of contents) for (const p of c?.parts ?? []) if (typeof p?.text === 'string') out.push(p.text);
  return out;
}

const embed: Omit<RelayMode, 'name'> = {
  format: 'gemini',
  endpoint: 'embeddings',
  canStream: false,
  inputOnly: true,
  validate(body) {
    if (Array.isArray(body.requests) ? body.requests.length === 0 : !body.content) return 'content is required';
    return null;
  },
  promptTexts: (body) => inputTexts(embedTexts(body)),
  promptTokens: (body, model) => countInputTokens(embedTexts(body), model),
  responseText: () => ({ text: '', toolCalls: 0 }),
  chunkText: () => ({ text: '', toolCalls: 0 }),
};

export const geminiEmbedMode: RelayMode = {
  ...embed,
  name: 'gemini embedContent',
  translate: { openai: geminiEmbedContentOnOpenAI },
};
export const geminiBatchEmbedMode: RelayMode = {
  ...embed,
  name: 'gemini batchEmbedContents',
  translate: { openai: geminiBatchEmbedOnOpenAI },
};
