// The hub: the one typed common form every client format and every provider converts to and from (hub and spoke,
// docs/decisions/0013-relay-formats.md). It is OpenAI Chat Completions, so the OpenAI format converts by identity,
// plus what Chat Completions cannot say, marked "extension" below: thinking blocks with their signatures, cache
// writes, top_k, citations, and the Gemini/Claude finish reasons' originals.

export type HubRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface HubTextPart {
  type: 'text';
  text: string;
  /** extension: Anthropic prompt caching marker on this block */
  cache_control?: { type: 'ephemeral'; ttl?: string };
}

export interface HubImagePart {
  type: 'image_url';
  /** a `data:<mime>;base64,...` URL, or an http(s) URL a provider may have to fetch (relay/providers/media.ts) */
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export type HubContentPart = HubTextPart | HubImagePart;

export interface HubToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** extension: one reasoning block, kept so a provider that signs its thinking (Claude) gets it back unchanged */
export interface HubThinkingBlock {
  /** the reasoning text; empty for a redacted block */
  thinking: string;
  signature?: string;
  /** Claude's redacted_thinking data */
  redacted?: string;
}

export interface HubMessage {
  role: HubRole;
  /** null for an assistant turn that only calls tools */
  content: string | HubContentPart[] | null;
  name?: string;
  /** assistant: the tools it called */
  tool_calls?: HubToolCall[];
  /** tool: which call this answers */
  tool_call_id?: string;
  /** assistant: the reasoning text (DeepSeek's and new-api's name for it) */
  reasoning_content?: string;
  /** extension (assistant): reasoning blocks with signatures, in order; when set it supersedes reasoning_content */
  thinking_blocks?: HubThinkingBlock[];
}

export interface HubFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type HubToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export type HubResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean } };

export interface HubRequest {
  model: string;
  messages: HubMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  /** extension: Claude's and Gemini's top_k */
  top_k?: number;
  stop?: string | string[];
  n?: number;
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  tools?: HubFunctionTool[];
  tool_choice?: HubToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: HubResponseFormat;
  /** OpenAI's reasoning effort: low | medium | high (and minimal) */
  reasoning_effort?: string;
  /** extension: an explicit thinking budget (Claude `thinking.budget_tokens`, Gemini `thinkingBudget`); 0 = off */
  thinking_budget?: number;
  user?: string;
  /** extension: the end user id a format carries elsewhere (Claude metadata.user_id) */
  metadata?: Record<string, string>;
}

/**
 * Token usage, OpenAI-shaped: prompt_tokens INCLUDES cache reads (cached_tokens) and EXCLUDES cache writes
 * (cache_creation_tokens), which is what services/pricing/index.ts bills; completion_tokens include reasoning tokens.
 */
export interface HubUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: {
    cached_tokens?: number;
    /** extension: Claude cache writes */
    cache_creation_tokens?: number;
  };
  completion_tokens_details?: { reasoning_tokens?: number };
}

/** OpenAI finish reasons; `content_filter` covers Gemini's SAFETY family. */
export type HubFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** extension: a source the answer cites (Claude's text-block citations, Gemini's grounding and citation metadata) */
export interface HubCitation {
  /** the span of the message's content the source supports, in UTF-16 code units, when the vendor says */
  start_index?: number;
  end_index?: number;
  url?: string;
  title?: string;
  /** the passage quoted from the source (Claude's cited_text, Gemini's segment text) */
  cited_text?: string;
  /** Claude's citation object as it came (char_location, web_search_result_location, …), for a Claude client */
  claude?: Record<string, unknown>;
}

export interface HubResponseMessage {
  role: 'assistant';
  content: string | null;
  reasoning_content?: string;
  thinking_blocks?: HubThinkingBlock[];
  tool_calls?: HubToolCall[];
  /** extension: the sources the answer cites */
  citations?: HubCitation[];
  /** extension: Gemini's groundingMetadata and citationMetadata as they came, for a Gemini client */
  gemini_grounding?: { groundingMetadata?: unknown; citationMetadata?: unknown };
}

export interface HubResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: { index: number; message: HubResponseMessage; finish_reason: HubFinishReason | null }[];
  usage?: HubUsage;
  /** extension: the vendor's own stop reason (Claude stop_reason, Gemini finishReason), for a writer of that format */
  native_finish_reason?: string;
  /** extension: the stop sequence that ended the answer (Claude stop_sequence) */
  stop_sequence?: string | null;
}

export interface HubToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface HubDelta {
  role?: 'assistant';
  content?: string;
  reasoning_content?: string;
  /** extension: the signature closing the current thinking block (Claude signature_delta) */
  thinking_signature?: string;
  /** extension: a redacted thinking block's data */
  redacted_thinking?: string;
  tool_calls?: HubToolCallDelta[];
}

export interface HubChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: number; delta: HubDelta; finish_reason: HubFinishReason | null }[];
  /** the last chunk (or one of its own) carries the usage, cumulative */
  usage?: HubUsage | null;
  native_finish_reason?: string;
  stop_sequence?: string | null;
}
