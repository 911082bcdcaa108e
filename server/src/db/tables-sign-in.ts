// The tables of signing in: console sessions, short-lived entries (OAuth states, codes, pending logins, WebAuthn
// challenges), custom OAuth providers and their bindings, two-factor, identity claims and passkeys.
import { c, id, ix, softDelete, ux, type TableSpec } from './table-spec.js';

export const SIGN_IN_TABLES: TableSpec[] = [
  // Ours: console login sessions (services/sessions.ts). Only a hash of the cookie's random id is kept, so a copy of
  // the table cannot be turned into cookies; deleting the rows ends the sessions on every node.
  {
    name: 'sessions',
    columns: [
      c('id_hash', 'char(64)', undefined, true),
      c('user_id', 'bigint', undefined, true),
      c('created_at', 'bigint', 0),
      c('expires_at', 'bigint', 0),
    ],
    primaryKey: ['id_hash'],
    indexes: [ix('sessions', 'user_id'), ix('sessions', 'expires_at')],
  },
  // Ours: short-lived entries (services/short-lived.ts) every node must see when there is no Redis: OAuth states,
  // email verification and reset codes, logins awaiting their second factor, WebAuthn challenges. Keys are SHA-256 digests of the logical key, so an address never sits in an index.
  {
    name: 'short_lived_entries',
    columns: [
      c('key_hash', 'char(64)', undefined, true),
      c('value', 'text', undefined, true),
      c('expires_at', 'bigint', 0),
    ],
    primaryKey: ['key_hash'],
    indexes: [ix('short_lived_entries', 'expires_at')],
  },
  // new-api's custom OAuth providers (services/oauth/custom-providers.ts) and the accounts bound to them; gorm's
  // index names, so that a database moved from new-api keeps one index each
  {
    name: 'custom_oauth_providers',
    columns: [
      id,
      c('name', 'varchar(64)', undefined, true),
      c('slug', 'varchar(64)', undefined, true),
      c('icon', 'varchar(128)', ''),
      c('kind', 'varchar(32)', 'oauth_code'),
      c('enabled', 'bool', false),
      c('client_id', 'varchar(256)'),
      c('client_secret', 'varchar(512)'),
      c('authorization_endpoint', 'varchar(512)'),
      c('token_endpoint', 'varchar(512)'),
      c('user_info_endpoint', 'varchar(512)'),
      c('scopes', 'varchar(256)', 'openid profile email'),
      c('user_id_field', 'varchar(128)', 'sub'),
      c('username_field', 'varchar(128)', 'preferred_username'),
      c('display_name_field', 'varchar(128)', 'name'),
      c('email_field', 'varchar(128)', 'email'),
      c('well_known', 'varchar(512)'),
      c('auth_style', 'bigint', 0),
      c('created_at', 'datetime'),
      c('updated_at', 'datetime'),
    ],
    indexes: [{ name: 'idx_custom_oauth_providers_slug', columns: ['slug'], unique: true }],
  },
  {
    name: 'user_oauth_bindings',
    columns: [
      id,
      c('user_id', 'bigint', undefined, true),
      c('provider_id', 'bigint', undefined, true),
      c('provider_user_id', 'varchar(256)', undefined, true),
      c('created_at', 'datetime'),
    ],
    indexes: [
      // one binding per user and provider, and one account of a provider bound once: two racing binds cannot both land
      { name: 'ux_user_provider', columns: ['user_id', 'provider_id'], unique: true },
      { name: 'ux_provider_userid', columns: ['provider_id', 'provider_user_id'], unique: true },
    ],
  },
  // new-api's two-factor tables (gorm names of TwoFA and TwoFABackupCode), read and written by services/two-factor.ts.
  // last_totp_step is ours: the time step of the last TOTP code accepted, so that a code is not accepted twice.
  {
    name: 'two_fas',
    columns: [
      id,
      c('user_id', 'bigint', undefined, true),
      c('secret', 'varchar(255)', undefined, true),
      c('is_enabled', 'bool', false, false),
      c('failed_attempts', 'bigint', 0, false),
      c('locked_until', 'datetime'),
      c('last_used_at', 'datetime'),
      c('created_at', 'datetime'),
      c('updated_at', 'datetime'),
      softDelete,
      c('last_totp_step', 'bigint', 0, false),
    ],
    indexes: [ux('two_fas', 'user_id'), ix('two_fas', 'deleted_at')],
  },
  {
    name: 'two_fa_backup_codes',
    columns: [
      id,
      c('user_id', 'bigint', undefined, true),
      c('code_hash', 'varchar(255)', undefined, true),
      c('is_used', 'bool', false, false),
      c('used_at', 'datetime'),
      c('created_at', 'datetime'),
      softDelete,
    ],
    indexes: [ix('two_fa_backup_codes', 'user_id'), ix('two_fa_backup_codes', 'deleted_at')],
  },
  // Ours: which user holds each third-party account (services/oauth/claims.ts). The users' provider columns cannot
  // carry a unique index (empty means unbound, and MariaDB has no partial index), so a sign-up or a binding first
  // inserts its row here: the primary key lets only one of two racing callbacks win (migration 0012).
  {
    name: 'identity_claims',
    columns: [
      c('provider', 'varchar(32)', undefined, true),
      c('external_id', 'varchar(191)', undefined, true),
      // 0 while the sign-up that claimed it is still creating its user
      c('user_id', 'bigint', 0),
      c('claimed_at', 'bigint', 0),
    ],
    primaryKey: ['provider', 'external_id'],
    indexes: [ix('identity_claims', 'user_id')],
  },
  // Ours: the generated password of an account signed up through a third party, as its hash at sign-up. While the
  // user row still has that hash, its owner never saw the password, so it is no way to sign in (unbinding rules,
  // services/oauth/unbind.ts); any later change of the password makes the row moot.
  {
    name: 'unseen_passwords',
    columns: [c('user_id', 'bigint', undefined, true), c('password_hash', 'varchar(255)', '')],
    primaryKey: ['user_id'],
    indexes: [],
  },
  // new-api's later passkey table (services/passkeys.ts, migration 0010): gorm's columns, ids and keys as standard
  // base64; unique on credential_id (gorm's index name) but not on user_id, so a user may hold several; `name` is ours
  {
    name: 'passkey_credentials',
    columns: [
      id,
      c('user_id', 'bigint', undefined, true),
      c('credential_id', 'varchar(512)', undefined, true),
      c('public_key', 'text', undefined, true),
      c('attestation_type', 'varchar(255)'),
      c('aaguid', 'varchar(512)'),
      c('sign_count', 'bigint', 0, false),
      c('clone_warning', 'bool'),
      c('user_present', 'bool'),
      c('user_verified', 'bool'),
      c('backup_eligible', 'bool'),
      c('backup_state', 'bool'),
      c('transports', 'text'),
      c('attachment', 'varchar(32)'),
      c('last_used_at', 'datetime'),
      c('created_at', 'datetime'),
      c('updated_at', 'datetime'),
      softDelete,
      c('name', 'varchar(64)', ''),
    ],
    indexes: [
      ix('passkey_credentials', 'user_id'),
      { name: 'idx_passkey_credentials_credential_id', columns: ['credential_id'], unique: true },
      ix('passkey_credentials', 'deleted_at'),
    ],
  },
];
