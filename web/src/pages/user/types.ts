export interface AdminUser {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  group: string;
  email?: string;
  quota: number;
  used_quota: number;
  request_count: number;
  aff_count?: number;
  aff_history_quota?: number;
  inviter_id?: number;
  github_id?: string;
  oidc_id?: string;
  wechat_id?: string;
  telegram_id?: string;
  linux_do_id?: string;
  /** gorm soft-delete marker: null when active. */
  DeletedAt?: unknown;
}

export interface Paged<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

export type ManageAction = 'promote' | 'demote' | 'enable' | 'disable' | 'delete';

/** Which manage actions the caller may take on a row (spec §6 rules; the server enforces them too). */
export function allowedActions(
  callerRole: number,
  target: Pick<AdminUser, 'role' | 'status' | 'DeletedAt'>,
): Set<ManageAction> {
  const out = new Set<ManageAction>();
  if (isDeleted(target)) return out;
  // No actions on peers or superiors.
  if (target.role >= callerRole) return out;
  if (callerRole >= 100 && target.role < 10) out.add('promote');
  if (target.role >= 10 && target.role < 100) out.add('demote');
  if (target.status === 1) out.add('disable');
  else if (target.status !== 3) out.add('enable');
  out.add('delete');
  return out;
}

export function isDeleted(u: Pick<AdminUser, 'DeletedAt'>): boolean {
  const d = u.DeletedAt;
  if (!d) return false;
  if (typeof d === 'object' && d !== null && 'Valid' in d) return !!(d as { Valid: unknown }).Valid;
  return true;
}
