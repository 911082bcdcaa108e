// Vertex AI (channel type 41): Gemini models at `…/publishers/google/models/{m}:generateContent` (Gemini's body) and
// Claude models at `…/publishers/anthropic/models/{m}:rawPredict` (Claude's body with Vertex's anthropic_version).
// The key is a service-account JSON; each request carries an OAuth access token obtained with it (token.ts, kept by
// the relay's credential cache and dropped when Vertex answers 401). The region comes from the channel's
// `other` (plain, or JSON per model with `default`).
import type { EndpointEntry, RelayInfo } from '../types.js';
import { defineProvider } from '../manifest.js';
import type { WireFormat } from '../../formats/codec.js';
import { claudeBodyFromHub, claudeHeaders } from '../anthropic/index.js';
import { claudeModel, prepareClaudeBody } from '../anthropic/thinking.js';
import { geminiModel, prepareGeminiBody } from '../gemini/settings.js';
import { geminiCodec } from '../../formats/gemini/index.js';
import { anthropicCodec } from '../../formats/anthropic/index.js';
import { parseServiceAccount } from './credentials.js';
import { vertexRegion } from './region.js';
import { vertexTarget } from './endpoint.js';
import { toVertexClaudeBody } from './body.js';
import { vertexCredential } from './token.js';
import { inlineRemoteImages } from '../media.js';

const isClaude = (info: RelayInfo) => info.upstreamModel.startsWith('claude');

/** Claude models Vertex names other than by the `<name>@<date>` rule. */
const VERTEX_CLAUDE_NAMES: Record<string, string> = {
  'claude-3-5-sonnet-20241022': 'claude-3-5-sonnet-v2@20241022',
};

/** Vertex names Claude models `<name>@<date>`: `claude-3-5-sonnet-20240620` → `claude-3-5-sonnet@20240620`. */
export function vertexClaudeModel(model: string): string {
  if (model.includes('@')) return model;
  return VERTEX_CLAUDE_NAMES[model] ?? model.replace(/-(\d{8})$/, '@$1');
}

/** An error body in Anthropic's shape (`"type": "error"` at the top), which the Anthropic publisher passes on. */
function isClaudeError(body: Buffer): boolean {
  try {
    return JSON.parse(body.toString('utf8'))?.type === 'error';
  } catch {
    return false;
  }
}

function wireOf(info: RelayInfo): WireFormat {
  return isClaude(info) ? 'anthropic' : 'gemini';
}

/** generateContent (Gemini models) or rawPredict (Claude models): every chat-like request. */
const chat: EndpointEntry = {
  target(info) {
    const sa = parseServiceAccount(info.channel.key);
    const claude = isClaude(info);
    const model = claude
      ? vertexClaudeModel(claudeModel(info.settings, info.upstreamModel).model)
      : geminiModel(info.settings, info.upstreamModel).model;
    return vertexTarget({
      project: sa.project_id,
      region: vertexRegion(info.channel.other, [info.originModel, info.upstreamModel, model]),
      publisher: claude ? 'anthropic' : 'google',
      model,
      action: claude ? 'rawPredict' : 'generateContent',
      stream: info.isStream,
      baseUrl: info.channel.baseUrl,
    });
  },
  headers(info) {
    if (!isClaude(info)) return {};
    // Vertex takes the version in the body; beta flags stay headers
    const { 'anthropic-version': _v, ...rest } = claudeHeaders(info);
    return rest;
  },
  convertRequest(info, body) {
    if (isClaude(info)) {
      prepareClaudeBody(info, body, 'native');
      const out = toVertexClaudeBody(body);
      for (const k of Object.keys(body)) delete body[k];
      Object.assign(body, out);
    } else {
      delete body.model;
      prepareGeminiBody(info.settings, body, info.upstreamModel, 'native');
    }
    return true;
  },
  async fromHub(info, hub) {
    // neither publisher fetches an arbitrary image URL on Vertex: remote images go inline
    const inlined = await inlineRemoteImages(hub, info.settings.fetchImage);
    if (isClaude(info)) return toVertexClaudeBody(claudeBodyFromHub(info, inlined));
    const body = geminiCodec.requestFromHub(inlined, { model: info.upstreamModel, stream: info.isStream });
    prepareGeminiBody(info.settings, body as Record<string, any>, info.upstreamModel, 'translated');
    return body;
  },
};

/**
 * Chat only: Vertex embeds through `:predict`, a different API this provider does not speak, so embeddings (an OpenAI
 * client's, or a Gemini client's embedContent on a Gemini model) are refused before anything is sent.
 */
export const vertexAdaptor = defineProvider({
  id: 'vertex',
  types: [41],
  wire: wireOf,
  endpoints: { chat },
  supportsStreamOptions: () => false,
  credential: vertexCredential,
  async authorize(info, req) {
    if (!info.settings.credentials) throw new Error('Vertex AI tokens are not available');
    req.headers.authorization = `Bearer ${await info.settings.credentials.get(vertexCredential, info.channel.key, info.channel)}`;
  },
  parseError(status, body) {
    // Vertex's own errors (auth, quota, routing) are Google-shaped even on the Anthropic publisher; Claude's own
    // (overloaded, invalid request) keep Anthropic's `{"type":"error","error":{"type",…}}`, whose `error` object the
    // Google reader would take for its own and lose the type of
    return isClaudeError(body) ? anthropicCodec.parseError(status, body) : geminiCodec.parseError(status, body);
  },
});
