// Our column names against gorm's: new-api never names its columns, gorm derives each from the Go field name
// (snake case, with the common initialisms such as ID, URL, API kept as one word; a `column:` tag wins). The Go
// fields below are those of new-api's models (the April 2025 snapshot, in struct order); every column we declare
// for a table new-api owns must be gorm's name for one of them (or one of our own additions, listed), and the
// fixtures that rebuild new-api's tables in the other tests must have exactly those columns.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TABLES } from '../../src/db/tables.js';

const INITIALISMS = [
  'API',
  'ASCII',
  'CPU',
  'CSS',
  'DNS',
  'EOF',
  'GUID',
  'HTML',
  'HTTP',
  'HTTPS',
  'ID',
  'IP',
  'JSON',
  'LHS',
  'QPS',
  'RAM',
  'RHS',
  'RPC',
  'SLA',
  'SMTP',
  'SSH',
  'TLS',
  'TTL',
  'UID',
  'UI',
  'UUID',
  'URI',
  'URL',
  'UTF8',
  'VM',
  'XML',
  'XSRF',
  'XSS',
];

/**
 * gorm's default column name for a Go field. The initialisms are first rewritten as capitalised words (ID → Id),
 * trying at each position the one listed first that matches, as Go's strings.Replacer does; then an underscore goes
 * before each upper-case letter that starts a word: one that follows a lower-case letter, or that ends a run of
 * capitals followed by a lower-case letter (AIOrg → ai_org). Digits do not split words.
 */
export function gormColumnName(field: string): string {
  let s = '';
  for (let i = 0; i < field.length;) {
    const hit = INITIALISMS.find((w) => field.startsWith(w, i));
    if (hit) {
      s += hit[0] + hit.slice(1).toLowerCase();
      i += hit.length;
    } else s += field[i++];
  }
  const upper = (ch: string | undefined) => ch !== undefined && ch >= 'A' && ch <= 'Z';
  const digit = (ch: string | undefined) => ch !== undefined && ch >= '0' && ch <= '9';
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (!upper(ch)) {
      out += ch;
      continue;
    }
    const prevUpper = i > 0 && upper(s[i - 1]);
    const next = s[i + 1];
    const insideRun = prevUpper && (next === undefined || upper(next) || digit(next));
    if (i > 0 && !insideRun && s[i - 1] !== '_' && next !== '_') out += '_';
    out += ch.toLowerCase();
  }
  return out;
}

/** new-api's persisted fields per table; `Field:column` where a gorm column tag sets the name. */
const NEW_API_FIELDS: Record<string, string[]> = {
  channels: [
    'Id',
    'Type',
    'Key',
    'OpenAIOrganization',
    'TestModel',
    'Status',
    'Name',
    'Weight',
    'CreatedTime',
    'TestTime',
    'ResponseTime',
    'BaseURL:base_url',
    'Other',
    'Balance',
    'BalanceUpdatedTime',
    'Models',
    'Group',
    'UsedQuota',
    'ModelMapping',
    'StatusCodeMapping',
    'Priority',
    'AutoBan',
    'OtherInfo',
    'Tag',
    'Setting',
    'ParamOverride',
  ],
  tokens: [
    'Id',
    'UserId',
    'Key',
    'Status',
    'Name',
    'CreatedTime',
    'AccessedTime',
    'ExpiredTime',
    'RemainQuota',
    'UnlimitedQuota',
    'ModelLimitsEnabled',
    'ModelLimits',
    'AllowIps',
    'UsedQuota',
    'Group',
    'DeletedAt',
  ],
  users: [
    'Id',
    'Username',
    'Password',
    'DisplayName',
    'Role',
    'Status',
    'Email',
    'GitHubId:github_id',
    'OidcId:oidc_id',
    'WeChatId:wechat_id',
    'TelegramId:telegram_id',
    'AccessToken:access_token',
    'Quota',
    'UsedQuota:used_quota',
    'RequestCount',
    'Group',
    'AffCode:aff_code',
    'AffCount:aff_count',
    'AffQuota:aff_quota',
    'AffHistoryQuota:aff_history',
    'InviterId:inviter_id',
    'DeletedAt',
    'LinuxDOId:linux_do_id',
    'Setting:setting',
  ],
  options: ['Key', 'Value'],
  redemptions: [
    'Id',
    'UserId',
    'Key',
    'Status',
    'Name',
    'Quota',
    'CreatedTime',
    'RedeemedTime',
    'UsedUserId',
    'DeletedAt',
  ],
  abilities: ['Group', 'Model', 'ChannelId', 'Enabled', 'Priority', 'Weight', 'Tag'],
  // ChannelName is read-only (filled by a join), yet AutoMigrate creates its column
  logs: [
    'Id',
    'UserId',
    'CreatedAt',
    'Type',
    'Content',
    'Username',
    'TokenName',
    'ModelName',
    'Quota',
    'PromptTokens',
    'CompletionTokens',
    'UseTime',
    'IsStream',
    'ChannelId',
    'ChannelName',
    'TokenId',
    'Group',
    'Other',
  ],
  midjourneys: [
    'Id',
    'Code',
    'UserId',
    'Action',
    'MjId',
    'Prompt',
    'PromptEn',
    'Description',
    'State',
    'SubmitTime',
    'StartTime',
    'FinishTime',
    'ImageUrl',
    'Status',
    'Progress',
    'FailReason',
    'ChannelId',
    'Quota',
    'Buttons',
    'Properties',
  ],
  top_ups: ['Id', 'UserId', 'Amount', 'Money', 'TradeNo', 'CreateTime', 'Status'],
  quota_data: ['Id', 'UserID', 'Username', 'ModelName', 'CreatedAt', 'TokenUsed', 'Count', 'Quota'],
  tasks: [
    'ID',
    'CreatedAt',
    'UpdatedAt',
    'TaskID',
    'Platform',
    'UserId',
    'ChannelId',
    'Quota',
    'Action',
    'Status',
    'FailReason',
    'SubmitTime',
    'StartTime',
    'FinishTime',
    'Progress',
    'Properties',
    'Data',
  ],
  setups: ['ID', 'Version', 'InitializedAt'],
};

