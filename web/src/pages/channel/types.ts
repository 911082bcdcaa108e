// Channel catalogue for the console (spec §3 channel types, new-api-compat.md §7). Labels follow the server catalogue
// (server/src/services/channel-types.ts); colours only decorate the type tag.
export interface ChannelTypeOption {
  value: number;
  label: string;
  color: string;
}

export const CHANNEL_TYPE_OPTIONS: ChannelTypeOption[] = [
  { value: 1, label: 'OpenAI', color: 'green' },
  { value: 2, label: 'Midjourney Proxy', color: 'blue' },
  { value: 5, label: 'Midjourney Proxy Plus', color: 'blue' },
  { value: 36, label: 'Suno API', color: 'green' },
  { value: 4, label: 'Ollama', color: 'gray' },
  { value: 14, label: 'Anthropic Claude', color: 'purple' },
  { value: 33, label: 'AWS Claude', color: 'purple' },
  { value: 41, label: 'Vertex AI', color: 'blue' },
  { value: 3, label: 'Azure OpenAI', color: 'cyan' },
  { value: 34, label: 'Cohere', color: 'purple' },
  { value: 39, label: 'Cloudflare', color: 'gray' },
  { value: 43, label: 'DeepSeek', color: 'blue' },
  { value: 11, label: 'Google PaLM2', color: 'orange' },
  { value: 24, label: 'Google Gemini', color: 'orange' },
  { value: 8, label: '自定义渠道', color: 'pink' },
  { value: 22, label: '知识库：FastGPT', color: 'blue' },
  { value: 21, label: '知识库：AI Proxy', color: 'purple' },
  { value: 20, label: 'OpenRouter', color: 'black' },
  { value: 15, label: '百度文心千帆', color: 'blue' },
  { value: 46, label: '百度文心千帆V2', color: 'blue' },
  { value: 17, label: '阿里通义千问', color: 'orange' },
  { value: 18, label: '讯飞星火认知', color: 'blue' },
  { value: 16, label: '智谱 ChatGLM', color: 'volcano' },
  { value: 26, label: '智谱 GLM-4V', color: 'purple' },
  { value: 19, label: '360 智脑', color: 'gray' },
  { value: 25, label: 'Moonshot', color: 'green' },
  { value: 23, label: '腾讯混元', color: 'cyan' },
  { value: 31, label: '零一万物', color: 'green' },
  { value: 35, label: 'MiniMax', color: 'green' },
  { value: 37, label: 'Dify', color: 'cyan' },
  { value: 38, label: 'Jina', color: 'blue' },
  { value: 40, label: 'SiliconCloud', color: 'purple' },
  { value: 42, label: 'Mistral AI', color: 'blue' },
  { value: 44, label: '嵌入模型：MokaAI M3E', color: 'red' },
  { value: 45, label: '字节火山方舟、豆包通用', color: 'blue' },
  { value: 47, label: 'Xinference', color: 'blue' },
  { value: 48, label: 'xAI', color: 'blue' },
  { value: 27, label: 'Perplexity', color: 'gray' },
];

export const CHANNEL_TYPE_BY_CODE: Record<number, ChannelTypeOption> = Object.fromEntries(
  CHANNEL_TYPE_OPTIONS.map((o) => [o.value, o]),
);

/** Models preset when a task-relay type is picked (spec §3: types 2 and 5 Midjourney, 36 Suno). */
export const PRESET_TYPE_MODELS: Record<number, string[]> = {
  2: ['mj_imagine', 'mj_variation', 'mj_reroll', 'mj_blend', 'mj_upscale', 'mj_describe'],
  5: [
    'mj_imagine',
    'mj_variation',
    'mj_reroll',
    'mj_blend',
    'mj_upscale',
    'mj_describe',
    'mj_zoom',
    'mj_shorten',
    'mj_modal',
    'mj_inpaint',
    'mj_custom_zoom',
    'mj_high_variation',
    'mj_low_variation',
    'mj_pan',
    'mj_uploads',
  ],
  36: ['suno_music', 'suno_lyrics'],
};

/** Which extra inputs a channel type shows (spec §3: 1, 3, 8, 18, 21, 22, 36, 37, 39, 40, 41, 45 are special). */
export interface TypeFormSpec {
  /** i18n key of the label of `other` when the type uses it. */
  otherLabel?: string;
  otherPlaceholder?: string;
  otherDefault?: string;
  /** Base URL must be filled (no usable default). */
  baseUrlRequired?: boolean;
  baseUrlLabel?: string;
  baseUrlPlaceholder?: string;
  /** Fixed choice of base URLs (VolcEngine regions). */
  baseUrlChoices?: { value: string; label: string }[];
  keyPlaceholder?: string;
  /** Key is a single JSON document, never split per line. */
  keyIsJson?: boolean;
  organization?: boolean;
  /** i18n key of an informational banner. */
  notice?: string;
}

export function typeFormSpec(type: number): TypeFormSpec {
  switch (type) {
    case 1:
      return { organization: true };
    case 3:
      return {
        baseUrlRequired: true,
        baseUrlLabel: 'form.azureEndpoint',
        baseUrlPlaceholder: 'form.azureEndpointPh',
        otherLabel: 'form.azureVersion',
        otherPlaceholder: 'form.azureVersionPh',
        notice: 'form.azureNotice',
      };
    case 8:
      return { baseUrlRequired: true, baseUrlLabel: 'form.customUrl', baseUrlPlaceholder: 'form.customUrlPh' };
    case 18:
      return {
        otherLabel: 'form.sparkVersion',
        otherPlaceholder: 'form.sparkVersionPh',
        otherDefault: 'v2.1',
        keyPlaceholder: 'APPID|APISecret|APIKey',
      };
    case 21:
      return { otherLabel: 'form.knowledgeId', otherPlaceholder: 'form.knowledgeIdPh' };
    case 22:
      return { baseUrlPlaceholder: 'form.fastgptUrlPh', keyPlaceholder: 'form.fastgptKeyPh' };
    case 36:
      return { baseUrlRequired: true, baseUrlPlaceholder: 'form.sunoUrlPh' };
    case 37:
      return { notice: 'form.difyNotice' };
    case 39:
      return { otherLabel: 'form.accountId', otherPlaceholder: 'form.accountIdPh' };
    case 40:
      return { notice: 'form.siliconNotice' };
    case 41:
      return {
        otherLabel: 'form.vertexRegion',
        otherPlaceholder: 'form.vertexRegionPh',
        keyIsJson: true,
        keyPlaceholder: 'form.vertexKeyPh',
      };
    case 45:
      return {
        baseUrlChoices: [
          { value: 'https://ark.cn-beijing.volces.com', label: 'form.volcCn' },
          { value: 'https://ark.ap-southeast.bytepluses.com', label: 'form.volcIntl' },
        ],
      };
    case 15:
      return { keyPlaceholder: 'APIKey|SecretKey' };
    case 23:
      return { keyPlaceholder: 'AppId|SecretId|SecretKey' };
    case 33:
      return { keyPlaceholder: 'Ak|Sk|Region' };
    case 17:
      return { otherLabel: 'form.aliPlugin', otherPlaceholder: 'form.aliPluginPh' };
    default:
      return {};
  }
}
