// The shared conformance harness recorded fixtures go through: each wire format's (relay/formats/<fmt>/__fixtures__/,
// called by the format's own test) and each provider's (relay/providers/<name>/__fixtures__/, all of them run by
// provider-conformance.test.ts): answers parse to the expected hub answer, streams give the same hub chunks however
// their bytes are split, errors parse.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { FormatCodec, StreamDecoder } from '../../src/relay/formats/codec.js';
import type { HubChunk } from '../../src/relay/hub/types.js';
import { SseParser } from '../../src/relay/stream/sse-parser.js';
import type { EventFraming } from '../../src/relay/stream/translate.js';

export function fixture(dir: string, name: string): string {
  return readFileSync(new URL(`${dir}/${name}`, import.meta.url), 'utf8');
}

/** A deterministic pseudo-random generator, so a failing split can be reproduced from its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x100000000;
  };
}

/** Splits bytes at `parts - 1` random offsets (possibly inside a UTF-8 character or a CRLF). */
export function randomSplit(bytes: Buffer, seed: number, parts = 7): Buffer[] {
  const r = rng(seed);
  const cuts = new Set<number>();
  while (cuts.size < Math.min(parts - 1, bytes.length - 1)) cuts.add(1 + Math.floor(r() * (bytes.length - 1)));
  const sorted = [...cuts].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of sorted) {
    out.push(bytes.subarray(prev, c));
    prev = c;
  }
  out.push(bytes.subarray(prev));
  return out;
}

/**
 * Runs a byte stream through a framing (SSE unless told) and a decoder: every hub chunk, in order, and the decoder
 * (for its usage).
 */
export function decodeSse(
  decoder: StreamDecoder,
  pieces: Buffer[],
  framing: EventFraming = new SseParser(),
): { chunks: HubChunk[]; decoder: StreamDecoder } {
  const chunks: HubChunk[] = [];
  for (const p of pieces) for (const ev of framing.push(p)) chunks.push(...decoder.push(ev.data, ev.event));
  for (const ev of framing.end()) chunks.push(...decoder.push(ev.data, ev.event));
  chunks.push(...decoder.end());
  return { chunks, decoder };
}

/** Strips the fields that legitimately differ between runs (ids made up by the decoder, timestamps). */
export function stable(chunks: HubChunk[]): unknown[] {
  return chunks.map((c) => ({ ...c, created: 0 }));
}

/**
 * A recorded stream (SSE text, or bytes in the framing `framing` makes) decodes to the same hub chunks whole and split
 * at random byte offsets (20 seeds), and returns them for the caller's own assertions.
 */
export function replayStream(
  codec: Pick<FormatCodec, 'streamToHub'>,
  recorded: string | Buffer,
  opts: { id: string; model: string },
  framing: () => EventFraming = () => new SseParser(),
): { chunks: HubChunk[]; decoder: StreamDecoder } {
  const bytes = typeof recorded === 'string' ? Buffer.from(recorded, 'utf8') : recorded;
  const whole = decodeSse(codec.streamToHub(opts), [bytes], framing());
  for (let seed = 1; seed <= 20; seed++) {
    const split = decodeSse(codec.streamToHub(opts), randomSplit(bytes, seed), framing());
    expect(stable(split.chunks), `split seed ${seed}`).toEqual(stable(whole.chunks));
    expect(split.decoder.usage()).toEqual(whole.decoder.usage());
  }
  return whole;
}

/** Joins a hub stream back into the text, reasoning and tool calls it carried. */
export function collect(chunks: HubChunk[]): {
  text: string;
  reasoning: string;
  toolCalls: { id?: string; name: string; arguments: string }[];
  finish: string | null;
} {
  let text = '';
  let reasoning = '';
  let finish: string | null = null;
  const calls = new Map<number, { id?: string; name: string; arguments: string }>();
  for (const c of chunks)
    for (const ch of c.choices) {
      const d = ch.delta;
      if (d.content) text += d.content;
      if (d.reasoning_content) reasoning += d.reasoning_content;
      for (const t of d.tool_calls ?? []) {
        const call = calls.get(t.index) ?? { name: '', arguments: '' };
        if (t.id) call.id = t.id;
        if (t.function?.name) call.name += t.function.name;
        if (t.function?.arguments) call.arguments += t.function.arguments;
        calls.set(t.index, call);
      }
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  return { text, reasoning, toolCalls: [...calls.values()], finish };
}
