// Every provider in the registry (relay/providers/index.ts) against its vendor's real wire format, from recorded
// fixtures in relay/providers/<name>/__fixtures__/: conformance.json (the channel, the model and what each recording
// must give), answer.json, stream.sse (stream.bin for AWS event-stream framing) and error.json, per case (Vertex has
// one per publisher, in a subfolder). For each case:
//   - the upstream request is built from every common hub request (relay/hub/__fixtures__/requests.json) the way the
//     translated lane builds it, and checked as the vendor checks it (the mocks' rules), at the vendor's URL with its
//     auth headers, and read back to the same conversation;
//   - the recorded answer parses to the expected hub answer;
//   - the recorded stream decodes to the same chunks whole and split at random byte offsets, and to the expected text;
//   - the recorded error parses to the expected type, code and message.
// A provider added to the registry without fixtures fails here, naming the files it lacks.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.js';
import { codecFor } from '../../src/relay/formats/index.js';
import { FormatError } from '../../src/relay/formats/codec.js';
import type { HubRequest } from '../../src/relay/hub/types.js';
import { chatMode, embeddingsMode } from '../../src/relay/modes/text.js';
import { imageGenerationsMode } from '../../src/relay/modes/images.js';
import { transcriptionsMode } from '../../src/relay/modes/audio.js';
import { extractUsage } from '../../src/relay/usage.js';
import { providerSettings } from '../../src/relay/provider-settings.js';
import {
  adaptorFor,
  answerCodecOf,
  declares,
  providerEntries,
  upstreamBodyFromHub,
  wireOf,
  type Adaptor,
  type ProviderWire,
  type ProviderChannel,
  type RelayInfo,
} from '../../src/relay/providers/index.js';

/** every built-in provider, each folder loaded (the registry loads them on first use) */
const PROVIDER_ENTRIES = await providerEntries();
import { framingOf } from '../../src/relay/stream/framing.js';
import { SseParser } from '../../src/relay/stream/sse-parser.js';
import { checkAnthropicBody } from '../helpers/mock-anthropic-rules.js';
import { validateBody as validateBedrockBody, validateModel as validateBedrockModel } from '../helpers/mock-bedrock.js';
import { checkGenerateBody } from '../helpers/mock-gemini-rules.js';
import { checkOpenAIChatBody } from '../helpers/mock-openai-rules.js';
import { checkCohereChatBody } from '../helpers/mock-cohere.js';
import { checkDifyChatBody } from '../helpers/mock-dify.js';
import { checkCozeChatBody } from '../helpers/mock-coze.js';
import { checkPalmBody } from '../helpers/mock-palm.js';
import { vertexClaudeBodyProblem } from '../helpers/mock-vertex.js';
import { collect, replayStream } from './conformance.js';
import { baiduBodyAsOpenAI, baiduChatProblem } from '../helpers/mock-baidu.js';
import { zhipuV3BodyAsOpenAI, zhipuV3BodyProblem } from '../helpers/mock-zhipu-v3.js';
import { hunyuanBodyAsOpenAI, hunyuanBodyProblem } from '../helpers/mock-hunyuan.js';
import { sparkFrameAsOpenAI, sparkFrameProblem } from '../helpers/mock-spark.js';
import { SYSTEM_ACK } from '../../src/relay/providers/zhipuv3/index.js';
import { rewriteWhole, vendorRewrite } from '../../src/relay/providers/dialect.js';
import type { EventFraming } from '../../src/relay/stream/translate.js';

const PROVIDERS = new URL('../../src/relay/providers/', import.meta.url);
const HUB_REQUESTS: Record<string, HubRequest> = JSON.parse(
  readFileSync(new URL('../../src/relay/hub/__fixtures__/requests.json', import.meta.url), 'utf8'),
);