/**
 * Columns we add to new-api's tables (new-api ignores them). users.discord_id is gorm's name for the DiscordId field
 * of new-api's later versions, which the fixtures' version predates; so are tasks.group and tasks.private_data (its
 * later Task's Group and PrivateData), midjourneys.video_url and video_urls (its later VideoUrl and VideoUrls),
 * channels.channel_info (its later ChannelInfo, the multi-key state) and top_ups.payment_method (its later TopUp's
 * PaymentMethod); midjourneys.private_data is ours alone (the paying token of a drawing charged without a consume log
 * row).
 */
const OUR_ADDITIONS: Record<string, string[]> = {
  channels: ['max_input_tokens', 'channel_info'],
  users: ['discord_id'],
  tasks: ['group', 'private_data'],
  midjourneys: ['video_url', 'video_urls', 'private_data'],
  top_ups: ['payment_method'],
};
/** new-api's columns the gateway has no use for (left as they are). */
const UNUSED_BY_US: Record<string, string[]> = { logs: ['channel_name'] };

const columnOf = (f: string) => (f.includes(':') ? f.split(':')[1] : gormColumnName(f));
const newApiColumns = (table: string) => NEW_API_FIELDS[table].map(columnOf);

/**
 * new-api's later subscription tables (v1.0 release candidates, model/subscription.go), in their own fixtures
 * (test/fixtures/new-api-subscriptions/<kind>.sql): the April 2025 snapshot above predates them.
 */
const NEW_API_SUBSCRIPTION_FIELDS: Record<string, string[]> = {
  subscription_plans: [
    'Id',
    'Title',
    'Subtitle',
    'PriceAmount',
    'Currency',
    'DurationUnit',
    'DurationValue',
    'CustomSeconds',
    'Enabled',
    'SortOrder',
    'StripePriceId',
    'CreemProductId',
    'MaxPurchasePerUser',
    'UpgradeGroup',
    'TotalAmount',
    'QuotaResetPeriod',
    'QuotaResetCustomSeconds',
    'CreatedAt',
    'UpdatedAt',
  ],
  subscription_orders: [
    'Id',
    'UserId',
    'PlanId',
    'Money',
    'TradeNo',
    'PaymentMethod',
    'PaymentProvider',
    'Status',
    'CreateTime',
    'CompleteTime',
    'ProviderPayload',
  ],
  user_subscriptions: [
    'Id',
    'UserId',
    'PlanId',
    'AmountTotal',
    'AmountUsed',
    'StartTime',
    'EndTime',
    'Status',
    'Source',
    'LastResetTime',
    'NextResetTime',
    'UpgradeGroup',
    'PrevUserGroup',
    'CreatedAt',
    'UpdatedAt',
  ],
  subscription_pre_consume_records: [
    'Id',
    'RequestId',
    'UserId',
    'UserSubscriptionId',
    'PreConsumed',
    'Status',
    'CreatedAt',
    'UpdatedAt',
  ],
};

