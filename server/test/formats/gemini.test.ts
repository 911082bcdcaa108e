import { describe, expect, it } from 'vitest';
import { FormatError } from '../../src/relay/formats/codec.js';
import {
  batchEmbedResponseToOpenAI,
  batchEmbedToOpenAI,
  countTokensRequestToHub,
  countTokensResponse,
  embedContentToOpenAI,
  geminiCodec,
  GeminiStreamError,
  geminiModel,
  geminiModelList,
  geminiNativeTools,
  openAIEmbeddingToBatchEmbed,
  openAIEmbeddingToGemini,
} from '../../src/relay/formats/gemini/index.js';
import type { HubChunk, HubRequest } from '../../src/relay/hub/types.js';
import { openaiCodec } from '../../src/relay/formats/openai/index.js';
import { JsonArraySplitter } from '../../src/relay/stream/json-array.js';
import { SseParser } from '../../src/relay/stream/sse-parser.js';
import type { EventFraming } from '../../src/relay/stream/translate.js';
import { collect, decodeSse, fixture, randomSplit, replayStream, stable } from './conformance.js';

const DIR = '../../src/relay/formats/gemini/__fixtures__';
const load = (name: string): string => fixture(DIR, name);
const json = (name: string): any => JSON.parse(load(name));
const opts = { id: 'chatcmpl-test', model: 'gemini-2.5-flash' };

/** Gemini's default stream framing (one JSON array) as the harness's event framing. */
function jsonArray(): EventFraming {
  const splitter = new JsonArraySplitter();
  return {
    push: (bytes) => splitter.push(bytes).map((data) => ({ data })),
    end: () => splitter.end().map((data) => ({ data })),
  };
}

describe('gemini responses', () => {
  it('reads a text answer', () => {
    const hub = geminiCodec.responseToHub(json('response-text.json'), 'gemini-2.0-flash');
    expect(hub.id).toBe('8yNxaP3nHo2gz7IPl9yy2Ac');
    expect(hub.choices[0].message.content).toContain('Paris');
    expect(hub.choices[0].finish_reason).toBe('stop');
    expect(hub.native_finish_reason).toBe('STOP');
    expect(hub.usage).toEqual({ prompt_tokens: 9, completion_tokens: 19, total_tokens: 28 });
  });

  it('reads function calls, with made-up ids and the signature kept', () => {
    const hub = geminiCodec.responseToHub(json('response-function-call.json'), 'gemini-2.5-flash');
    const msg = hub.choices[0].message;
    expect(hub.choices[0].finish_reason).toBe('tool_calls');
    expect(msg.content).toBeNull();
    expect(msg.tool_calls).toEqual([
      {
        id: 'call_0',
        type: 'function',
        function: { name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}' },
      },
      {
        id: 'call_1',
        type: 'function',
        function: { name: 'get_current_weather', arguments: '{"location":"Paris, France","unit":"celsius"}' },
      },
    ]);
    expect(msg.thinking_blocks).toEqual([{ thinking: '', signature: expect.stringMatching(/^CiQB/) }]);
    expect(hub.usage).toEqual({
      prompt_tokens: 84,
      completion_tokens: 106,
      total_tokens: 190,
      completion_tokens_details: { reasoning_tokens: 64 },
    });
  });

  it('reads thought parts as reasoning, thinking billed as completion', () => {
    const hub = geminiCodec.responseToHub(json('response-thinking.json'), 'gemini-2.5-pro');
    const msg = hub.choices[0].message;
    expect(msg.reasoning_content).toMatch(/^\*\*Calculating the sum/);
    expect(msg.content).toBe('17 + 25 = **42**.');
    expect(hub.usage).toEqual({
      prompt_tokens: 12,
      completion_tokens: 198,
      total_tokens: 210,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 187 },
    });
  });

  it('reads a blocked prompt as content_filter with empty content', () => {
    const hub = geminiCodec.responseToHub(json('response-safety.json'), 'gemini-2.0-flash');
    expect(hub.choices[0].finish_reason).toBe('content_filter');
    expect(hub.choices[0].message.content).toBe('');
    expect(hub.native_finish_reason).toBe('SAFETY');
  });

  it('maps finish reasons', () => {
    const finish = (reason: string) =>
      geminiCodec.responseToHub({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: reason }] }, 'm')
        .choices[0].finish_reason;
    expect(finish('MAX_TOKENS')).toBe('length');
    for (const r of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY'])
      expect(finish(r)).toBe('content_filter');
    expect(finish('OTHER')).toBe('stop');
    expect(finish('MALFORMED_FUNCTION_CALL')).toBe('stop');
  });

  it('writes a hub answer back as a GenerateContentResponse that reads the same', () => {
    for (const name of ['response-text.json', 'response-function-call.json', 'response-thinking.json']) {
      const hub = geminiCodec.responseToHub(json(name), 'm');
      const out = geminiCodec.responseFromHub(hub, { id: 'resp-1', model: 'gemini-x' }) as any;
      expect(out.candidates[0].content.role).toBe('model');
      expect(out.candidates[0].index).toBe(0);
      expect(out.modelVersion).toBe('gemini-x');
      expect(out.responseId).toBe('resp-1');
      const again = geminiCodec.responseToHub(out, 'm');
      expect({ ...again, id: hub.id, created: 0 }).toEqual({ ...hub, created: 0 });
    }
  });

  it('writes usageMetadata with thoughts apart', () => {
    const hub = geminiCodec.responseToHub(json('response-thinking.json'), 'm');
    const out = geminiCodec.responseFromHub(hub, { id: 'r', model: 'm' }) as any;
    expect(out.usageMetadata).toEqual({
      promptTokenCount: 12,
      candidatesTokenCount: 11,
      totalTokenCount: 210,
      thoughtsTokenCount: 187,
      cachedContentTokenCount: 4,
    });
    expect(out.candidates[0].content.parts[0]).toEqual({ text: expect.any(String), thought: true });
  });
});

