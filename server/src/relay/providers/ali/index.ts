// Alibaba DashScope / Qwen (channel type 17): chat, completions and embeddings through DashScope's OpenAI-compatible
// mode `{base}/compatible-mode/v1/...` with the key as a Bearer token; rerank through its native text-rerank service,
// converted both ways (rerank.ts). new-api's headers: `X-DashScope-SSE: enable` on a stream and `X-DashScope-Plugin`
// from the channel's `other`. Image generation through DashScope's own image services (images.ts): the asynchronous
// image synthesis (`X-DashScope-Async`) is polled within the request, the synchronous multimodal generation answered
// at once. Image edits are not served (refused before anything is sent or charged); the asynchronous video synthesis
// belongs to the task engine. A Claude client's messages go as they are to DashScope's Anthropic-compatible endpoint
// `{base}/apps/anthropic/v1/messages` (claude-path.ts).
import { openaiCompatible, withVendorMessage } from '../openai/compatible.js';
import { splitBase } from '../openai/index.js';
import type { RelayInfo } from '../types.js';
import { aliImages } from './images.js';
import { claudeClient, claudeHeaders, speaksClaude } from '../claude-path.js';
import { aliRerank } from './rerank.js';

const API = '/compatible-mode/v1';

function dashScopeHeaders(info: RelayInfo): Record<string, string> {
  const h: Record<string, string> = claudeHeaders(info);
  if (info.isStream) h['X-DashScope-SSE'] = 'enable';
  const plugin = info.channel.other.trim();
  if (plugin) h['X-DashScope-Plugin'] = plugin;
  return h;
}

export const aliAdaptor = openaiCompatible({
  id: 'ali',
  types: [17],
  apiPath: API,
  serves: ['chat', 'completions', 'embeddings'],
  alsoSpeaks: speaksClaude,
  endpoints: {
    chat: {
      target(info) {
        const { origin, prefix } = splitBase(info.channel.baseUrl);
        return {
          origin,
          path: prefix + (claudeClient(info) ? '/apps/anthropic/v1/messages' : `${API}/chat/completions`),
        };
      },
    },
    rerank: aliRerank,
    images: aliImages,
  },
  headers: dashScopeHeaders,
  // the compatible mode answers with usage in a stream's last chunk when asked
  streamOptions: true,
  // the compatible mode's errors are OpenAI's shape; the native services' are {code, message, request_id}
  parseError: withVendorMessage((j) => j?.message),
});
