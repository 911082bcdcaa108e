// Channel facts of Gemini: Google's API keys start with `AIza`; a key of another shape on Google's own API is a key
// pasted into the wrong type (a proxy given as base URL may hand out keys of any shape).
import { callsVendorApi, plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const geminiChannelFacts = (): ChannelFacts =>
  plainFacts({
    keyHint: 'AIza...',
    check: (values) =>
      values.key && callsVendorApi(values) && !values.key.startsWith('AIza')
        ? { field: 'key', message: 'Gemini 密钥应以 AIza 开头！使用代理时请填写代理地址' }
        : null,
  });
