// Passkeys (WebAuthn, new-api-compat.md §9.8): a signed-in user registers several, anyone signs in with one without
// typing a name (a discoverable credential: the authenticator tells who it belongs to), the owner or an admin removes
// them. The ceremonies are checked by @simplewebauthn/server; this module chooses the relying party, keeps the rows
// in new-api's `passkey_credentials` form (ids and keys as standard base64, the user handle the decimal user id, as
// go-webauthn did) so passkeys registered under new-api keep working, and applies the account rules.
//
// The library (with its ASN.1 / X.509 tree, ~250 files) is loaded when the first ceremony needs it, not at start: a
// gateway that only relays never does (docs/perf/startup-loads.md).
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isIP } from 'node:net';
import type { AppContext } from '../context.js';
import type { User } from '../db/schema.js';
import { USER_STATUS_ENABLED } from './console-auth.js';
import { UserFacingError, getUser } from './users.js';
import { saveChallenge, takeChallenge } from './passkey-challenges.js';

export const PASSKEY_DISABLED = '管理员未启用 Passkey 登录';
export const PASSKEY_REGISTERED = 'Passkey 注册成功';
export const PASSKEY_REMOVED = 'Passkey 已解绑';
export const PASSKEY_RESET = 'Passkey 已重置';
export const PASSKEY_NONE = '该用户尚未绑定 Passkey';
export const PASSKEY_NOT_FOUND = 'Passkey 验证失败，请重试或联系管理员';
export const PASSKEY_USER_DISABLED = '该用户已被禁用';
export const PASSKEY_USER_DELETED = '用户已注销';
export const PASSKEY_HANDLE_MISMATCH = '用户句柄与凭证不匹配';
export const PASSKEY_CHALLENGE_MISSING = 'Passkey 验证已过期或无效，请重新开始';
export const PASSKEY_ALREADY_REGISTERED = '该 Passkey 已注册';
export const PASSKEY_UNKNOWN = 'Passkey 不存在';
export const MAX_PASSKEYS_PER_USER = 20;
export const PASSKEY_LIMIT = `每个用户最多注册 ${MAX_PASSKEYS_PER_USER} 个 Passkey`;
export const PASSKEY_NAME_MAX = 64;

let webauthnModule: Promise<typeof import('@simplewebauthn/server')> | null = null;
/** @simplewebauthn/server, imported on first use */
const webauthn = () => (webauthnModule ??= import('@simplewebauthn/server'));

/** How long the browser lets the user take over a ceremony, in ms (new-api: 2 minutes). */
const CEREMONY_TIMEOUT_MS = 2 * 60 * 1000;

export interface RelyingParty {
  /** the RP id: a host name, without port */
  id: string;
  /** the one origin the browser's client data must name */
  origin: string;
  name: string;
}

/** Whether passkey registration and login are switched on (new-api's `passkey.enabled`). */
export const passkeysEnabled = (ctx: AppContext): boolean => ctx.options.bool('passkey.enabled');

/**
 * The relying party: the host and origin of the `ServerAddress` option, the address users open the console at; the
 * request's own protocol and host only when that option holds no http(s) URL. The name is `SystemName`.
 */
export function relyingParty(ctx: AppContext, fallback: { protocol: string; host: string }): RelyingParty {
  const name = ctx.options.get('SystemName') || 'New API';
  const address = ctx.options.get('ServerAddress').trim();
  let url: URL | null = null;
  try {
    url = address ? new URL(address) : null;
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    url = new URL(`${fallback.protocol}://${fallback.host}`);
  }
  return { id: url.hostname.replace(/^\[|\]$/g, ''), origin: url.origin, name };
}

/**
 * Browsers refuse passkeys on an IP address: a ceremony for one would only end in the browser's own error, so it is
 * refused here with a message that says what to change.
 */
function requireHostName(rp: RelyingParty): void {
  if (isIP(rp.id))
    throw new UserFacingError(
      `Passkey 需要域名：服务器地址的主机是 IP 地址 ${rp.id}，浏览器不允许在 IP 地址上使用 Passkey`,
    );
}

// ---- encodings: the browser speaks base64url, new-api's rows hold standard base64 ----

const urlToStd = (b64url: string): string => Buffer.from(b64url, 'base64url').toString('base64');
const stdToUrl = (b64: string): string => Buffer.from(b64, 'base64').toString('base64url');
const userHandleOf = (userId: number): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(String(userId)));

/** The AAGUID ('xxxxxxxx-xxxx-…') as new-api stores it: its 16 bytes in standard base64. */
const aaguidToStd = (aaguid: string): string => Buffer.from(aaguid.replace(/-/g, ''), 'hex').toString('base64');

