// The real @google/genai client against this codec: its requests read into the hub, and our answers and streams
// (both framings the SDK can ask for) read back by the SDK as Google's own would be.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { geminiCodec } from '../../src/relay/formats/gemini/index.js';
import type { HubChunk, HubRequest, HubResponse } from '../../src/relay/hub/types.js';

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk' as const, created: 0, model: 'm' };
const hubChunks: HubChunk[] = [
  {
    ...base,
    choices: [{ index: 0, delta: { role: 'assistant', reasoning_content: 'thinking…' }, finish_reason: null }],
  },
  { ...base, choices: [{ index: 0, delta: { thinking_signature: 'SIG' }, finish_reason: null }] },
  { ...base, choices: [{ index: 0, delta: { content: 'Hello ' }, finish_reason: null }] },
  { ...base, choices: [{ index: 0, delta: { content: 'world' }, finish_reason: null }] },
  {
    ...base,
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a"' } }],
        },
        finish_reason: null,
      },
    ],
  },
  {
    ...base,
    choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: null }],
  },
  { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
];
const usage = {
  prompt_tokens: 5,
  completion_tokens: 9,
  total_tokens: 14,
  completion_tokens_details: { reasoning_tokens: 4 },
};
const answer: HubResponse = {
  id: 'chatcmpl-2',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Plain answer' }, finish_reason: 'stop' }],
  usage,
};

let server: Server;
let baseUrl = '';
const seen: HubRequest[] = [];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => resolve(body));
  });
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    seen.push(geminiCodec.requestToHub(JSON.parse(await readBody(req))));
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.endsWith(':generateContent')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(geminiCodec.responseFromHub(answer, { id: 'r1', model: 'gemini-2.5-flash' })));
      return;
    }
    const framing = url.searchParams.get('alt') === 'sse' ? 'sse' : 'json-array';
    const encoder = geminiCodec.streamFromHub({ id: 'r2', model: 'gemini-2.5-flash', framing });
    res.writeHead(200, { 'content-type': encoder.contentType });
    for (const c of hubChunks) res.write(encoder.push(c));
    res.end(encoder.end(usage));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('@google/genai against the gemini codec', () => {
  const client = () => new GoogleGenAI({ apiKey: 'test-key', httpOptions: { baseUrl } });

  it('sends a request the codec reads, and reads a whole answer', async () => {
    const res = await client().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'hello',
      config: {
        systemInstruction: 'be brief',
        temperature: 0.5,
        thinkingConfig: { thinkingBudget: 128 },
        tools: [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: { type: 'object' } }] }],
      },
    });
    expect(res.text).toBe('Plain answer');
    expect(res.usageMetadata?.thoughtsTokenCount).toBe(4);
    expect(res.responseId).toBe('r1');
    const hub = seen.at(-1)!;
    expect(hub.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello' },
    ]);
    expect(hub).toMatchObject({ temperature: 0.5, thinking_budget: 128, tools: [{ function: { name: 'f' } }] });
  });

  it('reads an SSE stream: thoughts, text, a whole function call, finish and usage', async () => {
    const stream = await client().models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' });
    let text = '';
    let thoughts = '';
    const calls: unknown[] = [];
    let last: any;
    for await (const chunk of stream) {
      for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
        if (part.thought) thoughts += part.text ?? '';
        else if (part.text) text += part.text;
        if (part.functionCall) calls.push(part.functionCall);
      }
      last = chunk;
    }
    expect(thoughts).toBe('thinking…');
    expect(text).toBe('Hello world');
    expect(calls).toEqual([{ id: 'call_1', name: 'f', args: { a: 1 } }]);
    expect(last.candidates[0].finishReason).toBe('STOP');
    expect(last.usageMetadata).toEqual({
      promptTokenCount: 5,
      candidatesTokenCount: 5,
      totalTokenCount: 14,
      thoughtsTokenCount: 4,
    });
  });
});
