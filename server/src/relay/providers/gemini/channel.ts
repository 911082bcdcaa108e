// Channel facts of Gemini: Google's API keys start with `AIza`; a key of another shape on Google's own API is a key
// pasted into the wrong type (a proxy given as base URL may hand out keys of any shape). Its model list is Gemini's
// own, paged.
import {
  callsVendorApi,
  MAX_MODEL_PAGES,
  plainFacts,
  type ChannelFacts,
  type UpstreamAccount,
} from '../channel-facts-contract.js';

/** Gemini answers at most 1000 models a page. */
const GEMINI_PAGE_SIZE = 1000;

/** The model-list API version; v1beta lists every model, including those v1 does not serve yet. */
const GEMINI_LIST_VERSION = 'v1beta';

/** The methods that make a Gemini model usable through the relay: chat and embeddings. */
const GEMINI_RELAYABLE_METHODS = ['generateContent', 'embedContent'];

export function geminiModelsUrl(base: string, pageToken?: string): string {
  const query = new URLSearchParams({ pageSize: String(GEMINI_PAGE_SIZE) });
  if (pageToken) query.set('pageToken', pageToken);
  return `${base}/${GEMINI_LIST_VERSION}/models?${query}`;
}

/**
 * Gemini's `GET /v1beta/models`, every page, keeping the models that generate content or embed; names lose their
 * `models/` prefix. The key goes in `x-goog-api-key` (not `?key=`, which would put it in proxies' access logs).
 */
async function listGeminiModels({ base, key, get }: UpstreamAccount): Promise<string[]> {
  const out: string[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_MODEL_PAGES; page++) {
    const j = await get(geminiModelsUrl(base, pageToken), { 'x-goog-api-key': key, accept: 'application/json' });
    const models: unknown[] = Array.isArray(j?.models) ? j.models : [];
    for (const m of models) {
      const name = (m as { name?: unknown })?.name;
      const methods = (m as { supportedGenerationMethods?: unknown })?.supportedGenerationMethods;
      if (typeof name !== 'string' || !Array.isArray(methods)) continue;
      if (!methods.some((x) => GEMINI_RELAYABLE_METHODS.includes(x))) continue;
      out.push(name.replace(/^models\//, ''));
    }
    pageToken = typeof j?.nextPageToken === 'string' && j.nextPageToken ? j.nextPageToken : undefined;
    if (!pageToken) break;
  }
  return out;
}

export const geminiChannelFacts = (): ChannelFacts =>
  plainFacts({
    keyHint: 'AIza...',
    check: (values) =>
      values.key && callsVendorApi(values) && !values.key.startsWith('AIza')
        ? { field: 'key', message: 'Gemini 密钥应以 AIza 开头！使用代理时请填写代理地址' }
        : null,
    models: { url: (base) => geminiModelsUrl(base), list: listGeminiModels },
  });
