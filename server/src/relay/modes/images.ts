// POST /v1/images/generations (JSON) and /v1/images/edits (multipart, forwarded unchanged) (new-api-compat.md §4.8,
// §5.3). The charge is known before the call: imageQuota (per image × size ratio × quality ratio × n × group ratio) is
// reserved up front and charged once the upstream answered 200; any failure refunds it. Defaults n=1 and size
// 1024x1024 are used for billing only — the body goes upstream as the client sent it (new-api does the same).
import { DEFAULT_IMAGE_SIZE, imageQuota, validateImageSize } from '../../services/pricing/index.js';
import type { RelayMode } from './mode.js';

const NONE = { text: '', toolCalls: 0 };

function imageCount(body: Record<string, any>): number | null {
  if (body.n === undefined || body.n === null || body.n === '') return 1;
  const n = Number(body.n);
  if (!Number.isInteger(n) || n < 0 || n > 10) return null;
  return n === 0 ? 1 : n;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

function validateImage(body: Record<string, any>): string | null {
  if (!str(body.prompt)) return 'prompt is required';
  const sizeError = validateImageSize(String(body.model ?? ''), str(body.size));
  if (sizeError) return sizeError;
  if (imageCount(body) === null) return 'invalid value of n';
  return null;
}

const base = {
  canStream: false,
  inputOnly: true,
  promptTokens: () => 0,
  responseText: () => NONE,
  chunkText: () => NONE,
  fixedQuota(price, body, model, quotaPerUnit) {
    return imageQuota(
      price,
      { model, size: str(body.size) ?? DEFAULT_IMAGE_SIZE, quality: str(body.quality), n: imageCount(body) ?? 1 },
      quotaPerUnit,
    );
  },
  logContent(body) {
    return `大小 ${str(body.size) ?? DEFAULT_IMAGE_SIZE}, 品质 ${str(body.quality) ?? 'standard'}, 数量 ${imageCount(body) ?? 1}`;
  },
} satisfies Partial<RelayMode>;

export const imageGenerationsMode: RelayMode = {
  ...base,
  name: 'images',
  endpoint: 'images',
  defaultModel: 'dall-e',
  validate: validateImage,
};

export const imageEditsMode: RelayMode = {
  ...base,
  name: 'image_edits',
  endpoint: 'image_edits',
  // new-api-compat.md §4.3 names no default for edits; OpenAI's own default for this endpoint is dall-e-2
  defaultModel: 'dall-e-2',
  multipart: true,
  validate(body) {
    if (!body.image && !body['image[]']) return 'image is required';
    return validateImage(body);
  },
};