function transportsOf(raw: string | null): string[] {
  if (!raw) return [];
  try {
    const list: unknown = JSON.parse(raw);
    return Array.isArray(list) ? list.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

const isoTime = (v: Date | string | null): string | null => {
  if (v === null || v === undefined || v === '') return null;
  const d = v instanceof Date ? v : new Date(v);
  return Number.isNaN(d.getTime()) ? String(v) : d.toISOString();
};

// ---- listing ----

/** What the owner sees of a passkey: no key material, no credential id. */
export interface PasskeyView {
  id: number;
  name: string;
  created_at: string | null;
  last_used_at: string | null;
  backup_eligible: boolean;
  backup_state: boolean;
  transports: string[];
  attachment: string;
}

async function passkeyRows(ctx: AppContext, userId: number) {
  return ctx.db
    .selectFrom('passkey_credentials')
    .selectAll()
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
}

export async function listPasskeys(ctx: AppContext, userId: number): Promise<PasskeyView[]> {
  return (await passkeyRows(ctx, userId)).map((row) => ({
    id: row.id,
    name: row.name || 'Passkey',
    created_at: isoTime(row.created_at),
    last_used_at: isoTime(row.last_used_at),
    backup_eligible: !!row.backup_eligible,
    backup_state: !!row.backup_state,
    transports: transportsOf(row.transports),
    attachment: row.attachment ?? '',
  }));
}

/** new-api's status answer (`enabled`, `last_used_at`), plus the list. */
export async function passkeyStatus(ctx: AppContext, userId: number) {
  const passkeys = await listPasskeys(ctx, userId);
  const used = passkeys
    .map((p) => p.last_used_at)
    .filter((t): t is string => !!t)
    .sort();
  return { enabled: passkeys.length > 0, last_used_at: used.at(-1) ?? null, passkeys };
}

// ---- registration ----

export interface Ceremony<T> {
  /** new-api's shape: the options under `publicKey` */
  options: { publicKey: T };
  /** for the browser's signed cookie */
  handle: string;
}

export async function beginRegistration(
  ctx: AppContext,
  user: User,
  rp: RelyingParty,
): Promise<Ceremony<PublicKeyCredentialCreationOptionsJSON>> {
  requireHostName(rp);
  const existing = await passkeyRows(ctx, user.id);
  if (existing.length >= MAX_PASSKEYS_PER_USER) throw new UserFacingError(PASSKEY_LIMIT);
  const { generateRegistrationOptions } = await webauthn();
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.username || `user-${user.id}`,
    userID: userHandleOf(user.id),
    userDisplayName: user.display_name || user.username,
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    // the authenticator refuses to make a second credential for this account on a device that already holds one
    excludeCredentials: existing.map((row) => ({
      id: stdToUrl(row.credential_id),
      transports: transportsOf(row.transports),
    })),
    // discoverable, so that it can sign in without a user name
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' },
  });
  const handle = await saveChallenge(ctx, { purpose: 'register', userId: user.id, challenge: options.challenge });
  return { options: { publicKey: options }, handle };
}

/** The browser's answer has the fields of a credential; anything else is refused before the library reads it. */
function credentialShape(body: unknown): boolean {
  if (!body || typeof body !== 'object') return false;
  const b = body as Record<string, unknown>;
  return (
    typeof b.id === 'string' &&
    b.id.length > 0 &&
    b.id.length <= 1024 &&
    typeof b.rawId === 'string' &&
    b.type === 'public-key' &&
    !!b.response &&
    typeof b.response === 'object'
  );
}

const verificationFailed = (err: unknown) =>
  new UserFacingError(`Passkey 验证失败：${err instanceof Error ? err.message : String(err)}`);

export async function finishRegistration(
  ctx: AppContext,
  user: User,
  rp: RelyingParty,
  handle: string,
  body: unknown,
  requestedName: unknown,
): Promise<void> {
  const stored = await takeChallenge(ctx, handle, 'register');
  if (!stored || stored.userId !== user.id) throw new UserFacingError(PASSKEY_CHALLENGE_MISSING);
  if (!credentialShape(body)) throw new UserFacingError('无效的参数');
  const response = body as RegistrationResponseJSON;
  let info;
  const { verifyRegistrationResponse } = await webauthn();
  try {
    const verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: stored.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: false,
    });
    if (!verified.verified) throw new Error('registration not verified');
    info = verified.registrationInfo;
  } catch (err) {
    throw verificationFailed(err);
  }
  const credentialId = urlToStd(info.credential.id);
  const taken = await ctx.db
    .selectFrom('passkey_credentials')
    .select('id')
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
  if (taken) throw new UserFacingError(PASSKEY_ALREADY_REGISTERED);
  const count = (await passkeyRows(ctx, user.id)).length;
  if (count >= MAX_PASSKEYS_PER_USER) throw new UserFacingError(PASSKEY_LIMIT);
  const name =
    typeof requestedName === 'string' && requestedName.trim()
      ? [...requestedName.trim()].slice(0, PASSKEY_NAME_MAX).join('')
      : `Passkey ${count + 1}`;
  const now = new Date();
  await ctx.db
    .insertInto('passkey_credentials')
    .values({
      user_id: user.id,
      credential_id: credentialId,
      public_key: Buffer.from(info.credential.publicKey).toString('base64'),
      attestation_type: info.fmt,
      aaguid: aaguidToStd(info.aaguid),
      sign_count: info.credential.counter,
      clone_warning: false,
      user_present: true,
      user_verified: info.userVerified,
      backup_eligible: info.credentialDeviceType === 'multiDevice',
      backup_state: info.credentialBackedUp,
      transports: JSON.stringify(info.credential.transports ?? response.response.transports ?? []),
      attachment: response.authenticatorAttachment ?? '',
      created_at: now,
      updated_at: now,
      name,
    })
    .execute();
}

