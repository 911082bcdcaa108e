// Cohere (channel type 34): the v1 API with the key as a Bearer token. Chat at `{base}/v1/chat` in Cohere's own body
// (wire.ts), every client's request through the hub, its stream newline-delimited JSON; rerank at `{base}/v1/rerank`,
// whose body and answer are the relay's own rerank format (passed as they are, billed from the answer's usage or
// counted locally); OpenAI embeddings on `{base}/v1/embed` (embed.ts).
import type { WireFormat } from '../../formats/codec.js';
import { withVendorMessage } from '../openai/compatible.js';
import { splitBase } from '../openai/index.js';
import { defineProvider } from '../manifest.js';
import type { RelayInfo } from '../types.js';
import { cohereCodec, cohereRequestFromHub } from './wire.js';
import { cohereEmbed } from './embed.js';

const OPENAI: readonly WireFormat[] = ['openai'];
const NONE: readonly WireFormat[] = [];

const at = (path: string) => (info: RelayInfo) => {
  const { origin, prefix } = splitBase(info.channel.baseUrl);
  return { origin, path: prefix + path };
};

export const cohereAdaptor = defineProvider({
  id: 'cohere',
  types: [34],
  codec: cohereCodec,
  framing: 'ndjson',
  // rerank and embeddings take an OpenAI client's body on the native lane (converted there); chat never does
  alsoSpeaks: (info) => (info.mode.endpoint === 'chat' ? NONE : OPENAI),
  endpoints: {
    chat: {
      target: at('/v1/chat'),
      fromHub: (info, hub) => cohereRequestFromHub(hub, info.upstreamModel, info.isStream),
    },
    rerank: { target: at('/v1/rerank') },
    embeddings: cohereEmbed,
  },
  supportsStreamOptions: () => false,
  headers: (info) => ({ authorization: `Bearer ${info.channel.key}` }),
  // Cohere's errors: {"message": "…"}
  parseError: withVendorMessage((j) => j?.message),
});