interface ConformanceCase {
  name: string;
  /** the case's subfolder of __fixtures__ (Vertex: one per publisher) */
  dir?: string;
  channel: Omit<ProviderChannel, 'key' | 'organization'> & { key: string | Record<string, unknown> };
  model: string;
  /** the recorded answer of a request that does not stream (answer.json; Coze's is its stream: answer.sse) */
  answerFile?: string;
  /** common hub requests the vendor cannot carry (images, tools): refused with a 400 before anything is sent */
  refuses?: string[];
  /** sampling fields the vendor's request cannot say (Zhipu v3: stop; Dify's app keeps its own sampling): left out of
   * the read-back comparison */
  drops?: ('stop' | 'temperature' | 'top_p')[];
  request: {
    /** which vendor rules the body must pass (ACCEPTS) */
    accepts: keyof typeof ACCEPTS;
    url: string;
    streamUrl: string;
    /** headers the request must carry; a value written /…/ is a pattern */
    headers: Record<string, string>;
  };
  answer: { hub: Record<string, unknown>; usage?: Record<string, unknown> };
  /** usage null: the vendor reports none (PaLM), the relay counts it */
  stream: { collected: Record<string, unknown>; usage: Record<string, unknown> | null };
  error: { status: number; headers?: Record<string, string>; parsed: Record<string, unknown> };
  /** recordings of endpoints the vendor serves in its own shape besides chat (Cloudflare's /ai/run): runCase */
  run?: RunRecording[];
}

/**
 * One request of another endpoint than chat, from an OpenAI client: its JSON body (or its form, whose `file` is
 * FILE_BYTES), the URL and body it must go upstream as, and the recorded answer the client must get.
 */
interface RunRecording {
  endpoint: 'images' | 'audio_transcription';
  model: string;
  body?: Record<string, unknown>;
  form?: Record<string, string>;
  url: string;
  headers?: Record<string, string>;
  /** the upstream JSON body; absent with a form: the file's bytes themselves */
  sent?: Record<string, unknown>;
  answerFile: string;
  answer: Record<string, unknown>;
  error?: { file: string; status: number; parsed: Record<string, unknown> };
}

/** The recorded stream's file for a provider's stream framing. */
function streamFile(adaptor: Adaptor): string {
  if (adaptor.framing === 'aws-eventstream') return 'stream.bin';
  if (adaptor.framing === 'whole-json') return 'stream.json';
  return adaptor.framing === 'ndjson' ? 'stream.ndjson' : 'stream.sse';
}

/** The recorded files a case needs, for a provider with this stream framing (no stream when it serves no chat). */
function caseFiles(adaptor: Adaptor, dir = '', answer = 'answer.json'): string[] {
  const stream = streamFile(adaptor);
  const files = servesChat(adaptor) ? [answer, stream, 'error.json'] : [answer, 'error.json'];
  return files.map((f) => (dir ? `${dir}/${f}` : f));
}

/** A provider without chat (Jina, Moka: embeddings only) is checked on its embeddings instead (embeddingsCase). */
const servesChat = (adaptor: Adaptor) => adaptor.endpoints.chat !== undefined;

function fixtureUrl(provider: string, file: string): URL {
  return new URL(`${provider}/__fixtures__/${file}`, PROVIDERS);
}

function casesOf(provider: string): ConformanceCase[] {
  return JSON.parse(readFileSync(fixtureUrl(provider, 'conformance.json'), 'utf8')).cases;
}

/** The fixture files a provider lacks, as paths under relay/providers/ (empty when it has them all). */
function missingFixtures(provider: string, adaptor: Adaptor): string[] {
  const at = (f: string) => `${provider}/__fixtures__/${f}`;
  if (!existsSync(fixtureUrl(provider, 'conformance.json'))) return ['conformance.json', ...caseFiles(adaptor)].map(at);
  const cases = casesOf(provider);
  if (!cases.length) return [at('conformance.json (no cases)')];
  return cases.flatMap((c) =>
    caseFiles(adaptor, c.dir, c.answerFile)
      .filter((f) => !existsSync(fixtureUrl(provider, f)))
      .map(at),
  );
}

