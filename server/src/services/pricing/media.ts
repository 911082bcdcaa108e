// Audio-token and image pricing rules (new-api-compat.md §5.3, §4.8). Pure lookups; the quota formulas live in
// index.ts.

/** Audio input tokens cost this many text input tokens (gpt-4o audio / realtime models). */
export function getAudioRatio(model: string): number {
  if (model.includes('-realtime')) {
    if (model.endsWith('gpt-4o-realtime-preview-2024-12-17')) return 8;
    if (model.includes('mini')) return 10 / 0.6;
    return 20;
  }
  if (model.includes('-audio')) {
    if (model.endsWith('gpt-4o-audio-preview-2024-12-17')) return 16;
    if (model.includes('mini')) return 10 / 0.15;
    return 40;
  }
  return 20;
}

/** Audio output tokens cost this many audio input tokens. */
export function getAudioCompletionRatio(_model: string): number {
  return 2;
}

/** Whether chat requests for this model are billed with the audio formula (new-api-compat.md §5.10). */
export function isAudioModel(model: string): boolean {
  return model.startsWith('gpt-4o-audio') || model.startsWith('gpt-4o-mini-audio') || model.includes('-realtime');
}

export const DEFAULT_IMAGE_SIZE = '1024x1024';

const DALLE2_SIZES = new Set(['256x256', '512x512', '1024x1024']);
const DALLE3_SIZES = new Set(['1024x1024', '1024x1792', '1792x1024']);

/**
 * Image request size check (dall-e-2 / dall-e-3 only; other image models accept any size). Returns an error
 * message, or null when the request is acceptable. An empty size means the default 1024x1024.
 */
export function validateImageSize(model: string, size: string | undefined): string | null {
  const s = size ?? '';
  if (s.includes('×')) {
    return "size an unexpected error occurred in the parameter, please use 'x' instead of the multiplication sign '×'";
  }
  if (s === '') return null;
  if ((model === 'dall-e-2' || model === 'dall-e') && !DALLE2_SIZES.has(s)) {
    return 'size must be one of 256x256, 512x512, or 1024x1024 for dall-e-2';
  }
  if (model === 'dall-e-3' && !DALLE3_SIZES.has(s)) {
    return 'size must be one of 1024x1024, 1024x1792 or 1792x1024 for dall-e-3';
  }
  return null;
}

/** Price multiplier for the image size; unknown sizes cost as 1024x1024. */
export function imageSizeRatio(size: string | undefined): number {
  switch (size || DEFAULT_IMAGE_SIZE) {
    case '256x256':
      return 0.4;
    case '512x512':
      return 0.45;
    case '1024x1792':
    case '1792x1024':
      return 2;
    default:
      return 1;
  }
}

/** dall-e-3 "hd" costs 2× (1.5× for the tall and wide sizes); every other case 1. */
export function imageQualityRatio(model: string, size: string | undefined, quality: string | undefined): number {
  if (model !== 'dall-e-3' || quality !== 'hd') return 1;
  return size === '1024x1792' || size === '1792x1024' ? 1.5 : 2;
}
