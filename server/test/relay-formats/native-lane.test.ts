// The native lane keeps what the hub cannot carry: a Gemini client on a Gemini channel gets the upstream's events as
// they came (grounding metadata included), in SSE or reframed as the JSON array it asked for; a Claude client on an
// Anthropic channel gets Anthropic's answer byte for byte, with the usage read for the charge.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../helpers/mock-anthropic.js';
import { GEMINI_MOCK_KEY, MockGemini } from '../helpers/mock-gemini.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf, setOptions } from '../relay/fixtures.js';

const GROUNDING = {
  webSearchQueries: ['weather paris'],
  groundingChunks: [{ web: { uri: 'https://example.com', title: 'Ex' } }],
};

/** A Gemini stream whose chunks carry a field the hub does not know, with usage on the last one. */
function groundedStream(): string {
  const chunk = (text: string, last: boolean) => ({
    candidates: [
      {
        content: { role: 'model', parts: [{ text }] },
        ...(last ? { finishReason: 'STOP', groundingMetadata: GROUNDING } : {}),
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 12, candidatesTokenCount: last ? 6 : 3, totalTokenCount: last ? 18 : 15 },
    modelVersion: 'gemini-2.0-flash',
    responseId: 'resp-native',
  });
  return [chunk('Sunny ', false), chunk('in Paris.', true)].map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join('');
}

await describeEachDb('the native lane', (kind) => {
  let s: TestServer;
  let gemini: MockGemini;
  let anthropic: MockAnthropic;
  let openai: MockUpstream;
  let key: string;
  let userId: number;

  beforeAll(async () => {
    [gemini, anthropic, openai] = await Promise.all([MockGemini.start(), MockAnthropic.start(), MockUpstream.start()]);
    s = await startTestServer({ kind });
    await setOptions(s, {
      ModelRatio: { 'gemini-2.0-flash': 1, 'claude-3-5-sonnet-20241022': 1, 'claude-via-openai': 1 },
    });
    await addChannel(s, { type: 1, baseUrl: openai.url, models: ['claude-via-openai'] });
    await addChannel(s, { type: 24, baseUrl: gemini.url, key: GEMINI_MOCK_KEY, models: ['gemini-2.0-flash'] });
    await addChannel(s, {
      type: 14,
      baseUrl: anthropic.url,
      key: ANTHROPIC_MOCK_KEY,
      models: ['claude-3-5-sonnet-20241022'],
    });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([gemini?.close(), anthropic?.close(), openai?.close()]);
  });

  const post = (path: string, body: unknown) =>
    fetch(`${s.url}${path}`, {
      method: 'POST',
      headers: { 'x-goog-api-key': `sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('passes a Gemini SSE stream through as it came, and charges its usage', async () => {
    gemini.behave = () => ({ kind: 'raw', status: 200, body: groundedStream(), contentType: 'text/event-stream' });
    const res = await post('/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse', {
      contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(await res.text()).toBe(groundedStream());
    // the upstream was asked for SSE, the key in Gemini's header, the model in the path
    const sent = gemini.requests.at(-1)!;
    expect(sent.path).toMatch(/\/models\/gemini-2\.0-flash:streamGenerateContent\?alt=sse$/);
    expect(sent.headers['x-goog-api-key']).toBe(GEMINI_MOCK_KEY);
    await flushLogs(s);
    const row = (await logsOf(s, userId)).at(-1)!;
    expect([row.prompt_tokens, row.completion_tokens, Boolean(row.is_stream)]).toEqual([12, 6, true]);
  });

  it('reframes the same stream as the JSON array a client without alt=sse asked for', async () => {
    gemini.behave = () => ({ kind: 'raw', status: 200, body: groundedStream(), contentType: 'text/event-stream' });
    const res = await post('/v1beta/models/gemini-2.0-flash:streamGenerateContent', {
      contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
    });
    expect(res.status).toBe(200);
    const array = JSON.parse(await res.text());
    expect(array).toHaveLength(2);
    expect(array[1].candidates[0].groundingMetadata).toEqual(GROUNDING);
    expect(array.map((c: any) => c.candidates[0].content.parts[0].text).join('')).toBe('Sunny in Paris.');
  });

  it('passes an Anthropic answer through byte for byte and bills its usage with the Claude formula', async () => {
    const answer = {
      id: 'msg_native',
      type: 'message',
      role: 'assistant',
      model: 'claude-3-5-sonnet-20241022',
      content: [
        {
          type: 'text',
          text: 'Hi',
          citations: [
            { type: 'char_location', cited_text: 'x', document_index: 0, start_char_index: 0, end_char_index: 1 },
          ],
        },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 4, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 },
    };
    anthropic.behave = () => ({
      kind: 'raw',
      status: 200,
      body: JSON.stringify(answer),
      contentType: 'application/json',
    });
    const c = new Anthropic({ apiKey: `sk-${key}`, baseURL: s.url, maxRetries: 0 });
    const r = await c.messages.create({
      model: 'claude-3-5-sonnet-20241022',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(r).toMatchObject(answer);
    await flushLogs(s);
    const row = (await logsOf(s, userId)).at(-1)!;
    // prompt = input + cache reads; cache writes apart (new-api-compat.md §5.3)
    expect([row.prompt_tokens, row.completion_tokens]).toEqual([110, 4]);
    const o = row.otherJson;
    expect(o).toMatchObject({ claude: true, cache_tokens: 100, cache_creation_tokens: 20 });
    const expected = Math.trunc(
      (10 + 100 * o.cache_ratio + 20 * o.cache_creation_ratio + 4 * o.completion_ratio) * o.model_ratio * o.group_ratio,
    );
    expect(row.quota).toBe(expected);
  });

  it('takes a block only Claude understands to a Claude channel, and refuses it in Claude’s shape elsewhere', async () => {
    const body = {
      max_tokens: 50,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } },
            { type: 'text', text: 'Summarise the document.' },
          ],
        },
      ],
    };
    anthropic.behave = () => ({ kind: 'default' });
    const send = (model: string) =>
      fetch(`${s.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': `sk-${key}`, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, model }),
      });
    const native = await send('claude-3-5-sonnet-20241022');
    expect(native.status).toBe(200);
    expect(anthropic.requests.at(-1)!.body.messages[0].content[0].type).toBe('document');

    await flushLogs(s);
    const before = (await logsOf(s, userId)).length;
    const openaiCalls = openai.requests.length;
    const translated = await send('claude-via-openai');
    expect(translated.status).toBe(400);
    expect(await translated.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(openai.requests.length).toBe(openaiCalls);
    await flushLogs(s);
    expect((await logsOf(s, userId)).length).toBe(before);
  });
});
