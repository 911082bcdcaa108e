// Gemini's thinking in a turn: `thought: true` text parts (the summary, when includeThoughts) and opaque
// `thoughtSignature`s riding on later parts (the first functionCall of a step, or the last text part of an answer
// without calls). The hub keeps them as thinking blocks, a signature closing the block before it, so a client that
// round-trips blocks (a Claude client on a Gemini channel, or a Gemini client) gets the signatures back to Gemini,
// which rejects a Gemini 3 function-call history without them.
import type { HubThinkingBlock } from '../../hub/types.js';
import { field, type GeminiPart } from './wire.js';

/** A turn's thought parts and signatures, in order, as hub thinking blocks. */
export function thinkingFromParts(parts: GeminiPart[]): HubThinkingBlock[] {
  const blocks: HubThinkingBlock[] = [];
  for (const part of parts) {
    const signature = field<string>(part, 'thoughtSignature');
    const open =
      blocks.length > 0 && blocks[blocks.length - 1].signature === undefined ? blocks[blocks.length - 1] : null;
    if (part.thought === true) {
      const block = open ?? { thinking: '' };
      if (!open) blocks.push(block);
      block.thinking += typeof part.text === 'string' ? part.text : '';
      if (signature) block.signature = signature;
    } else if (signature) {
      if (open) open.signature = signature;
      else blocks.push({ thinking: '', signature });
    }
  }
  return blocks;
}

/**
 * Puts the signatures back where Gemini looks for them: in order on the functionCall parts when the turn calls
 * functions (Gemini signs the first call of each step), else on the last text part; a signature with no part left
 * rides on an empty text part, as Gemini itself sends one at the end of a stream.
 */
export function placeSignatures(parts: GeminiPart[], signatures: string[]): GeminiPart[] {
  if (signatures.length === 0) return parts;
  const calls = parts.filter((p) => p.functionCall);
  const texts = parts.filter((p) => typeof p.text === 'string' && !p.thought);
  const targets = calls.length > 0 ? calls : texts.slice(-1);
  const rest = [...signatures];
  for (const part of targets) {
    const signature = rest.shift();
    if (signature === undefined) break;
    part.thoughtSignature = signature;
  }
  return [...parts, ...rest.map((signature) => ({ text: '', thoughtSignature: signature }))];
}

/**
 * Gemini 3 refuses a history whose function calls lost their signature (400 "Function call is missing a
 * thought_signature in functionCall parts"), which is every tool loop of a client that cannot carry one (OpenAI chat,
 * a Responses item without our encrypted_content). Google documents this value as the stand-in for such a history.
 */
export const SKIPPED_SIGNATURE = 'skip_thought_signature_validator';

/** Whether the model checks function-call signatures: Gemini 3 and later. */
export function requiresCallSignatures(model: string): boolean {
  const major = /(?:^|\/)gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined && Number(major) >= 3;
}

/** A model turn's function calls made acceptable to Gemini 3: the first call signed, with the stand-in if need be. */
export function signFirstCall(parts: GeminiPart[]): GeminiPart[] {
  const calls = parts.filter((p) => p.functionCall);
  if (calls.length > 0 && !calls.some((p) => p.thoughtSignature)) calls[0].thoughtSignature = SKIPPED_SIGNATURE;
  return parts;
}
