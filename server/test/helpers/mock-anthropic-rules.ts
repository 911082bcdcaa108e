// What the Anthropic Messages API refuses, as the mock checks it: each check returns the first problem as an
// Anthropic error (type + message, the wording the API uses) or null. Anthropic validates the body like a strict
// schema (extra top-level fields are refused), then the conversation (tool_result pairing, thinking signatures).
import { createHash } from 'node:crypto';

export interface AnthropicProblem {
  status: number;
  type: string;
  message: string;
}

const invalid = (message: string): AnthropicProblem => ({ status: 400, type: 'invalid_request_error', message });

const MESSAGES_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'container',
  'mcp_servers',
  'context_management',
  'output_config',
  'output_format',
]);

/** count_tokens takes the prompt-shaping fields only: no max_tokens, stream, sampling or metadata */
const COUNT_TOKENS_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'mcp_servers',
  'context_management',
  'output_config',
  'output_format',
]);

export interface RuleOptions {
  /**
   * Refuse a conversation that opens with an assistant turn. The first-party API has accepted it since late 2024
   * (Bedrock still refuses it), so this is off by default.
   */
  requireUserFirst?: boolean;
}

/** Checks the body of `POST /v1/messages` (endpoint 'messages') or `/v1/messages/count_tokens`. */
export function checkAnthropicBody(
  body: any,
  endpoint: 'messages' | 'count_tokens',
  options: RuleOptions = {},
): AnthropicProblem | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return invalid('Input should be an object');
  const allowed = endpoint === 'messages' ? MESSAGES_FIELDS : COUNT_TOKENS_FIELDS;
  for (const key of Object.keys(body)) {
    if (!allowed.has(key)) return invalid(`${key}: Extra inputs are not permitted`);
  }
  if (body.model === undefined) return invalid('model: Field required');
  if (typeof body.model !== 'string') return invalid('model: Input should be a valid string');
  if (endpoint === 'messages') {
    if (body.max_tokens === undefined) return invalid('max_tokens: Field required');
    if (!Number.isInteger(body.max_tokens)) return invalid('max_tokens: Input should be a valid integer');
    if (body.max_tokens < 1) return invalid('max_tokens: Input should be greater than or equal to 1');
  }
  if (body.messages === undefined) return invalid('messages: Field required');
  if (!Array.isArray(body.messages)) return invalid('messages: Input should be a valid list');
  return (
    checkThinkingConfig(body, endpoint) ??
    checkConversation(body.messages, options) ??
    checkThinkingBeforeToolLoop(body)
  );
}

function checkThinkingConfig(body: any, endpoint: 'messages' | 'count_tokens'): AnthropicProblem | null {
  const thinking = body.thinking;
  if (thinking === undefined || thinking.type === 'disabled') return null;
  if (thinking.type === 'enabled') {
    if (!Number.isInteger(thinking.budget_tokens)) return invalid('thinking.enabled.budget_tokens: Field required');
    if (thinking.budget_tokens < 1024)
      return invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    if (endpoint === 'messages' && body.max_tokens <= thinking.budget_tokens)
      return invalid('`max_tokens` must be greater than `thinking.budget_tokens`');
  } else if (thinking.type !== 'adaptive') {
    return invalid(
      `thinking: Input tag '${thinking.type}' found using 'type' does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'`,
    );
  }
  if (body.temperature !== undefined && body.temperature !== 1)
    return invalid('`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.');
  if (body.top_k !== undefined) return invalid('`top_k` must be unset when thinking is enabled.');
  // thinking only goes with tool_choice auto or none: a forced tool call leaves no room to think first
  if (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool')
    return invalid('Thinking may not be enabled when tool_choice forces tool use.');
  return null;
}

interface Turn {
  role: string;
  /** index of the first client message of this turn, for the error paths */
  index: number;
  blocks: any[];
}

/** Consecutive messages of one role form one turn: the API merges them rather than refusing them. */
function mergeTurns(messages: any[]): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((m, index) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? []);
    const last = turns[turns.length - 1];
    if (last && last.role === m.role) last.blocks.push(...blocks);
    else turns.push({ role: m.role, index, blocks: [...blocks] });
  });
  return turns;
}

