// Midjourney Proxy (type 2) and Midjourney Proxy Plus (type 5) as a provider of the relay: no endpoint (no chat, no
// embeddings, no images of the OpenAI API ever go to a drawing channel), registered so that the channel cache routes
// the `mj_*` and `swap_face` models to these channels. Its requests are the task engine's (relay/tasks/mj-*.ts), built
// by this folder's pure modules.
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';

export const MJ_CHANNEL_TYPES: readonly number[] = [2, 5];

export const midjourneyAdaptor = defineProvider({
  id: 'midjourney',
  types: [...MJ_CHANNEL_TYPES],
  endpoints: {},
  target: (info) => ({ origin: info.channel.baseUrl.replace(/\/+$/, ''), path: '/mj' }),
  headers: (info) => ({ 'mj-api-secret': info.channel.key.replace(/^Bearer /, '') }),
  supportsStreamOptions: () => false,
  parseError: (status, body, headers) => openaiAdaptor.parseError(status, body, headers),
});
