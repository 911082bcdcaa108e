// The compiled-in tables match new-api's defaults (new-api-compat.md §6.2) and are what a fresh install serves.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CACHE_RATIO,
  DEFAULT_COMPLETION_RATIO,
  DEFAULT_CREATE_CACHE_RATIO,
  DEFAULT_MODEL_PRICE,
  DEFAULT_MODEL_RATIO,
  RMB,
} from '../../src/services/pricing/defaults.js';
import { defaultOptions } from '../../src/services/options.js';

describe('default price tables', () => {
  it('have new-api’s sizes', () => {
    expect(Object.keys(DEFAULT_MODEL_RATIO).length).toBeGreaterThanOrEqual(175);
    // new-api's 21 of the spec, and mj_video and mj_edits (issue 42)
    expect(Object.keys(DEFAULT_MODEL_PRICE)).toHaveLength(23);
    expect(DEFAULT_MODEL_PRICE).toMatchObject({ mj_video: 0.8, mj_edits: 0.1 });
    // new-api's 29, and the five Claude 4 models listed later (defaults.ts)
    expect(Object.keys(DEFAULT_CACHE_RATIO)).toHaveLength(29 + 5);
    expect(Object.keys(DEFAULT_COMPLETION_RATIO)).toHaveLength(3);
    expect(Object.keys(DEFAULT_CREATE_CACHE_RATIO)).toHaveLength(8);
  });

  it('carry the documented example values', () => {
    expect(DEFAULT_MODEL_RATIO).toMatchObject({
      'gpt-4o': 1.25,
      'gpt-4o-mini': 0.075,
      'gpt-3.5-turbo': 0.25,
      'text-embedding-3-small': 0.01,
      'whisper-1': 15,
      'tts-1': 7.5,
      'claude-3-5-sonnet-20241022': 1.5,
      'claude-3-opus-20240229': 7.5,
      'gemini-1.5-pro-latest': 1.25,
      'gemini-2.0-flash': 0.05,
      'glm-4': 7.143,
      'qwen-turbo': 0.8572,
      'command-r': 0.25,
      'deepseek-chat': 0.135,
      'deepseek-reasoner': 0.275,
      'grok-beta': 2.5,
      'o3-mini-high': 0.55,
      'o3-mini-2025-01-31-medium': 0.55,
    });
    expect(DEFAULT_MODEL_RATIO['ERNIE-4.0-8K']).toBeCloseTo(0.12 * (500 / 7.3), 10);
    expect(RMB).toBeCloseTo(68.4931506849, 8);
    expect(DEFAULT_MODEL_PRICE).toMatchObject({
      suno_music: 0.1,
      suno_lyrics: 0.01,
      'dall-e-3': 0.04,
      'imagen-3.0-generate-002': 0.03,
      mj_inpaint: 0,
      mj_describe: 0.05,
    });
    expect(DEFAULT_CACHE_RATIO).toMatchObject({
      'gpt-4o': 0.5,
      'deepseek-chat': 0.25,
      'claude-3-7-sonnet-20250219': 0.1,
    });
    for (const v of Object.values(DEFAULT_MODEL_RATIO)) expect(Number.isFinite(v) && v >= 0).toBe(true);
  });

  it('seed the option defaults', () => {
    const d = defaultOptions();
    expect(JSON.parse(d.ModelRatio!)).toEqual(DEFAULT_MODEL_RATIO);
    expect(JSON.parse(d.ModelPrice!)).toEqual(DEFAULT_MODEL_PRICE);
    expect(JSON.parse(d.CompletionRatio!)).toEqual(DEFAULT_COMPLETION_RATIO);
    expect(JSON.parse(d.CacheRatio!)).toEqual(DEFAULT_CACHE_RATIO);
  });
});
