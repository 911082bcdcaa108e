// MiniMax (type 35) through the gateway: chat at /v1/text/chatcompletion_v2 (OpenAI and @google/genai clients, stream
// and not; Claude clients go to its Anthropic endpoint: claude-paths.test.ts) charged MiniMax's usage; an error MiniMax
// reports inside an HTTP 200 (base_resp) reaches the client as an error with the status its code stands for, nothing
// charged, stream and not; text to speech on /v1/t2a_v2, its hex audio given to the client as bytes.
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client, logsOf } from '../relay/fixtures.js';
import { fixture, MockJsonVendor, type MockAnswer } from '../helpers/mock-json-vendor.js';
import { checkOpenAIChatBody } from '../helpers/mock-openai-rules.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  vendorSuite,
} from './vendor-gateway.js';

const KEY = 'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.minimax-test-key';
const MODEL = 'MiniMax-Text-01';
const usage = { prompt: 61, completion: 7 };
const ask = [{ role: 'user' as const, content: '法国的首都是哪里？' }];
const AUDIO = Buffer.from('ID3\u0004fake-mp3-frames');

/** MiniMax's answer to everything it refuses: HTTP 200, the code in base_resp */
const inBand = (status_code: number, status_msg: string): MockAnswer => ({
  status: 200,
  body: { id: '', choices: null, base_resp: { status_code, status_msg } },
});

function startMinimaxMock() {
  return MockJsonVendor.start({
    auth: (r) =>
      r.headers.authorization === `Bearer ${KEY}`
        ? null
        : inBand(
            1004,
            "login fail: Please carry the API secret key in the 'Authorization' field of the request header",
          ),
    routes: {
      '/v1/text/chatcompletion_v2': (r) => {
        const problem = checkOpenAIChatBody(r.body);
        if (problem) return inBand(2013, `invalid params, ${problem}`);
        if (r.body.model === 'fail-model') return { status: 200, body: fixture('minimax', 'error.json') };
        if (r.body.model === 'busy-model') return inBand(1002, 'rate limit exceeded(RPM)');
        if (r.body.stream)
          return { status: 200, body: fixture('minimax', 'stream.sse'), contentType: 'text/event-stream' };
        return { status: 200, body: fixture('minimax', 'answer.json') };
      },
      '/v1/image_generation': (r) => {
        const b = r.body;
        if (typeof b?.prompt !== 'string' || b.size !== undefined || !['url', 'base64'].includes(b.response_format))
          return inBand(2013, 'invalid params, prompt and response_format url or base64 are required');
        if (b.prompt.includes('fail')) return inBand(1026, 'input new_sensitive');
        const n = Number(b.n ?? 1);
        const data =
          b.response_format === 'url'
            ? { image_urls: Array.from({ length: n }, (_, i) => `https://minimax.example/img/${i}.jpeg`) }
            : { image_base64: Array.from({ length: n }, () => Buffer.from('jpeg').toString('base64')) };
        return {
          status: 200,
          body: {
            id: '04b6e1',
            data,
            metadata: { failed_count: '0', success_count: String(n) },
            base_resp: { status_code: 0, status_msg: 'success' },
          },
        };
      },
      '/v1/t2a_v2': (r) => {
        const b = r.body;
        if (typeof b?.text !== 'string' || !b.voice_setting?.voice_id || b.input !== undefined)
          return inBand(2013, 'invalid params, text and voice_setting.voice_id are required');
        return {
          status: 200,
          body: {
            data: { audio: AUDIO.toString('hex'), status: 2 },
            extra_info: { audio_format: b.audio_setting?.format ?? 'mp3', usage_characters: b.text.length },
            trace_id: '04b6d3a0',
            base_resp: { status_code: 0, status_msg: 'success' },
          },
        };
      },
    },
  });
}

