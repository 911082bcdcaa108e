// A hub thinking block ⇄ a Responses reasoning item. A provider that signs its thinking (Claude's signature and
// redacted_thinking data, Gemini's thoughtSignature) needs the block back whole in the next turn of a tool loop, and
// the only opaque field a Responses client keeps and returns is the item's `encrypted_content`. Ours is tagged so a
// client's own OpenAI encrypted reasoning (from another channel) is never sent to Claude as a signature.
import type { HubThinkingBlock } from '../../hub/types.js';

const SIGNATURE = 'hub-thinking-signature:';
const REDACTED = 'hub-redacted-thinking:';

/** The encrypted_content carrying a block's signature or redacted data; undefined for an unsigned block. */
export function encryptedFromBlock(block: HubThinkingBlock): string | undefined {
  if (block.redacted) return REDACTED + block.redacted;
  if (block.signature) return SIGNATURE + block.signature;
  return undefined;
}

/** The thinking block a reasoning item stands for, from its text and our encrypted_content; null when not ours. */
export function blockFromEncrypted(text: string, encrypted: unknown): HubThinkingBlock | null {
  if (typeof encrypted !== 'string') return null;
  if (encrypted.startsWith(REDACTED)) return { thinking: '', redacted: encrypted.slice(REDACTED.length) };
  if (encrypted.startsWith(SIGNATURE)) return { thinking: text, signature: encrypted.slice(SIGNATURE.length) };
  return null;
}

/** A hub message's reasoning as blocks: its thinking blocks when set (they supersede reasoning_content). */
export function hubThinkingBlocks(m: { reasoning_content?: string; thinking_blocks?: HubThinkingBlock[] }) {
  if (m.thinking_blocks?.length) return m.thinking_blocks;
  return m.reasoning_content ? [{ thinking: m.reasoning_content }] : [];
}