const read = (provider: string, c: ConformanceCase, file: string) =>
  readFileSync(fixtureUrl(provider, c.dir ? `${c.dir}/${file}` : file));

// ---- the relay's settings with every option at its default, a Vertex token source and an image fetcher that never
// touch the network
const options = { get: () => '', num: (_k: string, d: number) => d, bool: () => false };
const ctx = { options, config: { azureDefaultApiVersion: '2024-10-21' } } as unknown as AppContext;
const VERTEX_TOKEN = 'ya29.conformance-token';
const PIXEL_JPEG =
  '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q==';
const settings = providerSettings(ctx, { get: async () => VERTEX_TOKEN, invalidate: () => {} }, async () => ({
  mimeType: 'image/jpeg',
  data: PIXEL_JPEG,
}));

/** A request on the translated lane: a client of another format than the provider's wire. */
function infoFor(c: ConformanceCase, adaptor: Adaptor, isStream: boolean): RelayInfo {
  const channel: ProviderChannel = {
    ...c.channel,
    key: typeof c.channel.key === 'string' ? c.channel.key : JSON.stringify(c.channel.key),
    organization: '',
  };
  const info: RelayInfo = {
    settings,
    channel,
    mode: chatMode,
    originModel: c.model,
    upstreamModel: c.model,
    isStream,
    clientFormat: 'openai',
    clientHeaders: {},
  };
  // a client of another format than the provider's and than any it accepts as it is (Zhipu speaks Claude's too)
  if (wireOf(adaptor, info) === 'openai') {
    const spoken = adaptor.alsoSpeaks?.({ ...info, clientFormat: 'anthropic' }) ?? [];
    info.clientFormat = spoken.includes('anthropic') ? 'gemini' : 'anthropic';
  }
  return info;
}

async function buildRequest(c: ConformanceCase, adaptor: Adaptor, hub: HubRequest, isStream: boolean) {
  const info = infoFor(c, adaptor, isStream);
  const body = await upstreamBodyFromHub(adaptor, info, { ...structuredClone(hub), model: c.model });
  const target = adaptor.target(info);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: isStream ? 'text/event-stream' : 'application/json',
    ...adaptor.headers(info),
  };
  const raw = Buffer.from(JSON.stringify(body));
  await adaptor.authorize?.(info, { method: 'POST', origin: target.origin, path: target.path, headers, body: raw });
  return { wire: wireOf(adaptor, info), url: target.origin + target.path, headers, body: JSON.parse(raw.toString()) };
}

const withoutVersion = (
  { anthropic_version: _v, anthropic_beta: _b, ...rest }: Record<string, any>,
  model: string,
) => ({
  ...rest,
  model,
});

