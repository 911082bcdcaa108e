// The channel output settings (force_format, thinking_to_content) on the native lanes of the formats other than
// OpenAI chat: a Responses client on an OpenAI channel and a Gemini client on a Gemini channel. The answer is read
// through the hub (lanes/native-decoded.ts) only when a setting changes it; without one it passes as it came.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, client, setOptions } from './fixtures.js';

const GEMINI_TYPE = 24;
const fixture = (name: string) =>
  readFileSync(new URL(`../../src/relay/formats/responses/__fixtures__/${name}`, import.meta.url), 'utf8');
/** o4-mini as OpenAI streams it: a reasoning summary, then a function call */
const reasoningStream = fixture('stream-function-call-reasoning.sse');
const SUMMARY = '**Checking the weather**\n\nThe user asks about Paris; I should call get_weather with the city.';

/** A whole Responses answer: a reasoning summary, then the message. */
const reasoningAnswer = {
  id: 'resp_1',
  object: 'response',
  created_at: 1745272778,
  status: 'completed',
  model: 'o4-mini',
  output: [
    { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'let me think' }] },
    {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Paris', annotations: [] }],
    },
  ],
  usage: { input_tokens: 10, output_tokens: 7, total_tokens: 17 },
};

/** Gemini's answer with a thought summary part before the text. */
const geminiThinking = {
  candidates: [
    {
      content: { role: 'model', parts: [{ text: 'let me think', thought: true }, { text: 'Paris' }] },
      finishReason: 'STOP',
      index: 0,
    },
  ],
  usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 7, thoughtsTokenCount: 3, totalTokenCount: 20 },
  modelVersion: 'gemini-2.5-flash',
};

describe('channel output settings on the native lanes of Responses and Gemini clients', () => {
  let s: TestServer;
  let up: MockUpstream;
  let key: string;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    await setOptions(s, {
      ModelRatio: { 'o4-think': 1, 'o4-plain': 1, 'gemini-think': 1, 'gemini-plain': 1 },
    });
    await addChannel(s, { baseUrl: up.url, models: ['o4-think'], setting: { thinking_to_content: true } });
    await addChannel(s, { baseUrl: up.url, models: ['o4-plain'] });
    const gemini = { type: GEMINI_TYPE, baseUrl: up.url, key: 'AIza-test' };
    await addChannel(s, { ...gemini, models: ['gemini-think'], setting: { thinking_to_content: true } });
    await addChannel(s, { ...gemini, models: ['gemini-plain'] });
    await channelsChanged(s);
    const u = await addUser(s);
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  describe('Responses client, OpenAI channel', () => {
    it('thinking_to_content: a stream gives the reasoning summary as <think> text before the function call', async () => {
      up.behave = () => ({ kind: 'raw', status: 200, contentType: 'text/event-stream', body: reasoningStream });
      const stream = await client(s, key).responses.create({ model: 'o4-think', input: 'weather?', stream: true });
      let text = '';
      const items: string[] = [];
      let completed: any;
      for await (const e of stream) {
        if (e.type === 'response.output_text.delta') text += e.delta;
        if (e.type === 'response.output_item.added') items.push(e.item.type);
        if (e.type === 'response.reasoning_summary_text.delta') throw new Error('reasoning passed through');
        if (e.type === 'response.completed') completed = e.response;
      }
      expect(text).toBe(`<think>\n${SUMMARY}\n</think>\n`);
      expect(items).not.toContain('reasoning');
      expect(items).toContain('function_call');
      expect(completed.output.find((o: any) => o.type === 'function_call')).toMatchObject({ name: 'get_weather' });
    });

    it('thinking_to_content: a whole answer gives the reasoning as <think> text', async () => {
      up.behave = () => ({
        kind: 'raw',
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify(reasoningAnswer),
      });
      const r = await client(s, key).responses.create({ model: 'o4-think', input: 'q' });
      expect(r.output_text).toBe('<think>\nlet me think\n</think>\nParis');
      expect(r.output.map((o) => o.type)).not.toContain('reasoning');
    });

    it('without a setting, the reasoning stays a reasoning item', async () => {
      up.behave = () => ({
        kind: 'raw',
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify(reasoningAnswer),
      });
      const r = await client(s, key).responses.create({ model: 'o4-plain', input: 'q' });
      expect(r.output_text).toBe('Paris');
      expect(r.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    });
  });

  describe('Gemini client, Gemini channel', () => {
    const gemini = async (model: string) => {
      up.behave = () => ({
        kind: 'raw',
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify(geminiThinking),
      });
      const r = await fetch(`${s.url}/v1beta/models/${model}:generateContent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': `sk-${key.replace(/^sk-/, '')}` },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'q' }] }] }),
      });
      expect(r.status).toBe(200);
      return (await r.json()) as typeof geminiThinking;
    };

    it('thinking_to_content: the thought part becomes <think> text', async () => {
      const body = await gemini('gemini-think');
      const parts = body.candidates[0].content.parts as { text: string; thought?: boolean }[];
      expect(parts.some((p) => p.thought)).toBe(false);
      expect(parts.map((p) => p.text).join('')).toBe('<think>\nlet me think\n</think>\nParis');
    });

    it('without a setting, the thought part passes as it came', async () => {
      const body = await gemini('gemini-plain');
      expect(body.candidates[0].content.parts).toEqual(geminiThinking.candidates[0].content.parts);
    });
  });
});
