// Step 5, validate: the mode's checks of the body (new-api-compat.md §4.6 step 2), a boolean `stream`, and the
// sensitive words of the prompt (step 3).
import { findSensitiveWord } from '../../services/sensitive-words.js';
import { RelayError } from '../errors.js';
import type { RelayState } from './state.js';

export function validate(s: RelayState): void {
  const { ctx, mode, body, model } = s;
  const invalid = mode.validate(model && !body.model ? { ...body, model } : body);
  if (invalid) throw new RelayError(400, invalid, 'new_api_error', 'invalid_text_request');
  // new-api's JSON binding refuses a non-boolean stream; here `"yes"` would have meant a JSON answer
  if (typeof body.stream !== 'boolean' && body.stream != null)
    throw new RelayError(
      400,
      '无效的请求, stream 必须是布尔值',
      'invalid_request_error',
      'invalid_request',
      true,
      'stream',
    );
  if (
    mode.promptTexts &&
    ctx.options.bool('CheckSensitiveEnabled') &&
    ctx.options.bool('CheckSensitiveOnPromptEnabled')
  ) {
    const word = findSensitiveWord(ctx.options.get('SensitiveWords'), mode.promptTexts(body));
    if (word !== null) {
      ctx.log.warn({ reqId: s.req.id, word }, 'user sensitive words detected');
      throw new RelayError(400, 'sensitive words detected', 'new_api_error', 'sensitive_words_detected');
    }
  }
}
