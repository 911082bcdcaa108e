// Zhipu GLM v4 (channel type 26): OpenAI's API under `{base}/api/paas/v4` with the raw key as a Bearer token (no JWT:
// that was the v3 API, type 16). Chat, embeddings and image generation; a Claude client's messages go as they are to
// Zhipu's own Anthropic endpoint `{base}/api/anthropic/v1/messages` (as new-api sends them), the same Bearer key.
import { openaiCompatible } from '../openai/compatible.js';
import { splitBase } from '../openai/index.js';
import { openaiCodec } from '../../formats/openai/index.js';
import { claudeClient, claudeHeaders, speaksClaude } from '../claude-path.js';

const API = '/api/paas/v4';

/**
 * Zhipu's chat takes top_p in the open range (0, 1) and refuses 1, which OpenAI clients send as their default; new-api
 * sends 0.99 instead, and so does the relay. Returns whether the body changed.
 */
function openTopP(body: Record<string, unknown>): boolean {
  if (typeof body.top_p !== 'number' || body.top_p < 1) return false;
  body.top_p = 0.99;
  return true;
}

export const zhipuAdaptor = openaiCompatible({
  id: 'zhipu',
  types: [26],
  apiPath: API,
  serves: ['chat', 'embeddings', 'images'],
  alsoSpeaks: speaksClaude,
  endpoints: {
    chat: {
      target(info) {
        const { origin, prefix } = splitBase(info.channel.baseUrl);
        return {
          origin,
          path: prefix + (claudeClient(info) ? '/api/anthropic/v1/messages' : `${API}/chat/completions`),
        };
      },
      // a Claude client's body goes as it is (Zhipu's Anthropic endpoint takes Claude's ranges)
      convertRequest: (info, body) => !claudeClient(info) && openTopP(body),
      fromHub(info, hub) {
        const body = openaiCodec.requestFromHub(hub, { model: info.upstreamModel, stream: info.isStream });
        openTopP(body);
        return body;
      },
    },
  },
  headers: claudeHeaders,
});
