// Cloudflare Workers AI (channel type 39): the OpenAI-compatible API of an account,
// `{base}/client/v4/accounts/{account id}/ai/v1`, with the API token as a Bearer token; the account id is the
// channel's `other` (checked on save, channel.ts). Chat, embeddings and the Responses API, which a Responses client
// reaches as it is. Image generation and speech to text go to the model's own `/ai/run/{model}` (run.ts).
import { openaiCompatible, withVendorMessage } from '../openai/compatible.js';
import type { WireFormat } from '../../formats/codec.js';
import { accountRoot, cloudflareImages, cloudflareTranscription } from './run.js';

const RESPONSES: readonly WireFormat[] = ['responses'];

export const cloudflareAdaptor = openaiCompatible({
  id: 'cloudflare',
  types: [39],
  apiPath: (info) => `${accountRoot(info)}/ai/v1`,
  serves: ['chat', 'embeddings', 'responses'],
  endpoints: {
    images: cloudflareImages,
    audio_transcription: cloudflareTranscription,
    audio_translation: cloudflareTranscription,
  },
  alsoSpeaks: () => RESPONSES,
  // Cloudflare's API errors: {success: false, errors: [{code, message}], messages: []}
  parseError: withVendorMessage((j) => j?.errors?.[0]?.message),
});
