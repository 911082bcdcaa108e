// User groups (new-api-compat.md §5.5): which groups a user may use, and their ratios. The one place these rules live.
import type { OptionStore } from './options.js';

type HasOptions = { options: OptionStore };

const OWN_GROUP_DESC = '用户分组';

function usableOption(options: OptionStore): Record<string, string> {
  const opt = options.json<Record<string, string> | null>('UserUsableGroups', {});
  return opt && typeof opt === 'object' && !Array.isArray(opt) ? opt : {};
}

/** A user's usable groups, name → description: the UserUsableGroups option plus the user's own group. */
export function usableGroups(ctx: HasOptions, userGroup: string): Record<string, string> {
  const groups = { ...usableOption(ctx.options) };
  if (userGroup && !(userGroup in groups)) groups[userGroup] = OWN_GROUP_DESC;
  return groups;
}

/** Whether `group` is usable by a user of `userGroup` (allocation-free, for the relay's hot path). */
export function isUsableGroup(ctx: HasOptions, userGroup: string, group: string): boolean {
  return group === userGroup || Object.prototype.hasOwnProperty.call(usableOption(ctx.options), group);
}

/** Usable groups that have a ratio in GroupRatio, with ratio and description (GET /api/user/self/groups). */
export function usableGroupsWithRatio(
  ctx: HasOptions,
  userGroup: string,
): Record<string, { ratio: number; desc: string }> {
  const ratios = ctx.options.json<Record<string, number>>('GroupRatio', {});
  const usable = usableGroups(ctx, userGroup);
  const out: Record<string, { ratio: number; desc: string }> = {};
  for (const [name, ratio] of Object.entries(ratios)) {
    if (name in usable) out[name] = { ratio, desc: usable[name] };
  }
  return out;
}
