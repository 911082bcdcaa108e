// Finding the usage object in raw upstream bytes (relay/usage.ts) without parsing whole responses: the stream relay
// decides from these scans which events it must decode.
import { describe, expect, it } from 'vitest';
import { extractUsage, hasUsageObject, indexOfUsage } from '../../src/relay/usage.js';

const KEY = Buffer.from('"usage"');

describe('indexOfUsage', () => {
  it('finds `"usage"` where a plain search does, from any offset', () => {
    const pieces = [
      '"usage"',
      'usage"',
      '"usage',
      ' usage',
      '\\"usage\\"',
      '"x"',
      'a',
      ' ',
      '{',
      '}',
      ':',
      '"',
      'e"',
      'us',
    ];
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 2000; i++) {
      const buf = Buffer.from(Array.from({ length: rand(12) }, () => pieces[rand(pieces.length)]).join(''));
      for (let from = 0; from <= buf.length; from++) expect(indexOfUsage(buf, from)).toBe(buf.indexOf(KEY, from));
    }
  });
});

describe('hasUsageObject', () => {
  const ev = (o: unknown) => Buffer.from(`data: ${JSON.stringify(o)}\n\n`);

  it('tells a usage object from null usage, the word in content, and a string value', () => {
    expect(hasUsageObject(ev({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } }))).toBe(true);
    expect(hasUsageObject(Buffer.from('data: {"usage" :\n {"prompt_tokens":1}}\n\n'))).toBe(true);
    expect(hasUsageObject(ev({ choices: [{ delta: { content: 'usage" then "usage": {' } }], usage: null }))).toBe(
      false,
    );
    expect(hasUsageObject(ev({ choices: [{ delta: { content: 'usage' } }] }))).toBe(false);
    // every chunk says "usage": null, only the last one has it
    const stream = Buffer.concat([
      ...Array.from({ length: 5 }, () => ev({ choices: [{ delta: { content: 'x' } }], usage: null })),
      ev({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }),
    ]);
    expect(hasUsageObject(stream)).toBe(true);
    expect(hasUsageObject(stream.subarray(0, stream.length - 80))).toBe(false);
  });

  it('extractUsage reads the last usage object of a response', () => {
    const body = Buffer.from(
      JSON.stringify({
        choices: [{ message: { content: '"usage": {"prompt_tokens": 99}' } }],
        usage: { prompt_tokens: 7, completion_tokens: 5 },
      }),
    );
    expect(extractUsage(body)).toMatchObject({ prompt_tokens: 7, completion_tokens: 5 });
  });
});
