// Local token counting (new-api-compat.md §5.4), checked against gpt-tokenizer directly.
import { describe, expect, it } from 'vitest';
import { encode as o200k } from 'gpt-tokenizer/encoding/o200k_base';
import { encode as cl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import {
  TOOL_CALL_TOKENS,
  UNKNOWN_IMAGE_TOKENS,
  countChatPromptTokens,
  countCompletionTokens,
  countImageTokens,
  countInputTokens,
  countTextTokens,
  countToolsTokens,
  countTtsInputTokens,
  chatPromptBound,
  encodingForModel,
  inputBound,
} from '../../src/services/tokenizer.js';
import { imageSizeFromBytes, imageSizeFromDataUrl } from '../../src/services/pricing/image-size.js';
import { responsesMode } from '../../src/relay/modes/responses.js';

const O = (s: string) => o200k(s).length;
const C = (s: string) => cl100k(s).length;

const SAMPLE = 'The quick brown fox jumps over the lazy dog. 你好，世界！こんにちは。';

describe('encoder choice and text counts', () => {
  it('uses o200k for gpt-4o/o-series/4.1/5 and cl100k otherwise', () => {
    expect(O(SAMPLE)).not.toBe(C(SAMPLE)); // the sample tells the two encodings apart
    for (const m of [
      'gpt-4o',
      'gpt-4o-mini',
      'chatgpt-4o-latest',
      'o1-mini',
      'o3-mini-high',
      'o4-mini',
      'gpt-4.1',
      'gpt-5',
    ]) {
      expect(encodingForModel(m), m).toBe('o200k_base');
      expect(countTextTokens(SAMPLE, m), m).toBe(O(SAMPLE));
    }
    for (const m of [
      'gpt-4',
      'gpt-3.5-turbo',
      'claude-3-5-sonnet-20241022',
      'gemini-2.0-flash',
      'qwen-turbo',
      'deepseek-chat',
    ]) {
      expect(encodingForModel(m), m).toBe('cl100k_base');
      expect(countTextTokens(SAMPLE, m), m).toBe(C(SAMPLE));
    }
  });

  it('known strings', () => {
    expect(countTextTokens('hello world', 'gpt-4o')).toBe(2);
    expect(countTextTokens('', 'gpt-4o')).toBe(0);
  });

  it('counts special-token text as ordinary text instead of throwing', () => {
    const s = 'a <|endoftext|> b <|im_start|>';
    expect(countTextTokens(s, 'gpt-4o')).toBe(o200k(s, { disallowedSpecial: new Set() }).length);
    expect(countTextTokens(s, 'gpt-4')).toBeGreaterThan(3);
  });

  it('is fast enough for the relay path (~100k characters)', () => {
    const big = SAMPLE.repeat(1500);
    countTextTokens('warm', 'gpt-4o');
    const t0 = performance.now();
    const n = countTextTokens(big, 'gpt-4o');
    expect(n).toBe(O(big));
    expect(performance.now() - t0).toBeLessThan(1500);
  });
});

describe('chat prompt tokens', () => {
  it('+3 per message, role, content, name +1, +3 priming', () => {
    const messages = [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', name: 'bob', content: 'What is 2+2?' },
    ];
    const expected =
      3 + O('system') + O('You are a helpful assistant.') + 3 + O('user') + O('What is 2+2?') + O('bob') + 1 + 3;
    expect(countChatPromptTokens(messages, 'gpt-4o')).toBe(expected);
  });

  it('gpt-3.5-turbo-0301: +4 per message and name −1', () => {
    const messages = [{ role: 'user', name: 'bob', content: 'hi' }];
    expect(countChatPromptTokens(messages, 'gpt-3.5-turbo-0301')).toBe(4 + C('user') + C('hi') + C('bob') - 1 + 3);
  });

  it('content parts: text encoded, image low 85, input_audio +100, file +5000', () => {
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe these.' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          { type: 'file', file: { file_id: 'f1' } },
        ],
      },
    ];
    expect(countChatPromptTokens(messages, 'gpt-4o')).toBe(3 + O('user') + O('Describe these.') + 85 + 100 + 5000 + 3);
  });

  it('assistant tool calls count their name and arguments', () => {
    const messages = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
    ];
    expect(countChatPromptTokens(messages, 'gpt-4o')).toBe(3 + O('assistant') + O('get_weather{"city":"Paris"}') + 3);
  });
});

