// GetCompletionRatio (new-api-compat.md §5.6): the rule table, and how the CompletionRatio option interacts with it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getCompletionRatio, resolveCompletionRatio } from '../../src/services/pricing/index.js';
import { DEFAULT_COMPLETION_RATIO } from '../../src/services/pricing/defaults.js';
import { defaultOptions, type OptionStore } from '../../src/services/options.js';
import { sqliteOptions, type TestOptions } from './option-store.js';

const RULES: Array<[string, number]> = [
  ['gpt-4o', 4],
  ['gpt-4o-mini', 4],
  ['gpt-4o-2024-08-06', 4],
  ['gpt-4o-2024-05-13', 3],
  ['gpt-4.5-preview', 2],
  ['gpt-4.1', 4],
  ['gpt-4.1-nano-2025-04-14', 4],
  ['gpt-4-turbo', 3],
  ['gpt-4-turbo-2024-04-09', 3],
  ['gpt-4-1106-preview', 3],
  ['gpt-4-vision-preview', 3],
  ['gpt-4', 2],
  ['gpt-4-32k', 2],
  ['gpt-4-all', 2], // option default
  ['gpt-4-gizmo-g-123', 2], // option default for gpt-4-gizmo-*
  ['gpt-4o-gizmo-g-123', 3], // option default for gpt-4o-gizmo-*
  ['gpt-4o-all', 1], // "-all" skips the gpt-4 rules and has no option entry
  ['o1', 4],
  ['o1-mini', 4],
  ['o3-mini-high', 4],
  ['o4-mini', 4],
  ['gpt-5-mini', 8],
  ['chatgpt-4o-latest', 3],
  ['claude-instant-1.2', 3],
  ['claude-2.1', 3],
  ['claude-3-opus-20240229', 5],
  ['claude-3-7-sonnet-20250219-thinking', 5],
  ['claude-sonnet-4-20250514', 5],
  ['gpt-3.5-turbo', 3],
  ['gpt-3.5-turbo-0125', 3],
  ['gpt-3.5-turbo-1106', 2],
  ['gpt-3.5-turbo-0613', 4 / 3],
  ['gpt-3.5-turbo-16k', 4 / 3],
  ['mistral-large-latest', 3],
  ['gemini-1.5-pro-latest', 4],
  ['gemini-2.0-flash', 4],
  ['gemini-2.5-pro-preview-03-25', 8],
  ['gemini-pro', 4],
  ['gemini-2.5-flash', 2.5 / 0.3],
  ['gemini-2.5-flash-lite', 4],
  ['gemini-2.5-pro', 8],
  ['command-r', 3],
  ['command-r-plus', 5],
  ['command-r-08-2024', 4],
  ['command-r-plus-08-2024', 4],
  ['command-light', 4],
  ['deepseek-chat', 4],
  ['DeepSeek-Reasoner', 4],
  ['deepseek-coder', 1],
  ['ERNIE-Speed-128K', 2],
  ['ERNIE-Lite-8K-0922', 2],
  ['ERNIE-Character-8K', 2],
  ['ERNIE-Functions-8K', 2],
  ['ERNIE-4.0-8K', 1],
  ['llama2-70b-4096', 0.8 / 0.64],
  ['llama3-8b-8192', 2],
  ['llama3-70b-8192', 0.79 / 0.59],
  ['qwen-turbo', 1],
  ['some-unknown-model', 1],
];

describe('completion-ratio rules with the default option', () => {
  for (const [model, ratio] of RULES) {
    it(`${model} → ${ratio}`, () => {
      expect(resolveCompletionRatio(DEFAULT_COMPLETION_RATIO, model)).toBeCloseTo(ratio, 12);
    });
  }
});

describe('CompletionRatio option overrides', () => {
  let t: TestOptions;
  let options: OptionStore;
  beforeAll(async () => {
    t = await sqliteOptions();
    options = t.options;
  });
  afterAll(async () => t.close());
  beforeEach(async () => options.set('CompletionRatio', defaultOptions().CompletionRatio!));

  it('defaults come through the option store', () => {
    expect(getCompletionRatio(options, 'gpt-4o')).toBe(4);
    expect(getCompletionRatio(options, 'gpt-4-all')).toBe(2);
  });

  it('a matching hard-coded rule beats the option; unforced families and unknown names take it', async () => {
    await options.set(
      'CompletionRatio',
      JSON.stringify({
        'gpt-4o': 10,
        'claude-3-opus-20240229': 9,
        'gemini-1.5-pro': 9,
        'gpt-4-custom': 7,
        'gemini-pro': 6,
        'qwen-turbo': 3,
        'openai/gpt-4o': 11,
      }),
    );
    expect(getCompletionRatio(options, 'gpt-4o')).toBe(4);
    expect(getCompletionRatio(options, 'claude-3-opus-20240229')).toBe(5);
    expect(getCompletionRatio(options, 'gemini-1.5-pro')).toBe(4);
    expect(getCompletionRatio(options, 'gpt-4-custom')).toBe(7);
    expect(getCompletionRatio(options, 'gemini-pro')).toBe(6);
    expect(getCompletionRatio(options, 'qwen-turbo')).toBe(3);
    // names with "/" take the option value first
    expect(getCompletionRatio(options, 'openai/gpt-4o')).toBe(11);
    // ... and fall through to the rules (none match here) and the default when absent
    expect(getCompletionRatio(options, 'openai/gpt-4o-mini')).toBe(1);
    // the saved map replaced the defaults, so gpt-4-all loses its 2 and falls back to 1
    expect(getCompletionRatio(options, 'gpt-4-all')).toBe(1);
  });

  it('invalid option JSON falls back to an empty map, not a crash', async () => {
    await options.set('CompletionRatio', '{not json');
    expect(getCompletionRatio(options, 'qwen-turbo')).toBe(1);
    expect(getCompletionRatio(options, 'gpt-4o')).toBe(4);
  });
});
