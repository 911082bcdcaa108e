// Channel facts of Anthropic: Anthropic's keys start with `sk-ant-`; a key of another shape on Anthropic's own API is
// a key pasted into the wrong type (a proxy given as base URL may hand out keys of any shape). Its model list is
// Anthropic's own, paged.
import {
  callsVendorApi,
  MAX_MODEL_PAGES,
  plainFacts,
  type ChannelFacts,
  type UpstreamAccount,
} from '../channel-facts-contract.js';

const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic's largest page */
const ANTHROPIC_PAGE_SIZE = 1000;

export function anthropicModelsUrl(base: string, afterId?: string): string {
  const query = new URLSearchParams({ limit: String(ANTHROPIC_PAGE_SIZE) });
  if (afterId) query.set('after_id', afterId);
  return `${base}/v1/models?${query}`;
}

/** Anthropic's `GET /v1/models` with `x-api-key`, every page (`has_more`, then `after_id` = the page's `last_id`). */
async function listAnthropicModels({ base, key, get }: UpstreamAccount): Promise<string[]> {
  const out: string[] = [];
  let afterId: string | undefined;
  for (let page = 0; page < MAX_MODEL_PAGES; page++) {
    const j = await get(anthropicModelsUrl(base, afterId), {
      'x-api-key': key,
      'anthropic-version': ANTHROPIC_VERSION,
      accept: 'application/json',
    });
    const data: unknown[] = Array.isArray(j?.data) ? j.data : [];
    for (const m of data) {
      const id = (m as { id?: unknown })?.id;
      if (typeof id === 'string' && id) out.push(id);
    }
    const last = typeof j?.last_id === 'string' && j.last_id ? j.last_id : undefined;
    if (j?.has_more !== true || !last) break;
    afterId = last;
  }
  return out;
}

export const anthropicChannelFacts = (): ChannelFacts =>
  plainFacts({
    keyHint: 'sk-ant-api03-...',
    check: (values) =>
      values.key && callsVendorApi(values) && !values.key.startsWith('sk-ant-')
        ? { field: 'key', message: 'Anthropic 密钥应以 sk-ant- 开头！使用代理时请填写代理地址' }
        : null,
    models: { url: (base) => anthropicModelsUrl(base), list: listAnthropicModels },
  });
