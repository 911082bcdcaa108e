// Which model a channel test asks for (issue 46, point 4): a new Claude or Gemini channel filled with its type's
// defaults is tested with a model that has a price, so its first test does not fail on pricing.
import { describe, expect, it } from 'vitest';
import { testModelOf } from '../../src/relay/channel-probe.js';
import type { CachedChannel } from '../../src/services/cache/channel-cache.js';
import { CHANNEL_TYPES } from '../../src/services/channel-types.js';
import { getModelPrice, getModelRatio } from '../../src/services/pricing/index.js';
import { OptionStore } from '../../src/services/options.js';

const channel = (models: string[], testModel = '') => ({ models, testModel }) as unknown as CachedChannel;

describe('the channel test model', () => {
  it('takes the requested model, else the channel test model, else the first priced model', () => {
    const priced = (m: string) => m !== 'old-unpriced';
    expect(testModelOf(channel(['old-unpriced', 'new']), 'asked', priced)).toBe('asked');
    expect(testModelOf(channel(['old-unpriced', 'new'], 'pinned'), undefined, priced)).toBe('pinned');
    expect(testModelOf(channel(['old-unpriced', 'new']), undefined, priced)).toBe('new');
    // nothing priced: the first model, whose test then names the price to set
    expect(testModelOf(channel(['old-unpriced']), undefined, priced)).toBe('old-unpriced');
    expect(testModelOf(channel([]), undefined, priced)).toBe('gpt-4o-mini');
  });

  it('the Claude and Gemini defaults start with current models that have a price', () => {
    const options = new OptionStore(null as never, 'sqlite');
    for (const type of [14, 24]) {
      const models = CHANNEL_TYPES[type]!.models;
      expect(getModelRatio(options, models[0]!).found, `${type}: ${models[0]}`).toBe(true);
      expect(models[0]).toMatch(/^(claude-sonnet-4-5|gemini-2\.5)/);
    }
  });
});

describe('the task platforms’ preset models', () => {
  it('are each priced per call, so a drawing or a song is never refused as unpriced', () => {
    const options = new OptionStore(null as never, 'sqlite');
    for (const type of [2, 5, 36])
      for (const model of CHANNEL_TYPES[type]!.models)
        expect(getModelPrice(options, model).found, `${type}: ${model}`).toBe(true);
  });
});
