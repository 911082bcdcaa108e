// TOTP two-factor sign-in (new-api-compat.md §9.7): enrolment, the codes that prove the second factor (a TOTP code
// or a one-time backup code), the lockout after repeated failures, and the admin reset. Rows live in new-api's own
// tables (two_fas, two_fa_backup_codes) with new-api's formats — a base32 secret, bcrypt hashes of XXXX-XXXX backup
// codes — so a database shared with new-api keeps its enrolments. Every function takes the current time (ms) so that
// tests can fix the clock.
import { randomInt } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { AppContext } from '../context.js';
import type { Selectable } from 'kysely';
import type { TwoFasTable } from '../db/schema.js';
import { ROLE_ROOT } from './console-auth.js';
import { endUserSessions } from './sessions.js';
import { UserFacingError, getUser } from './users.js';

export const BACKUP_CODE_COUNT = 10;
/** failures in a row before the codes are refused for LOCKOUT_SEC (new-api's numbers) */
export const MAX_FAILED_ATTEMPTS = 5;
export const LOCKOUT_SEC = 300;
const TOTP_PERIOD_SEC = 30;
/** one step either side of the current one, as new-api's validator allows for clock drift */
const TOTP_TOLERANCE_SEC = TOTP_PERIOD_SEC;
const BCRYPT_COST = 10;
const BACKUP_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export const WRONG_CODE = '验证码或备用码错误，请重试';
export const NOT_ENABLED = '用户未启用2FA';
const CODE_FORMAT = '验证码必须是6位数字';

type TwoFaRow = Selectable<TwoFasTable>;

let otplibModule: Promise<typeof import('otplib')> | null = null;
/** otplib (and its @otplib/*, @noble/hashes, @scure/base), imported when a code is first made or checked */
const otp = () => (otplibModule ??= import('otplib'));

/** A datetime column as ms: a Date (PostgreSQL, MySQL) or a string (SQLite: ours ISO, gorm's with a space). */
function timeOf(value: Date | string | null): number | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.getTime();
  const ms = Date.parse(value.replace(' ', 'T'));
  return Number.isNaN(ms) ? null : ms;
}

/** new-api's wording of the lock's end: local time as 2006-01-02 15:04:05. */
function localTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The user's two-factor row (a setup not yet confirmed included), ignoring rows new-api soft-deleted. */
export async function twoFactorRow(ctx: AppContext, userId: number): Promise<TwoFaRow | undefined> {
  return ctx.db
    .selectFrom('two_fas')
    .selectAll()
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function isTwoFactorEnabled(ctx: AppContext, userId: number): Promise<boolean> {
  return Boolean((await twoFactorRow(ctx, userId))?.is_enabled);
}

const isLocked = (row: TwoFaRow, now: number) => (timeOf(row.locked_until) ?? 0) > now;

async function unusedBackupCodes(ctx: AppContext, userId: number) {
  return ctx.db
    .selectFrom('two_fa_backup_codes')
    .select(['id', 'code_hash'])
    .where('user_id', '=', userId)
    .where('is_used', '=', false)
    .where('deleted_at', 'is', null)
    .execute();
}

export async function twoFactorStatus(
  ctx: AppContext,
  userId: number,
  now = Date.now(),
): Promise<{ enabled: boolean; locked: boolean; backup_codes_remaining?: number }> {
  const row = await twoFactorRow(ctx, userId);
  if (!row) return { enabled: false, locked: false };
  const status = { enabled: Boolean(row.is_enabled), locked: isLocked(row, now) };
  if (!status.enabled) return status;
  return { ...status, backup_codes_remaining: (await unusedBackupCodes(ctx, userId)).length };
}

/** Ten codes of the form XXXX-XXXX from [A-Z0-9], drawn without modulo bias. */
export function newBackupCodes(): string[] {
  const one = () => {
    let s = '';
    for (let i = 0; i < 8; i++) s += BACKUP_ALPHABET[randomInt(BACKUP_ALPHABET.length)];
    return `${s.slice(0, 4)}-${s.slice(4)}`;
  };
  return Array.from({ length: BACKUP_CODE_COUNT }, one);
}

/** A backup code as typed (any case, with or without the dash or spaces) in its stored form, or null. */
export function normalizeBackupCode(code: string): string | null {
  const clean = code.replace(/[\s-]/g, '').toUpperCase();
  return /^[A-Z0-9]{8}$/.test(clean) ? `${clean.slice(0, 4)}-${clean.slice(4)}` : null;
}

async function replaceBackupCodes(ctx: AppContext, userId: number, codes: string[], now: number): Promise<void> {
  const hashes: string[] = [];
  for (const code of codes) hashes.push(await bcrypt.hash(code, BCRYPT_COST));
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('two_fa_backup_codes').where('user_id', '=', userId).execute();
    await trx
      .insertInto('two_fa_backup_codes')
      .values(hashes.map((code_hash) => ({ user_id: userId, code_hash, is_used: false, created_at: new Date(now) })))
      .execute();
  });
}