describe('tools', () => {
  const weather = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  };
  const time = {
    type: 'function',
    function: {
      name: 'get_time',
      description: 'Current time in a zone',
      parameters: { type: 'object', properties: { tz: { type: 'string' } } },
    },
  };

  it('counts every tool (new-api counts only the last one), then +8', () => {
    const text =
      'get_weather' +
      'Weather for a city' +
      JSON.stringify(weather.function.parameters) +
      'get_time' +
      'Current time in a zone' +
      JSON.stringify(time.function.parameters);
    expect(countToolsTokens([weather, time], 'gpt-4o')).toBe(O(text) + 8);
    // The fix: two tools cost more than the last one alone (what new-api would count).
    expect(countToolsTokens([weather, time], 'gpt-4o')).toBeGreaterThan(countToolsTokens([time], 'gpt-4o'));
    const messages = [{ role: 'user', content: 'hi' }];
    expect(countChatPromptTokens(messages, 'gpt-4o', [weather, time])).toBe(3 + O('user') + O('hi') + O(text) + 8 + 3);
  });
});

// Minimal image headers: enough bytes for the size, as a client's data URL would start.
function png(w: number, h: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return b;
}
function gif(w: number, h: number): Buffer {
  const b = Buffer.alloc(16);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(w, 6);
  b.writeUInt16LE(h, 8);
  return b;
}
function webpHeader(chunk: string): Buffer {
  const b = Buffer.alloc(32);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(24, 4);
  b.write('WEBP', 8, 'latin1');
  b.write(chunk, 12, 'latin1');
  return b;
}
function webpVp8x(w: number, h: number): Buffer {
  const b = webpHeader('VP8X');
  b.writeUIntLE(w - 1, 24, 3);
  b.writeUIntLE(h - 1, 27, 3);
  return b;
}
function webpVp8l(w: number, h: number): Buffer {
  const b = webpHeader('VP8L');
  b[20] = 0x2f;
  const bits = (w - 1) | ((h - 1) << 14);
  b.writeUInt32LE(bits >>> 0, 21);
  return b;
}
function webpVp8(w: number, h: number): Buffer {
  const b = webpHeader('VP8 ');
  Buffer.from([0x9d, 0x01, 0x2a]).copy(b, 23);
  b.writeUInt16LE(w, 26);
  b.writeUInt16LE(h, 28);
  return b;
}
function jpeg(w: number, h: number, exifBytes = 14): Buffer {
  const app = Buffer.alloc(4 + exifBytes);
  app[0] = 0xff;
  app[1] = 0xe1;
  app.writeUInt16BE(exifBytes + 2, 2);
  const sof = Buffer.from([0xff, 0xc2, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  sof.writeUInt16BE(h, 5);
  sof.writeUInt16BE(w, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app, sof, Buffer.alloc(16)]);
}
const dataUrl = (mime: string, b: Buffer) => `data:${mime};base64,${b.toString('base64')}`;

describe('image sizes and vision tokens', () => {
  it('reads PNG, GIF, WebP (VP8, VP8L, VP8X) and JPEG headers', () => {
    expect(imageSizeFromBytes(png(1024, 768))).toEqual({ width: 1024, height: 768 });
    expect(imageSizeFromBytes(gif(320, 200))).toEqual({ width: 320, height: 200 });
    expect(imageSizeFromBytes(webpVp8x(4000, 3000))).toEqual({ width: 4000, height: 3000 });
    expect(imageSizeFromBytes(webpVp8l(1000, 700))).toEqual({ width: 1000, height: 700 });
    expect(imageSizeFromBytes(webpVp8(640, 480))).toEqual({ width: 640, height: 480 });
    expect(imageSizeFromBytes(jpeg(1920, 1080))).toEqual({ width: 1920, height: 1080 });
    expect(imageSizeFromBytes(Buffer.from('not an image'))).toBeNull();
  });

  it('finds a JPEG frame header behind a large EXIF block', () => {
    const url = dataUrl('image/jpeg', jpeg(800, 600, 60000));
    expect(url.length).toBeGreaterThan(4096 * 10);
    expect(imageSizeFromDataUrl(url)).toEqual({ width: 800, height: 600 });
  });

  it('tile rule: tiles × 170 + 85 after fitting 2048 and scaling the short side to 768', () => {
    // 1024² → 768² → 2×2 tiles
    expect(countImageTokens(dataUrl('image/png', png(1024, 1024)), 'high', 'gpt-4o')).toBe(4 * 170 + 85);
    // 2048×4096 → 1024×2048 → 768×1536 → 2×3 tiles
    expect(countImageTokens(dataUrl('image/png', png(2048, 4096)), 'auto', 'gpt-4o')).toBe(6 * 170 + 85);
    // small image → 1 tile
    expect(countImageTokens(dataUrl('image/gif', gif(100, 100)), undefined, 'gpt-4o')).toBe(255);
    // gpt-4o-mini: 2833 base, 5667 per tile
    expect(countImageTokens(dataUrl('image/png', png(1024, 1024)), undefined, 'gpt-4o-mini')).toBe(4 * 5667 + 2833);
    expect(countImageTokens(dataUrl('image/png', png(1024, 1024)), 'low', 'gpt-4o-mini')).toBe(2833);
    expect(countImageTokens(dataUrl('image/png', png(1024, 1024)), 'low', 'gpt-4o')).toBe(85);
  });

  it('unknown size (remote URL, garbage data) counts the flat 3 × 85; glm-4v counts 1047', () => {
    expect(UNKNOWN_IMAGE_TOKENS).toBe(255);
    expect(countImageTokens('https://example.com/cat.png', 'high', 'gpt-4o')).toBe(255);
    expect(countImageTokens('data:image/png;base64,AAAA', 'high', 'gpt-4o')).toBe(255);
    expect(countImageTokens(dataUrl('image/png', png(1024, 1024)), 'high', 'glm-4v')).toBe(1047);
  });

  it('image parts inside chat messages (string and object forms)', () => {
    const url = dataUrl('image/png', png(1024, 1024));
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: url },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ];
    expect(countChatPromptTokens(messages, 'gpt-4o')).toBe(3 + O('user') + 765 * 2 + 3);
  });
});

