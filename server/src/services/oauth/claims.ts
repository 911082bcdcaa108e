// One holder per third-party account (new-api-compat.md §9.4, issue 33). The users' provider columns cannot carry a
// unique index (empty means unbound; MariaDB has no partial index), so two callbacks for the same account arriving
// together could both find it unbound and both sign up or bind it. Every sign-up and binding therefore first inserts
// the row (provider, external_id) of `identity_claims`, whose primary key lets exactly one of them win:
//
// - a binding claims and writes the user's column in one transaction, so a claim is never seen without its column;
// - a sign-up cannot run in a transaction (registration writes logs, the inviter and a token through other
//   handles), so it claims first with user_id 0 ("pending"), creates the user, then sets the column and the claim's
//   user in one transaction. A second callback that meets a pending claim waits for it and logs in as the new user.
//
// A claim whose holder no longer has the account in its column (the user was hard-deleted, or the column was
// cleared outside this server) or a pending claim left by a crashed sign-up is stale and is taken over.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { PROVIDER_COLUMNS, type ClaimProvider } from '../../db/identity-claims.js';
import { nowSec } from '../../lib/time.js';
import { OAuthError } from './provider.js';

/** a pending claim older than this belongs to a sign-up that died */
export const PENDING_CLAIM_STALE_SEC = 60;
/** how long a callback waits for a concurrent sign-up of the same account before giving up */
export const SIGN_UP_WAIT_MS = 5_000;
const SIGN_UP_POLL_MS = 50;
export const SIGN_UP_IN_PROGRESS = '该账户正在注册中，请稍后重试';

type Db = Kysely<Database> | Transaction<Database>;

interface ClaimRow {
  user_id: number;
  claimed_at: number;
}

type Attempt = { won: true } | { won: false; holder: number } | { won: false; pending: true };

function readClaim(ctx: AppContext, db: Db, provider: ClaimProvider, externalId: string) {
  let q = db
    .selectFrom('identity_claims')
    .select(['user_id', 'claimed_at'])
    .where('provider', '=', provider)
    .where('external_id', '=', externalId);
  // PostgreSQL / MySQL: the latest committed row, whatever the transaction's snapshot (MySQL's repeatable read)
  if (ctx.dbKind !== 'sqlite') q = q.forUpdate();
  return q.executeTakeFirst() as Promise<ClaimRow | undefined>;
}

async function insertClaim(
  ctx: AppContext,
  db: Db,
  provider: ClaimProvider,
  externalId: string,
  userId: number,
  now: number,
): Promise<boolean> {
  const values = { provider, external_id: externalId, user_id: userId, claimed_at: now };
  const insert =
    ctx.dbKind === 'mysql'
      ? db.insertInto('identity_claims').ignore().values(values)
      : db
          .insertInto('identity_claims')
          .values(values)
          .onConflict((oc) => oc.columns(['provider', 'external_id']).doNothing());
  const res = await insert.executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** Whether the user row still has the account in its provider column (soft-deleted rows included). */
async function stillHolds(db: Db, provider: ClaimProvider, userId: number, externalId: string): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('id', '=', userId)
    .where(PROVIDER_COLUMNS[provider], '=', externalId)
    .executeTakeFirst();
  return !!row;
}

