// The channel output settings as transforms of hub answers (relay/channel-setting.ts reads the settings): the same
// meaning on every lane that decodes an answer to the hub, whatever the client's format. The OpenAI native lane
// applies them to the bytes instead (channel-setting.ts), without decoding what it passes through.
//   - force_format: only the fields of OpenAI's chat format are kept (the hub's extensions, vendor additions, go);
//   - thinking_to_content: the reasoning becomes content wrapped in `<think>\n…\n</think>\n`.
// Chunks are changed in place: nothing is allocated per chunk beyond the strings the transform writes.
import type { HubChunk, HubResponse } from './types.js';

export interface HubOutputTransform {
  /** a stream's hub chunks, in order (the transform keeps its state per stream) */
  chunks(chunks: HubChunk[]): void;
  /** a whole answer */
  response(answer: HubResponse): void;
}

/** force_format on the hub: the answer keeps only what OpenAI's chat format says. */
const forceFormat: HubOutputTransform = {
  chunks(chunks) {
    for (const c of chunks) {
      c.native_finish_reason = undefined;
      c.stop_sequence = undefined;
      for (const ch of c.choices) {
        ch.delta.thinking_signature = undefined;
        ch.delta.redacted_thinking = undefined;
      }
    }
  },
  response(answer) {
    answer.native_finish_reason = undefined;
    answer.stop_sequence = undefined;
    for (const ch of answer.choices) {
      const m = ch.message;
      m.thinking_blocks = undefined;
      m.citations = undefined;
      m.gemini_grounding = undefined;
    }
  },
};

/**
 * thinking_to_content on the hub: reasoning deltas become `<think>\n…` content, closed before the first answer, tool
 * call or finish.
 */
function thinkingToContent(): HubOutputTransform {
  let state: 'none' | 'thinking' | 'done' = 'none';
  return {
    chunks(chunks) {
      for (const c of chunks) {
        for (const ch of c.choices) {
          const d = ch.delta;
          const r = d.reasoning_content ?? '';
          if (r) {
            d.content = (state === 'none' ? '<think>\n' : '') + r;
            state = 'thinking';
          } else if (state === 'thinking' && (d.content || d.tool_calls?.length || ch.finish_reason)) {
            // the reasoning ends with the first answer, tool call or finish: the block is always closed
            d.content = '\n</think>\n' + (d.content ?? '');
            state = 'done';
          }
          // the reasoning is content now: a signature or redacted block would close a thinking block never opened
          if (d.reasoning_content !== undefined) d.reasoning_content = undefined;
          if (d.thinking_signature !== undefined) d.thinking_signature = undefined;
          if (d.redacted_thinking !== undefined) d.redacted_thinking = undefined;
        }
      }
    },
    response(answer) {
      for (const ch of answer.choices) {
        const m = ch.message;
        const r = m.reasoning_content || (m.thinking_blocks ?? []).map((b) => b.thinking).join('');
        m.reasoning_content = undefined;
        m.thinking_blocks = undefined;
        if (!r) continue;
        const think = `<think>\n${r}\n</think>\n`;
        m.content = think + (m.content ?? '');
        // the cited spans move with the text they cite
        for (const c of m.citations ?? []) {
          if (c.start_index !== undefined) c.start_index += think.length;
          if (c.end_index !== undefined) c.end_index += think.length;
        }
      }
    },
  };
}

/** The transforms a channel's settings ask for, force_format first, or null (the usual case: nothing to do). */
export function hubOutputTransform(force: boolean, thinking: boolean): HubOutputTransform | null {
  if (!thinking) return force ? forceFormat : null;
  const t = thinkingToContent();
  if (!force) return t;
  return {
    chunks(chunks) {
      forceFormat.chunks(chunks);
      t.chunks(chunks);
    },
    response(answer) {
      forceFormat.response(answer);
      t.response(answer);
    },
  };
}
