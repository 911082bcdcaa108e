// POST /v1/edits (new-api-compat.md §4.1; OpenAI's legacy edits API, still relayed by new-api): `instruction` is
// required (new-api-compat.md §4.6 step 2), the prompt count is the instruction's (and the input's), the answer is
// completions-shaped.
import { countTextTokens } from '../../services/tokenizer.js';
import type { RelayMode } from './mode.js';
import { completionsMode } from './text.js';
import { inputTexts } from '../../services/sensitive-words.js';

export const editsMode: RelayMode = {
  name: 'edits',
  endpoint: 'edits',
  canStream: false,
  validate(body) {
    if (!body.model) return 'model is required';
    if (typeof body.instruction !== 'string' || body.instruction === '') return 'field instruction is required';
    return null;
  },
  promptTexts: (body) => inputTexts([body.instruction, body.input]),
  promptTokens(body, model) {
    return (
      countTextTokens(String(body.instruction ?? ''), model) +
      countTextTokens(typeof body.input === 'string' ? body.input : '', model)
    );
  },
  responseText: (json) => completionsMode.responseText(json),
  chunkText: (json) => completionsMode.chunkText(json),
};
