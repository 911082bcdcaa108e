import { describe, expect, it } from 'vitest';
import { checkChannelForm, defaultChannelForm, type ChannelFormValues } from './logic.js';
import { checkBedrockKey, checkServiceAccount, checkVendorFields, checkVertexRegion } from './vendor-fields.js';

const SERVICE_ACCOUNT = {
  type: 'service_account',
  project_id: 'demo-project',
  private_key_id: 'abc123',
  private_key: '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n',
  client_email: 'relay@demo-project.iam.gserviceaccount.com',
};
const form = (over: Partial<ChannelFormValues>): ChannelFormValues => ({
  ...defaultChannelForm(),
  name: 'n',
  models: ['m'],
  ...over,
});

describe('Anthropic (14) and Gemini (24) keys', () => {
  it('asks for the vendor prefix when the channel calls the vendor itself', () => {
    expect(checkVendorFields(14, 'sk-ant-api03-abc', '', '')).toBeNull();
    expect(checkVendorFields(14, 'sk-ant-api03-abc\nsk-proj-oops', '', '')).toEqual({ error: 'err.anthropicKey' });
    expect(checkVendorFields(14, 'sk-proj-oops', 'https://api.anthropic.com/', '')).toEqual({
      error: 'err.anthropicKey',
    });
    expect(checkVendorFields(24, 'AIzaSyExample', '', '')).toBeNull();
    expect(checkVendorFields(24, 'sk-gemini', '', '')).toEqual({ error: 'err.geminiKey' });
  });

  it('accepts any key behind a proxy, and an empty key (edit keeps the stored one)', () => {
    expect(checkVendorFields(14, 'proxy-key', 'https://claude-proxy.example', '')).toBeNull();
    expect(checkVendorFields(24, 'proxy-key', 'https://gemini-proxy.example', '')).toBeNull();
    expect(checkVendorFields(14, '', '', '')).toBeNull();
  });

  it('blocks the submit with the message of the console', () => {
    expect(checkChannelForm(form({ type: 14, key: 'sk-wrong' }))).toEqual({ ok: false, error: 'err.anthropicKey' });
    const ok = checkChannelForm(form({ type: 14, key: 'sk-ant-api03-a\nsk-ant-api03-b' }));
    expect(ok.ok && ok.payload.key).toBe('sk-ant-api03-a\nsk-ant-api03-b');
  });
});

describe('Bedrock (33) keys', () => {
  it('takes AccessKeyId|SecretAccessKey|region, optionally |SessionToken', () => {
    expect(checkBedrockKey('AKIAEXAMPLE|secret|us-east-1')).toBeNull();
    expect(checkBedrockKey('ASIAEXAMPLE|secret|eu-west-3|token')).toBeNull();
    expect(checkBedrockKey('AKIAEXAMPLE|secret')).toEqual({ error: 'err.bedrockKey' });
    expect(checkBedrockKey('AKIAEXAMPLE||us-east-1')).toEqual({ error: 'err.bedrockKey' });
    expect(checkBedrockKey('a|b|c|d|e')).toEqual({ error: 'err.bedrockKey' });
    expect(checkBedrockKey('AKIAEXAMPLE|secret|Virginia')).toEqual({
      error: 'err.bedrockRegion',
      params: { region: 'Virginia' },
    });
  });

  it('checks every key line, one channel per line', () => {
    expect(checkVendorFields(33, 'A|s|us-east-1\nB|s|us-west-2', '', '')).toBeNull();
    expect(checkVendorFields(33, 'A|s|us-east-1\nB-s-us-west-2', '', '')).toEqual({ error: 'err.bedrockKey' });
    const ok = checkChannelForm(form({ type: 33, key: 'A|s|us-east-1\nB|s|us-west-2' }));
    expect(ok.ok && ok.payload).toMatchObject({ key: 'A|s|us-east-1\nB|s|us-west-2', base_url: '' });
  });
});

describe('Vertex AI (41)', () => {
  it('takes the service-account JSON key file and names missing fields', () => {
    expect(checkServiceAccount(JSON.stringify(SERVICE_ACCOUNT))).toBeNull();
    expect(checkServiceAccount('not json')).toEqual({ error: 'err.vertexKey' });
    expect(checkServiceAccount('["a"]')).toEqual({ error: 'err.vertexKey' });
    expect(checkServiceAccount(JSON.stringify({ ...SERVICE_ACCOUNT, type: 'authorized_user' }))).toEqual({
      error: 'err.vertexKey',
    });
    const { private_key: _pk, client_email: _ce, ...partial } = SERVICE_ACCOUNT;
    expect(checkServiceAccount(JSON.stringify(partial))).toEqual({
      error: 'err.vertexKeyFields',
      params: { fields: 'private_key, client_email' },
    });
  });

  it('takes one region, or a JSON map per model with a default', () => {
    expect(checkVertexRegion('us-central1')).toBeNull();
    expect(checkVertexRegion('global')).toBeNull();
    expect(checkVertexRegion('{"default":"us-east5","gemini-2.5-pro":"global"}')).toBeNull();
    expect(checkVertexRegion('  ')).toEqual({ error: 'err.vertexRegion' });
    expect(checkVertexRegion('US Central')).toEqual({ error: 'err.vertexLocation', params: { region: 'US Central' } });
    expect(checkVertexRegion('{"default": "us-east5"')).toEqual({ error: 'err.vertexRegionJson' });
    expect(checkVertexRegion('{"claude-3-5-sonnet": "us-east5"}')).toEqual({ error: 'err.vertexRegionJson' });
    expect(checkVertexRegion('{"default": 5}')).toEqual({ error: 'err.vertexLocation', params: { region: '5' } });
  });

  it('keeps the key as one JSON document; on edit an empty key is not checked', () => {
    const key = JSON.stringify(SERVICE_ACCOUNT, null, 2);
    const created = checkChannelForm(form({ type: 41, key, other: 'us-central1' }));
    expect(created.ok && created.payload).toMatchObject({ key, other: 'us-central1' });
    expect(checkChannelForm(form({ type: 41, key, other: '' }))).toEqual({ ok: false, error: 'err.vertexRegion' });
    expect(checkChannelForm(form({ type: 41, key: '{}', other: 'global' }))).toMatchObject({
      ok: false,
      error: 'err.vertexKeyFields',
    });
    const edited = checkChannelForm(form({ type: 41, key: '', other: 'global' }), 3);
    expect(edited.ok && 'key' in edited.payload).toBe(false);
  });
});
