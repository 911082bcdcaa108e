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

export interface JsonRelayRoute {
  method?: HTTPMethods;
  url: string;
  mode: RelayMode;
  playground?: boolean;
  /** path parameter that names the model when the body has none (e.g. 'model' for /v1/engines/:model/embeddings) */
  modelParam?: string;
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
];

/** The routes the fast path (relay/fast-path.ts) also serves without Fastify: POST to these exact paths. */
export const FAST_PATH_ROUTES: Record<string, RelayMode> = {
  '/v1/chat/completions': chatMode,
  '/v1/completions': completionsMode,
  '/v1/embeddings': embeddingsMode,
};
