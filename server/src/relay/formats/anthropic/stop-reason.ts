// Claude stop_reason ↔ hub finish_reason.
import type { HubFinishReason } from '../../hub/types.js';
import { CLAUDE_STOP_REASONS, type ClaudeStopReason } from './wire.js';

export function finishFromClaude(reason: unknown): HubFinishReason | null {
  switch (reason) {
    // pause_turn (a long server-tool turn paused) is a finished answer as far as the hub can say
    case 'end_turn':
    case 'stop_sequence':
    case 'pause_turn':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return reason == null ? null : 'stop';
  }
}

/** The stop_reason for a Claude client: the vendor's own when it is Claude's, else mapped from the hub's. */
export function claudeStopReason(
  finish: HubFinishReason | null,
  native: string | undefined,
  stopSequence: string | null | undefined,
): ClaudeStopReason {
  if (native && CLAUDE_STOP_REASONS.has(native)) return native as ClaudeStopReason;
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return stopSequence ? 'stop_sequence' : 'end_turn';
  }
}