describe('gemini streams', () => {
  it('decodes a text stream, whatever the splits', () => {
    const { chunks, decoder } = replayStream(geminiCodec, load('stream-text.sse'), opts);
    const got = collect(chunks);
    expect(got.text).toBe('Bonjour ! Voilà un exemple : "[1, {2}]" — ça marche. 😀\nAu revoir.');
    expect(got.finish).toBe('stop');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(decoder.usage()).toEqual({ prompt_tokens: 7, completion_tokens: 24, total_tokens: 31 });
    expect(chunks.at(-1)?.usage).toEqual(decoder.usage());
  });

  it('decodes whole function calls', () => {
    const { chunks, decoder } = replayStream(geminiCodec, load('stream-tools.sse'), opts);
    const got = collect(chunks);
    expect(got.text).toBe("I'll look up both cities.");
    expect(got.toolCalls).toEqual([
      { id: 'call_0', name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}' },
      { id: 'call_1', name: 'get_current_weather', arguments: '{"location":"Paris, France","unit":"celsius"}' },
    ]);
    expect(got.finish).toBe('tool_calls');
    expect(chunks.some((c) => c.choices[0]?.delta.thinking_signature?.startsWith('CiQB'))).toBe(true);
    expect(decoder.usage()?.completion_tokens).toBe(137);
  });

  it('decodes thoughts and the closing signature', () => {
    const { chunks, decoder } = replayStream(geminiCodec, load('stream-thinking.sse'), opts);
    const got = collect(chunks);
    expect(got.reasoning).toBe(
      '**Weighing the options**\n\nThe user wants a name for a cat. Short, two syllables, playful.\n',
    );
    expect(got.text).toBe('How about **Miso**? It is short and warm.');
    expect(got.finish).toBe('stop');
    expect(chunks.find((c) => c.choices[0]?.delta.thinking_signature)).toBeDefined();
    expect(decoder.usage()).toEqual({
      prompt_tokens: 11,
      completion_tokens: 324,
      total_tokens: 335,
      completion_tokens_details: { reasoning_tokens: 312 },
    });
  });

  it('decodes the JSON-array form the same as SSE, whatever the splits', () => {
    const bytes = Buffer.from(load('stream-text.json'), 'utf8');
    const whole = replayStream(geminiCodec, bytes, opts, jsonArray);
    const sse = decodeSse(geminiCodec.streamToHub(opts), [Buffer.from(load('stream-text.sse'), 'utf8')]);
    expect(stable(whole.chunks)).toEqual(stable(sse.chunks));
    expect(whole.decoder.usage()).toEqual(sse.decoder.usage());
  });

  /** hub chunks → Gemini stream (either framing) → hub chunks again gives the same content */
  function reencode(name: string, framing: 'sse' | 'json-array') {
    const source = decodeSse(geminiCodec.streamToHub(opts), [Buffer.from(load(name), 'utf8')]);
    const encoder = geminiCodec.streamFromHub({ id: 'resp-9', model: 'gemini-x', framing });
    let wire = '';
    for (const c of source.chunks) wire += encoder.push(c);
    wire += encoder.end(source.decoder.usage());
    const bytes = Buffer.from(wire, 'utf8');
    const back = decodeSse(
      geminiCodec.streamToHub(opts),
      randomSplit(bytes, 3),
      framing === 'sse' ? new SseParser() : jsonArray(),
    );
    return { source, back, wire, encoder };
  }

  for (const framing of ['sse', 'json-array'] as const)
    it(`re-encodes hub streams as Gemini ${framing} and decodes them back the same`, () => {
      for (const name of ['stream-text.sse', 'stream-tools.sse', 'stream-thinking.sse']) {
        const { source, back, wire, encoder } = reencode(name, framing);
        expect(collect(back.chunks), name).toEqual(collect(source.chunks));
        expect(back.decoder.usage(), name).toEqual(source.decoder.usage());
        if (framing === 'sse') {
          expect(encoder.contentType).toBe('text/event-stream');
          expect(wire.endsWith('\r\n\r\n')).toBe(true);
        } else {
          expect(encoder.contentType).toBe('application/json');
          expect(JSON.parse(wire)).toBeInstanceOf(Array);
        }
      }
    });

  it('buffers tool call argument deltas into one whole functionCall part', () => {
    const encoder = geminiCodec.streamFromHub({ id: 'r', model: 'm', framing: 'sse' });
    const chunk = (delta: HubChunk['choices'][number]['delta'], finish: any = null): HubChunk => ({
      id: 'x',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    let wire = encoder.push(
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_a', function: { name: 'f', arguments: '' } }] }),
    );
    wire += encoder.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }));
    wire += encoder.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }));
    expect(wire).toBe('');
    wire += encoder.push(chunk({}, 'tool_calls'));
    wire += encoder.end({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    const events = wire
      .split('\r\n\r\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.slice('data: '.length)));
    expect(events[0].candidates[0].content.parts).toEqual([
      { functionCall: { id: 'call_a', name: 'f', args: { a: 1 } } },
    ]);
    const last = events.at(-1);
    expect(last.candidates[0].finishReason).toBe('STOP');
    expect(last.usageMetadata).toEqual({ promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 });
  });

  it('throws an error Gemini sent inside the stream', () => {
    const decoder = geminiCodec.streamToHub(opts);
    expect(decoder.push(load('stream-text.sse').split('\r\n\r\n')[0].slice('data: '.length))).toHaveLength(1);
    let thrown: unknown;
    try {
      decoder.push(load('error-resource-exhausted.json'));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(GeminiStreamError);
    expect((thrown as GeminiStreamError).status).toBe(429);
    expect((thrown as GeminiStreamError).upstream.type).toBe('RESOURCE_EXHAUSTED');
  });

  it('writes an in-band error then the end', () => {
    const sse = geminiCodec.streamFromHub({ id: 'r', model: 'm', framing: 'sse' });
    const err = { status: 503, message: 'upstream went away', type: 'upstream_error', code: null };
    expect(JSON.parse(sse.error(err).replace(/^data: /, ''))).toEqual({
      error: { code: 503, message: 'upstream went away', status: 'UNAVAILABLE' },
    });
    const arr = geminiCodec.streamFromHub({ id: 'r', model: 'm', framing: 'json-array' });
    let wire = arr.push({
      id: 'x',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }],
    });
    wire += arr.error(err);
    const parsed = JSON.parse(wire);
    expect(parsed).toHaveLength(2);
    expect(parsed[1].error.status).toBe('UNAVAILABLE');
    expect(arr.end(null)).toBe('');
  });
});

