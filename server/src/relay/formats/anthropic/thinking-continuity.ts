// Claude's rule for thinking in a tool loop: with thinking on, the assistant turn whose tool_use the final user turn
// answers must open with its signed thinking (or redacted_thinking) block, or Anthropic (and Bedrock, Vertex) answers
// 400 "Expected `thinking` or `redacted_thinking`, but found `tool_use`…". A client whose format cannot carry the
// signature back (OpenAI chat's reasoning_content, a Responses reasoning item without our encrypted_content) never
// meets it; without thinking the same request is accepted, so thinking the gateway would add is left off instead.

/** Whether Claude would refuse thinking on these Messages-API turns (consecutive same-role messages are one turn). */
export function thinkingWouldBeRefused(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false;
  const blocks = (m: any): any[] =>
    typeof m?.content === 'string' ? [{ type: 'text' }] : Array.isArray(m?.content) ? m.content : [];
  let i = messages.length - 1;
  let answersTools = false;
  for (; i >= 0 && messages[i]?.role === 'user'; i--)
    if (blocks(messages[i]).some((b) => b?.type === 'tool_result')) answersTools = true;
  if (!answersTools || i < 0 || messages[i]?.role !== 'assistant') return false;
  while (i > 0 && messages[i - 1]?.role === 'assistant') i--;
  const first = blocks(messages[i])[0]?.type;
  return first !== 'thinking' && first !== 'redacted_thinking';
}
