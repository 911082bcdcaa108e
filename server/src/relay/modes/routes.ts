// Which relay route runs which mode: every JSON relay endpoint, the chat / completions / embeddings ones and the
// others (images, audio, rerank, moderations, responses, edits) alike, all run by the same engine (auth, routing,
// retries, billing, logs). Adding a mode: its RelayMode in a file of this folder, its route here.
import type { HTTPMethods } from 'fastify';
import type { RelayMode } from './mode.js';
import { chatMode, completionsMode, embeddingsMode } from './text.js';
import { speechMode, transcriptionsMode, translationsMode } from './audio.js';
import { editsMode } from './edits.js';
import { imageEditsMode, imageGenerationsMode } from './images.js';
import { moderationsMode } from './moderations.js';
import { rerankMode } from './rerank.js';
import { responsesMode } from './responses.js';
import { claudeMessagesMode } from './claude-messages.js';
import { claudeCountTokens, geminiCountTokens, type LocalAnswer } from '../endpoints/count-tokens.js';
import { geminiBatchEmbedMode, geminiEmbedMode, geminiGenerateMode, geminiStreamMode } from './gemini.js';

export interface JsonRelayRoute {
  method?: HTTPMethods;
  url: string;
  mode: RelayMode;
  playground?: boolean;
  /** path parameter that names the model when the body has none (e.g. 'model' for /v1/engines/:model/embeddings) */
  modelParam?: string;
  /** the mode and model read from the path (Gemini's `models/{model}:{action}`); null: no such endpoint */
  resolve?(path: string): { mode: RelayMode; model: string; local?: LocalAnswer } | null;
  /** answered locally after token auth, without an upstream or a charge (token counting) */
  local?: LocalAnswer;
}

/** Gemini's `{model}:{action}` tail of /v1beta/models/… and /v1/models/… */
export function resolveGeminiAction(tail: string): { mode: RelayMode; model: string; local?: LocalAnswer } | null {
  const colon = tail.lastIndexOf(':');
  if (colon <= 0) return null;
  const model = decodeURIComponent(tail.slice(0, colon)).replace(/^models\//, '');
  switch (tail.slice(colon + 1)) {
    case 'generateContent':
      return { mode: geminiGenerateMode, model };
    case 'streamGenerateContent':
      return { mode: geminiStreamMode, model };
    case 'embedContent':
      return { mode: geminiEmbedMode, model };
    case 'batchEmbedContents':
      return { mode: geminiBatchEmbedMode, model };
    case 'countTokens':
      return { mode: geminiGenerateMode, model, local: geminiCountTokens };
    default:
      return null;
  }
}

export const JSON_RELAY_ROUTES: JsonRelayRoute[] = [
  { url: '/v1/chat/completions', mode: chatMode },
  { url: '/v1/completions', mode: completionsMode },
  { url: '/v1/embeddings', mode: embeddingsMode },
  { url: '/v1/engines/:model/embeddings', mode: embeddingsMode, modelParam: 'model' },
  { url: '/pg/chat/completions', mode: chatMode, playground: true },
  { url: '/v1/edits', mode: editsMode },
  { url: '/v1/moderations', mode: moderationsMode },
  { url: '/v1/images/generations', mode: imageGenerationsMode },
  { url: '/v1/images/edits', mode: imageEditsMode },
  { url: '/v1/audio/speech', mode: speechMode },
  { url: '/v1/audio/transcriptions', mode: transcriptionsMode },
  { url: '/v1/audio/translations', mode: translationsMode },
  { url: '/v1/rerank', mode: rerankMode },
  { url: '/v1/responses', mode: responsesMode },
  { url: '/v1/messages', mode: claudeMessagesMode },
  { url: '/v1/messages/count_tokens', mode: claudeMessagesMode, local: claudeCountTokens },
  { url: '/v1beta/models/*', mode: geminiGenerateMode, resolve: resolveGeminiAction },
  { url: '/v1/models/*', mode: geminiGenerateMode, resolve: resolveGeminiAction },
];

/** The routes the fast path (relay/fast-path.ts) also serves without Fastify: POST to these exact paths. */
export const FAST_PATH_ROUTES: Record<string, RelayMode> = {
  '/v1/chat/completions': chatMode,
  '/v1/completions': completionsMode,
  '/v1/embeddings': embeddingsMode,
  '/v1/messages': claudeMessagesMode,
};