/** Moves a claim to `userId` only if it is still as it was read (a concurrent takeover wins or loses as a whole). */
async function takeOver(
  db: Db,
  provider: ClaimProvider,
  externalId: string,
  seen: ClaimRow,
  userId: number,
  now: number,
): Promise<boolean> {
  const res = await db
    .updateTable('identity_claims')
    .set({ user_id: userId, claimed_at: now })
    .where('provider', '=', provider)
    .where('external_id', '=', externalId)
    .where('user_id', '=', seen.user_id)
    .where('claimed_at', '=', seen.claimed_at)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** One try at claiming the account for `userId` (0: a pending sign-up). */
async function attemptClaim(
  ctx: AppContext,
  db: Db,
  provider: ClaimProvider,
  externalId: string,
  userId: number,
  now: number,
): Promise<Attempt> {
  for (let i = 0; i < 3; i++) {
    if (await insertClaim(ctx, db, provider, externalId, userId, now)) return { won: true };
    const row = await readClaim(ctx, db, provider, externalId);
    if (!row) continue; // released meanwhile: insert again
    const holder = Number(row.user_id);
    if (holder === 0) {
      if (Number(row.claimed_at) > now - PENDING_CLAIM_STALE_SEC) return { won: false, pending: true };
    } else if (userId !== 0 && holder === userId) {
      return { won: true };
    } else if (await stillHolds(db, provider, holder, externalId)) {
      return { won: false, holder };
    }
    if (await takeOver(db, provider, externalId, row, userId, now)) return { won: true };
  }
  throw new Error(`identity claim ${provider}:${externalId} kept changing`);
}

/**
 * Binds the account to `userId`: the claim and the user's column are written in one transaction. Returns false when
 * another user holds the account (or is signing up with it right now). A different account of the same provider the
 * user held before is released.
 */
export async function bindClaimed(
  ctx: AppContext,
  provider: ClaimProvider,
  externalId: string,
  userId: number,
): Promise<boolean> {
  const column = PROVIDER_COLUMNS[provider];
  return ctx.db.transaction().execute(async (trx) => {
    const attempt = await attemptClaim(ctx, trx, provider, externalId, userId, nowSec());
    if (!attempt.won) return false;
    await trx
      .deleteFrom('identity_claims')
      .where('provider', '=', provider)
      .where('user_id', '=', userId)
      .where('external_id', '!=', externalId)
      .execute();
    await trx
      .updateTable('users')
      .set({ [column]: externalId })
      .where('id', '=', userId)
      .execute();
    return true;
  });
}

export interface SignUpOutcome {
  userId: number;
  /** false: another callback signed the account up (or bound it) first; `userId` is that user */
  created: boolean;
}

/**
 * Signs up a new user for the account unless another callback got there first. `create` makes the user (with a
 * generated password) and returns its id; it runs only for the winner. The account goes into the new user's column
 * together with the final claim, and the generated password is remembered as one its owner never saw.
 */
export async function signUpClaimed(
  ctx: AppContext,
  provider: ClaimProvider,
  externalId: string,
  create: () => Promise<number>,
): Promise<SignUpOutcome> {
  const deadline = Date.now() + SIGN_UP_WAIT_MS;
  for (;;) {
    const now = nowSec();
    const attempt = await attemptClaim(ctx, ctx.db, provider, externalId, 0, now);
    if (attempt.won) return { userId: await createClaimed(ctx, provider, externalId, now, create), created: true };
    if ('holder' in attempt) return { userId: attempt.holder, created: false };
    // a sign-up for the same account is under way: wait for its user
    if (Date.now() >= deadline) throw new OAuthError(SIGN_UP_IN_PROGRESS);
    await new Promise((resolve) => setTimeout(resolve, SIGN_UP_POLL_MS));
  }
}

async function createClaimed(
  ctx: AppContext,
  provider: ClaimProvider,
  externalId: string,
  claimedAt: number,
  create: () => Promise<number>,
): Promise<number> {
  const pending = (db: Db) =>
    db
      .updateTable('identity_claims')
      .where('provider', '=', provider)
      .where('external_id', '=', externalId)
      .where('user_id', '=', 0)
      .where('claimed_at', '=', claimedAt);
  let userId: number;
  try {
    userId = await create();
  } catch (err) {
    await ctx.db
      .deleteFrom('identity_claims')
      .where('provider', '=', provider)
      .where('external_id', '=', externalId)
      .where('user_id', '=', 0)
      .where('claimed_at', '=', claimedAt)
      .execute();
    throw err;
  }
  await ctx.db.transaction().execute(async (trx) => {
    const res = await pending(trx).set({ user_id: userId }).executeTakeFirst();
    // only after PENDING_CLAIM_STALE_SEC can another callback have taken the claim over; the new user stays unbound
    if (Number(res.numUpdatedRows) !== 1) throw new OAuthError(SIGN_UP_IN_PROGRESS);
    await trx
      .updateTable('users')
      .set({ [PROVIDER_COLUMNS[provider]]: externalId })
      .where('id', '=', userId)
      .execute();
    await rememberUnseenPassword(trx, userId);
  });
  return userId;
}

/**
 * Marks the password a sign-up through a third party was given as one its owner never saw (services/oauth/unbind.ts
 * does not count it as a way to sign in until it changes).
 */
export async function rememberUnseenPassword(db: Db, userId: number): Promise<void> {
  // a row left by a hard-deleted user whose id MySQL handed out again is replaced
  await db.deleteFrom('unseen_passwords').where('user_id', '=', userId).execute();
  await db
    .insertInto('unseen_passwords')
    .columns(['user_id', 'password_hash'])
    .expression((eb) =>
      eb
        .selectFrom('users')
        .select(['id', sql<string>`password`.as('password_hash')])
        .where('id', '=', userId),
    )
    .execute();
}

/** Drops the user's claim on their account of `provider`, in the transaction that clears the column. */
export async function releaseClaim(db: Db, provider: ClaimProvider, userId: number): Promise<void> {
  await db.deleteFrom('identity_claims').where('provider', '=', provider).where('user_id', '=', userId).execute();
}
