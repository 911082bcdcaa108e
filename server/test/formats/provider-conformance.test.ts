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
import type { WireFormat } from '../../src/relay/formats/codec.js';
import type { HubRequest } from '../../src/relay/hub/types.js';
import { chatMode } from '../../src/relay/modes/text.js';
import { providerSettings } from '../../src/relay/provider-settings.js';
import {
  adaptorFor,
  providerEntries,
  upstreamBodyFromHub,
  wireOf,
  type Adaptor,
  type ProviderChannel,
  type RelayInfo,
} from '../../src/relay/providers/index.js';
import { awsEventFraming } from '../../src/relay/stream/aws-framing.js';
import { SseParser } from '../../src/relay/stream/sse-parser.js';
import { checkAnthropicBody } from '../helpers/mock-anthropic-rules.js';
import { validateBody as validateBedrockBody, validateModel as validateBedrockModel } from '../helpers/mock-bedrock.js';
import { checkGenerateBody } from '../helpers/mock-gemini-rules.js';
import { checkOpenAIChatBody } from '../helpers/mock-openai-rules.js';
import { vertexClaudeBodyProblem } from '../helpers/mock-vertex.js';
import { collect, replayStream } from './conformance.js';

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
  request: {
    /** which vendor rules the body must pass (ACCEPTS) */
    accepts: keyof typeof ACCEPTS;
    url: string;
    streamUrl: string;
    /** headers the request must carry; a value written /…/ is a pattern */
    headers: Record<string, string>;
  };
  answer: { hub: Record<string, unknown> };
  stream: { collected: Record<string, unknown>; usage: Record<string, unknown> };
  error: { status: number; headers?: Record<string, string>; parsed: Record<string, unknown> };
}

/** The recorded files a case needs, for a provider with this stream framing. */
function caseFiles(adaptor: Adaptor, dir = ''): string[] {
  const stream = adaptor.framing === 'aws-eventstream' ? 'stream.bin' : 'stream.sse';
  return ['answer.json', stream, 'error.json'].map((f) => (dir ? `${dir}/${f}` : f));
}

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
    caseFiles(adaptor, c.dir)
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
  if (wireOf(adaptor, info) === 'openai') info.clientFormat = 'anthropic';
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
  'vertex-claude': (body: any, model: string) =>
    vertexClaudeBodyProblem(body) ?? checkAnthropicBody(withoutVersion(body, model), 'messages')?.message ?? null,
} satisfies Record<string, (body: any, model: string, url: string) => string | null>;

/** A vendor body read back with its wire codec (the model is in the URL for some vendors). */
function readBack(wire: WireFormat, body: Record<string, any>, model: string): HubRequest {
  return codecFor(wire).requestToHub(wire === 'anthropic' ? withoutVersion(body, model) : structuredClone(body));
}

function json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** What a conversation says, whatever format carried it: turns, their text, images, calls and results; tools; sampling. */
function essence(hub: HubRequest) {
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
    const [, openai] = providerEntries().find(([name]) => name === 'openai')!;
    const [, bedrock] = providerEntries().find(([name]) => name === 'bedrock')!;
    expect(missingFixtures('acme', openai)).toEqual([
      'acme/__fixtures__/conformance.json',
      'acme/__fixtures__/answer.json',
      'acme/__fixtures__/stream.sse',
      'acme/__fixtures__/error.json',
    ]);
    expect(missingFixtures('acme', bedrock)).toContain('acme/__fixtures__/stream.bin');
  });
});

describe.each(providerEntries().map(([name, adaptor]) => ({ name, adaptor })))(
  'provider $name',
  ({ name, adaptor }) => {
    const missing = missingFixtures(name, adaptor);

    it('has recorded fixtures in its vendor’s wire format', () => {
      expect(missing, `relay/providers/${name} lacks recorded fixtures: ${missing.join(', ')}`).toEqual([]);
    });
    if (missing.length) return;

    describe.each(casesOf(name))('$name', (c) => {
      it('is the adaptor of its channel type', () => {
        expect(adaptorFor(c.channel.type)).toBe(adaptor);
      });

      it.each(Object.keys(HUB_REQUESTS))('builds the upstream request from the common %s request', async (fixture) => {
        const hub = HUB_REQUESTS[fixture];
        for (const isStream of [false, true]) {
          const req = await buildRequest(c, adaptor, hub, isStream);
          const at = `${fixture}${isStream ? ', stream' : ''}`;
          expect(req.url, at).toBe(isStream ? c.request.streamUrl : c.request.url);
          expectHeaders(req.headers, c.request.headers);
          expect(ACCEPTS[c.request.accepts](req.body, c.model, req.url), at).toBeNull();
          expect(essence(readBack(req.wire, req.body, c.model)), at).toEqual(essence(hub));
        }
      });

      it('parses its recorded answer into the hub form', () => {
        const wire = wireOf(adaptor, infoFor(c, adaptor, false));
        const hub = codecFor(wire).responseToHub(JSON.parse(read(name, c, 'answer.json').toString('utf8')), c.model);
        expect(hub).toMatchObject(c.answer.hub);
      });

      it('replays its recorded stream split at random byte offsets', () => {
        const wire = wireOf(adaptor, infoFor(c, adaptor, true));
        const framing = adaptor.framing === 'aws-eventstream' ? awsEventFraming : () => new SseParser();
        const file = adaptor.framing === 'aws-eventstream' ? 'stream.bin' : 'stream.sse';
        const { chunks, decoder } = replayStream(
          codecFor(wire),
          read(name, c, file),
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
    });
  },
);