describe('inputs and completions', () => {
  it('completions / embeddings / moderation inputs', () => {
    expect(countInputTokens('hello world', 'text-embedding-3-small')).toBe(C('hello world'));
    expect(countInputTokens(['hello', 'world'], 'text-embedding-3-small')).toBe(C('hello') + C('world'));
    expect(countInputTokens([101, 102, 103], 'text-embedding-3-small')).toBe(3);
    expect(
      countInputTokens(
        [
          [1, 2],
          [3, 4, 5],
        ],
        'text-embedding-3-small',
      ),
    ).toBe(5);
    expect(countInputTokens([{ type: 'text', text: 'hello' }], 'omni-moderation-latest')).toBe(C('hello'));
    expect(countInputTokens(undefined, 'gpt-4o')).toBe(0);
  });

  it('countCompletionTokens: text + tool call text + 7 per call', () => {
    const calls = [
      { function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { function: { name: 'get_time', arguments: '{}' } },
    ];
    expect(TOOL_CALL_TOKENS).toBe(7);
    expect(countCompletionTokens('Sure.', 'gpt-4o', calls)).toBe(
      O('Sure.') + O('get_weather{"city":"Paris"}get_time{}') + 14,
    );
    // when the arguments are already part of the text, pass the number of calls
    expect(countCompletionTokens('Sure.', 'gpt-4o', 3)).toBe(O('Sure.') + 21);
    expect(countCompletionTokens('Sure.', 'gpt-4o')).toBe(O('Sure.'));
  });

  it('TTS input counts characters', () => {
    expect(countTtsInputTokens('你好 world')).toBe(8);
  });
});

// The reservation of a well-funded caller uses these bounds instead of the tokenizer (relay/pipeline/reserve.ts): a bound below
// the exact count would reserve less than new-api does.
describe('prompt bounds without a tokenizer', () => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const POOL = [
    'a',
    'Z',
    ' ',
    '\n',
    '\t',
    '"',
    '\\',
    '7',
    '1234567',
    '你',
    '好',
    'こ',
    '😀',
    '🧑‍🚀',
    'é',
    '\u0000',
    '<|endoftext|>',
    '<|im_start|>',
    '\ud83d',
    '{"x":1}',
    '.',
    '  ',
    '\r\n',
  ];
  const text = () => Array.from({ length: rand(40) }, () => POOL[rand(POOL.length)]).join('');
  const message = () => {
    const m: Record<string, unknown> = { role: ['user', 'assistant', 'system', 'tool'][rand(4)] };
    m.content = rand(3) === 0 ? Array.from({ length: rand(3) + 1 }, () => ({ type: 'text', text: text() })) : text();
    if (rand(4) === 0) m.name = text() || 'n';
    if (rand(4) === 0) m.tool_calls = [{ id: 'c', type: 'function', function: { name: text(), arguments: text() } }];
    return m;
  };
  const countOf = (body: any, model: string) => countChatPromptTokens(body.messages, model, body.tools);
  const boundOf = (raw: string) => {
    const body = JSON.parse(raw);
    return chatPromptBound(body.messages, body.tools, Buffer.byteLength(raw));
  };

  it('is never below the exact chat count (random text, names, tool calls, both encodings, 0301)', () => {
    for (let i = 0; i < 300; i++) {
      const body = {
        model: 'm',
        messages: Array.from({ length: rand(6) + 1 }, message),
        ...(rand(3) === 0
          ? {
              tools: [
                { type: 'function', function: { name: text(), description: text(), parameters: { type: 'object' } } },
              ],
            }
          : {}),
      };
      const raw = JSON.stringify(body);
      for (const model of ['gpt-4o', 'gpt-4', 'gpt-3.5-turbo-0301'])
        expect(boundOf(raw)).toBeGreaterThanOrEqual(countOf(body, model));
    }
  });

  it('holds for bodies the client spelled differently (escapes, empty messages, numbers that re-serialise longer)', () => {
    const numbers = Array.from({ length: 200 }, () => '1e20').join(',');
    const raws = [
      `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"a":[${numbers}]}}}]}`,
      `{"model":"m","messages":[${Array.from({ length: 200 }, () => '{}').join(',')}]}`,
      `{"model":"m","messages":[{"role":"\u0075ser","content":"\ud83d\ude00\u4f60\u597d","name":"\u006e"}]}`,
    ];
    for (const raw of raws) {
      const body = JSON.parse(raw);
      for (const model of ['gpt-4o', 'gpt-4', 'gpt-3.5-turbo-0301'])
        expect(boundOf(raw)).toBeGreaterThanOrEqual(countOf(body, model));
    }
  });

  it('gives no bound where a few bytes count by rule: images, audio, files', () => {
    const withPart = (part: unknown) => [{ role: 'user', content: [{ type: 'text', text: 'hi' }, part] }];
    expect(chatPromptBound(withPart({ type: 'image_url', image_url: { url: 'http://x/a.png' } }), undefined, 100)).toBe(
      -1,
    );
    expect(
      chatPromptBound(withPart({ type: 'input_audio', input_audio: { data: '', format: 'wav' } }), undefined, 100),
    ).toBe(-1);
    expect(chatPromptBound(withPart({ type: 'file', file: {} }), undefined, 100)).toBe(-1);
    expect(chatPromptBound('not a list', undefined, 100)).toBe(-1);
    expect(inputBound([{ type: 'image_url', image_url: 'http://x/a.png' }], 100)).toBe(-1);
  });

  it('bounds Responses API inputs (instructions, strings, items, function outputs)', () => {
    for (let i = 0; i < 100; i++) {
      const input = Array.from(
        { length: rand(5) + 1 },
        () =>
          [
            text(),
            { role: 'user', content: text() },
            { role: 'user', content: [{ type: 'input_text', text: text() }] },
            { type: 'function_call_output', output: text() },
          ][rand(4)],
      );
      const body = { model: 'm', instructions: text(), input: rand(2) ? input : text() };
      const raw = JSON.stringify(body);
      expect(responsesMode.promptBound!(body, Buffer.byteLength(raw))).toBeGreaterThanOrEqual(
        responsesMode.promptTokens(body, 'gpt-4o'),
      );
    }
  });

  it('bounds completions and embeddings inputs, token arrays included', () => {
    for (const input of [
      'hello world 你好',
      ['a', 'b 😀'],
      [101, 102, 103],
      [
        [1, 2],
        [3, 4, 5],
      ],
      [{ type: 'text', text: 'hi' }],
    ]) {
      const raw = JSON.stringify({ model: 'm', prompt: input });
      expect(inputBound(input, Buffer.byteLength(raw))).toBeGreaterThanOrEqual(countInputTokens(input, 'gpt-4o'));
    }
  });
});
