// AWS Bedrock (channel type 33): Claude models through InvokeModel / InvokeModelWithResponseStream, the key
// `AK|SK|region`, every request signed with SigV4 over its final bytes (sign.ts, AWS's own signer), streams in
// AWS's binary event-stream framing. The body is Claude's with Bedrock's anthropic_version and no model or stream.
import type { RelayInfo } from '../types.js';
import { defineProvider } from '../manifest.js';
import { claudeBodyFromHub, claudeHeaders } from '../anthropic/index.js';
import { claudeModel, prepareClaudeBody } from '../anthropic/thinking.js';
import { parseBedrockKey } from './credentials.js';
import { bedrockModelId } from './models.js';
import { bedrockTarget } from './endpoint.js';
import { toBedrockClaudeBody } from './body.js';
import { signRequest } from './sign.js';
import { parseBedrockProviderError } from './errors.js';
import { inlineClaudeImageUrls, inlineRemoteImages } from '../media.js';

function modelIdOf(info: RelayInfo): string {
  const { region } = parseBedrockKey(info.channel.key);
  return bedrockModelId(claudeModel(info.settings, info.upstreamModel).model, region);
}

/** Bedrock takes Anthropic's beta flags in the body, not as a header. */
function withBeta(info: RelayInfo, body: Record<string, unknown>): Record<string, unknown> {
  const beta = claudeHeaders(info)['anthropic-beta'];
  if (beta && !body.anthropic_beta) body.anthropic_beta = beta.split(',').map((s) => s.trim());
  return body;
}

/** A Claude client's body: remote images inline, claude.* options applied, in Bedrock's shape. */
async function claudeBodyForBedrock(info: RelayInfo, body: Record<string, unknown>): Promise<boolean> {
  // Bedrock fetches no image URLs: a Claude client's are fetched here and sent inline
  await inlineClaudeImageUrls(body, info.settings.fetchImage);
  prepareClaudeBody(info, body, 'native');
  const out = withBeta(info, toBedrockClaudeBody(body));
  for (const k of Object.keys(body)) delete body[k];
  Object.assign(body, out);
  return true;
}

/** Claude's Messages through InvokeModel is its only endpoint: every chat-like request. */
export const bedrockAdaptor = defineProvider({
  id: 'bedrock',
  types: [33],
  wire: 'anthropic',
  framing: 'aws-eventstream',
  endpoints: {
    chat: {
      target(info) {
        const { region } = parseBedrockKey(info.channel.key);
        return bedrockTarget({
          region,
          modelId: modelIdOf(info),
          stream: info.isStream,
          baseUrl: info.channel.baseUrl,
        });
      },
      convertRequest: claudeBodyForBedrock,
      // Bedrock takes Claude images as base64 only (no URL sources): remote images go inline
      fromHub: async (info, hub) =>
        withBeta(
          info,
          toBedrockClaudeBody(claudeBodyFromHub(info, await inlineRemoteImages(hub, info.settings.fetchImage))),
        ),
    },
  },
  supportsStreamOptions: () => false,
  headers: (info) => ({
    accept: info.isStream ? 'application/vnd.amazon.eventstream' : 'application/json',
  }),
  // SigV4: every request is signed with the key, nothing is kept between them
  credential: { kind: 'signed' },
  async authorize(info, req) {
    const signed = await signRequest(parseBedrockKey(info.channel.key), {
      method: req.method,
      url: req.origin + req.path,
      headers: req.headers,
      body: req.body,
    });
    for (const k of Object.keys(req.headers)) delete req.headers[k];
    Object.assign(req.headers, signed);
  },
  parseError: (status, body, headers) => parseBedrockProviderError(status, headers ?? {}, body),
});
