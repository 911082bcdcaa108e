// The Gemini mock is faithful enough to test the relay against: the official @google/genai SDK talks to it
// directly and gets what it gets from Google (answers, SSE streams, function calls, thoughts, token counts,
// embeddings, the model list), and raw requests are refused the way Google refuses them.
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, Type } from '@google/genai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GEMINI_MOCK_KEY, MockGemini } from '../helpers/mock-gemini.js';
import { geminiThoughtSignature } from '../helpers/mock-gemini-answer.js';

let mock: MockGemini;
let ai: GoogleGenAI;

beforeAll(async () => {
  mock = await MockGemini.start();
  ai = new GoogleGenAI({ apiKey: GEMINI_MOCK_KEY, httpOptions: { baseUrl: mock.url } });
});
afterAll(() => mock.close());
beforeEach(() => mock.reset());

const FLASH = 'gemini-2.5-flash';
const OLD = 'gemini-2.0-flash';
const weather = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: { type: Type.OBJECT, properties: { location: { type: Type.STRING } }, required: ['location'] },
    },
  ],
};

describe('Gemini mock with the official SDK', () => {
  it('generates a deterministic text answer with usageMetadata, modelVersion and responseId', async () => {
    const res = await ai.models.generateContent({
      model: OLD,
      contents: 'Say hi to the whole world please',
      config: { systemInstruction: 'Be brief.' },
    });
    expect(res.text).toBe('Hello from gemini: Say hi to the whole world');
    expect(res.candidates?.[0]).toMatchObject({ finishReason: 'STOP', index: 0, content: { role: 'model' } });
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 9, candidatesTokenCount: 9, totalTokenCount: 18 });
    expect(res.usageMetadata?.thoughtsTokenCount).toBeUndefined();
    expect(res.modelVersion).toBe(OLD);
    expect(res.responseId).toMatch(/^mock-gemini-/);
    const rec = mock.requests[0];
    expect(rec.path).toBe(`/v1beta/models/${OLD}:generateContent`);
    expect(rec.headers['x-goog-api-key']).toBe(GEMINI_MOCK_KEY);
  });

  it('counts hidden thoughts on a thinking model, and returns thought parts with a signature when asked', async () => {
    const plain = await ai.models.generateContent({ model: FLASH, contents: 'Why is the sky blue?' });
    expect(plain.usageMetadata?.thoughtsTokenCount).toBe(7);
    expect(plain.usageMetadata?.totalTokenCount).toBe(5 + 8 + 7);

    const res = await ai.models.generateContent({
      model: FLASH,
      contents: 'Why is the sky blue?',
      config: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } },
    });
    const parts = res.candidates![0].content!.parts!;
    expect(parts[0]).toEqual({ text: 'Thinking about: Why is the sky blue?', thought: true });
    expect(parts[1].thoughtSignature).toBe(geminiThoughtSignature('Thinking about: Why is the sky blue?'));
    expect(res.text).toBe('Hello from gemini: Why is the sky blue?');
    expect(res.usageMetadata?.thoughtsTokenCount).toBe(7);

    const off = await ai.models.generateContent({
      model: FLASH,
      contents: 'hi',
      config: { thinkingConfig: { thinkingBudget: 0 } },
    });
    expect(off.usageMetadata?.thoughtsTokenCount).toBeUndefined();
  });

  it('streams over SSE in several chunks, usage on every chunk, finishReason on the last', async () => {
    const stream = await ai.models.generateContentStream({
      model: OLD,
      contents: 'one two three four five six seven',
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.text).join('')).toBe('Hello from gemini: one two three four five six');
    expect(chunks.every((c) => c.usageMetadata?.promptTokenCount === 7)).toBe(true);
    const counts = chunks.map((c) => c.usageMetadata?.candidatesTokenCount ?? 0);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(9);
    expect(chunks.slice(0, -1).every((c) => c.candidates?.[0].finishReason === undefined)).toBe(true);
    expect(chunks.at(-1)!.candidates?.[0].finishReason).toBe('STOP');
    expect(mock.requests[0].path).toBe(`/v1beta/models/${OLD}:streamGenerateContent?alt=sse`);
  });

  it('streams thought parts before the answer, the signature on the first answer chunk', async () => {
    const stream = await ai.models.generateContentStream({
      model: FLASH,
      contents: 'Why is the sky blue today?',
      config: { thinkingConfig: { includeThoughts: true } },
    });
    const parts = [];
    const usages = [];
    for await (const c of stream) {
      parts.push(...c.candidates![0].content!.parts!);
      usages.push(c.usageMetadata);
    }
    const firstAnswer = parts.findIndex((p) => !p.thought);
    expect(firstAnswer).toBeGreaterThan(0);
    expect(parts.slice(firstAnswer).every((p) => !p.thought)).toBe(true);
    expect(parts[firstAnswer].thoughtSignature).toBeTruthy();
    expect(parts.filter((p) => p.thoughtSignature)).toHaveLength(1);
    expect(usages.at(-1)).toMatchObject({ thoughtsTokenCount: 8, candidatesTokenCount: 9 });
  });

  it('frames SSE with CRLF and, without alt=sse, streams one JSON array', async () => {
    const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi there' }] }] });
    const headers = { 'x-goog-api-key': GEMINI_MOCK_KEY, 'content-type': 'application/json' };
    const sse = await fetch(`${mock.url}/v1beta/models/${OLD}:streamGenerateContent?alt=sse`, {
      method: 'POST',
      headers,
      body,
    });
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    const text = await sse.text();
    expect(text.startsWith('data: {"candidates":')).toBe(true);
    expect(text.endsWith('\r\n\r\n')).toBe(true);
    expect(text.split('\r\n\r\n').length).toBeGreaterThan(2);

    const array = await fetch(`${mock.url}/v1beta/models/${OLD}:streamGenerateContent?key=${GEMINI_MOCK_KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(array.headers.get('content-type')).toMatch(/^application\/json/);
    const raw = await array.text();
    expect(raw.startsWith('[{')).toBe(true);
    expect(raw).toContain('\n,\r\n{');
    const parsed = JSON.parse(raw);
    expect(parsed.length).toBeGreaterThan(1);
    expect(parsed.at(-1).candidates[0].finishReason).toBe('STOP');
  });

  it('calls a declared function when the user asks for the weather, then answers its response', async () => {
    const res = await ai.models.generateContent({
      model: OLD,
      contents: 'What is the weather in Paris?',
      config: { tools: [weather] },
    });
    expect(res.functionCalls).toEqual([{ name: 'get_weather', args: { location: 'Paris' } }]);
    expect(res.candidates?.[0].finishReason).toBe('STOP');

    const forced = await ai.models.generateContent({
      model: OLD,
      contents: 'hello',
      config: {
        tools: [weather],
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } },
      },
    });
    expect(forced.functionCalls?.[0].name).toBe('get_weather');

    const stream = await ai.models.generateContentStream({
      model: FLASH,
      contents: 'weather please',
      config: { tools: [weather] },
    });
    const calls = [];
    for await (const c of stream) calls.push(...(c.functionCalls ?? []));
    expect(calls).toEqual([{ name: 'get_weather', args: { location: 'Paris' } }]);

    const answer = await ai.models.generateContent({
      model: OLD,
      contents: [
        { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] },
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { forecast: 'sunny 18C' } } }] },
      ],
      config: { tools: [weather] },
    });
    expect(answer.text).toBe('Hello from gemini: the function answered forecast sunny 18C');
  });

  it('stops at maxOutputTokens with MAX_TOKENS and reports cached tokens when configured', async () => {
    const res = await ai.models.generateContent({
      model: OLD,
      contents: 'tell me a long story',
      config: { maxOutputTokens: 3 },
    });
    expect(res.text).toBe('Hello from gemini:');
    expect(res.candidates?.[0].finishReason).toBe('MAX_TOKENS');
    mock.cachedTokens = 4;
    const cached = await ai.models.generateContent({ model: OLD, contents: 'a b c d e f' });
    expect(cached.usageMetadata).toMatchObject({ promptTokenCount: 6, cachedContentTokenCount: 4 });
  });

  it('counts tokens with the same count generateContent reports', async () => {
    const res = await ai.models.countTokens({ model: OLD, contents: 'Say hi to the whole world please' });
    expect(res.totalTokens).toBe(7);
  });

  it('embeds content deterministically (the SDK goes through batchEmbedContents)', async () => {
    const res = await ai.models.embedContent({
      model: 'gemini-embedding-001',
      contents: ['hello world', 'bye'],
      config: { outputDimensionality: 8 },
    });
    expect(res.embeddings).toHaveLength(2);
    expect(res.embeddings![0].values).toHaveLength(8);
    const again = await ai.models.embedContent({
      model: 'gemini-embedding-001',
      contents: 'hello world',
      config: { outputDimensionality: 8 },
    });
    expect(again.embeddings![0].values).toEqual(res.embeddings![0].values);
    expect(mock.requests[0].path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');

    const single = await fetch(`${mock.url}/v1beta/models/text-embedding-004:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': GEMINI_MOCK_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'hello world' }] } }),
    });
    const body = (await single.json()) as any;
    expect(body.embedding.values).toHaveLength(768);
  });

  it('lists and gets models', async () => {
    const names: string[] = [];
    for await (const m of await ai.models.list()) names.push(m.name!);
    expect(names).toContain('models/gemini-2.5-flash');
    expect(names).toContain('models/gemini-embedding-001');
    const model = await ai.models.get({ model: FLASH });
    expect(model).toMatchObject({ name: 'models/gemini-2.5-flash', displayName: 'Gemini 2.5 Flash' });
    const raw = (await (
      await fetch(`${mock.url}/v1beta/models`, { headers: { 'x-goog-api-key': GEMINI_MOCK_KEY } })
    ).json()) as any;
    expect(raw.nextPageToken).toBeUndefined();
    expect(raw.models[0].supportedGenerationMethods).toContain('generateContent');
  });

  it('raises ApiError for scripted 429 and 503, and for a wrong key', async () => {
    mock.behave = () => ({ kind: 'error', code: 429 });
    const e429 = await ai.models.generateContent({ model: OLD, contents: 'hi' }).catch((e) => e);
    expect(e429).toBeInstanceOf(ApiError);
    expect(e429.status).toBe(429);
    expect(e429.message).toContain('RESOURCE_EXHAUSTED');

    mock.behave = () => ({ kind: 'error', code: 503 });
    const e503 = await ai.models.generateContentStream({ model: OLD, contents: 'hi' }).catch((e) => e);
    expect(e503).toBeInstanceOf(ApiError);
    expect(e503.status).toBe(503);

    mock.reset();
    const bad = new GoogleGenAI({ apiKey: 'nope', httpOptions: { baseUrl: mock.url } });
    const eKey = await bad.models.generateContent({ model: OLD, contents: 'hi' }).catch((e) => e);
    expect(eKey).toBeInstanceOf(ApiError);
    expect(eKey.status).toBe(400);
    expect(eKey.message).toContain('API key not valid');
  });

  it('scripts an answer, an error mid-stream, a broken stream and a delay', async () => {
    mock.behave = () => ({ kind: 'answer', parts: [{ text: 'scripted' }] });
    expect((await ai.models.generateContent({ model: OLD, contents: 'hi' })).text).toBe('scripted');

    mock.behave = () => ({
      kind: 'default',
      stream: { errorAfterChunks: { after: 1, code: 503, status: 'UNAVAILABLE', message: 'overloaded' } },
    });
    const seen: string[] = [];
    const midError = await (async () => {
      for await (const c of await ai.models.generateContentStream({ model: OLD, contents: 'one two three four' }))
        seen.push(c.text ?? '');
    })().catch((e) => e);
    expect(seen).toHaveLength(1);
    expect(midError).toBeInstanceOf(Error);
    expect(String(midError.message)).toContain('overloaded');

    mock.behave = () => ({ kind: 'default', stream: { breakAfterChunks: 1 } });
    const broken = await (async () => {
      for await (const _ of await ai.models.generateContentStream({ model: OLD, contents: 'one two three four' })) {
        // drain
      }
    })().catch((e) => e);
    expect(broken).toBeInstanceOf(Error);

    mock.behave = () => ({ kind: 'default', delayMs: 150 });
    const t0 = Date.now();
    await ai.models.generateContent({ model: OLD, contents: 'hi' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });
});

