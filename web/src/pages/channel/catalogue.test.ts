import { describe, expect, it } from 'vitest';
import { entryOf, typeSelectOptions, type ChannelTypeEntry } from './catalogue.js';
import { fieldTexts, typeFormSpec } from './types.js';

const entry = (over: Partial<ChannelTypeEntry> & { value: number }): ChannelTypeEntry => ({
  label: `type ${over.value}`,
  color: 'blue',
  default_base_url: '',
  relayable: true,
  key_hint: '',
  other_hint: '',
  models: [],
  ...over,
});

const CATALOGUE: ChannelTypeEntry[] = [
  entry({ value: 1, label: 'OpenAI', default_base_url: 'https://api.openai.com', key_hint: 'sk-...' }),
  entry({ value: 3, label: 'Azure OpenAI', other_kind: 'api_version', other_hint: '2025-04-01-preview' }),
  entry({
    value: 14,
    label: 'Anthropic Claude',
    default_base_url: 'https://api.anthropic.com',
    key_hint: 'sk-ant-...',
  }),
  entry({ value: 33, label: 'AWS Claude', key_hint: 'AccessKeyId|SecretAccessKey|region' }),
  entry({
    value: 41,
    label: 'Vertex AI',
    key_hint: '{"type": "service_account"}',
    other_kind: 'region_or_model_map',
    other_hint: 'us-central1',
  }),
  entry({ value: 2, label: 'Midjourney Proxy', relayable: false }),
  entry({ value: 39, label: 'Cloudflare', relayable: false, other_kind: 'account_id', other_hint: 'abc' }),
];

describe('type select', () => {
  const unknown = (type: number) => `unknown ${type}`;

  it('offers only the relayable types for a new channel', () => {
    expect(typeSelectOptions(CATALOGUE, undefined, unknown).map((o) => o.value)).toEqual([1, 3, 14, 33, 41]);
  });

  it('shows an edited channel of another type under its name, or as unknown', () => {
    expect(typeSelectOptions(CATALOGUE, 2, unknown).at(-1)).toEqual({ value: 2, label: 'Midjourney Proxy' });
    expect(typeSelectOptions(CATALOGUE, 99, unknown).at(-1)).toEqual({ value: 99, label: 'unknown 99' });
    expect(typeSelectOptions(CATALOGUE, 14, unknown)).toHaveLength(5);
  });

  it("offers the old OpenAI resellers the server relays, under new-api's names, with their default base URL", () => {
    const resellers = [
      entry({ value: 6, label: 'OpenAIMax', default_base_url: 'https://api.openaimax.com' }),
      entry({ value: 7, label: 'OhMyGPT', default_base_url: 'https://api.ohmygpt.com' }),
      entry({ value: 9, label: 'AILS', default_base_url: 'https://api.caipacity.com' }),
      entry({ value: 10, label: 'AIProxy', default_base_url: 'https://api.aiproxy.io' }),
      entry({ value: 12, label: 'API2GPT', default_base_url: 'https://api.api2gpt.com' }),
      entry({ value: 13, label: 'AIGC2D', default_base_url: 'https://api.aigc2d.com' }),
    ];
    const catalogue = [...CATALOGUE.slice(0, 5), ...resellers, ...CATALOGUE.slice(5)];
    expect(typeSelectOptions(catalogue, undefined, unknown).slice(5)).toEqual([
      { value: 6, label: 'OpenAIMax' },
      { value: 7, label: 'OhMyGPT' },
      { value: 9, label: 'AILS' },
      { value: 10, label: 'AIProxy' },
      { value: 12, label: 'API2GPT' },
      { value: 13, label: 'AIGC2D' },
    ]);
    // an OpenAI-protocol form: a plain key, the base URL optional with the reseller's own as its placeholder
    expect(fieldTexts(typeFormSpec(7), entryOf(catalogue, 7))).toEqual({
      baseUrl: ['form.baseUrlDefaultPh', { url: 'https://api.ohmygpt.com' }],
      key: ['form.keyPh'],
    });
    expect(typeFormSpec(7).baseUrlRequired).toBeUndefined();
  });

  it('is empty until the catalogue is loaded', () => {
    expect(typeSelectOptions(undefined, undefined, unknown)).toEqual([]);
    expect(entryOf(undefined, 1)).toBeUndefined();
  });
});

describe('field texts from the catalogue', () => {
  const textsOf = (type: number) => fieldTexts(typeFormSpec(type), entryOf(CATALOGUE, type));

  it('shows the default base URL and the key format as placeholders', () => {
    expect(textsOf(14)).toEqual({
      baseUrl: ['form.baseUrlDefaultPh', { url: 'https://api.anthropic.com' }],
      key: ['form.keyFormatPh', { format: 'sk-ant-...' }],
    });
    // Midjourney Proxy: the path before /mj, and its mj-api-secret as the key
    expect(textsOf(2)).toEqual({ baseUrl: ['form.mjUrlPh'], key: ['form.mjKeyPh', { format: '' }] });
  });

  it('says Bedrock and Vertex AI need no base URL, and words the Vertex key and region', () => {
    expect(textsOf(33).baseUrl).toEqual(['form.bedrockBaseUrlPh']);
    expect(textsOf(33).key).toEqual(['form.keyFormatPh', { format: 'AccessKeyId|SecretAccessKey|region' }]);
    expect(textsOf(33).other).toBeUndefined();
    expect(textsOf(41)).toEqual({
      baseUrl: ['form.vertexBaseUrlPh'],
      key: ['form.vertexKeyPh', { format: '{"type": "service_account"}' }],
      other: {
        label: ['form.vertexRegion'],
        placeholder: ['form.vertexRegionPh', { example: 'us-central1' }],
        multiline: true,
      },
    });
  });

  it('labels `other` by what it holds, with the catalogue example', () => {
    expect(textsOf(3).other).toEqual({
      label: ['form.azureVersion'],
      placeholder: ['form.azureVersionPh', { example: '2025-04-01-preview' }],
      multiline: false,
    });
    expect(textsOf(39).other?.label).toEqual(['form.accountId']);
    // Dify's app type and Coze's bot id (issue 43)
    const dify = entry({ value: 37, label: 'Dify', other_kind: 'app_type', other_hint: 'chat' });
    expect(fieldTexts(typeFormSpec(37), dify).other?.label).toEqual(['form.difyApp']);
    const coze = entry({ value: 49, label: 'Coze', other_kind: 'bot_id', other_hint: '7342866812345678901' });
    expect(fieldTexts(typeFormSpec(49), coze).other?.placeholder).toEqual([
      'form.cozeBotPh',
      { example: '7342866812345678901' },
    ]);
    // a type's own wording of the base URL wins over the default one
    expect(textsOf(3).baseUrl).toEqual(['form.azureEndpointPh']);
  });
});
