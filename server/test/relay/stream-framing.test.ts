// The stream framings behind one interface (relay/stream/framing.ts): whatever the framing, bytes split anywhere give
// the same events, and only SSE is left to the native lane's byte scanner.
import { describe, expect, it } from 'vitest';
import { encodeBedrockChunk } from '../../src/relay/stream/aws-eventstream.js';
import { framingOf, type FramedEvent, type FramingName } from '../../src/relay/stream/framing.js';

const payloads = [{ a: 1, text: 'héllo [1]' }, { b: '}{"' }, { c: [1, 2] }];

/** byte-stream framings (a websocket's frames come whole: tested below) */
const wire: Record<Exclude<FramingName, 'ws-json' | 'whole-json'>, Buffer> = {
  sse: Buffer.from(payloads.map((p) => `data: ${JSON.stringify(p)}\n\n`).join('')),
  'aws-eventstream': Buffer.concat(payloads.map((p) => Buffer.from(encodeBedrockChunk(p)))),
  'json-array': Buffer.from(`[${payloads.map((p) => JSON.stringify(p)).join(',\n')}]`),
  // Cohere's newline-delimited JSON, CRLF and a last line without its newline included
  ndjson: Buffer.from(payloads.map((p) => JSON.stringify(p)).join('\r\n')),
};

/** The events of `bytes` fed to a new framing in two pieces, cut at `at`. */
function framed(name: keyof typeof wire, bytes: Buffer, at: number): FramedEvent[] {
  const f = framingOf(name).create();
  return [...f.push(bytes.subarray(0, at)), ...f.push(bytes.subarray(at)), ...f.end()];
}

describe('stream framings', () => {
  for (const name of Object.keys(wire) as (keyof typeof wire)[])
    it(`${name}: the same events wherever the bytes are cut`, () => {
      const bytes = wire[name];
      for (let at = 0; at <= bytes.length; at++) {
        const events = framed(name, bytes, at);
        // the AWS frames carry the payload base64-encoded in the chunk: the framing gives it decoded, like the others
        expect(events.map((e) => JSON.parse(e.data))).toEqual(payloads);
      }
    });

  it('leaves only SSE to the byte scanner, and SSE when a provider names none', () => {
    expect(framingOf(undefined)).toBe(framingOf('sse'));
    expect(framingOf('sse').scannable).toBe(true);
    expect(framingOf('aws-eventstream').scannable).toBe(false);
    expect(framingOf('json-array').scannable).toBe(false);
    expect(framingOf('ws-json').scannable).toBe(false);
    expect(framingOf('ndjson').scannable).toBe(false);
  });

  it('whole-json: the whole answer is one event once the body ends, wherever the bytes are cut', () => {
    const bytes = Buffer.from(JSON.stringify({ candidates: [{ author: '1', content: 'héllo' }] }));
    for (let at = 0; at <= bytes.length; at++) {
      const f = framingOf('whole-json').create();
      expect([...f.push(bytes.subarray(0, at)), ...f.push(bytes.subarray(at))]).toEqual([]);
      expect(f.end()).toEqual([{ data: bytes.toString() }]);
    }
    expect(framingOf('whole-json').scannable).toBe(false);
  });

  it('ndjson: an SSE frame is not newline-delimited JSON and is refused', () => {
    expect(() => framingOf('ndjson').create().push(Buffer.from('data: {"a":1}\n'))).toThrow(/not a JSON object/);
  });

  it('ws-json: one event per websocket frame, keep-alive frames skipped, a frame that is not JSON refused', () => {
    const f = framingOf('ws-json').create();
    const events = [...payloads.map((p) => f.push(Buffer.from(JSON.stringify(p)))).flat(), ...f.push(Buffer.from(' '))];
    expect(events.map((e) => JSON.parse(e.data))).toEqual(payloads);
    expect(f.end()).toEqual([]);
    expect(() => f.push(Buffer.from('pong'))).toThrow(/not JSON/);
  });

  it('refuses an event stream cut inside a frame', () => {
    const f = framingOf('aws-eventstream').create();
    f.push(wire['aws-eventstream'].subarray(0, 20));
    expect(() => f.end()).toThrow(/inside a frame/);
  });
});
