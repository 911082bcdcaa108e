// The realtime session's usage sum and price (services/pricing/realtime.ts): response.done usages as OpenAI sends them,
// with and without their details, summed and priced with new-api's audio formula and the cache ratio.
import { describe, expect, it } from 'vitest';
import type { PriceData } from '../../src/services/pricing/index.js';
import { addRealtimeUsage, emptyRealtimeUsage, realtimeQuota } from '../../src/services/pricing/realtime.js';

const price = (o: Partial<PriceData> = {}): PriceData => ({
  usePrice: false,
  modelPrice: 0,
  modelRatio: 1,
  completionRatio: 4,
  cacheRatio: 0.5,
  cacheCreationRatio: 1.25,
  groupRatio: 1,
  ...o,
});
const MODEL = 'gpt-4o-realtime-preview-2024-12-17'; // audio ratio 8, audio completion ratio 2

describe('realtime usage and price', () => {
  it('splits each side by its details; without them the whole side is text', () => {
    const u = emptyRealtimeUsage();
    expect(addRealtimeUsage(u, undefined)).toBe(false);
    expect(addRealtimeUsage(u, { input_tokens: 30, output_tokens: 7 })).toBe(true);
    expect(u).toMatchObject({ textIn: 30, audioIn: 0, textOut: 7, audioOut: 0, turns: 1 });
    addRealtimeUsage(u, {
      input_tokens: 50,
      output_tokens: 20,
      input_token_details: { audio_tokens: 40, cached_tokens: 6 },
      output_token_details: { text_tokens: 5, audio_tokens: 15 },
    });
    // text in is what audio leaves; cached tokens without their split are text
    expect(u).toMatchObject({ textIn: 40, audioIn: 40, cachedTextIn: 6, cachedAudioIn: 0, textOut: 12, audioOut: 15 });
    expect(u.turns).toBe(2);
  });

  it('prices the sum: text, cached text and audio at their ratios, × model and group ratio, rounded', () => {
    const u = emptyRealtimeUsage();
    addRealtimeUsage(u, {
      input_tokens: 110,
      output_tokens: 30,
      input_token_details: {
        text_tokens: 70,
        audio_tokens: 40,
        cached_tokens: 30,
        cached_tokens_details: { text_tokens: 20, audio_tokens: 10 },
      },
      output_token_details: { text_tokens: 10, audio_tokens: 20 },
    });
    // (70−20) + 20×0.5 + 10×4 + (40−10)×8 + 10×8×0.5 + 20×8×2 = 50 + 10 + 40 + 240 + 40 + 320 = 700
    expect(realtimeQuota(price(), u, MODEL, 500000)).toBe(700);
    expect(realtimeQuota(price({ modelRatio: 0.3, groupRatio: 1.5 }), u, MODEL, 500000)).toBe(315);
    // a fixed price is charged once for the session
    expect(realtimeQuota(price({ usePrice: true, modelPrice: 0.02 }), u, MODEL, 500000)).toBe(10000);
    // nothing used: nothing charged; a tiny non-zero price: at least 1
    expect(realtimeQuota(price(), emptyRealtimeUsage(), MODEL, 500000)).toBe(0);
    const one = emptyRealtimeUsage();
    addRealtimeUsage(one, { input_tokens: 1, output_tokens: 0 });
    expect(realtimeQuota(price({ modelRatio: 0.001 }), one, MODEL, 500000)).toBe(1);
  });
});