describe('gemini requests', () => {
  const full = () => json('request-full.json');

  it('reads a full request into the hub', () => {
    const hub = geminiCodec.requestToHub(full());
    expect(hub.model).toBe('');
    expect(hub.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(hub.messages[0].content).toBe('You are a concise travel assistant. Answer in JSON.');
    const user = hub.messages[1].content as any[];
    expect(user[1].image_url.url).toMatch(/^data:image\/png;base64,iVBOR/);
    const call = hub.messages[2];
    expect(call.tool_calls?.[0]).toEqual({
      id: 'call_0',
      type: 'function',
      function: { name: 'get_current_weather', arguments: '{"location":"Paris, France","unit":"celsius"}' },
    });
    expect(call.reasoning_content).toMatch(/Eiffel/);
    expect(call.thinking_blocks?.[0].signature).toMatch(/^CiQB/);
    expect(hub.messages[3]).toEqual({
      role: 'tool',
      tool_call_id: 'call_0',
      content: '{"temperature":18,"condition":"partly cloudy"}',
    });
    expect((hub.messages[5].content as any[])[1].image_url.url).toMatch(/files\/itinerary/);
    expect(hub.tools?.map((t) => t.function.name)).toEqual(['get_current_weather', 'get_forecast']);
    expect(hub.tools?.[0].function.parameters).toEqual({
      type: 'object',
      properties: {
        location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
        unit: { type: ['string', 'null'], enum: ['celsius', 'fahrenheit'] },
      },
      required: ['location'],
    });
    expect(hub.tool_choice).toBe('auto');
    expect(hub).toMatchObject({
      temperature: 0.4,
      top_p: 0.95,
      top_k: 40,
      max_tokens: 2048,
      stop: ['END'],
      n: 1,
      seed: 42,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      thinking_budget: 2048,
    });
    expect(hub.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'response',
        schema: {
          type: 'object',
          properties: { place: { type: 'string' }, weather: { type: 'string' } },
          required: ['place', 'weather'],
        },
      },
    });
    expect(geminiNativeTools(full())).toEqual([{ googleSearch: {} }]);
  });

  it('round-trips a Gemini request through the hub keeping its meaning', () => {
    const original = full();
    const out = geminiCodec.requestFromHub(geminiCodec.requestToHub(original), { model: 'x', stream: false }) as any;
    expect(out.model).toBeUndefined();
    expect(out.systemInstruction).toEqual(original.systemInstruction);
    // thought text is not sent back, only its signature on the call
    const expected = structuredClone(original.contents);
    expected[1].parts = expected[1].parts.filter((p: any) => !p.thought);
    expect(out.contents).toEqual(expected);
    expect(out.toolConfig).toEqual(original.toolConfig);
    const [weather, forecast] = out.tools[0].functionDeclarations;
    expect(weather.parameters.properties.unit).toEqual({
      type: 'string',
      enum: ['celsius', 'fahrenheit'],
      nullable: true,
    });
    expect(forecast.parameters).toEqual({
      type: 'object',
      properties: { location: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } },
      required: ['location'],
    });
    const { responseSchema: _s, thinkingConfig, ...restIn } = original.generationConfig;
    const { responseJsonSchema, thinkingConfig: outThinking, ...restOut } = out.generationConfig;
    expect(restOut).toEqual(restIn);
    expect(outThinking).toEqual(thinkingConfig);
    expect(responseJsonSchema.properties.place).toEqual({ type: 'string' });
  });

  it('accepts snake_case fields and the older role-less user turn', () => {
    const hub = geminiCodec.requestToHub({
      system_instruction: { parts: [{ text: 'be brief' }] },
      contents: [{ parts: [{ text: 'hi' }, { inline_data: { mime_type: 'image/jpeg', data: 'AAAA' } }] }],
      generation_config: { max_output_tokens: 10, thinking_config: { thinking_level: 'HIGH' } },
    });
    expect(hub.messages[0]).toEqual({ role: 'system', content: 'be brief' });
    expect((hub.messages[1].content as any[])[1].image_url.url).toBe('data:image/jpeg;base64,AAAA');
    expect(hub.max_tokens).toBe(10);
    expect(hub.reasoning_effort).toBe('high');
  });

  it('matches function responses to their calls by name, then order', () => {
    const hub = geminiCodec.requestToHub({
      contents: [
        { role: 'user', parts: [{ text: 'go' }] },
        {
          role: 'model',
          parts: [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: {} } }],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'b', response: { ok: 2 } } },
            { functionResponse: { name: 'a', response: { ok: 1 } } },
          ],
        },
        { role: 'model', parts: [{ functionCall: { id: 'fc-9', name: 'a', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'fc-9', name: 'a', response: {} } }] },
      ],
    });
    expect(hub.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual([
      'call_1',
      'call_0',
      'fc-9',
    ]);
  });

  it('maps function calling modes', () => {
    const choice = (config: object) =>
      geminiCodec.requestToHub({
        contents: [{ role: 'user', parts: [{ text: 'x' }] }],
        tools: [{ functionDeclarations: [{ name: 'f' }, { name: 'g' }, { name: 'h' }] }],
        toolConfig: { functionCallingConfig: config },
      });
    expect(choice({ mode: 'NONE' }).tool_choice).toBe('none');
    expect(choice({ mode: 'ANY' }).tool_choice).toBe('required');
    expect(choice({ mode: 'ANY', allowedFunctionNames: ['g'] }).tool_choice).toEqual({
      type: 'function',
      function: { name: 'g' },
    });
    const some = choice({ mode: 'ANY', allowedFunctionNames: ['f', 'h'] });
    expect(some.tool_choice).toBe('required');
    expect(some.tools?.map((t) => t.function.name)).toEqual(['f', 'h']);
  });

  it('rejects a request without contents, and unknown roles', () => {
    expect(() => geminiCodec.requestToHub({})).toThrow(FormatError);
    expect(() => geminiCodec.requestToHub({ contents: [] })).toThrow(/contents is not specified/);
    expect(() => geminiCodec.requestToHub({ contents: [{ role: 'user', parts: [] }] })).toThrow(/must not be empty/);
    expect(() => geminiCodec.requestToHub({ contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] })).toThrow(
      /valid role/,
    );
  });

  it("gives Gemini 3 Google's stand-in signature for function calls whose signature the client could not keep", () => {
    const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'f', arguments: '{}' } });
    const hub: HubRequest = {
      model: 'm',
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
        { role: 'tool', tool_call_id: 'a', content: '1' },
        { role: 'tool', tool_call_id: 'b', content: '2' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [call('c')],
          thinking_blocks: [{ thinking: '', signature: 'REAL' }],
        },
        { role: 'tool', tool_call_id: 'c', content: '3' },
      ],
    };
    const modelTurns = (model: string) =>
      (geminiCodec.requestFromHub(hub, { model, stream: false }) as any).contents
        .filter((c: any) => c.role === 'model')
        .map((c: any) => c.parts.map((p: any) => p.thoughtSignature));
    // the first call of each step is signed, a real signature kept
    expect(modelTurns('gemini-3-pro-preview')).toEqual([['skip_thought_signature_validator', undefined], ['REAL']]);
    expect(modelTurns('publishers/google/models/gemini-3-flash-preview')[0][0]).toBe(
      'skip_thought_signature_validator',
    );
    // models before 3 do not check, and get nothing invented
    expect(modelTurns('gemini-2.5-flash')).toEqual([[undefined, undefined], ['REAL']]);
  });

  it('builds an upstream body from an OpenAI-shaped hub request', () => {
    const hub: HubRequest = {
      model: 'gpt-ish',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'developer', content: 'dev' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x.test/cat.webp?s=1' } }] },
        { role: 'user', content: 'what is it?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_x', type: 'function', function: { name: 'lookup', arguments: '{"q":"cat"}' } },
            { id: 'call_y', type: 'function', function: { name: 'other', arguments: 'not json' } },
          ],
          thinking_blocks: [{ thinking: 'hmm', signature: 'SIG1' }],
        },
        { role: 'tool', tool_call_id: 'call_y', content: 'plain text' },
        { role: 'tool', tool_call_id: 'call_x', content: '{"found":true}' },
      ],
      max_tokens: 100,
      max_completion_tokens: 200,
      stop: 'STOP',
      response_format: { type: 'json_object' },
      reasoning_effort: 'medium',
      tool_choice: 'required',
      tools: [
        {
          type: 'function',
          function: {
            name: 'lookup',
            strict: true,
            parameters: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              properties: { q: { $ref: '#/$defs/query' }, when: { type: 'string', format: 'date' } },
              required: ['q', 'missing'],
              additionalProperties: false,
              $defs: { query: { type: 'string', description: 'search' } },
            },
          },
        },
        { type: 'function', function: { name: 'other', parameters: { type: 'object', properties: {} } } },
      ],
    };
    const out = geminiCodec.requestFromHub(hub, { model: 'gemini-2.5-flash', stream: true }) as any;
    expect(out.systemInstruction).toEqual({ parts: [{ text: 'sys' }, { text: 'dev' }] });
    expect(out.contents).toEqual([
      {
        role: 'user',
        parts: [
          { fileData: { mimeType: 'image/webp', fileUri: 'https://x.test/cat.webp?s=1' } },
          { text: 'what is it?' },
        ],
      },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'lookup', args: { q: 'cat' } }, thoughtSignature: 'SIG1' },
          { functionCall: { name: 'other', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'other', response: { content: 'plain text' } } },
          { functionResponse: { name: 'lookup', response: { found: true } } },
        ],
      },
    ]);
    expect(out.tools[0].functionDeclarations).toEqual([
      {
        name: 'lookup',
        parameters: {
          type: 'object',
          properties: { q: { type: 'string', description: 'search' }, when: { type: 'string' } },
          required: ['q'],
        },
      },
      { name: 'other' },
    ]);
    expect(out.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(out.generationConfig).toEqual({
      maxOutputTokens: 200,
      stopSequences: ['STOP'],
      responseMimeType: 'application/json',
      thinkingConfig: { thinkingBudget: 8192, includeThoughts: true },
    });
  });

  it('counts tokens from contents or a whole generateContentRequest', () => {
    const contents = [{ role: 'user', parts: [{ text: 'count me' }] }];
    expect(countTokensRequestToHub({ contents }).messages).toEqual([{ role: 'user', content: 'count me' }]);
    expect(countTokensRequestToHub({ generateContentRequest: { model: 'models/x', contents } }).messages).toHaveLength(
      1,
    );
    expect(countTokensResponse(12)).toEqual({ totalTokens: 12 });
  });
});

