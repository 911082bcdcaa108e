// Channel facts of Anthropic: Anthropic's keys start with `sk-ant-`; a key of another shape on Anthropic's own API is
// a key pasted into the wrong type (a proxy given as base URL may hand out keys of any shape).
import { callsVendorApi, plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const anthropicChannelFacts = (): ChannelFacts =>
  plainFacts({
    keyHint: 'sk-ant-api03-...',
    check: (values) =>
      values.key && callsVendorApi(values) && !values.key.startsWith('sk-ant-')
        ? { field: 'key', message: 'Anthropic 密钥应以 sk-ant- 开头！使用代理时请填写代理地址' }
        : null,
  });