// ---- login ----

export async function beginLogin(
  ctx: AppContext,
  rp: RelyingParty,
): Promise<Ceremony<PublicKeyCredentialRequestOptionsJSON>> {
  requireHostName(rp);
  // no allowCredentials: the browser offers every passkey it holds for this RP id
  const { generateAuthenticationOptions } = await webauthn();
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: 'preferred',
  });
  const handle = await saveChallenge(ctx, { purpose: 'login', userId: 0, challenge: options.challenge });
  return { options: { publicKey: options }, handle };
}

/** The user the assertion signs in, after the library verified it; the caller starts the session. */
export async function finishLogin(ctx: AppContext, rp: RelyingParty, handle: string, body: unknown): Promise<User> {
  const stored = await takeChallenge(ctx, handle, 'login');
  if (!stored) throw new UserFacingError(PASSKEY_CHALLENGE_MISSING);
  if (!credentialShape(body)) throw new UserFacingError('无效的参数');
  const response = body as AuthenticationResponseJSON;
  const row = await ctx.db
    .selectFrom('passkey_credentials')
    .selectAll()
    .where('credential_id', '=', urlToStd(response.id))
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw new UserFacingError(PASSKEY_NOT_FOUND);
  // the authenticator names the account it made the credential for; it must be the row's owner
  const userHandle = response.response?.userHandle;
  if (userHandle && Buffer.from(userHandle, 'base64url').toString() !== String(row.user_id))
    throw new UserFacingError(PASSKEY_HANDLE_MISMATCH);

  let newCounter: number;
  let backedUp: boolean;
  const { verifyAuthenticationResponse } = await webauthn();
  try {
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: stored.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: stdToUrl(row.credential_id),
        publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64')),
        counter: Number(row.sign_count ?? 0),
        transports: transportsOf(row.transports),
      },
      requireUserVerification: false,
    });
    if (!verified.verified) throw new Error('assertion not verified');
    newCounter = verified.authenticationInfo.newCounter;
    backedUp = verified.authenticationInfo.credentialBackedUp;
  } catch (err) {
    // a counter that went backwards means the key may have been copied: the row keeps the warning (go-webauthn's
    // clone_warning), and the login is refused
    if (err instanceof Error && /counter/i.test(err.message)) {
      await ctx.db
        .updateTable('passkey_credentials')
        .set({ clone_warning: true, updated_at: new Date() })
        .where('id', '=', row.id)
        .execute();
    }
    throw verificationFailed(err);
  }

  const user = await getUser(ctx, row.user_id, { includeDeleted: true });
  if (!user || user.deleted_at) throw new UserFacingError(PASSKEY_USER_DELETED);
  if (Number(user.status) !== USER_STATUS_ENABLED) throw new UserFacingError(PASSKEY_USER_DISABLED);

  const now = new Date();
  // conditional on the counter read: of two logins racing with one assertion's counter, one updates the row
  let update = ctx.db
    .updateTable('passkey_credentials')
    .set({ sign_count: newCounter, backup_state: backedUp, last_used_at: now, updated_at: now })
    .where('id', '=', row.id);
  if (newCounter > 0) update = update.where('sign_count', '=', Number(row.sign_count ?? 0));
  const res = await update.executeTakeFirst();
  // (only a counting authenticator is checked: MySQL reports no row for an update that changed nothing)
  if (newCounter > 0 && Number(res.numUpdatedRows) !== 1)
    throw verificationFailed(new Error('the counter changed concurrently'));
  return user;
}

// ---- removal ----

/** Removes one of the user's passkeys; false when the user has none with that id. */
export async function removePasskey(ctx: AppContext, userId: number, id: number): Promise<boolean> {
  const res = await ctx.db
    .deleteFrom('passkey_credentials')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

/** Removes every passkey of the user (new-api's DELETE /api/user/passkey, its admin reset); returns how many. */
export async function removeAllPasskeys(ctx: AppContext, userId: number): Promise<number> {
  const res = await ctx.db.deleteFrom('passkey_credentials').where('user_id', '=', userId).executeTakeFirst();
  return Number(res.numDeletedRows);
}
