// Gemini finishReason ↔ hub finish_reason.
import type { HubFinishReason } from '../../hub/types.js';

/** The finish reasons that mean the answer was withheld or cut by a filter. IMAGE_PROHIBITED_CONTENT is the image
 * twin of PROHIBITED_CONTENT, so it is counted with it. */
const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
]);

/** Every value of Gemini's FinishReason enum, to tell a Gemini reason kept in native_finish_reason from another
 * vendor's. */
const GEMINI_REASONS = new Set([
  ...FILTERED,
  'FINISH_REASON_UNSPECIFIED',
  'STOP',
  'MAX_TOKENS',
  'LANGUAGE',
  'OTHER',
  'MALFORMED_FUNCTION_CALL',
  'UNEXPECTED_TOOL_CALL',
  'TOO_MANY_TOOL_CALLS',
  'IMAGE_RECITATION',
  'IMAGE_OTHER',
  'NO_IMAGE',
]);

/** Gemini ends a turn that calls functions with STOP; OpenAI clients expect tool_calls then. */
export function finishToHub(reason: string, hasToolCalls: boolean): HubFinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (FILTERED.has(reason)) return 'content_filter';
  if (reason === 'STOP' && hasToolCalls) return 'tool_calls';
  return 'stop';
}

export function finishFromHub(reason: HubFinishReason | null, native?: string): string {
  if (native && GEMINI_REASONS.has(native)) return native;
  switch (reason) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      return 'STOP';
  }
}
