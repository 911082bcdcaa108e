// DELETE /api/log/ (new-api-compat.md §3.4, §5.11): deletes log rows older than a cutoff. new-api deletes every type,
// so an admin could erase the records of admin quota edits, top-ups and system events, that is the audit trail.
// Here an admin deletes only consume and error rows (the types the retention job deletes); only root may name other
// types (`type=1,3` or `type=0` for every type). Each deletion leaves a system row saying who deleted what and how
// many: it is type 4, which an admin cannot delete.
import type { AppContext } from '../context.js';
import { nowSec } from '../lib/time.js';
import { ROLE_ROOT } from './console-auth.js';
import { RETAINED_LOG_TYPES } from './log-retention.js';
import { LOG_TYPE_SYSTEM } from './user-logs.js';
import { UserFacingError } from './users.js';

/** every type: root only, as the log list's `type=0` means every type */
export const ALL_LOG_TYPES = 'all';
export type CleanupTypes = number[] | typeof ALL_LOG_TYPES;

export interface CleanupActor {
  id: number;
  username: string;
  role: number;
}

/** The `type` query value: absent → consume and error; `0` → every type; else a comma list of type numbers. */
export function parseCleanupTypes(raw: string | undefined): CleanupTypes {
  const text = (raw ?? '').trim();
  if (!text) return [...RETAINED_LOG_TYPES];
  const parts = text.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^\d{1,3}$/.test(p))) throw new UserFacingError('日志类型无效');
  const types = [...new Set(parts.map(Number))].sort((a, b) => a - b);
  return types.includes(0) ? ALL_LOG_TYPES : types;
}

/** Whether the actor may delete these types: consume and error rows for an admin, anything for root. */
function mayDelete(actor: CleanupActor, types: CleanupTypes): boolean {
  if (actor.role >= ROLE_ROOT) return true;
  return types !== ALL_LOG_TYPES && types.every((t) => RETAINED_LOG_TYPES.includes(t));
}

/** Deletes the rows of `types` created before `cutoff`, writes the audit row, and returns how many were deleted. */
export async function deleteLogsBefore(
  ctx: AppContext,
  actor: CleanupActor,
  cutoff: number,
  types: CleanupTypes,
): Promise<number> {
  if (!mayDelete(actor, types)) throw new UserFacingError('只有超级管理员可以删除消费和错误以外的日志');
  let query = ctx.logDb.deleteFrom('logs').where('created_at', '<', cutoff);
  if (types !== ALL_LOG_TYPES) query = query.where('type', 'in', types);
  const deleted = Number((await query.executeTakeFirst()).numDeletedRows);
  // Written after the delete (it needs the count), so a cutoff in the future never takes it away. A failure here
  // answers 500: the caller must learn that the deletion went unrecorded.
  const typeList = types === ALL_LOG_TYPES ? '0' : types.join(',');
  await ctx.logDb
    .insertInto('logs')
    .values({
      user_id: actor.id,
      username: actor.username,
      created_at: nowSec(),
      type: LOG_TYPE_SYSTEM,
      content: `用户 ${actor.username}（ID ${actor.id}）删除了创建时间早于 ${cutoff} 的日志 ${deleted} 条，日志类型：${typeList}`,
      is_stream: false,
      other: JSON.stringify({ log_cleanup: { cutoff, types: typeList, deleted } }),
    })
    .execute();
  return deleted;
}
