// The announcement (`Notice` option, GET /api/notice; new-api-compat.md §11.5): shown once per content, the dismissed
// text remembered under new-api's localStorage key `notice`.
import { apiFetch } from '../../lib/api.js';

export const NOTICE_KEY = 'notice';
export const NOTICE_QUERY_KEY = ['notice'] as const;

/**
 * The announcement text; empty when none is set or it cannot be read. Fetched without the console client's error
 * toasts: a missing announcement is never worth an error message.
 */
export async function fetchNotice(): Promise<string> {
  try {
    const res = await apiFetch('/api/notice');
    const body = (await res.json()) as { success?: boolean; data?: unknown };
    return res.ok && body.success && typeof body.data === 'string' ? body.data : '';
  } catch {
    return '';
  }
}

/** Whether `content` still has to be shown: not blank and not the text the user last dismissed. */
export function noticePending(content: string | undefined): content is string {
  if (!content || !content.trim()) return false;
  try {
    return localStorage.getItem(NOTICE_KEY) !== content;
  } catch {
    return true;
  }
}

export function rememberDismissed(content: string): void {
  try {
    localStorage.setItem(NOTICE_KEY, content);
  } catch {
    /* storage unavailable: the notice shows again next time */
  }
}
