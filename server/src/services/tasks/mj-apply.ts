// A drawing task's (midjourneys row's) change from the poller or a notify callback, and its refund. The change is a
// compare-and-set on the row's status (it stays what the caller read, and is not terminal), so of two pollers, or a
// poller and a callback, one writes; a failure refunds in the same transaction as its write, once, to the user AND the
// token (new-api credits the user only), with a type-6 log row. Only a charge that happened is given back: the
// submit's consume log row names the row (`mj_row`), and gives the token that paid; with consume logs off, the row's
// private_data does, written once the charge committed. A row with neither (a crash between the row and the
// settlement's commit, or before private_data was written) fails without a refund.
import type { AppContext } from '../../context.js';
import { LOG_TYPE_CONSUME, logQuota } from '../user-logs.js';
import { LOG_TYPE_REFUND } from './status.js';

/** a drawing task never changes again after these */
const MJ_TERMINAL = ['SUCCESS', 'FAILURE'];
/** the consume row is written after the row's submit_time; a little slack for clocks of other instances */
const CHARGE_LOG_SLACK_SEC = 300;
export const MJ_REFUND_REASON = '构图失败';

/** The row as the caller read it. */
export interface MjAppliedRow {
  id: number;
  mj_id: string;
  user_id: number;
  channel_id: number;
  quota: number;
  /** ms */
  submit_time: number;
}

/** What to write (providers/midjourney/task.ts MjRowUpdate, given here without the relay's types). */
export interface MjChange {
  set: Record<string, string | number>;
  expectStatus: string;
  refund: boolean;
}

export type MjApplyOutcome = 'lost' | 'changed' | 'refunded';

interface Charge {
  tokenId: number;
  tokenName: string;
  modelName: string;
}

/** midjourneys.private_data of a row charged without a consume log row (relay/tasks/mj-submit.ts). */
export interface MjPrivateData {
  charge_logged: false;
  token_id: number;
  token_name: string;
  model_name: string;
}

/** Who paid, from the row's private_data, when it says its charge committed without a consume log row. */
function unloggedCharge(privateData: string | undefined): Charge | null {
  if (!privateData) return null;
  try {
    const v = JSON.parse(privateData) as Partial<Record<keyof MjPrivateData, unknown>>;
    if (v.charge_logged !== false) return null;
    return {
      tokenId: Number(v.token_id) || 0,
      tokenName: typeof v.token_name === 'string' ? v.token_name : '',
      modelName: typeof v.model_name === 'string' ? v.model_name : '',
    };
  } catch {
    return null;
  }
}

/** The proof of the row's charge, if it was made: its private_data, else the consume log row that names it. */
async function chargeOf(ctx: AppContext, row: MjAppliedRow): Promise<Charge | null> {
  const own = await ctx.db.selectFrom('midjourneys').select('private_data').where('id', '=', row.id).executeTakeFirst();
  const unlogged = unloggedCharge(own?.private_data);
  if (unlogged) return unlogged;
  const found = await ctx.logDb
    .selectFrom('logs')
    .select(['token_id', 'token_name', 'model_name'])
    .where('user_id', '=', row.user_id)
    .where('type', '=', LOG_TYPE_CONSUME)
    .where('created_at', '>=', Math.floor(row.submit_time / 1000) - CHARGE_LOG_SLACK_SEC)
    .where('other', 'like', `%"mj_row":"${row.id}"%`)
    .limit(1)
    .executeTakeFirst();
  return found
    ? { tokenId: Number(found.token_id) || 0, tokenName: found.token_name ?? '', modelName: found.model_name ?? '' }
    : null;
}

/** Applies `change` to the row unless another writer got there first; refunds when it says so and the charge exists. */
export async function applyMjChange(
  ctx: AppContext,
  row: MjAppliedRow,
  change: MjChange,
  nowSec: number,
): Promise<MjApplyOutcome> {
  // read before the write: the charge row was committed at submit, long before (logs may be in another database)
  const charge = change.refund && row.quota > 0 ? await chargeOf(ctx, row) : null;
  const sameDb = ctx.logDb === ctx.db;
  const result = await ctx.db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('midjourneys')
      .set(change.set)
      .where('id', '=', row.id)
      .where('status', '=', change.expectStatus)
      .where('status', 'not in', MJ_TERMINAL)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) !== 1) return null;
    if (!charge) return { refunded: false as const };
    const quota = row.quota;
    // the token's row first, the order settlement and the relay's refunds lock them in
    if (charge.tokenId) {
      await trx
        .updateTable('tokens')
        .set((eb) => ({ remain_quota: eb('remain_quota', '+', quota), used_quota: eb('used_quota', '-', quota) }))
        .where('id', '=', charge.tokenId)
        .execute();
    }
    await trx
      .updateTable('users')
      .set((eb) => ({ quota: eb('quota', '+', quota) }))
      .where('id', '=', row.user_id)
      .execute();
    const user = await trx.selectFrom('users').select('username').where('id', '=', row.user_id).executeTakeFirst();
    const logRow = {
      user_id: row.user_id,
      username: user?.username ?? '',
      created_at: nowSec,
      type: LOG_TYPE_REFUND,
      content: `构图失败 ${row.mj_id}，补偿 ${logQuota(ctx, quota)}`,
      token_name: charge.tokenName,
      token_id: charge.tokenId,
      model_name: charge.modelName,
      quota,
      channel_id: row.channel_id,
      is_stream: false,
      other: JSON.stringify({ task_id: row.mj_id, reason: MJ_REFUND_REASON }),
    };
    // with the credit, so a refund is never without its row nor a row without its refund (LOG_SQL_DSN: after it)
    if (sameDb) await trx.insertInto('logs').values(logRow).execute();
    return { refunded: true as const, logRow: sameDb ? null : logRow };
  });
  if (!result) return 'lost';
  if (!result.refunded) return 'changed';
  if (result.logRow) await ctx.logDb.insertInto('logs').values(result.logRow).execute();
  ctx.changes.publish({ kind: 'user', id: row.user_id });
  if (charge?.tokenId) ctx.changes.publish({ kind: 'token', userId: row.user_id });
  return 'refunded';
}
