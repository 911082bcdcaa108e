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