/** Column names of each CREATE TABLE in a fixture file (a quoted name followed by a type, after `(` or `,`). */
function fixtureColumns(kind: string, dir = 'new-api'): Record<string, string[]> {
  const text = readFileSync(new URL(`../fixtures/${dir}/${kind}.sql`, import.meta.url), 'utf8');
  const out: Record<string, string[]> = {};
  for (const m of text.matchAll(/^CREATE TABLE [`"](\w+)[`"] \((.*)\);$/gm)) {
    out[m[1]] = [...m[2].matchAll(/(?:^|,)[`"](\w+)[`"] \w/g)].map((c) => c[1]);
  }
  return out;
}

describe("gorm's column names", () => {
  it('snake-cases Go field names as gorm does', () => {
    expect(
      Object.fromEntries(
        [
          'OpenAIOrganization',
          'BaseURL',
          'AccessToken',
          'UserID',
          'TaskID',
          'ID',
          'AllowIps',
          'MjId',
          'ImageUrl',
          'APIKey',
          'HTTPProxy',
          'UserUUID',
          'IsStream',
          'UTF8Name',
          'LinuxDOId',
        ].map((f) => [f, gormColumnName(f)]),
      ),
    ).toEqual({
      OpenAIOrganization: 'open_ai_organization',
      BaseURL: 'base_url',
      AccessToken: 'access_token',
      UserID: 'user_id',
      TaskID: 'task_id',
      ID: 'id',
      AllowIps: 'allow_ips',
      MjId: 'mj_id',
      ImageUrl: 'image_url',
      APIKey: 'api_key',
      HTTPProxy: 'http_proxy',
      UserUUID: 'user_uuid',
      IsStream: 'is_stream',
      UTF8Name: 'utf8_name',
      LinuxDOId: 'linux_do_id',
    });
  });

  it('every column we declare on a new-api table is gorm’s name for one of its fields', () => {
    for (const [table, fields] of Object.entries(NEW_API_FIELDS)) {
      const spec = TABLES.find((t) => t.name === table);
      expect(spec, table).toBeDefined();
      const ours = spec!.columns.map((c) => c.name).filter((c) => !(OUR_ADDITIONS[table] ?? []).includes(c));
      const theirs = fields.map(columnOf).filter((c) => !(UNUSED_BY_US[table] ?? []).includes(c));
      expect({ table, columns: [...ours].sort() }).toEqual({ table, columns: [...theirs].sort() });
    }
  });

  it.each(['sqlite', 'postgres', 'mysql'])(
    'the %s fixture of new-api’s tables has exactly gorm’s columns, in field order',
    (kind) => {
      const fixture = fixtureColumns(kind);
      expect(Object.keys(fixture).sort()).toEqual(Object.keys(NEW_API_FIELDS).sort());
      for (const table of Object.keys(NEW_API_FIELDS))
        expect({ table, columns: fixture[table] }).toEqual({ table, columns: newApiColumns(table) });
    },
  );
});

describe('gorm’s names on new-api’s subscription tables', () => {
  it('every column we declare is gorm’s name for one of its fields', () => {
    for (const [table, fields] of Object.entries(NEW_API_SUBSCRIPTION_FIELDS)) {
      const spec = TABLES.find((t) => t.name === table);
      expect(spec, table).toBeDefined();
      expect({ table, columns: spec!.columns.map((c) => c.name) }).toEqual({ table, columns: fields.map(columnOf) });
    }
  });

  it.each(['sqlite', 'postgres', 'mysql'])('the %s fixture has exactly gorm’s columns and our index names', (kind) => {
    const fixture = fixtureColumns(kind, 'new-api-subscriptions');
    expect(Object.keys(fixture).sort()).toEqual(Object.keys(NEW_API_SUBSCRIPTION_FIELDS).sort());
    for (const [table, fields] of Object.entries(NEW_API_SUBSCRIPTION_FIELDS))
      expect({ table, columns: fixture[table] }).toEqual({ table, columns: fields.map(columnOf) });
    // every index gorm creates is declared under its name, with the same columns and uniqueness
    const text = readFileSync(new URL(`../fixtures/new-api-subscriptions/${kind}.sql`, import.meta.url), 'utf8');
    const gormIndexes = [
      ...text.matchAll(/(UNIQUE )?INDEX (?:IF NOT EXISTS )?[`"](\w+)[`"] (?:ON [`"](\w+)[`"] ?)?\(([^)]*)\)/g),
    ].map((m) => `${m[2]} ${m[1] ? 'unique ' : ''}(${m[4].replace(/[`" ]/g, '')})`);
    const ours = TABLES.filter((t) => t.name in NEW_API_SUBSCRIPTION_FIELDS).flatMap((t) =>
      t.indexes.map((i) => `${i.name} ${i.unique ? 'unique ' : ''}(${i.columns.join(',')})`),
    );
    expect(gormIndexes).toHaveLength(14);
    for (const idx of gormIndexes) expect(ours).toContain(idx);
  });
});