describe('Gemini mock rejections (raw fetch)', () => {
  const url = (model = OLD, method = 'generateContent') => `${mock.url}/v1beta/models/${model}:${method}`;
  const post = async (body: unknown, opts: { key?: string | null; target?: string } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (opts.key !== null) headers['x-goog-api-key'] = opts.key ?? GEMINI_MOCK_KEY;
    const res = await fetch(opts.target ?? url(), {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const hi = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
  const expectInvalid = (r: { status: number; body: any }, message: string | RegExp) => {
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(400);
    expect(r.body.error.status).toBe('INVALID_ARGUMENT');
    if (typeof message === 'string') expect(r.body.error.message).toBe(message);
    else expect(r.body.error.message).toMatch(message);
  };

  it('refuses a missing key with 403 and a wrong one with API_KEY_INVALID', async () => {
    const missing = await post(hi, { key: null });
    expect(missing.status).toBe(403);
    expect(missing.body.error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' });
    const wrong = await post(hi, { key: 'AIza-wrong' });
    expectInvalid(wrong, 'API key not valid. Please pass a valid API key.');
    expect(wrong.body.error.details[0]).toMatchObject({
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'API_KEY_INVALID',
    });
    const viaQuery = await post(hi, { key: null, target: `${url()}?key=${GEMINI_MOCK_KEY}` });
    expect(viaQuery.status).toBe(200);
  });

  it('refuses bodies that are not JSON, and missing or empty contents', async () => {
    expectInvalid(await post('{nope'), /^Invalid JSON payload received\. Unexpected token\./);
    expectInvalid(await post({}), '* GenerateContentRequest.contents: contents is not specified\n');
    expectInvalid(await post({ contents: [] }), '* GenerateContentRequest.contents: contents is not specified\n');
  });

  it('refuses OpenAI-style top-level fields by name, and accepts snake_case spellings', async () => {
    for (const name of ['model', 'messages', 'stream', 'max_tokens']) {
      const r = await post({ ...hi, [name]: 1 });
      expectInvalid(r, `Invalid JSON payload received. Unknown name "${name}": Cannot find field.`);
      expect(r.body.error.details[0]['@type']).toBe('type.googleapis.com/google.rpc.BadRequest');
    }
    const snake = await post({
      ...hi,
      system_instruction: { parts: [{ text: 'x' }] },
      generation_config: { max_output_tokens: 5 },
    });
    expect(snake.status).toBe(200);
  });

  it('refuses unknown generationConfig keys', async () => {
    expectInvalid(
      await post({ ...hi, generationConfig: { max_tokens: 5 } }),
      `Invalid JSON payload received. Unknown name "max_tokens" at 'generation_config': Cannot find field.`,
    );
  });

  it('refuses roles other than user and model', async () => {
    for (const role of ['assistant', 'system']) {
      expectInvalid(
        await post({ contents: [{ role, parts: [{ text: 'hi' }] }] }),
        'Please use a valid role: user, model.',
      );
    }
  });

  it('refuses a functionResponse that does not follow a functionCall turn', async () => {
    expectInvalid(
      await post({
        contents: [
          { role: 'user', parts: [{ text: 'hi' }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { ok: true } } }] },
        ],
      }),
      'Please ensure that function response turn comes immediately after a function call turn.',
    );
  });

  it('refuses thinkingConfig on a model that does not think', async () => {
    const body = { ...hi, generationConfig: { thinkingConfig: { includeThoughts: true } } };
    expectInvalid(
      await post(body, { target: url('gemini-1.5-flash') }),
      'Thinking is not enabled for models/gemini-1.5-flash',
    );
    expect((await post(body, { target: url(FLASH) })).status).toBe(200);
  });

  it('answers errors of a JSON-array stream as an array, and unknown methods or models with 404', async () => {
    const arr = await post({}, { target: url(OLD, 'streamGenerateContent') });
    expect(arr.status).toBe(400);
    expect(arr.body[0].error.status).toBe('INVALID_ARGUMENT');
    const embedOnChat = await post({ content: { parts: [{ text: 'x' }] } }, { target: url(FLASH, 'embedContent') });
    expect(embedOnChat.status).toBe(404);
    expect(embedOnChat.body.error.status).toBe('NOT_FOUND');
    mock.strictModels = true;
    expect((await post(hi, { target: url('gemini-9-imaginary') })).status).toBe(404);
  });
});