/** The vendor's own checks of a request body (the mock upstreams' rules): the first problem, or null. */
const ACCEPTS = {
  'openai-chat': (body: any) => checkOpenAIChatBody(body),
  'anthropic-messages': (body: any) => checkAnthropicBody(body, 'messages')?.message ?? null,
  'gemini-generate': (body: any, model: string) => checkGenerateBody(body, model)?.message ?? null,
  'bedrock-claude': (body: any, model: string, url: string) => {
    try {
      validateBedrockModel(decodeURIComponent(/\/model\/([^/]+)\//.exec(url)?.[1] ?? ''));
      validateBedrockBody(body);
    } catch (e) {
      return (e as Error).message;
    }
    // Bedrock hands the rest to Claude, which still refuses a conversation that opens with the assistant
    return checkAnthropicBody(withoutVersion(body, model), 'messages', { requireUserFirst: true })?.message ?? null;
  },
  'baidu-chat': (body: any) => baiduChatProblem(body),
  'zhipu-v3': (body: any) => zhipuV3BodyProblem(body),
  'hunyuan-chat': (body: any) => hunyuanBodyProblem(body),
  'spark-frame': (body: any, _model: string, url: string) =>
    sparkFrameProblem(body, /\/(v\d+\.\d+)\/chat$/.exec(url)?.[1] ?? ''),
  'cohere-chat': (body: any) => checkCohereChatBody(body),
  'dify-chat': (body: any) => checkDifyChatBody(body),
  'coze-chat': (body: any) => checkCozeChatBody(body),
  'palm-message': (body: any) => checkPalmBody(body),
  'vertex-claude': (body: any, model: string) =>
    vertexClaudeBodyProblem(body) ?? checkAnthropicBody(withoutVersion(body, model), 'messages')?.message ?? null,
} satisfies Record<string, (body: any, model: string, url: string) => string | null>;

/** Vendors with their own request body (providers/dialect.ts): the body read back as OpenAI's. */
const AS_OPENAI: Partial<Record<keyof typeof ACCEPTS, (body: any) => Record<string, unknown>>> = {
  'baidu-chat': baiduBodyAsOpenAI,
  'zhipu-v3': (body) => zhipuV3BodyAsOpenAI(body, SYSTEM_ACK),
  'hunyuan-chat': hunyuanBodyAsOpenAI,
  'spark-frame': sparkFrameAsOpenAI,
};

/** A vendor body read back with its wire codec (the model is in the URL for some vendors). */
function readBack(
  adaptor: Adaptor,
  wire: ProviderWire,
  body: Record<string, any>,
  model: string,
  accepts: keyof typeof ACCEPTS,
): HubRequest {
  const own = AS_OPENAI[accepts];
  if (own) return codecFor('openai').requestToHub(own(body));
  if (wire === 'vendor') return adaptor.codec!.requestToHub!(structuredClone(body));
  return codecFor(wire).requestToHub(wire === 'anthropic' ? withoutVersion(body, model) : structuredClone(body));
}

/** SSE events of a vendor stream rewritten into OpenAI's as the relay rewrites it (relay/upstream-call.ts). */
function rewrittenSse(rewrite: ReturnType<typeof vendorRewrite>): EventFraming {
  const sse = new SseParser();
  return { push: (bytes) => sse.push(rewrite.push(bytes)), end: () => [...sse.push(rewrite.end()), ...sse.end()] };
}

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** What a conversation says, whatever format carried it: turns, their text, images, calls and results; tools; sampling. */
function essence(hub: HubRequest): {
  turns: unknown[];
  tools: string[];
  stop?: string[];
  temperature?: number;
  top_p?: number;
} {
  const turns = hub.messages.map((m) => {
    const parts = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : (m.content ?? []);
    const text = parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
    return {
      role: m.role === 'developer' ? 'system' : m.role,
      text: m.role === 'tool' ? json(text) : text,
      images: parts.filter((p) => p.type === 'image_url').length,
      calls: (m.tool_calls ?? []).map((t) => ({ name: t.function.name, arguments: json(t.function.arguments) })),
    };
  });
  const stop = hub.stop === undefined ? [] : [hub.stop].flat();
  return {
    turns,
    tools: (hub.tools ?? []).map((t) => t.function.name),
    stop,
    temperature: hub.temperature,
    top_p: hub.top_p,
  };
}

function expectHeaders(got: Record<string, string>, want: Record<string, string>): void {
  for (const [name, value] of Object.entries(want)) {
    const pattern = /^\/(.*)\/$/.exec(value);
    if (pattern) expect(got[name], name).toMatch(new RegExp(pattern[1]));
    else expect(got[name], name).toBe(value);
  }
}

describe('missingFixtures', () => {
  it('names every file a provider without recordings lacks', () => {
    const [, openai] = PROVIDER_ENTRIES.find(([name]) => name === 'openai')!;
    const [, bedrock] = PROVIDER_ENTRIES.find(([name]) => name === 'bedrock')!;
    expect(missingFixtures('acme', openai)).toEqual([
      'acme/__fixtures__/conformance.json',
      'acme/__fixtures__/answer.json',
      'acme/__fixtures__/stream.sse',
      'acme/__fixtures__/error.json',
    ]);
    expect(missingFixtures('acme', bedrock)).toContain('acme/__fixtures__/stream.bin');
  });
});

describe.each(PROVIDER_ENTRIES.map(([name, adaptor]) => ({ name, adaptor })))('provider $name', ({ name, adaptor }) => {
  const missing = missingFixtures(name, adaptor);

  it('has recorded fixtures in its vendor’s wire format', () => {
    expect(missing, `relay/providers/${name} lacks recorded fixtures: ${missing.join(', ')}`).toEqual([]);
  });
  if (missing.length) return;
  if (!servesChat(adaptor)) {
    describe.each(casesOf(name))('$name', (c) => embeddingsCase(name, adaptor, c));
    return;
  }

  describe.each(casesOf(name))('$name', (c) => {
    it('is the adaptor of its channel type', async () => {
      expect(await adaptorFor(c.channel.type)).toBe(adaptor);
    });

    it.each(Object.keys(HUB_REQUESTS))('builds the upstream request from the common %s request', async (fixture) => {
      const hub = HUB_REQUESTS[fixture];
      if (c.refuses?.includes(fixture)) {
        await expect(buildRequest(c, adaptor, hub, false)).rejects.toBeInstanceOf(FormatError);
        return;
      }
      for (const isStream of [false, true]) {
        const req = await buildRequest(c, adaptor, hub, isStream);
        const at = `${fixture}${isStream ? ', stream' : ''}`;
        expect(req.url, at).toBe(isStream ? c.request.streamUrl : c.request.url);
        expectHeaders(req.headers, c.request.headers);
        expect(ACCEPTS[c.request.accepts](req.body, c.model, req.url), at).toBeNull();
        const said = (h: HubRequest) => {
          const e: Record<string, unknown> = essence(h);
          for (const k of c.drops ?? []) delete e[k];
          return e;
        };
        expect(said(readBack(adaptor, req.wire, req.body, c.model, c.request.accepts)), at).toEqual(said(hub));
      }
    });

    it('parses its recorded answer into the hub form', () => {
      const info = infoFor(c, adaptor, false);
      let answer: Buffer = read(name, c, c.answerFile ?? 'answer.json');
      // a vendor with its own answer shape is read as the relay reads it: rewritten into OpenAI's first
      if (adaptor.answers) {
        if (adaptor.carrier === 'websocket') {
          // a websocket vendor's answer is its frames (answer.json: their list), each an event of the exchange
          const frames: unknown[] = JSON.parse(answer.toString('utf8'));
          const events = Buffer.from(frames.map((f) => `data: ${JSON.stringify(f)}\n\n`).join(''));
          answer = rewriteWhole(adaptor.answers, info, 'text/event-stream', events);
        } else answer = rewriteWhole(adaptor.answers, info, 'application/json', answer);
      }
      const codec = answerCodecOf(adaptor, info);
      const text = answer.toString('utf8');
      const hub = codec.readAnswer ? codec.readAnswer(text, c.model) : codec.responseToHub(JSON.parse(text), c.model);
      expect(hub).toMatchObject(c.answer.hub);
    });

    it('replays its recorded stream split at random byte offsets', () => {
      const info = infoFor(c, adaptor, true);
      const answers = adaptor.answers;
      const framing: () => EventFraming = answers
        ? () => rewrittenSse(vendorRewrite(answers, info, 'text/event-stream'))
        : () => framingOf(adaptor.framing).create();
      const { chunks, decoder } = replayStream(
        answerCodecOf(adaptor, info),
        read(name, c, streamFile(adaptor)),
        { id: 'conformance', model: c.model },
        framing,
      );
      expect(collect(chunks)).toMatchObject(c.stream.collected);
      expect(decoder.usage()).toEqual(c.stream.usage);
    });

    it('parses its recorded error', () => {
      const parsed = adaptor.parseError(c.error.status, read(name, c, 'error.json'), c.error.headers ?? {});
      expect(parsed).toMatchObject(c.error.parsed);
      expect(parsed.message).not.toBe('');
    });

    if (c.run) describe.each(c.run)('$endpoint of $model', (r) => runCase(name, adaptor, c, r));
  });
});

const FILE_BYTES = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt conformance-audio', 'latin1');
const BOUNDARY = 'conformance-boundary';

/** A multipart form as an OpenAI client sends it: the text fields, then `file`. */
function multipartForm(fields: Record<string, string>): Buffer {
  const text = Object.entries(fields).map(
    ([k, v]) => `--${BOUNDARY}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
  );
  return Buffer.concat([
    Buffer.from(text.join('')),
    Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="a.wav"\r\n\r\n`),
    FILE_BYTES,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** A recording of another endpoint: the request the native lane builds, the recorded answer converted, its error. */
function runCase(name: string, adaptor: Adaptor, c: ConformanceCase, r: RunRecording): void {
  const info = (): RelayInfo => ({
    ...infoFor(c, adaptor, false),
    mode: r.endpoint === 'images' ? imageGenerationsMode : transcriptionsMode,
    originModel: r.model,
    upstreamModel: r.model,
    clientFormat: 'openai',
  });

  it('goes to the vendor’s URL with the body it takes, and gives the client the recorded answer', async () => {
    const at = info();
    expect(declares(adaptor, at)).toBe(true);
    let sent: Buffer;
    if (r.form) {
      sent = adaptor.convertForm!(at, multipartForm(r.form), BOUNDARY)!;
      if (r.sent) expect(JSON.parse(sent.toString('utf8'))).toEqual(r.sent);
      else expect(sent).toEqual(FILE_BYTES);
    } else {
      const body = structuredClone(r.body!);
      await adaptor.convertRequest(at, body);
      expect(body).toEqual(r.sent);
    }
    const target = adaptor.target(at);
    expect(target.origin + target.path).toBe(r.url);
    expectHeaders(adaptor.headers(at), r.headers ?? {});
    const converted = adaptor.convertResponse!(at, read(name, c, r.answerFile));
    expect(JSON.parse(converted!.body.toString('utf8'))).toMatchObject(r.answer);
  });

  if (r.error)
    it('parses its recorded error', () => {
      const parsed = adaptor.parseError(r.error!.status, read(name, c, r.error!.file), {});
      expect(parsed).toMatchObject(r.error!.parsed);
    });
}

/**
 * An embeddings-only provider's case: an OpenAI client's embeddings request goes to the vendor's URL with its headers,
 * a chat request is not declared (refused before anything is sent), the recorded answer's usage is read as the relay
 * reads it and the recorded error parses.
 */
function embeddingsCase(name: string, adaptor: Adaptor, c: ConformanceCase): void {
  const info = (mode: RelayInfo['mode']): RelayInfo => ({
    ...infoFor(c, adaptor, false),
    mode,
    clientFormat: 'openai',
  });

  it('is the adaptor of its channel type', async () => {
    expect(await adaptorFor(c.channel.type)).toBe(adaptor);
  });

  it('sends embeddings to the vendor’s URL with its headers and declares no chat', () => {
    const at = info(embeddingsMode);
    expect(declares(adaptor, at)).toBe(true);
    const target = adaptor.target(at);
    expect(target.origin + target.path).toBe(c.request.url);
    expectHeaders(adaptor.headers(at), c.request.headers);
    expect(declares(adaptor, info(chatMode))).toBe(false);
  });

  it('reads the usage of its recorded answer', () => {
    const answer = read(name, c, 'answer.json');
    expect(Array.isArray(JSON.parse(answer.toString('utf8')).data)).toBe(true);
    expect(extractUsage(answer)).toEqual(c.answer.usage);
  });

  it('parses its recorded error', () => {
    const parsed = adaptor.parseError(c.error.status, read(name, c, 'error.json'), c.error.headers ?? {});
    expect(parsed).toMatchObject(c.error.parsed);
  });
}
