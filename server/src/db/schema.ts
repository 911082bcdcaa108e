// Table types for Kysely. Table and column names are new-api's (new-api-compat.md §2) so that either product can open
// the other's database. Booleans read back as boolean (PostgreSQL) or 0/1 (SQLite, MySQL): test them with
// truthiness, never `=== true`.
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { SubscriptionTables } from './schema-subscriptions.js';

export type Bool = ColumnType<boolean | number, boolean | undefined, boolean>;
export type SoftDelete = ColumnType<Date | string | null, Date | string | null | undefined, Date | string | null>;

export interface UsersTable {
  id: Generated<number>;
  username: string;
  password: string;
  display_name: Generated<string>;
  role: Generated<number>;
  status: Generated<number>;
  email: Generated<string>;
  github_id: Generated<string>;
  oidc_id: Generated<string>;
  wechat_id: Generated<string>;
  telegram_id: Generated<string>;
  linux_do_id: Generated<string>;
  discord_id: Generated<string>;
  access_token: string | null;
  quota: Generated<number>;
  used_quota: Generated<number>;
  request_count: Generated<number>;
  group: Generated<string>;
  aff_code: string | null;
  aff_count: Generated<number>;
  aff_quota: Generated<number>;
  aff_history: Generated<number>;
  inviter_id: Generated<number>;
  deleted_at: SoftDelete;
  setting: Generated<string>;
}

export interface TokensTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  status: Generated<number>;
  name: Generated<string>;
  created_time: Generated<number>;
  accessed_time: Generated<number>;
  expired_time: Generated<number>;
  remain_quota: Generated<number>;
  unlimited_quota: Bool;
  model_limits_enabled: Bool;
  model_limits: Generated<string>;
  allow_ips: Generated<string>;
  used_quota: Generated<number>;
  group: Generated<string>;
  deleted_at: SoftDelete;
}

export interface ChannelsTable {
  id: Generated<number>;
  type: Generated<number>;
  key: string;
  /** gorm's column for new-api's OpenAIOrganization field; the console API calls it openai_organization */
  open_ai_organization: string | null;
  test_model: string | null;
  status: Generated<number>;
  name: Generated<string>;
  weight: Generated<number | null>;
  created_time: Generated<number>;
  test_time: Generated<number>;
  response_time: Generated<number>;
  base_url: string | null;
  other: Generated<string>;
  balance: Generated<number>;
  balance_updated_time: Generated<number>;
  models: Generated<string>;
  group: Generated<string>;
  used_quota: Generated<number>;
  model_mapping: string | null;
  status_code_mapping: Generated<string>;
  priority: Generated<number | null>;
  auto_ban: Generated<number | null>;
  other_info: Generated<string>;
  tag: string | null;
  setting: string | null;
  param_override: string | null;
  max_input_tokens: Generated<number>;
  /** new-api's ChannelInfo as JSON text; PostgreSQL and MySQL drivers may read it back parsed (services/multi-key.ts) */
  channel_info: ColumnType<unknown, string | null | undefined, string | null>;
}

export interface AbilitiesTable {
  group: string;
  model: string;
  channel_id: number;
  enabled: Bool;
  priority: Generated<number | null>;
  weight: Generated<number>;
  tag: string | null;
}

export interface OptionsTable {
  key: string;
  value: string;
}

export interface RedemptionsTable {
  id: Generated<number>;
  user_id: number;
  key: string;
  status: Generated<number>;
  name: Generated<string>;
  quota: Generated<number>;
  created_time: Generated<number>;
  redeemed_time: Generated<number>;
  used_user_id: Generated<number>;
  deleted_at: SoftDelete;
}

export interface LogsTable {
  id: Generated<number>;
  user_id: number;
  created_at: number;
  type: number;
  content: Generated<string>;
  username: Generated<string>;
  token_name: Generated<string>;
  model_name: Generated<string>;
  quota: Generated<number>;
  prompt_tokens: Generated<number>;
  completion_tokens: Generated<number>;
  use_time: Generated<number>;
  is_stream: Bool;
  channel_id: Generated<number>;
  token_id: Generated<number>;
  group: Generated<string>;
  other: Generated<string>;
}

export interface TopUpsTable {
  id: Generated<number>;
  user_id: number;
  amount: number;
  money: number;
  trade_no: string;
  /** alipay / wxpay (EPay), stripe, creem; '' on orders written before the column existed */
  payment_method: Generated<string>;
  create_time: number;
  status: string;
}

