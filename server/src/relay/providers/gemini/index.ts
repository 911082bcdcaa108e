// Google Gemini API (channel type 24): `{base}/{version}/models/{model}:{action}` with `x-goog-api-key`, the version
// per model from gemini.version_settings. A Gemini client's body passes through (native lane); other clients' requests
// are built from the hub by the Gemini codec. Streams are always asked for as SSE (`alt=sse`).
import { geminiCodec } from '../../formats/gemini/index.js';
import type { RelayInfo, UpstreamTarget } from '../types.js';
import { geminiModel, prepareGeminiBody } from './settings.js';
import { inlineRemoteImages } from '../media.js';
import { defineProvider } from '../manifest.js';

function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

/** `{base}/{version}/models/{model}:{action}` */
function modelTarget(info: RelayInfo, action: string): UpstreamTarget {
  const { model } = geminiModel(info.settings, info.upstreamModel);
  const version = info.settings.gemini.version(model);
  return {
    origin: trimBase(info.channel.baseUrl),
    path: `/${version}/models/${encodeURIComponent(model)}:${action}`,
  };
}

/** The embedding action asked of the upstream: a Gemini client's own (its URL's), else one batch. */
function embedAction(info: RelayInfo): string {
  return info.clientFormat === 'gemini' && /:embedContent(?:[?#]|$)/.test(info.clientUrl ?? '')
    ? 'embedContent'
    : 'batchEmbedContents';
}

export const geminiAdaptor = defineProvider({
  id: 'gemini',
  types: [24],
  wire: 'gemini',
  endpoints: {
    chat: {
      target: (info) => modelTarget(info, info.isStream ? 'streamGenerateContent?alt=sse' : 'generateContent'),
      convertRequest(info, body) {
        // the model is in the path; a body field would be refused
        delete body.model;
        prepareGeminiBody(info.settings, body, info.upstreamModel, 'native');
        return true;
      },
      async fromHub(info, hub) {
        // Gemini fetches only its own files and some public URLs: remote images go inline
        const inlined = await inlineRemoteImages(hub, info.settings.fetchImage);
        const body = geminiCodec.requestFromHub(inlined, { model: info.upstreamModel, stream: info.isStream });
        prepareGeminiBody(info.settings, body as Record<string, any>, info.upstreamModel, 'translated');
        return body;
      },
    },
    // a Gemini client's embedContent / batchEmbedContents as it asked; an OpenAI client's embeddings, which its mode
    // translates to one batch, go to batchEmbedContents
    embeddings: {
      target: (info) => modelTarget(info, embedAction(info)),
      convertRequest(_info, body) {
        delete body.model;
        return true;
      },
    },
  },
  supportsStreamOptions: () => false,
  headers: (info) => ({ 'x-goog-api-key': info.channel.key }),
  parseError: (status, body) => geminiCodec.parseError(status, body),
});
