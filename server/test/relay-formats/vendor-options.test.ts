// The claude.* and gemini.* options and Vertex AI's per-model region, through the relay: the official SDKs as
// clients, the vendor mocks (which refuse what the vendor refuses: a thinking budget out of range, thinking off on
// Gemini 2.5 Pro, a Claude budget under 1024) as upstreams, and what each mock received. Also the routes and key
// places new-api accepts for Claude and Gemini clients (`/v1/models/{m}:generateContent`, `?key=`, a Bearer key on
// `/v1/messages`). Options are new-api's (new-api-compat.md §4.7).
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { ANTHROPIC_MOCK_KEY } from '../helpers/mock-anthropic.js';
import { GEMINI_MOCK_KEY } from '../helpers/mock-gemini.js';
import { addChannel, channelsChanged, setOptions } from '../relay/fixtures.js';
import {
  claudeClient,
  googleClient,
  openaiClient,
  resetScripts,
  startWorld,
  stopWorld,
  TARGETS,
  type World,
} from './world.js';

/** Models of the channels this file adds (the world's channels serve TARGETS). */
const M = {
  claudeThinking: 'claude-3-5-sonnet-20241022-thinking',
  /** an operator's own name for a Claude model (model_mapping) */
  claudeHouse: 'claude-house',
  geminiV1: 'gemini-2.0-flash',
  geminiThinking: 'gemini-2.5-flash-thinking',
  geminiBudget: 'gemini-2.5-flash-thinking-2048',
  geminiHugeBudget: 'gemini-2.5-flash-thinking-100000',
  geminiOff: 'gemini-2.5-flash-nothinking',
  geminiProOff: 'gemini-2.5-pro-nothinking',
  geminiImage: 'gemini-2.0-flash-exp-image-generation',
  vertexClaude: 'claude-3-5-sonnet-20240620',
  vertexGeminiHouse: 'gemini-house',
  vertexGemini: 'gemini-2.0-flash-001',
} as const;

/** The console's own example of a per-model region, plus an operator's model name. */
const VERTEX_REGIONS = {
  default: 'us-central1',
  'claude-3-5-sonnet-20240620': 'europe-west1',
  'gemini-house': 'asia-northeast1',
};

const DEFAULTS = {
  'claude.model_headers_settings': {},
  'claude.default_max_tokens': { default: 8192 },
  'claude.thinking_adapter_enabled': 'true',
  'claude.thinking_adapter_budget_tokens_percentage': '0.8',
  'gemini.safety_settings': { default: 'OFF', HARM_CATEGORY_CIVIC_INTEGRITY: 'BLOCK_NONE' },
  'gemini.version_settings': { default: 'v1beta', 'gemini-1.0-pro': 'v1' },
  'gemini.supported_imagine_models': ['gemini-2.0-flash-exp-image-generation'],
  'gemini.thinking_adapter_enabled': 'false',
  'gemini.thinking_adapter_budget_tokens_percentage': '0.6',
};

const lastAnthropicCall = (w: World) => w.anthropic.requests.filter((r) => r.path.startsWith('/v1/messages')).at(-1)!;
const lastGeminiCall = (w: World) => w.gemini.requests.filter((r) => r.path.includes(':')).at(-1)!;
const lastVertexCall = (w: World) => w.vertex.requests.filter((r) => r.publisher).at(-1)!;