export interface CheckinsTable {
  id: Generated<number>;
  user_id: number;
  /** YYYY-MM-DD in the site's time zone */
  checkin_date: string;
  quota_awarded: number;
  created_at: number;
}

export interface MidjourneysTable {
  id: Generated<number>;
  code: Generated<number>;
  user_id: number;
  action: Generated<string>;
  mj_id: Generated<string>;
  prompt: Generated<string>;
  prompt_en: Generated<string>;
  description: Generated<string>;
  state: Generated<string>;
  submit_time: Generated<number>;
  start_time: Generated<number>;
  finish_time: Generated<number>;
  image_url: Generated<string>;
  video_url: Generated<string>;
  video_urls: Generated<string>;
  status: Generated<string>;
  progress: Generated<string>;
  fail_reason: Generated<string>;
  channel_id: Generated<number>;
  quota: Generated<number>;
  buttons: Generated<string>;
  properties: Generated<string>;
  private_data: Generated<string>;
}

export interface TasksTable {
  id: Generated<number>;
  created_at: Generated<number>;
  updated_at: Generated<number>;
  task_id: Generated<string>;
  platform: Generated<string>;
  user_id: number;
  group: Generated<string>;
  channel_id: Generated<number>;
  quota: Generated<number>;
  action: Generated<string>;
  status: Generated<string>;
  fail_reason: Generated<string>;
  submit_time: Generated<number>;
  start_time: Generated<number>;
  finish_time: Generated<number>;
  progress: Generated<string>;
  properties: Generated<string>;
  /** never returned by any API (upstream task id, result URL, billing context) */
  private_data: Generated<string>;
  data: Generated<string>;
}

export interface QuotaDataTable {
  id: Generated<number>;
  user_id: number;
  username: Generated<string>;
  model_name: Generated<string>;
  created_at: number;
  token_used: Generated<number>;
  count: Generated<number>;
  quota: Generated<number>;
}

export interface SetupsTable {
  id: Generated<number>;
  version: string;
  initialized_at: number;
}

/** quota held by one gateway process in reservations it has not settled (services/quota-holds.ts) */
export interface QuotaHoldsTable {
  node: string;
  user_id: number;
  token_id: number;
  user_quota: number;
  token_quota: number;
}

/** SQLite's record of holds: one row per commit that changed them (services/quota-holds.ts). */
export interface QuotaHoldJournalTable {
  node: string;
  seq: number;
  /** the commit's signed changes, a JSON array of (user id, token id, user amount, token amount) quadruples */
  holds: string;
}

export interface QuotaHoldNodesTable {
  node: string;
  /** unix seconds of the node's last heartbeat */
  seen_at: number;
}

/** a console login session (services/sessions.ts); the cookie holds the random id, the row only its SHA-256 */
export interface SessionsTable {
  id_hash: string;
  user_id: number;
  /** unix seconds */
  created_at: number;
  /** unix seconds; the row is no longer valid from then on */
  expires_at: number;
}

export interface ShortLivedEntriesTable {
  /** SHA-256 (hex) of the logical key */
  key_hash: string;
  value: string;
  /** unix seconds; the entry is gone from then on */
  expires_at: number;
}

/** ours: a token's or a user's governance settings (services/limits/), JSON */
export interface UsageLimitsTable {
  /** 'token' or 'user' */
  scope: string;
  target_id: number;
  limits: string;
}

/** an operator-defined OAuth login (new-api's table; only the `oauth_code` kind is served here) */
export interface CustomOAuthProvidersTable {
  id: Generated<number>;
  name: string;
  slug: string;
  icon: Generated<string | null>;
  kind: Generated<string | null>;
  enabled: Bool;
  client_id: string | null;
  /** write-only through the API: never answered */
  client_secret: string | null;
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  user_info_endpoint: string | null;
  scopes: Generated<string | null>;
  user_id_field: Generated<string | null>;
  username_field: Generated<string | null>;
  display_name_field: Generated<string | null>;
  email_field: Generated<string | null>;
  well_known: string | null;
  /** 0 auto (credentials in the body), 1 body, 2 HTTP Basic */
  auth_style: Generated<number>;
  created_at: Date | string | null;
  updated_at: Date | string | null;
}

