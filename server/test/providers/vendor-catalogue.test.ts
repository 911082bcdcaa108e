// The console's channel form reads the type catalogue the server serves (GET /api/channel/types): the six vendors of
// issue 43 are offered as relayable, with their providers' key hint, `other` field and default base URL.
import { describe, expect, it } from 'vitest';
import '../../src/relay/providers/index.js';
import { channelTypeCatalogue } from '../../src/services/channel-catalogue.js';

describe('the catalogue of the OpenAI-like vendors', () => {
  const entry = (type: number) => channelTypeCatalogue().find((e) => e.value === type)!;

  it('offers each as relayable with its default base URL', () => {
    expect([26, 38, 39, 44, 46, 53].map((t) => [t, entry(t).relayable, entry(t).default_base_url])).toEqual([
      [26, true, 'https://open.bigmodel.cn'],
      [38, true, 'https://api.jina.ai'],
      [39, true, 'https://api.cloudflare.com'],
      [44, true, 'https://api.moka.ai'],
      [46, true, 'https://qianfan.baidubce.com'],
      [53, true, 'https://llm.submodel.ai'],
    ]);
  });

  it('shows Qianfan’s composite key and Cloudflare’s account id field', () => {
    expect(entry(46)).toMatchObject({ key_hint: 'API Key|AppID', other_hint: '' });
    expect(entry(39)).toMatchObject({ key_hint: '', other_kind: 'account_id', other_hint: expect.any(String) });
    expect(entry(53)).toMatchObject({ label: 'Submodel', key_hint: '' });
  });
});

describe('the catalogue of the own-JSON vendors', () => {
  const entry = (type: number) => channelTypeCatalogue().find((e) => e.value === type)!;

  it('offers each as relayable with its default base URL', () => {
    expect([11, 17, 34, 35, 37, 49].map((t) => [t, entry(t).relayable, entry(t).default_base_url])).toEqual([
      [11, true, 'https://generativelanguage.googleapis.com'],
      [17, true, 'https://dashscope.aliyuncs.com'],
      [34, true, 'https://api.cohere.ai'],
      [35, true, 'https://api.minimax.chat'],
      [37, true, 'https://api.dify.ai'],
      [49, true, 'https://api.coze.cn'],
    ]);
  });

  it('labels `other` by what it holds: Ali’s plugin, Dify’s app type, Coze’s bot id', () => {
    expect(entry(17)).toMatchObject({ other_kind: 'plugin', other_hint: 'WebSearch' });
    expect(entry(37)).toMatchObject({ other_kind: 'app_type', other_hint: 'chat' });
    expect(entry(49)).toMatchObject({ label: 'Coze', other_kind: 'bot_id', key_hint: 'pat_xxx' });
    expect(entry(34).other_kind).toBeUndefined();
  });
});
