// POST /v1/moderations: input-billed like embeddings; model defaults to text-moderation-stable (new-api-compat.md §4.3
// step 2).
import { countInputTokens } from '../../services/tokenizer.js';
import type { RelayMode } from './mode.js';
import { inputTexts } from '../../services/sensitive-words.js';

const NONE = { text: '', toolCalls: 0 };

export const moderationsMode: RelayMode = {
  name: 'moderations',
  endpoint: 'moderations',
  canStream: false,
  inputOnly: true,
  defaultModel: 'text-moderation-stable',
  validate(body) {
    if (body.input === undefined || body.input === null || body.input === '') return 'field input is required';
    return null;
  },
  promptTexts: (body) => inputTexts(body.input),
  promptTokens(body, model) {
    return countInputTokens(body.input, model);
  },
  responseText: () => NONE,
  chunkText: () => NONE,
};