export interface UserOAuthBindingsTable {
  id: Generated<number>;
  user_id: number;
  provider_id: number;
  provider_user_id: string;
  created_at: Date | string | null;
}

/** new-api's TwoFA row (services/two-factor.ts); `secret` never leaves the server after setup */
export interface TwoFasTable {
  id: Generated<number>;
  user_id: number;
  secret: string;
  is_enabled: Bool;
  failed_attempts: Generated<number>;
  locked_until: SoftDelete;
  last_used_at: SoftDelete;
  created_at: SoftDelete;
  updated_at: SoftDelete;
  deleted_at: SoftDelete;
  /** ours: the TOTP time step last accepted; a code of that step or an earlier one is refused */
  last_totp_step: Generated<number>;
}

/** new-api's TwoFABackupCode row: a bcrypt hash of one XXXX-XXXX code */
export interface TwoFaBackupCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  is_used: Bool;
  used_at: SoftDelete;
  created_at: SoftDelete;
  deleted_at: SoftDelete;
}

type NullableBool = ColumnType<boolean | number | null, boolean | null | undefined, boolean | null>;
type NullableDateTime = ColumnType<Date | string | null, Date | string | null | undefined, Date | string | null>;

/** new-api's passkey_credentials (services/passkeys.ts): ids and keys as standard base64, as go-webauthn's gorm model */
export interface PasskeyCredentialsTable {
  id: Generated<number>;
  user_id: number;
  credential_id: string;
  /** the COSE public key */
  public_key: string;
  attestation_type: string | null;
  aaguid: string | null;
  sign_count: Generated<number>;
  clone_warning: NullableBool;
  user_present: NullableBool;
  user_verified: NullableBool;
  backup_eligible: NullableBool;
  backup_state: NullableBool;
  /** JSON array of transport names */
  transports: string | null;
  attachment: string | null;
  last_used_at: NullableDateTime;
  created_at: NullableDateTime;
  updated_at: NullableDateTime;
  deleted_at: SoftDelete;
  /** ours: the label the owner gave it */
  name: Generated<string>;
}

/** which user holds a third-party account (services/oauth/claims.ts) */
export interface IdentityClaimsTable {
  /** the binding type: github, linuxdo, discord, oidc, wechat, telegram */
  provider: string;
  external_id: string;
  /** 0 while a sign-up is creating the user */
  user_id: Generated<number>;
  /** unix seconds */
  claimed_at: Generated<number>;
}

/** the generated, never shown password of a third-party sign-up, as its hash then (services/oauth/unbind.ts) */
export interface UnseenPasswordsTable {
  user_id: number;
  password_hash: Generated<string>;
}

export interface Database extends SubscriptionTables {
  users: UsersTable;
  tokens: TokensTable;
  channels: ChannelsTable;
  abilities: AbilitiesTable;
  options: OptionsTable;
  redemptions: RedemptionsTable;
  logs: LogsTable;
  top_ups: TopUpsTable;
  midjourneys: MidjourneysTable;
  tasks: TasksTable;
  quota_data: QuotaDataTable;
  setups: SetupsTable;
  quota_holds: QuotaHoldsTable;
  quota_hold_nodes: QuotaHoldNodesTable;
  quota_hold_journal: QuotaHoldJournalTable;
  sessions: SessionsTable;
  short_lived_entries: ShortLivedEntriesTable;
  custom_oauth_providers: CustomOAuthProvidersTable;
  user_oauth_bindings: UserOAuthBindingsTable;
  two_fas: TwoFasTable;
  two_fa_backup_codes: TwoFaBackupCodesTable;
  identity_claims: IdentityClaimsTable;
  unseen_passwords: UnseenPasswordsTable;
  passkey_credentials: PasskeyCredentialsTable;
  usage_limits: UsageLimitsTable;
  checkins: CheckinsTable;
}

export type User = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type Token = Selectable<TokensTable>;
export type NewToken = Insertable<TokensTable>;
export type Channel = Selectable<ChannelsTable>;
export type NewChannel = Insertable<ChannelsTable>;
export type Ability = Selectable<AbilitiesTable>;
export type Log = Selectable<LogsTable>;
export type QuotaDataRecord = Selectable<QuotaDataTable>;
export type NewLog = Insertable<LogsTable>;
export type Redemption = Selectable<RedemptionsTable>;