describe('gemini errors', () => {
  it('parses Google error bodies', () => {
    expect(geminiCodec.parseError(400, Buffer.from(load('error-invalid-argument.json')))).toEqual({
      message: 'API key not valid. Please pass a valid API key.',
      type: 'INVALID_ARGUMENT',
      code: 400,
      param: null,
    });
    const quota = geminiCodec.parseError(429, Buffer.from(load('error-resource-exhausted.json')));
    expect(quota.type).toBe('RESOURCE_EXHAUSTED');
    expect(quota.message).toMatch(/exceeded your current quota/);
    const wrapped = geminiCodec.parseError(400, Buffer.from(`[${load('error-invalid-argument.json')}]`));
    expect(wrapped.type).toBe('INVALID_ARGUMENT');
    expect(geminiCodec.parseError(502, Buffer.from('<html>bad gateway</html>'))).toEqual({
      message: 'Bad Gateway',
      type: 'UNKNOWN',
      code: 502,
      param: null,
    });
  });

  it('writes errors in Google shape with canonical statuses', () => {
    const body = (status: number) =>
      JSON.parse(
        geminiCodec.errorBody({ status, message: 'nope', type: 'new_api_error', code: null }, 'req-1').body,
      ) as any;
    expect(body(400)).toEqual({
      error: { code: 400, message: 'nope (request id: req-1)', status: 'INVALID_ARGUMENT' },
    });
    const statuses: Record<number, string> = {
      401: 'UNAUTHENTICATED',
      403: 'PERMISSION_DENIED',
      404: 'NOT_FOUND',
      429: 'RESOURCE_EXHAUSTED',
      500: 'INTERNAL',
      503: 'UNAVAILABLE',
      504: 'DEADLINE_EXCEEDED',
      418: 'UNKNOWN',
    };
    for (const [code, status] of Object.entries(statuses)) expect(body(Number(code)).error.status).toBe(status);
  });
});

