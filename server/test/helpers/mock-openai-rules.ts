// What OpenAI's Chat Completions API refuses, as a check over a request body: each problem in the API's own wording
// (a 400 invalid_request_error), or null. OpenAI rejects arguments it does not know, message fields outside the
// schema, and a tool conversation whose calls and results do not pair up.

const CHAT_FIELDS = new Set([
  'model',
  'messages',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
]);

const MESSAGE_FIELDS: Record<string, Set<string>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  assistant: new Set(['role', 'content', 'name', 'tool_calls', 'refusal', 'audio', 'function_call']),
  tool: new Set(['role', 'content', 'tool_call_id']),
};

const PART_TYPES = new Set(['text', 'image_url', 'input_audio', 'file']);

export function checkOpenAIChatBody(body: any): string | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'We could not parse the JSON body';
  for (const key of Object.keys(body))
    if (!CHAT_FIELDS.has(key)) return `Unrecognized request argument supplied: ${key}`;
  if (typeof body.model !== 'string' || !body.model) return 'you must provide a model parameter';
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.";
  if (body.stream_options !== undefined && body.stream !== true)
    return 'The stream_options parameter is only allowed when stream is enabled.';
  let pending: Set<string> | null = null;
  for (let i = 0; i < body.messages.length; i++) {
    const m = body.messages[i];
    const allowed = MESSAGE_FIELDS[m?.role];
    if (!allowed)
      return `Invalid value: '${m?.role}'. Supported values are: 'system', 'assistant', 'user', 'tool', 'function' and 'developer'.`;
    for (const key of Object.keys(m))
      if (!allowed.has(key)) return `Additional properties are not allowed ('${key}' was unexpected) - 'messages.${i}'`;
    if (Array.isArray(m.content))
      for (const [j, part] of m.content.entries())
        if (!PART_TYPES.has(part?.type)) return `Invalid value: '${part?.type}'. - 'messages[${i}].content[${j}].type'`;
    if (m.role === 'tool') {
      if (!pending?.has(m.tool_call_id))
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      pending.delete(m.tool_call_id);
      continue;
    }
    if (pending?.size)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`;
    pending =
      m.role === 'assistant' && Array.isArray(m.tool_calls) ? new Set(m.tool_calls.map((c: any) => c.id)) : null;
  }
  return null;
}
