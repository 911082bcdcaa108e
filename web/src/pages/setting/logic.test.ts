import { describe, expect, it } from 'vitest';
import {
  checkDomain,
  collectChanges,
  initialFormValues,
  invalidJsonKeys,
  isHttpUrl,
  isSecretKey,
  isValidJson,
  outcomeOf,
  parseWhitelist,
  readOidcConfig,
  saveChanges,
  type FieldDef,
  type OptionChange,
} from './logic.js';
import { GLOBAL_MODEL_FIELDS, GROUP_FIELDS, RATE_LIMIT_FIELDS, SMTP_FIELDS } from './fields.js';

const stored = {
  ModelRequestRateLimitEnabled: 'false',
  ModelRequestRateLimitDurationMinutes: '1',
  ModelRequestRateLimitCount: '0',
  ModelRequestRateLimitSuccessCount: '1000',
};

describe('diff of a section against the stored options', () => {
  it('finds nothing when the form still shows the stored values', () => {
    const values = initialFormValues(RATE_LIMIT_FIELDS, stored);
    expect(values).toEqual({
      ModelRequestRateLimitEnabled: false,
      ModelRequestRateLimitDurationMinutes: 1,
      ModelRequestRateLimitCount: 0,
      ModelRequestRateLimitSuccessCount: 1000,
    });
    expect(collectChanges(RATE_LIMIT_FIELDS, stored, values)).toEqual([]);
  });

  it('sends only the changed keys, numbers as text, booleans as true/false and last', () => {
    const values = {
      ...initialFormValues(RATE_LIMIT_FIELDS, stored),
      ModelRequestRateLimitEnabled: true,
      ModelRequestRateLimitCount: 30,
    };
    expect(collectChanges(RATE_LIMIT_FIELDS, stored, values)).toEqual([
      { key: 'ModelRequestRateLimitCount', value: '30' },
      { key: 'ModelRequestRateLimitEnabled', value: 'true' },
    ]);
  });

  it('treats reformatted JSON as unchanged and changed JSON as a change', () => {
    const options = {
      GroupRatio: '{"default":1,"vip":1}',
      UserUsableGroups: '{"default":"默认分组"}',
      TopupGroupRatio: '{"default":1}',
    };
    const values = initialFormValues(GROUP_FIELDS, options);
    expect(values.GroupRatio).toBe('{\n  "default": 1,\n  "vip": 1\n}');
    expect(collectChanges(GROUP_FIELDS, options, { ...values, GroupRatio: '{ "vip": 1, "default": 1 }' })).toEqual([]);
    expect(collectChanges(GROUP_FIELDS, options, { ...values, GroupRatio: '{"default":1,"vip":0.5}' })).toEqual([
      { key: 'GroupRatio', value: '{"default":1,"vip":0.5}' },
    ]);
  });

  it('never shows secrets and saves them only when filled in', () => {
    const options = {
      SMTPServer: 'smtp.example.com',
      SMTPPort: '587',
      SMTPAccount: 'a',
      SMTPFrom: 'a@example.com',
      SMTPSSLEnabled: 'false',
    };
    const values = initialFormValues(SMTP_FIELDS, options);
    expect(values.SMTPToken).toBe('');
    expect(collectChanges(SMTP_FIELDS, options, values)).toEqual([]);
    expect(collectChanges(SMTP_FIELDS, options, { ...values, SMTPToken: '  pw  ' })).toEqual([
      { key: 'SMTPToken', value: 'pw' },
    ]);
    expect(isSecretKey('SMTPToken') && isSecretKey('EpayKey') && isSecretKey('oidc.client_secret')).toBe(true);
    expect(isSecretKey('SMTPServer') || isSecretKey('GitHubClientId')).toBe(false);
  });

  it('leaves a field alone while its switch is off', () => {
    const options = {
      'global.pass_through_request_enabled': 'false',
      'general_setting.ping_interval_enabled': 'false',
      'general_setting.ping_interval_seconds': '60',
    };
    const values = { ...initialFormValues(GLOBAL_MODEL_FIELDS, options), 'general_setting.ping_interval_seconds': 0 };
    expect(collectChanges(GLOBAL_MODEL_FIELDS, options, values)).toEqual([]);
    const on = {
      ...values,
      'general_setting.ping_interval_enabled': true,
      'general_setting.ping_interval_seconds': 30,
    };
    expect(collectChanges(GLOBAL_MODEL_FIELDS, options, on)).toEqual([
      { key: 'general_setting.ping_interval_seconds', value: '30' },
      { key: 'general_setting.ping_interval_enabled', value: 'true' },
    ]);
  });

  it('strips trailing slashes from addresses', () => {
    const fields: FieldDef[] = [{ key: 'ServerAddress', kind: 'text', label: '', trimSlash: true }];
    expect(
      collectChanges(fields, { ServerAddress: 'https://a.example' }, { ServerAddress: 'https://a.example//' }),
    ).toEqual([]);
  });
});

