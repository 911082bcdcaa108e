// Google PaLM 2 (channel type 11): the legacy v1beta2 chat API with `x-goog-api-key`, every client's request through
// the hub (wire.ts). new-api sends every model to chat-bison-001; here a model named chat-bison-… goes as it is and
// any other name (PaLM-2, new-api's) to chat-bison-001.
import { splitBase } from '../openai/index.js';
import { defineProvider } from '../manifest.js';
import { withVendorMessage } from '../openai/compatible.js';
import type { RelayInfo } from '../types.js';
import { palmCodec, palmRequestFromHub } from './wire.js';

export const DEFAULT_PALM_MODEL = 'chat-bison-001';

function palmModel(info: RelayInfo): string {
  return info.upstreamModel.startsWith('chat-bison') ? info.upstreamModel : DEFAULT_PALM_MODEL;
}

export const palmAdaptor = defineProvider({
  id: 'palm',
  types: [11],
  codec: palmCodec,
  framing: 'whole-json',
  endpoints: {
    chat: {
      target(info) {
        const { origin, prefix } = splitBase(info.channel.baseUrl);
        return { origin, path: `${prefix}/v1beta2/models/${encodeURIComponent(palmModel(info))}:generateMessage` };
      },
      fromHub: (_info, hub) => palmRequestFromHub(hub),
    },
  },
  supportsStreamOptions: () => false,
  headers: (info) => ({ 'x-goog-api-key': info.channel.key }),
  // Google's errors: {error: {code, message, status}}
  parseError: withVendorMessage((j) => j?.error?.message),
});
