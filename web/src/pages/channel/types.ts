// What the channel drawer shows for each type (spec §3: types 1, 3, 8, 18, 21, 22, 36, 37, 39, 40, 41, 45 have special
// forms; 14, 24, 33 and 41 have their own key formats). The facts (names, default base URLs, key formats, what `other`
// holds) come from the server's catalogue (catalogue.ts); this file only lays the form out and words it.
import type { ChannelTypeEntry, OtherFieldKind } from './catalogue.js';

/** Which inputs a channel type shows beyond the common ones, and how it words them. */
export interface TypeFormSpec {
  /** `other` when left empty (Spark's API version). */
  otherDefault?: string;
  /** Base URL must be filled (no usable default). */
  baseUrlRequired?: boolean;
  baseUrlLabel?: string;
  baseUrlPlaceholder?: string;
  /** Fixed choice of base URLs (VolcEngine regions). */
  baseUrlChoices?: { value: string; label: string }[];
  /** i18n key of the key placeholder, when the type words it its own way ({{format}} is the catalogue's key hint). */
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
        notice: 'form.azureNotice',
      };
    case 8:
      return { baseUrlRequired: true, baseUrlLabel: 'form.customUrl', baseUrlPlaceholder: 'form.customUrlPh' };
    case 18:
      return { otherDefault: 'v2.1' };
    case 22:
      return { baseUrlPlaceholder: 'form.fastgptUrlPh', keyPlaceholder: 'form.fastgptKeyPh' };
    case 2:
    case 5:
      // the key is midjourney-proxy's mj-api-secret
      return { baseUrlRequired: true, baseUrlPlaceholder: 'form.mjUrlPh', keyPlaceholder: 'form.mjKeyPh' };
    case 36:
      return { baseUrlRequired: true, baseUrlPlaceholder: 'form.sunoUrlPh' };
    case 37:
      return { notice: 'form.difyNotice' };
    case 40:
      return { notice: 'form.siliconNotice' };
    case 33:
      // the key names the region, which names the endpoint; a base URL is only for a VPC endpoint or a proxy
      return { baseUrlPlaceholder: 'form.bedrockBaseUrlPh' };
    case 41:
      // the region (other) names the endpoint, as for Bedrock
      return {
        baseUrlPlaceholder: 'form.vertexBaseUrlPh',
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
    default:
      return {};
  }
}

/** The label and placeholder (with {{example}}, the catalogue's other_hint) of `other`, by what it holds. */
const OTHER_FIELD_TEXTS: Record<OtherFieldKind, { label: string; placeholder: string }> = {
  api_version: { label: 'form.azureVersion', placeholder: 'form.azureVersionPh' },
  region_or_model_map: { label: 'form.vertexRegion', placeholder: 'form.vertexRegionPh' },
  spark_version: { label: 'form.sparkVersion', placeholder: 'form.sparkVersionPh' },
  knowledge_id: { label: 'form.knowledgeId', placeholder: 'form.knowledgeIdPh' },
  account_id: { label: 'form.accountId', placeholder: 'form.accountIdPh' },
  plugin: { label: 'form.aliPlugin', placeholder: 'form.aliPluginPh' },
  app_type: { label: 'form.difyApp', placeholder: 'form.difyAppPh' },
  bot_id: { label: 'form.cozeBot', placeholder: 'form.cozeBotPh' },
};

/** An i18n key with its interpolation values. */
export type Text = [key: string, params?: Record<string, string>];

export interface FieldTexts {
  baseUrl: Text;
  key: Text;
  /** absent when the type has no `other` field */
  other?: { label: Text; placeholder: Text; multiline: boolean };
}

/** The drawer's placeholders and labels for a type, from its layout and its catalogue entry. */
export function fieldTexts(spec: TypeFormSpec, entry: ChannelTypeEntry | undefined): FieldTexts {
  const baseUrl: Text = spec.baseUrlPlaceholder
    ? [spec.baseUrlPlaceholder]
    : entry?.default_base_url
      ? ['form.baseUrlDefaultPh', { url: entry.default_base_url }]
      : ['form.baseUrlPh'];
  const format = entry?.key_hint ?? '';
  const key: Text = spec.keyPlaceholder
    ? [spec.keyPlaceholder, { format }]
    : format
      ? ['form.keyFormatPh', { format }]
      : ['form.keyPh'];
  const texts: FieldTexts = { baseUrl, key };
  const kind = entry?.other_kind;
  if (kind) {
    const t = OTHER_FIELD_TEXTS[kind];
    texts.other = {
      label: [t.label],
      placeholder: [t.placeholder, { example: entry.other_hint }],
      multiline: kind === 'region_or_model_map',
    };
  }
  return texts;
}