function checkConversation(messages: any[], options: RuleOptions): AnthropicProblem | null {
  if (messages.length === 0) return invalid('messages: at least one message is required');
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m?.role === 'system')
      return invalid(
        'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
      );
    if (m?.role !== 'user' && m?.role !== 'assistant')
      return invalid(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (m.content === undefined) return invalid(`messages.${i}.content: Field required`);
    const empty = m.content === '' || (Array.isArray(m.content) && m.content.length === 0);
    if (empty && !(i === messages.length - 1 && m.role === 'assistant'))
      return invalid(
        `messages.${i}: all messages must have non-empty content except for the optional final assistant message`,
      );
  }
  if (options.requireUserFirst && messages[0].role !== 'user')
    return invalid('messages: first message must use the "user" role');
  const turns = mergeTurns(messages);
  for (let t = 0; t < turns.length; t++) {
    const problem = checkTurn(turns[t], turns[t - 1], turns[t + 1]);
    if (problem) return problem;
  }
  return null;
}

function checkTurn(turn: Turn, previous: Turn | undefined, next: Turn | undefined): AnthropicProblem | null {
  for (let j = 0; j < turn.blocks.length; j++) {
    const block = turn.blocks[j];
    const at = `messages.${turn.index}.content.${j}`;
    if (block?.type === 'thinking') {
      if (turn.role !== 'assistant') return invalid(`${at}: thinking blocks may only appear in assistant messages`);
      if (block.signature === undefined) return invalid(`${at}.thinking.signature: Field required`);
      if (!isMockSignature(block.thinking ?? '', block.signature))
        return invalid(`${at}: Invalid \`signature\` in \`thinking\` block`);
    }
    if (block?.type === 'tool_result') {
      const known = new Set((previous?.blocks ?? []).filter((b) => b?.type === 'tool_use').map((b) => b.id));
      if (previous?.role !== 'assistant' || !known.has(block.tool_use_id))
        return invalid(
          `${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
    }
  }
  if (turn.role === 'assistant' && next) {
    const answered = new Set(next.blocks.filter((b) => b?.type === 'tool_result').map((b) => b.tool_use_id));
    const unanswered = turn.blocks.filter((b) => b?.type === 'tool_use' && !answered.has(b.id)).map((b) => b.id);
    if (unanswered.length > 0)
      return invalid(
        `messages.${next.index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
  }
  return null;
}

/**
 * With thinking on, the assistant turn whose tool_use the final user turn answers must open with its (signed)
 * thinking block: Anthropic continues that turn's reasoning and refuses a tool loop that lost it. Bedrock and Vertex
 * AI run Claude's own check, so their mocks call this too.
 */
export function checkThinkingBeforeToolLoop(body: any): AnthropicProblem | null {
  const type = body.thinking?.type;
  if (type !== 'enabled' && type !== 'adaptive') return null;
  const turns = mergeTurns(body.messages);
  const last = turns[turns.length - 1];
  const assistant = turns[turns.length - 2];
  if (last?.role !== 'user' || assistant?.role !== 'assistant') return null;
  if (!last.blocks.some((b) => b?.type === 'tool_result')) return null;
  const first = assistant.blocks[0]?.type;
  if (first === 'thinking' || first === 'redacted_thinking') return null;
  return invalid(
    `messages.${assistant.index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
  );
}

/**
 * The mock's thinking signature: opaque base64 like Anthropic's, but it binds the thinking text, so a relay that
 * alters or drops a thinking block's text before sending it back is refused the way Anthropic refuses it.
 */
export function mockSignature(thinking: string): string {
  const digest = createHash('sha256').update(thinking).digest('hex').slice(0, 32);
  return Buffer.from(`mock-anthropic-signature:${digest}`).toString('base64');
}

function isMockSignature(thinking: string, signature: unknown): boolean {
  return typeof signature === 'string' && signature === mockSignature(thinking);
}