describe('gemini embeddings', () => {
  it('converts Gemini embed requests to OpenAI and answers back', () => {
    expect(
      embedContentToOpenAI(
        { content: { parts: [{ text: 'hello' }] }, outputDimensionality: 256 },
        'text-embedding-3-small',
      ),
    ).toEqual({ model: 'text-embedding-3-small', input: 'hello', dimensions: 256 });
    expect(
      batchEmbedToOpenAI(
        { requests: [{ content: { parts: [{ text: 'a' }] } }, { content: { parts: [{ text: 'b' }] } }] },
        'm',
      ),
    ).toEqual({ model: 'm', input: ['a', 'b'] });
    const openai = {
      object: 'list',
      data: [
        { object: 'embedding', index: 1, embedding: [0.3, 0.4] },
        { object: 'embedding', index: 0, embedding: [0.1, 0.2] },
      ],
      model: 'm',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    };
    expect(openAIEmbeddingToGemini(openai, false)).toEqual({ embedding: { values: [0.1, 0.2] } });
    expect(openAIEmbeddingToGemini(openai, true)).toEqual({
      embeddings: [{ values: [0.1, 0.2] }, { values: [0.3, 0.4] }],
    });
  });

  it('converts OpenAI embed requests for a Gemini channel and its answers back', () => {
    expect(openAIEmbeddingToBatchEmbed({ input: ['a', 'b'], dimensions: 8 }, 'gemini-embedding-001')).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] }, outputDimensionality: 8 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] }, outputDimensionality: 8 },
      ],
    });
    expect(() => openAIEmbeddingToBatchEmbed({ input: [[1, 2]] }, 'm')).toThrow(FormatError);
    const out = batchEmbedResponseToOpenAI(json('batch-embed-response.json'), 'gemini-embedding-001', 5) as any;
    expect(out.object).toBe('list');
    expect(out.data).toHaveLength(2);
    expect(out.data[1]).toEqual({
      object: 'embedding',
      index: 1,
      embedding: [-0.026711937, 0.0040285196, -0.037114154, 0.023052197],
    });
    expect(out.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    expect(json('embed-response.json').embedding.values).toHaveLength(8);
  });
});

