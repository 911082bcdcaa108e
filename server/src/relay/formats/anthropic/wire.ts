// The parts of Anthropic's Messages API wire format this codec reads and writes. Only the fields the codec uses are
// typed; bodies from clients and upstreams are still checked at run time (they are JSON from outside).

export type ClaudeStopReason =
  'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export const CLAUDE_STOP_REASONS: ReadonlySet<string> = new Set<ClaudeStopReason>([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

export interface ClaudeCacheControl {
  type: 'ephemeral';
  ttl?: string;
}

export interface ClaudeTextBlock {
  type: 'text';
  text: string;
  cache_control?: ClaudeCacheControl;
  /** an answer's sources for this block's text (char_location, web_search_result_location, …) */
  citations?: Record<string, unknown>[];
}

export interface ClaudeImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  cache_control?: ClaudeCacheControl;
}

export interface ClaudeToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ClaudeToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | (ClaudeTextBlock | ClaudeImageBlock)[];
  is_error?: boolean;
}

export interface ClaudeThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface ClaudeRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export type ClaudeContentBlock =
  | ClaudeTextBlock
  | ClaudeImageBlock
  | ClaudeToolUseBlock
  | ClaudeToolResultBlock
  | ClaudeThinkingBlock
  | ClaudeRedactedThinkingBlock;

export interface ClaudeMessage {
  role: 'user' | 'assistant';
  content: ClaudeContentBlock[];
}

/** Claude usage: input_tokens exclude both cache reads and cache writes. */
export interface ClaudeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}