/** Removes a user's two-factor rows (disable, admin reset, account deletion). */
export async function deleteTwoFactor(ctx: AppContext, userId: number): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('two_fa_backup_codes').where('user_id', '=', userId).execute();
    await trx.deleteFrom('two_fas').where('user_id', '=', userId).execute();
  });
}

export interface SetupAnswer {
  secret: string;
  qr_code_data: string;
  backup_codes: string[];
}

/**
 * Starts (or restarts) enrolment: a new secret and ten backup codes, stored but not in force until a first code
 * confirms them. The secret is returned here only; no later call shows it.
 */
export async function beginSetup(
  ctx: AppContext,
  user: { id: number; username: string },
  now = Date.now(),
): Promise<SetupAnswer> {
  const existing = await twoFactorRow(ctx, user.id);
  if (existing?.is_enabled) throw new UserFacingError('用户已启用2FA，请先禁用后重新设置');
  if (existing) await deleteTwoFactor(ctx, user.id);
  const { generateSecret, generateURI } = await otp();
  const secret = generateSecret();
  const backupCodes = newBackupCodes();
  await ctx.db
    .insertInto('two_fas')
    .values({ user_id: user.id, secret, is_enabled: false, created_at: new Date(now), updated_at: new Date(now) })
    .execute();
  await replaceBackupCodes(ctx, user.id, backupCodes, now);
  const issuer = ctx.options.get('SystemName') || 'New API';
  return {
    secret,
    qr_code_data: generateURI({ issuer, label: user.username, secret, period: TOTP_PERIOD_SEC }),
    backup_codes: backupCodes,
  };
}

/** The time step of a valid TOTP code for the secret at `now`, or null. */
async function totpStep(secret: string, code: string, now: number): Promise<number | null> {
  const { verify } = await otp();
  try {
    const epoch = Math.floor(now / 1000);
    const result = await verify({ secret, token: code, epoch, epochTolerance: TOTP_TOLERANCE_SEC });
    // delta: how many periods from the current one the code matched
    return result.valid ? Math.floor(epoch / TOTP_PERIOD_SEC) + result.delta : null;
  } catch {
    return null;
  }
}

const isTotpForm = (code: string) => /^\d{6}$/.test(code);

/** Confirms enrolment with a first code from the authenticator; the code's step counts as used. */
export async function enableTwoFactor(ctx: AppContext, userId: number, rawCode: string, now = Date.now()) {
  const row = await twoFactorRow(ctx, userId);
  if (!row) throw new UserFacingError('请先完成2FA初始化设置');
  if (row.is_enabled) throw new UserFacingError('2FA已经启用');
  const code = rawCode.replace(/\s/g, '');
  if (!isTotpForm(code)) throw new UserFacingError(CODE_FORMAT);
  const step = await totpStep(row.secret, code, now);
  if (step === null) throw new UserFacingError(WRONG_CODE);
  const res = await ctx.db
    .updateTable('two_fas')
    .set({
      is_enabled: true,
      failed_attempts: 0,
      locked_until: null,
      last_used_at: new Date(now),
      updated_at: new Date(now),
      last_totp_step: step,
    })
    .where('id', '=', row.id)
    .where('is_enabled', '=', false)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw new UserFacingError('2FA已经启用');
}

