// Google Gemini API (channel type 24): `{base}/{version}/models/{model}:{action}` with `x-goog-api-key`, the version
// per model from gemini.version_settings. A Gemini client's body passes through (native lane); other clients' requests
// are built from the hub by the Gemini codec. Streams are always asked for as SSE (`alt=sse`).
import { geminiCodec } from '../../formats/gemini/index.js';
import type { Adaptor, RelayInfo } from '../types.js';
import { geminiModel, prepareGeminiBody } from './settings.js';
import { inlineRemoteImages } from '../media.js';

function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The generateContent-family action of a request: the mode's own (embedContent, …) or generate / stream. */
export function geminiAction(info: RelayInfo): string {
  if (info.mode.geminiAction) return info.mode.geminiAction;
  return info.isStream ? 'streamGenerateContent?alt=sse' : 'generateContent';
}

export const geminiAdaptor: Adaptor = {
  wire: 'gemini',
  supportsStreamOptions: () => false,
  target(info) {
    const { model } = geminiModel(info.settings, info.upstreamModel);
    const version = info.settings.gemini.version(model);
    return {
      origin: trimBase(info.channel.baseUrl),
      path: `/${version}/models/${encodeURIComponent(model)}:${geminiAction(info)}`,
    };
  },
  headers: (info) => ({ 'x-goog-api-key': info.channel.key }),
  convertRequest(info, body) {
    // the model is in the path; a body field would be refused
    delete body.model;
    if (info.mode.geminiAction) return true;
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
  parseError: (status, body) => geminiCodec.parseError(status, body),
};