await describeEachDb('vendor options through the relay', (kind) => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(kind);
    const mine = Object.values(M);
    const each = (v: number) => Object.fromEntries([...Object.values(TARGETS), ...mine].map((m) => [m, v]));
    await setOptions(w.s, { ModelRatio: each(1), CompletionRatio: each(2) });
    await addChannel(w.s, {
      type: 14,
      baseUrl: w.anthropic.url,
      key: ANTHROPIC_MOCK_KEY,
      models: [M.claudeThinking, M.claudeHouse],
      modelMapping: { [M.claudeHouse]: TARGETS.anthropic },
    });
    await addChannel(w.s, {
      type: 24,
      baseUrl: w.gemini.url,
      key: GEMINI_MOCK_KEY,
      models: [
        M.geminiV1,
        M.geminiThinking,
        M.geminiBudget,
        M.geminiHugeBudget,
        M.geminiOff,
        M.geminiProOff,
        M.geminiImage,
      ],
    });
    await addChannel(w.s, {
      type: 41,
      baseUrl: w.vertex.url,
      key: w.vertex.newServiceAccount(),
      other: JSON.stringify(VERTEX_REGIONS),
      models: [M.vertexClaude, M.vertexGeminiHouse, M.vertexGemini],
      modelMapping: { [M.vertexGeminiHouse]: M.vertexGemini },
    });
    await channelsChanged(w.s);
  });
  afterAll(() => stopWorld(w));
  beforeEach(async () => {
    resetScripts(w);
    await setOptions(w.s, DEFAULTS);
  });

  describe('Vertex AI region per model', () => {
    it('calls a model in the region its client-side name is given, else in `default`', async () => {
      const claude = claudeClient(w);
      const r = await claude.messages.create({
        model: M.vertexClaude,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(r.content[0]).toMatchObject({ type: 'text', text: 'Hello from Claude on Vertex!' });
      expect(lastVertexCall(w)).toMatchObject({
        location: 'europe-west1',
        publisher: 'anthropic',
        model: 'claude-3-5-sonnet@20240620',
        action: 'rawPredict',
      });

      // the operator's name is mapped to another model: its region is still the one written for its name
      const c = openaiClient(w);
      const g = await c.chat.completions.create({
        model: M.vertexGeminiHouse,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(g.choices[0].message.content).toBe('Hello from Gemini on Vertex!');
      expect(lastVertexCall(w)).toMatchObject({ location: 'asia-northeast1', model: M.vertexGemini });

      await c.chat.completions.create({ model: M.vertexGemini, messages: [{ role: 'user', content: 'hi' }] });
      expect(lastVertexCall(w)).toMatchObject({ location: 'us-central1', model: M.vertexGemini });
    });

    it('streams from the same regional endpoint', async () => {
      const stream = await claudeClient(w).messages.create({
        model: M.vertexClaude,
        max_tokens: 100,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      });
      let text = '';
      for await (const e of stream)
        if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
      expect(text).toBe('Hello from Claude on Vertex!');
      expect(lastVertexCall(w)).toMatchObject({ location: 'europe-west1', action: 'streamRawPredict' });
    });
  });

  describe('claude.* on an Anthropic channel', () => {
    it('forwards the client’s anthropic-version and anthropic-beta on the native lane', async () => {
      const claude = new Anthropic({
        apiKey: `sk-${w.key}`,
        baseURL: w.s.url,
        maxRetries: 0,
        defaultHeaders: { 'anthropic-beta': 'token-efficient-tools-2025-02-19', 'anthropic-version': '2023-01-01' },
      });
      await claude.messages.create({
        model: TARGETS.anthropic,
        max_tokens: 50,
        messages: [{ role: 'user', content: 'hi' }],
      });
      const sent = lastAnthropicCall(w);
      expect(sent.headers['anthropic-version']).toBe('2023-01-01');
      expect(sent.headers['anthropic-beta']).toBe('token-efficient-tools-2025-02-19');
      expect(sent.headers['x-api-key']).toBe(ANTHROPIC_MOCK_KEY);

      // an OpenAI client names no version: Anthropic's current one is sent
      await openaiClient(w).chat.completions.create({
        model: TARGETS.anthropic,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(lastAnthropicCall(w).headers['anthropic-version']).toBe('2023-06-01');
      expect(lastAnthropicCall(w).headers['anthropic-beta']).toBeUndefined();
    });

    it('adds model_headers_settings for the model the client named, merged with the client’s beta flags', async () => {
      await setOptions(w.s, {
        'claude.model_headers_settings': {
          [M.claudeHouse]: { 'anthropic-beta': ['output-128k-2025-02-19', 'token-efficient-tools-2025-02-19'] },
          [TARGETS.anthropic]: { 'X-Relay-Tag': 'direct' },
        },
      });
      const claude = new Anthropic({
        apiKey: `sk-${w.key}`,
        baseURL: w.s.url,
        maxRetries: 0,
        defaultHeaders: { 'anthropic-beta': 'token-efficient-tools-2025-02-19' },
      });
      await claude.messages.create({
        model: M.claudeHouse,
        max_tokens: 50,
        messages: [{ role: 'user', content: 'hi' }],
      });
      let sent = lastAnthropicCall(w);
      expect(sent.body.model).toBe(TARGETS.anthropic);
      expect(sent.headers['anthropic-beta']).toBe('token-efficient-tools-2025-02-19,output-128k-2025-02-19');
      // the entry of the client's name wins over the mapped model's
      expect(sent.headers['x-relay-tag']).toBeUndefined();

      await openaiClient(w).chat.completions.create({
        model: TARGETS.anthropic,
        messages: [{ role: 'user', content: 'hi' }],
      });
      sent = lastAnthropicCall(w);
      expect(sent.headers['x-relay-tag']).toBe('direct');
      expect(sent.headers['anthropic-beta']).toBeUndefined();
    });

    it('defaults max_tokens per model from claude.default_max_tokens when the client sends none', async () => {
      await setOptions(w.s, { 'claude.default_max_tokens': { default: 4096, [TARGETS.anthropic]: 3000 } });
      const c = openaiClient(w);
      await c.chat.completions.create({ model: TARGETS.anthropic, messages: [{ role: 'user', content: 'hi' }] });
      expect(lastAnthropicCall(w).body.max_tokens).toBe(3000);
      await c.chat.completions.create({
        model: TARGETS.anthropic,
        max_tokens: 77,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(lastAnthropicCall(w).body.max_tokens).toBe(77);
      // an operator's name for the model: its own entry first, else the mapped model's
      const house = { model: M.claudeHouse, messages: [{ role: 'user' as const, content: 'hi' }] };
      await c.chat.completions.create(house);
      expect(lastAnthropicCall(w).body.max_tokens).toBe(3000);
      await setOptions(w.s, { 'claude.default_max_tokens': { default: 4096, [M.claudeHouse]: 2500 } });
      await c.chat.completions.create(house);
      expect(lastAnthropicCall(w).body.max_tokens).toBe(2500);
      await c.chat.completions.create({ model: TARGETS.anthropic, messages: [{ role: 'user', content: 'hi' }] });
      expect(lastAnthropicCall(w).body.max_tokens).toBe(4096);
    });

    it('fills in max_tokens for a Claude client that sends none, as new-api does', async () => {
      await setOptions(w.s, { 'claude.default_max_tokens': { default: 4096, [TARGETS.anthropic]: 3000 } });
      const post = (model: string) =>
        fetch(`${w.s.url}/v1/messages`, {
          method: 'POST',
          headers: {
            'x-api-key': `sk-${w.key}`,
            'anthropic-version': '2023-06-01',
            'content-type': 'application/json',
          },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
        });
      const res = await post(TARGETS.anthropic);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { type: string }).type).toBe('message');
      expect(lastAnthropicCall(w).body.max_tokens).toBe(3000);
      // translated to an OpenAI channel, which needs none: none is sent
      const before = w.openai.requests.length;
      const viaOpenAI = await post(TARGETS.openai);
      expect(viaOpenAI.status).toBe(200);
      const sent = w.openai.requests.slice(before).find((r) => r.path.includes('chat/completions'))!;
      expect(sent.body.max_tokens ?? sent.body.max_completion_tokens).toBeUndefined();
    });

    it('turns the -thinking suffix into extended thinking with the configured share of max_tokens', async () => {
      await setOptions(w.s, { 'claude.thinking_adapter_budget_tokens_percentage': '0.5' });
      const c = openaiClient(w);
      const r = await c.chat.completions.create({
        model: M.claudeThinking,
        max_tokens: 4000,
        temperature: 0.3,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(r.choices[0].message.content).toBeTruthy();
      let sent = lastAnthropicCall(w).body;
      expect(sent.model).toBe(TARGETS.anthropic);
      expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 });
      expect(sent.max_tokens).toBe(4000);
      expect(sent.temperature).toBeUndefined();

      // a small max_tokens is raised to 1280 so the budget can reach Anthropic's minimum of 1024 (0.8 × 1280)
      await setOptions(w.s, { 'claude.thinking_adapter_budget_tokens_percentage': '0.8' });
      const claude = claudeClient(w);
      const m = await claude.messages.create({
        model: M.claudeThinking,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(m.content.map((b) => b.type)).toContain('thinking');
      sent = lastAnthropicCall(w).body;
      expect([sent.model, sent.max_tokens, sent.thinking]).toEqual([
        TARGETS.anthropic,
        1280,
        { type: 'enabled', budget_tokens: 1024 },
      ]);

      // a Claude client's own thinking wins over the suffix (as new-api)
      await claude.messages.create({
        model: M.claudeThinking,
        max_tokens: 3000,
        thinking: { type: 'enabled', budget_tokens: 1500 },
        messages: [{ role: 'user', content: 'hi' }],
      });
      sent = lastAnthropicCall(w).body;
      expect([sent.model, sent.thinking]).toEqual([TARGETS.anthropic, { type: 'enabled', budget_tokens: 1500 }]);
    });

    it('leaves the -thinking suffix off a tool loop whose thinking block the client could not send back', async () => {
      const c = openaiClient(w);
      const base = {
        model: M.claudeThinking,
        max_tokens: 4000,
        tools: [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } }],
      };
      const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
      const first = await c.chat.completions.create({ ...base, messages: [question] });
      expect(lastAnthropicCall(w).body.thinking).toEqual({ type: 'enabled', budget_tokens: 3200 });
      const message = first.choices[0].message;
      const call = message.tool_calls![0];
      const r = await c.chat.completions.create({
        ...base,
        messages: [question, message, { role: 'tool', tool_call_id: call.id, content: '21C' }],
      });
      // the mock refuses thinking here as Anthropic does ("a final `assistant` message must start with a thinking
      // block"); without it the loop finishes
      expect(r.choices[0].message.content).toContain('21C');
      expect(lastAnthropicCall(w).body.thinking).toBeUndefined();

      // a Claude client sends its thinking block back, so the suffix's thinking stays on
      const claude = claudeClient(w);
      const tools = [{ name: 'get_weather', input_schema: { type: 'object' as const } }];
      const m = await claude.messages.create({
        model: M.claudeThinking,
        max_tokens: 4000,
        tools,
        messages: [question],
      });
      const use = m.content.find((b) => b.type === 'tool_use')!;
      await claude.messages.create({
        model: M.claudeThinking,
        max_tokens: 4000,
        tools,
        messages: [
          question,
          { role: 'assistant', content: m.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '21C' }] },
        ],
      });
      const sent = lastAnthropicCall(w).body;
      expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 3200 });
      expect(sent.messages.at(-2).content[0].type).toBe('thinking');
    });

    it('sends the suffixed name as it is when the thinking adapter is off', async () => {
      await setOptions(w.s, { 'claude.thinking_adapter_enabled': 'false' });
      await openaiClient(w).chat.completions.create({
        model: M.claudeThinking,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
      });
      const sent = lastAnthropicCall(w).body;
      expect(sent.model).toBe(M.claudeThinking);
      expect(sent.thinking).toBeUndefined();
    });
  });

  describe('gemini.* on a Gemini channel', () => {
    it('picks the API version per model from gemini.version_settings, with its default', async () => {
      await setOptions(w.s, { 'gemini.version_settings': { default: 'v1alpha', [M.geminiV1]: 'v1' } });
      const c = openaiClient(w);
      await c.chat.completions.create({ model: M.geminiV1, messages: [{ role: 'user', content: 'hi' }] });
      expect(lastGeminiCall(w).path).toBe(`/v1/models/${M.geminiV1}:generateContent`);
      const stream = await c.chat.completions.create({
        model: M.geminiV1,
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      });
      for await (const _ of stream);
      expect(lastGeminiCall(w).path).toBe(`/v1/models/${M.geminiV1}:streamGenerateContent?alt=sse`);
      await googleClient(w).models.generateContent({ model: TARGETS.gemini, contents: 'hi' });
      expect(lastGeminiCall(w).path).toBe(`/v1alpha/models/${TARGETS.gemini}:generateContent`);
    });

    it('sends gemini.safety_settings unless a Gemini client chose its own', async () => {
      await setOptions(w.s, {
        'gemini.safety_settings': { default: 'BLOCK_ONLY_HIGH', HARM_CATEGORY_HARASSMENT: 'BLOCK_NONE' },
      });
      await openaiClient(w).chat.completions.create({
        model: TARGETS.gemini,
        messages: [{ role: 'user', content: 'hi' }],
      });
      const safety = lastGeminiCall(w).body.safetySettings;
      expect(safety).toContainEqual({ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' });
      expect(safety).toContainEqual({ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_ONLY_HIGH' });
      expect(safety).toContainEqual({ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', threshold: 'BLOCK_ONLY_HIGH' });

      const g = googleClient(w);
      // a Gemini client that chose none gets the operator's
      await g.models.generateContent({ model: TARGETS.gemini, contents: 'hi' });
      expect(lastGeminiCall(w).body.safetySettings).toContainEqual({
        category: 'HARM_CATEGORY_HARASSMENT',
        threshold: 'BLOCK_NONE',
      });
      await g.models.generateContent({
        model: TARGETS.gemini,
        contents: 'hi',
        config: {
          safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH' as any, threshold: 'BLOCK_LOW_AND_ABOVE' as any }],
        },
      });
      expect(lastGeminiCall(w).body.safetySettings).toEqual([
        { category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_LOW_AND_ABOVE' },
      ]);
    });

    it('asks image models of gemini.supported_imagine_models for text and image output', async () => {
      const c = openaiClient(w);
      await c.chat.completions.create({ model: M.geminiImage, messages: [{ role: 'user', content: 'draw a cat' }] });
      expect(lastGeminiCall(w).body.generationConfig.responseModalities).toEqual(['TEXT', 'IMAGE']);
      await c.chat.completions.create({ model: M.geminiV1, messages: [{ role: 'user', content: 'draw a cat' }] });
      expect(lastGeminiCall(w).body.generationConfig?.responseModalities).toBeUndefined();
      await setOptions(w.s, { 'gemini.supported_imagine_models': [M.geminiV1] });
      await c.chat.completions.create({ model: M.geminiV1, messages: [{ role: 'user', content: 'draw a cat' }] });
      expect(lastGeminiCall(w).body.generationConfig.responseModalities).toEqual(['TEXT', 'IMAGE']);
    });

    it('maps -thinking, -thinking-<budget> and -nothinking to a thinkingConfig when the adapter is on', async () => {
      await setOptions(w.s, {
        'gemini.thinking_adapter_enabled': 'true',
        'gemini.thinking_adapter_budget_tokens_percentage': '0.5',
      });
      const c = openaiClient(w);
      const ask = async (model: string, max_tokens?: number) => {
        const r = await c.chat.completions.create({ model, max_tokens, messages: [{ role: 'user', content: 'hi' }] });
        expect(r.choices[0].message.content).toBeTruthy();
        const sent = lastGeminiCall(w);
        return { path: sent.path, thinking: sent.body.generationConfig?.thinkingConfig };
      };
      expect(await ask(M.geminiThinking, 1000)).toEqual({
        path: '/v1beta/models/gemini-2.5-flash:generateContent',
        thinking: { thinkingBudget: 500, includeThoughts: true },
      });
      // no maxOutputTokens to take a share of: the model picks its budget
      expect((await ask(M.geminiThinking)).thinking).toEqual({ includeThoughts: true });
      expect(await ask(M.geminiBudget)).toEqual({
        path: '/v1beta/models/gemini-2.5-flash:generateContent',
        thinking: { thinkingBudget: 2048, includeThoughts: true },
      });
      // a budget beyond the model's range is clamped to it (Google refuses it otherwise)
      expect((await ask(M.geminiHugeBudget)).thinking).toEqual({ thinkingBudget: 24576, includeThoughts: true });
      expect(await ask(M.geminiOff)).toEqual({
        path: '/v1beta/models/gemini-2.5-flash:generateContent',
        thinking: { thinkingBudget: 0 },
      });
      // Gemini 2.5 Pro cannot stop thinking: the suffix goes, the request asks nothing Google would refuse
      expect(await ask(M.geminiProOff)).toEqual({
        path: '/v1beta/models/gemini-2.5-pro:generateContent',
        thinking: undefined,
      });
    });

    it('fills in a Gemini client’s missing thinkingConfig from the suffix, and keeps one it sent', async () => {
      await setOptions(w.s, { 'gemini.thinking_adapter_enabled': 'true' });
      const g = googleClient(w);
      await g.models.generateContent({ model: M.geminiBudget, contents: 'hi' });
      let sent = lastGeminiCall(w);
      expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(sent.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 2048, includeThoughts: true });
      await g.models.generateContent({
        model: M.geminiBudget,
        contents: 'hi',
        config: { thinkingConfig: { thinkingBudget: 777 } },
      });
      sent = lastGeminiCall(w);
      expect(sent.body.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 777 });
    });

    it('leaves the suffixes alone when the adapter is off (the default)', async () => {
      await openaiClient(w).chat.completions.create({
        model: M.geminiBudget,
        messages: [{ role: 'user', content: 'hi' }],
      });
      const sent = lastGeminiCall(w);
      expect(sent.path).toBe(`/v1beta/models/${M.geminiBudget}:generateContent`);
      expect(sent.body.generationConfig?.thinkingConfig).toBeUndefined();
    });
  });

  describe('routes and keys', () => {
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];

    it('serves /v1/models/{model}:generateContent and :streamGenerateContent as new-api routes them', async () => {
      const g = new GoogleGenAI({ apiKey: `sk-${w.key}`, httpOptions: { baseUrl: w.s.url, apiVersion: 'v1' } });
      const r = await g.models.generateContent({ model: TARGETS.gemini, contents: 'hi' });
      expect(r.text).toBeTruthy();
      let text = '';
      for await (const ch of await g.models.generateContentStream({ model: TARGETS.gemini, contents: 'hi' }))
        text += ch.text ?? '';
      expect(text).toBe(r.text);
      expect(lastGeminiCall(w).path).toBe(`/v1beta/models/${TARGETS.gemini}:streamGenerateContent?alt=sse`);

      const res = await fetch(`${w.s.url}/v1/models/${TARGETS.gemini}:streamGenerateContent?alt=sse`, {
        method: 'POST',
        headers: { 'x-goog-api-key': `sk-${w.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ contents }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      expect(await res.text()).toMatch(/^data: \{"candidates"/);
    });

    it('takes a Gemini client’s key from ?key= and refuses a wrong one in Gemini’s shape', async () => {
      const post = (key: string) =>
        fetch(`${w.s.url}/v1beta/models/${TARGETS.gemini}:generateContent?key=${key}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ contents }),
        });
      const ok = await post(`sk-${w.key}`);
      expect(ok.status).toBe(200);
      const answer = (await ok.json()) as any;
      expect(answer.candidates[0].content.parts[0].text).toBeTruthy();
      // the upstream gets the channel's key, never the client's
      expect(lastGeminiCall(w).headers['x-goog-api-key']).toBe(GEMINI_MOCK_KEY);
      expect(lastGeminiCall(w).path).not.toContain('key=');
      const bad = await post('sk-wrongkey');
      expect(bad.status).toBe(401);
      expect(await bad.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    });

    it('accepts Authorization: Bearer on /v1/messages', async () => {
      const claude = new Anthropic({ apiKey: null, authToken: `sk-${w.key}`, baseURL: w.s.url, maxRetries: 0 });
      const r = await claude.messages.create({
        model: TARGETS.anthropic,
        max_tokens: 50,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(r.type).toBe('message');
      expect(lastAnthropicCall(w).headers.authorization).toBeUndefined();
      expect(lastAnthropicCall(w).headers['x-api-key']).toBe(ANTHROPIC_MOCK_KEY);
      const bad = new Anthropic({ apiKey: null, authToken: 'sk-wrongkey', baseURL: w.s.url, maxRetries: 0 });
      await expect(
        bad.messages.create({ model: TARGETS.anthropic, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
      ).rejects.toMatchObject({ status: 401, error: { type: 'error', error: { type: 'authentication_error' } } });
    });
  });
});