/** Spends a TOTP code: refused when its step (or a later one) was already accepted, even by a concurrent call. */
async function spendTotp(ctx: AppContext, row: TwoFaRow, code: string, now: number): Promise<boolean> {
  if (!isTotpForm(code)) return false;
  const step = await totpStep(row.secret, code, now);
  if (step === null) return false;
  const res = await ctx.db
    .updateTable('two_fas')
    .set({ last_totp_step: step })
    .where('id', '=', row.id)
    .where('last_totp_step', '<', step)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Spends a backup code: each one is accepted once, the mark being set only if nobody set it first. */
async function spendBackupCode(ctx: AppContext, userId: number, code: string, now: number): Promise<boolean> {
  const normalized = normalizeBackupCode(code);
  if (!normalized) return false;
  for (const candidate of await unusedBackupCodes(ctx, userId)) {
    if (!(await bcrypt.compare(normalized, candidate.code_hash).catch(() => false))) continue;
    const res = await ctx.db
      .updateTable('two_fa_backup_codes')
      .set({ is_used: true, used_at: new Date(now) })
      .where('id', '=', candidate.id)
      .where('is_used', '=', false)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }
  return false;
}

const lockedError = (lockedUntil: number) => new UserFacingError(`账户已被锁定，请在${localTime(lockedUntil)}后重试`);

/**
 * Takes one of the MAX_FAILED_ATTEMPTS tries before the lockout, before the code is checked: one conditional UPDATE,
 * so that codes sent in parallel cannot all pass a lock read before any of them is counted. The try that takes the
 * last one sets the lock in the same statement; its code, if right, lifts it again (a success ends the series). So at
 * most MAX_FAILED_ATTEMPTS codes are checked per lockout, however many arrive at once. While locked, the count stays
 * at the limit (new-api resets it to 0 when it locks; its lock reads the time only, so it reads ours the same).
 */
async function takeAttempt(ctx: AppContext, rowId: number, now: number): Promise<boolean> {
  const res = await ctx.db
    .updateTable('two_fas')
    // locked_until first: MySQL evaluates SET left to right, so it must read the count before its increment
    .set((eb) => ({
      locked_until: eb
        .case()
        .when('failed_attempts', '>=', MAX_FAILED_ATTEMPTS - 1)
        .then(new Date(now + LOCKOUT_SEC * 1000))
        .else(eb.ref('locked_until'))
        .end(),
      failed_attempts: eb('failed_attempts', '+', 1),
      updated_at: new Date(now),
    }))
    .where('id', '=', rowId)
    .where('failed_attempts', '<', MAX_FAILED_ATTEMPTS)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** A lock that has run out starts a new series, unless someone already did (or a newer lock replaced it). */
async function endExpiredLock(ctx: AppContext, row: TwoFaRow): Promise<void> {
  await ctx.db
    .updateTable('two_fas')
    .set({ failed_attempts: 0, locked_until: null })
    .where('id', '=', row.id)
    .where('failed_attempts', '>=', MAX_FAILED_ATTEMPTS)
    .where((eb) =>
      row.locked_until === null ? eb('locked_until', 'is', null) : eb('locked_until', '=', row.locked_until),
    )
    .execute();
}

/** Reserves a try for the user's code, or throws the lock's message. */
async function reserveAttempt(ctx: AppContext, userId: number, now: number): Promise<TwoFaRow> {
  // a second round only when a series ended (a lock ran out, a right code reset it) between the read and the UPDATE
  for (let round = 0; round < 3; round++) {
    const row = await twoFactorRow(ctx, userId);
    if (!row?.is_enabled) throw new UserFacingError(NOT_ENABLED);
    if (isLocked(row, now)) throw lockedError(timeOf(row.locked_until)!);
    if (Number(row.failed_attempts) >= MAX_FAILED_ATTEMPTS) await endExpiredLock(ctx, row);
    if (await takeAttempt(ctx, row.id, now)) return row;
  }
  const row = await twoFactorRow(ctx, userId);
  throw lockedError(timeOf(row?.locked_until ?? null) ?? now + LOCKOUT_SEC * 1000);
}

/**
 * Checks the second factor of a user with two-factor enabled: a TOTP code, or (when allowed) an unused backup code.
 * Throws the message for the caller when it is refused. Every code takes a try before it is checked (takeAttempt);
 * a right one gives the tries back.
 */
export async function proveSecondFactor(
  ctx: AppContext,
  userId: number,
  rawCode: string,
  opts: { allowBackupCode: boolean },
  now = Date.now(),
): Promise<void> {
  const row = await reserveAttempt(ctx, userId, now);
  const code = rawCode.trim();
  const compact = code.replace(/\s/g, '');
  const accepted =
    (await spendTotp(ctx, row, compact, now)) ||
    (opts.allowBackupCode && !isTotpForm(compact) && (await spendBackupCode(ctx, userId, code, now)));
  if (!accepted) throw new UserFacingError(WRONG_CODE);
  await ctx.db
    .updateTable('two_fas')
    .set({ failed_attempts: 0, locked_until: null, last_used_at: new Date(now), updated_at: new Date(now) })
    .where('id', '=', row.id)
    .execute();
}

/** The user turns two-factor off, proving it with a TOTP or backup code. */
export async function disableTwoFactor(ctx: AppContext, userId: number, code: string, now = Date.now()) {
  await proveSecondFactor(ctx, userId, code, { allowBackupCode: true }, now);
  await deleteTwoFactor(ctx, userId);
}

/** Ten new backup codes in place of the old ones, against a TOTP code (new-api does not take a backup code here). */
export async function regenerateBackupCodes(
  ctx: AppContext,
  userId: number,
  code: string,
  now = Date.now(),
): Promise<string[]> {
  await proveSecondFactor(ctx, userId, code, { allowBackupCode: false }, now);
  const codes = newBackupCodes();
  await replaceBackupCodes(ctx, userId, codes, now);
  return codes;
}

/**
 * An admin removes a user's two-factor enrolment (a lost authenticator): only for a user below the caller, root
 * acting on anyone, as in the other user management calls. The user's sessions end with it.
 */
export async function adminResetTwoFactor(ctx: AppContext, callerRole: number, targetId: number): Promise<void> {
  if (!Number.isSafeInteger(targetId) || targetId <= 0) throw new UserFacingError('用户ID格式错误');
  const user = await getUser(ctx, targetId, { includeDeleted: true });
  if (!user) throw new UserFacingError('用户不存在');
  if (callerRole <= user.role && callerRole !== ROLE_ROOT)
    throw new UserFacingError('无权操作同级或更高级用户的2FA设置');
  if (!(await twoFactorRow(ctx, targetId))) throw new UserFacingError(NOT_ENABLED);
  await deleteTwoFactor(ctx, targetId);
  await endUserSessions(ctx, targetId);
}

export async function twoFactorStats(ctx: AppContext) {
  const total = await ctx.db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  const enabled = await ctx.db
    .selectFrom('two_fas')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('is_enabled', '=', true)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  const totalUsers = Number(total?.n ?? 0);
  const enabledUsers = Number(enabled?.n ?? 0);
  const rate = totalUsers > 0 ? (enabledUsers / totalUsers) * 100 : 0;
  return { total_users: totalUsers, enabled_users: enabledUsers, enabled_rate: `${rate.toFixed(1)}%` };
}

/** Which of the given users have two-factor in force (the console's user list shows the reset action for them). */
export async function usersWithTwoFactor(ctx: AppContext, ids: number[]): Promise<number[]> {
  if (!ids.length) return [];
  const rows = await ctx.db
    .selectFrom('two_fas')
    .select('user_id')
    .where('user_id', 'in', ids)
    .where('is_enabled', '=', true)
    .where('deleted_at', 'is', null)
    .execute();
  return rows.map((r) => Number(r.user_id));
}
