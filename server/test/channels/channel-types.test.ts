// GET /api/channel/types: the one channel type catalogue the console builds its type select and field hints from.
// It must agree with what channel creation accepts: a type marked relayable is created, any other is refused.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from './fixture.js';
import { CHANNEL_TYPES } from '../../src/services/channel-types.js';
import type { ChannelTypeEntry } from '../../src/services/channel-catalogue.js';

const VERTEX_KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'p',
  private_key_id: 'k1',
  private_key: '-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n',
  client_email: 'relay@p.iam.gserviceaccount.com',
});

await describeEachDb('channel type catalogue', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let catalogue: ChannelTypeEntry[];
  const entry = (type: number) => catalogue.find((e) => e.value === type)!;

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    const res = await root.get('/api/channel/types');
    expect(res.body.success).toBe(true);
    catalogue = res.body.data;
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is for administrators only', async () => {
    const { client } = await addUser(server, { role: 1 });
    const res = await client.get('/api/channel/types');
    expect(res.body.success).toBe(false);
    const anonymous = await fetch(`${server.url}/api/channel/types`);
    expect(((await anonymous.json()) as { success: boolean }).success).toBe(false);
  });

  it('lists every known type once with its name, default base URL and built-in models, relayable ones first', () => {
    expect(catalogue.map((e) => e.value).sort((a, b) => a - b)).toEqual(
      Object.keys(CHANNEL_TYPES)
        .map(Number)
        .sort((a, b) => a - b),
    );
    const firstRefused = catalogue.findIndex((e) => !e.relayable);
    expect(catalogue.slice(firstRefused).every((e) => !e.relayable)).toBe(true);
    expect(entry(14)).toMatchObject({
      label: 'Anthropic Claude',
      default_base_url: 'https://api.anthropic.com',
      relayable: true,
      color: 'purple',
    });
    expect(entry(14).models).toContain('claude-3-5-sonnet-20241022');
    expect(entry(24)).toMatchObject({
      label: 'Google Gemini',
      default_base_url: 'https://generativelanguage.googleapis.com',
      relayable: true,
    });
    // the task platforms' types are offered (their routes serve them, not the chat relay)
    expect(entry(2)).toMatchObject({ label: 'Midjourney Proxy', relayable: true });
    expect(entry(36)).toMatchObject({ label: 'Suno API', relayable: true, models: ['suno_music', 'suno_lyrics'] });
    for (const e of catalogue) expect(e.color, String(e.value)).toMatch(/^[a-z]+$/);
  });

  it("lists the old OpenAI resellers new-api still knows, relayable, under new-api's names and base URLs", async () => {
    const resellers = [
      [6, 'OpenAIMax', 'https://api.openaimax.com'],
      [7, 'OhMyGPT', 'https://api.ohmygpt.com'],
      [9, 'AILS', 'https://api.caipacity.com'],
      [10, 'AIProxy', 'https://api.aiproxy.io'],
      [12, 'API2GPT', 'https://api.api2gpt.com'],
      [13, 'AIGC2D', 'https://api.aigc2d.com'],
    ] as const;
    for (const [type, label, url] of resellers) {
      expect(entry(type), String(type)).toMatchObject({
        label,
        default_base_url: url,
        relayable: true,
        key_hint: '',
        other_hint: '',
      });
      expect(entry(type).other_kind).toBeUndefined();
      expect(entry(type).models).toEqual(entry(1).models);
    }
    // so the console can create one, with the type's default base URL
    const res = await root.post('/api/channel/', { name: 'ohmygpt', type: 7, key: 'sk-omg', models: 'gpt-4o' });
    expect(res.body).toMatchObject({ success: true });
    const row = await server.ctx.db
      .selectFrom('channels')
      .select(['type', 'base_url', 'key'])
      .where('name', '=', 'ohmygpt')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ type: 7, key: 'sk-omg' });
    expect(row.base_url ?? '').toBe('');
  });

  it('tells the key format and the meaning of `other` for the vendors with their own', () => {
    expect(entry(14).key_hint).toMatch(/^sk-ant-/);
    expect(entry(24).key_hint).toMatch(/^AIza/);
    expect(entry(33)).toMatchObject({ default_base_url: '', other_hint: '' });
    expect(entry(33).key_hint).toMatch(/^AccessKeyId\|SecretAccessKey\|region/);
    expect(entry(41)).toMatchObject({ other_kind: 'region_or_model_map' });
    expect(entry(41).key_hint).toContain('service_account');
    expect(entry(41).other_hint).toContain('us-central1');
    expect(entry(3)).toMatchObject({ other_kind: 'api_version', other_hint: '2025-04-01-preview' });
    expect(entry(1)).toMatchObject({ other_hint: '' });
    expect(entry(1).other_kind).toBeUndefined();
  });

  it('agrees with channel creation: relayable types are created, the others refused', async () => {
    // keys in each vendor's format: the providers' channel facts refuse others (issue 41)
    const VENDOR_KEYS: Record<number, string> = {
      14: 'sk-ant-api03-example',
      24: 'AIzaSyExample',
      33: 'AKIDEXAMPLE|secret|us-east-1',
      41: VERTEX_KEY,
      46: 'bce-v3/ALTAK-example|app-example',
      15: 'api-key|secret-key',
      16: 'key-id.key-secret',
      18: 'appid|api-secret|api-key',
      23: 'appid|secret-id|secret-key',
    };
    // `other` where the provider needs one: Vertex's region, Cloudflare's account id, Coze's bot id
    const OTHERS: Record<number, string> = {
      39: '023e105f4ecef8ad9ca31a8372d0c353',
      41: 'us-central1',
      49: '7379462189365198898',
    };
    const keyFor = (type: number) => VENDOR_KEYS[type] ?? `key-${type}`;
    for (const e of catalogue) {
      const res = await root.post('/api/channel/', {
        name: `cat-${e.value}`,
        type: e.value,
        key: keyFor(e.value),
        other: OTHERS[e.value] ?? '',
        base_url: e.default_base_url ? '' : 'https://upstream.example',
        models: e.models[0] ?? 'm',
        group: 'default',
      });
      expect(res.body.success, `${e.value}: ${JSON.stringify(res.body)}`).toBe(e.relayable);
    }
  });

  it('does not shadow GET /api/channel/:id', async () => {
    const created = await root.post('/api/channel/', { name: 'by-id', type: 1, key: 'sk-x', models: 'gpt-4o' });
    const res = await root.get(`/api/channel/${created.body.data.id}`);
    expect(res.body).toMatchObject({ success: true, data: { name: 'by-id' } });
  });
});