describe('JSON validation', () => {
  it('accepts JSON and rejects anything else, including empty text', () => {
    expect(isValidJson('{"a":1}')).toBe(true);
    expect(isValidJson('[]')).toBe(true);
    expect(isValidJson('{a:1}')).toBe(false);
    expect(isValidJson('')).toBe(false);
    expect(
      invalidJsonKeys(GROUP_FIELDS, { GroupRatio: '{"x":1}', UserUsableGroups: '{oops', TopupGroupRatio: '{}' }),
    ).toEqual(['UserUsableGroups']);
  });
});

describe('saving one PUT per key', () => {
  it('puts each change in order and reports saved and failed keys with the server message', async () => {
    const seen: OptionChange[] = [];
    const result = await saveChanges(
      [
        { key: 'GitHubClientId', value: 'id' },
        { key: 'GroupRatio', value: '{"vip":-1}' },
        { key: 'GitHubOAuthEnabled', value: 'true' },
      ],
      async (c) => {
        seen.push(c);
        if (c.key === 'GroupRatio') return { success: false, message: '分组 vip 的倍率不能为负数' };
        return { success: true, message: '' };
      },
    );
    expect(seen.map((c) => c.key)).toEqual(['GitHubClientId', 'GroupRatio', 'GitHubOAuthEnabled']);
    expect(result).toEqual({
      saved: ['GitHubClientId', 'GitHubOAuthEnabled'],
      failed: [{ key: 'GroupRatio', message: '分组 vip 的倍率不能为负数' }],
    });
    expect(outcomeOf(result)).toBe('partial');
  });

  it('counts a thrown request as a failure and keeps going', async () => {
    const result = await saveChanges(
      [
        { key: 'A', value: '1' },
        { key: 'B', value: '2' },
      ],
      async (c) => {
        if (c.key === 'A') throw new Error('network');
        return { success: true, message: '' };
      },
    );
    expect(result).toEqual({ saved: ['B'], failed: [{ key: 'A', message: '' }] });
    expect(outcomeOf({ saved: [], failed: [] })).toBe('nothing');
    expect(outcomeOf({ saved: ['A'], failed: [] })).toBe('saved');
    expect(outcomeOf({ saved: [], failed: [{ key: 'A', message: 'x' }] })).toBe('failed');
  });
});

describe('email domain whitelist', () => {
  const list = parseWhitelist('gmail.com, qq.com,,163.com');
  it('parses the comma list', () => {
    expect(list).toEqual(['gmail.com', 'qq.com', '163.com']);
  });
  it('accepts a new valid domain', () => {
    expect(checkDomain('example.org', list)).toBeNull();
    expect(checkDomain('mail.example.co.uk', list)).toBeNull();
  });
  it('rejects malformed domains', () => {
    for (const d of ['example', 'exa mple.com', '-bad.com', 'http://x.com', 'user@gmail.com', 'a..com']) {
      expect(checkDomain(d, list)).toBe('invalid');
    }
    expect(checkDomain('   ', list)).toBe('empty');
  });
  it('rejects a domain already listed, whatever its case', () => {
    expect(checkDomain('QQ.com', list)).toBe('duplicate');
  });
});

describe('OIDC helpers', () => {
  it('accepts only http(s) well-known URLs', () => {
    expect(isHttpUrl('https://id.example.com/.well-known/openid-configuration')).toBe(true);
    expect(isHttpUrl('http://localhost:8080/x')).toBe(true);
    expect(isHttpUrl('ftp://x')).toBe(false);
    expect(isHttpUrl('id.example.com')).toBe(false);
  });
  it('reads the three endpoints from a well-known document', () => {
    expect(
      readOidcConfig({
        authorization_endpoint: 'https://a/auth',
        token_endpoint: 'https://a/token',
        userinfo_endpoint: 'https://a/me',
      }),
    ).toEqual({
      authorization_endpoint: 'https://a/auth',
      token_endpoint: 'https://a/token',
      user_info_endpoint: 'https://a/me',
    });
    expect(readOidcConfig({ authorization_endpoint: 'https://a/auth' })).toBeNull();
    expect(readOidcConfig(null)).toBeNull();
  });
});