await describeEachDb('MiniMax channels', (kind) => {
  const models = [MODEL, 'speech-02-hd', 'image-01', 'fail-model', 'busy-model'];
  const suite = vendorSuite({
    kind,
    mock: startMinimaxMock,
    channel: { type: 35, key: KEY, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('the mock refuses a wrong key inside a 200, as MiniMax does', async () => {
    const r = await fetch(`${suite.mock.url}/v1/text/chatcompletion_v2`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
      body: JSON.stringify({ model: MODEL, messages: ask }),
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).base_resp.status_code).toBe(1004);
  });

  it('relays chat to /v1/text/chatcompletion_v2, charged MiniMax’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({ model: MODEL, messages: ask });
    expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
    expect(suite.mock.requests.at(-1)!.path).toBe('/v1/text/chatcompletion_v2');
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('streams, charged the last chunk’s usage', async () => {
    const before = await snapshot(suite);
    const stream = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: ask,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('法国的首都是巴黎。');
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('answers a Gemini client, stream and not', async () => {
    const question = {
      contents: '法国的首都是哪里？',
      config: { systemInstruction: '简短回答。', maxOutputTokens: 100 },
    };
    const messages = [
      { role: 'system', content: '简短回答。' },
      { role: 'user', content: '法国的首都是哪里？' },
    ];
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, MODEL, { ...question, stream: false });
    expect(plain.text).toBe('法国的首都是巴黎。');
    expect(plain.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    let sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe('/v1/text/chatcompletion_v2');
    expect(sent.body).toMatchObject({ model: MODEL, messages, max_tokens: 100 });
    await expectCharged(suite, before, usage, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe('法国的首都是巴黎。');
    expect(streamed.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    sent = suite.mock.requests.at(-1)!;
    expect(sent.body).toMatchObject({ messages, stream: true });
    await expectCharged(suite, before, usage, MODEL);
  });

  it('turns a base_resp error inside a 200 into the client’s error, charging nothing, stream and not', async () => {
    const before = await snapshot(suite);
    const openai = client(suite.s, suite.key);
    const plain = await openai.chat.completions.create({ model: 'fail-model', messages: ask }).catch((e) => e);
    expect(plain).toBeInstanceOf(APIError);
    expect((plain as APIError).status).toBe(400);
    expect((plain as APIError).message).toContain("invalid params, unknown model 'fail-model'");
    const streamed = await openai.chat.completions
      .create({ model: 'fail-model', messages: ask, stream: true })
      .catch((e) => e);
    expect((streamed as APIError).status).toBe(400);
    const busy = await openai.chat.completions.create({ model: 'busy-model', messages: ask }).catch((e) => e);
    expect((busy as APIError).status).toBe(429);
    await expectNothingCharged(suite, before);
  });

  onSqlite('speaks through /v1/t2a_v2: the hex audio reaches the client as bytes', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).audio.speech.create({
      model: 'speech-02-hd',
      input: '你好',
      voice: 'alloy',
      response_format: 'mp3',
    });
    expect(r.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await r.arrayBuffer())).toEqual(AUDIO);
    expect(suite.mock.requests.at(-1)!.body).toEqual({
      model: 'speech-02-hd',
      text: '你好',
      stream: false,
      voice_setting: { voice_id: 'male-qn-qingse' },
      audio_setting: { format: 'mp3' },
    });
    const log = (await logsOf(suite.s, suite.userId)).at(-1)!;
    expect([log.model_name, log.quota > 0]).toEqual(['speech-02-hd', true]);
    await expectCharged(suite, before, { prompt: log.prompt_tokens, completion: 0 }, 'speech-02-hd', log.quota);
  });

  onSqlite(
    'draws through /v1/image_generation, charged the images price; a base_resp refusal charges nothing',
    async () => {
      const before = await snapshot(suite);
      const r = await client(suite.s, suite.key).images.generate({
        model: 'image-01',
        prompt: 'a lighthouse at dawn',
        n: 2,
        size: '1792x1024',
      });
      expect(r.data?.map((d) => d.url)).toEqual([
        'https://minimax.example/img/0.jpeg',
        'https://minimax.example/img/1.jpeg',
      ]);
      expect(suite.mock.requests.at(-1)!.body).toEqual({
        model: 'image-01',
        prompt: 'a lighthouse at dawn',
        aspect_ratio: '16:9',
        response_format: 'url',
        n: 2,
      });
      const log = (await logsOf(suite.s, suite.userId)).at(-1)!;
      expect([log.model_name, log.quota > 0]).toEqual(['image-01', true]);
      await expectCharged(suite, before, { prompt: log.prompt_tokens, completion: 0 }, 'image-01', log.quota);

      const refusedBefore = await snapshot(suite);
      const err = await client(suite.s, suite.key)
        .images.generate({ model: 'image-01', prompt: 'fail', response_format: 'b64_json' })
        .catch((e: unknown) => e);
      expect((err as APIError).status).toBe(400);
      expect((err as APIError).message).toContain('input new_sensitive');
      await expectNothingCharged(suite, refusedBefore);
    },
  );
});