describe('gemini model list', () => {
  it('lists models in Gemini shape', () => {
    const list = geminiModelList(['gemini-2.5-pro', 'gemini-embedding-001']);
    expect(list.models[0]).toEqual({
      name: 'models/gemini-2.5-pro',
      version: '001',
      displayName: 'gemini-2.5-pro',
      description: expect.any(String),
      inputTokenLimit: 1048576,
      outputTokenLimit: 65536,
      supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
    });
    expect(list.models[1].supportedGenerationMethods).toEqual(['embedContent', 'batchEmbedContents']);
    expect(geminiModel('models/gemini-2.0-flash').name).toBe('models/gemini-2.0-flash');
  });
});

describe('JSON array splitter', () => {
  const text = '[{"a":"]}\\"[{","b":[1,{"c":2}]}\n,\r\n{"d":"é😀\\\\"},{"e":{}}]';
  it('gives whole top-level elements however the bytes are split', () => {
    const bytes = Buffer.from(text, 'utf8');
    const expected = ['{"a":"]}\\"[{","b":[1,{"c":2}]}', '{"d":"é😀\\\\"}', '{"e":{}}'];
    for (let seed = 1; seed <= 50; seed++) {
      const splitter = new JsonArraySplitter();
      const out: string[] = [];
      for (const p of randomSplit(bytes, seed, 1 + (seed % 20))) out.push(...splitter.push(p));
      out.push(...splitter.end());
      expect(out, `seed ${seed}`).toEqual(expected);
    }
    const byByte = new JsonArraySplitter();
    const out: string[] = [];
    for (const b of bytes) out.push(...byByte.push(Buffer.from([b])));
    expect(out).toEqual(expected);
  });
});

