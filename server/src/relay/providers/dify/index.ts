// Dify (channel type 37): an app's API key as a Bearer token. The channel's `other` says what the app is (apps.ts):
// a chatbot or chatflow (the default) and an agent take `{base}/v1/chat-messages`, a completion app
// `{base}/v1/completion-messages`, a workflow `{base}/v1/workflows/run`; new-api sends every app to chat-messages.
// Every client's request goes through the hub (wire.ts); nothing of the app's own settings (its model, temperature)
// can be changed by the request.
import { withVendorMessage } from '../openai/compatible.js';
import { splitBase } from '../openai/index.js';
import { defineProvider } from '../manifest.js';
import { difyCodec, difyQuery } from './wire.js';
import { difyAppOf, type DifyApp } from './apps.js';

const PATHS: Record<DifyApp, string> = {
  chat: '/v1/chat-messages',
  agent: '/v1/chat-messages',
  completion: '/v1/completion-messages',
  workflow: '/v1/workflows/run',
};

export const difyAdaptor = defineProvider({
  id: 'dify',
  types: [37],
  codec: difyCodec,
  endpoints: {
    chat: {
      target(info) {
        const { origin, prefix } = splitBase(info.channel.baseUrl);
        return { origin, path: prefix + PATHS[difyAppOf(info.channel.other)] };
      },
      fromHub(info, hub) {
        const app = difyAppOf(info.channel.other);
        const query = difyQuery(hub);
        // an agent app answers only in streams: asked so even for a whole answer (read whole by the codec)
        const streaming = info.isStream || app === 'agent';
        const body: Record<string, unknown> = {
          inputs: app === 'chat' || app === 'agent' ? {} : { query },
          response_mode: streaming ? 'streaming' : 'blocking',
          user: hub.user || hub.metadata?.user_id || 'api-user',
        };
        if (app === 'chat' || app === 'agent') body.query = query;
        return body;
      },
    },
  },
  supportsStreamOptions: () => false,
  headers: (info) => ({ authorization: `Bearer ${info.channel.key}` }),
  // Dify's errors: {code, message, status}
  parseError: withVendorMessage((j) => j?.message),
});