describe('gemini citations', () => {
  // a recorded answer grounded with Google Search: segments of the text, each backed by web chunks
  const answer = () => JSON.parse(fixture('../../src/relay/providers/gemini/__fixtures__', 'answer.json'));

  it('reads grounding supports into hub citations over the answer text (byte offsets made character offsets)', () => {
    const msg = geminiCodec.responseToHub(answer(), 'gemini-2.5-flash').choices[0].message;
    const supports = answer().candidates[0].groundingMetadata.groundingSupports;
    expect(msg.citations?.map((c) => [c.title, c.cited_text])).toEqual([
      ['uefa.com', supports[0].segment.text],
      ['aljazeera.com', supports[0].segment.text],
      ['uefa.com', supports[1].segment.text],
    ]);
    // the first segment holds an en dash (3 bytes in UTF-8, 1 character)
    for (const c of msg.citations!) expect(msg.content!.slice(c.start_index, c.end_index)).toBe(c.cited_text);
    expect(msg.citations![0].url).toMatch(/^https:\/\/vertexaisearch\.cloud\.google\.com\/grounding-api-redirect\//);
  });

  it('gives a Gemini client the grounding metadata as it came', () => {
    const hub = geminiCodec.responseToHub(answer(), 'gemini-2.5-flash');
    const out = geminiCodec.responseFromHub(hub, { id: 'r1', model: 'gemini-2.5-flash' }) as any;
    expect(out.candidates[0].groundingMetadata).toEqual(answer().candidates[0].groundingMetadata);
    expect(out.candidates[0].citationMetadata).toBeUndefined();
  });

  it('gives an OpenAI client url_citation annotations', () => {
    const hub = geminiCodec.responseToHub(answer(), 'gemini-2.5-flash');
    const msg = (openaiCodec.responseFromHub(hub, { id: 'r1', model: 'gemini-2.5-flash' }) as any).choices[0].message;
    expect(msg.gemini_grounding).toBeUndefined();
    expect(msg.annotations).toHaveLength(3);
    expect(msg.annotations[1]).toEqual({
      type: 'url_citation',
      url_citation: {
        url: answer().candidates[0].groundingMetadata.groundingChunks[1].web.uri,
        title: 'aljazeera.com',
        start_index: 0,
        end_index: 69,
      },
    });
  });

  it('reads citation metadata (Vertex AI spells the list citations) and keeps it for a Gemini client', () => {
    // multi-byte characters before the cited span: its byte offsets are not character offsets
    const text = 'Le café — “sans sucre”. Then the recipe: mix flour and water.';
    const cited = 'recipe: mix flour and water.';
    const body = {
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'thinking…', thought: true }, { text }] },
          finishReason: 'STOP',
          citationMetadata: {
            citations: [
              {
                startIndex: Buffer.byteLength(text) - cited.length,
                endIndex: Buffer.byteLength(text),
                uri: 'https://example.org/bread',
                license: 'mit',
              },
            ],
          },
        },
      ],
    };
    const hub = geminiCodec.responseToHub(body, 'gemini-2.5-pro');
    const [c] = hub.choices[0].message.citations!;
    expect(hub.choices[0].message.content!.slice(c.start_index, c.end_index)).toBe(cited);
    expect(c.url).toBe('https://example.org/bread');
    const out = geminiCodec.responseFromHub(hub, { id: 'r', model: 'gemini-2.5-pro' }) as any;
    expect(out.candidates[0].citationMetadata).toEqual(body.candidates[0].citationMetadata);
  });
});
