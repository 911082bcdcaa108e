// The drawing log's and the task log's server state through TanStack Query (docs/architecture.md): one key per log,
// so looking again invalidates it instead of the page refetching by hand.
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, apiFetch } from '../../lib/api.js';
import { buildQuery, type Filters, type MjRow, type Page, type TaskRow } from './logic.js';

export type Kind = 'mj' | 'task';
export type LogRow = MjRow | TaskRow;

/** Every page and filter of both logs sits under this key; `[...TASKLOG_KEY, kind]` is one log's. */
export const TASKLOG_KEY = ['tasklog'] as const;

/** The list's view: the submitted filters and the page. */
export interface TaskLogParams {
  kind: Kind;
  admin: boolean;
  filters: Filters;
  page: number;
  pageSize: number;
}

/** One page of a log: a user's own rows (/api/{kind}/self), an admin's every row (/api/{kind}/). */
export function useTaskLog({ kind, admin, filters, page, pageSize }: TaskLogParams) {
  const url = `/api/${kind}/${admin ? '' : 'self'}`;
  const params = buildQuery(kind, filters, admin, page, pageSize);
  return useQuery({
    queryKey: [...TASKLOG_KEY, kind, admin ? 'all' : 'self', params],
    placeholderData: keepPreviousData,
    queryFn: async (): Promise<Page<LogRow>> => {
      const res = await api.get<Page<LogRow>>(url, params);
      if (!res.success) throw new Error(res.message);
      return res.data ?? { items: [], total: 0, page, page_size: pageSize };
    },
  });
}

/**
 * Reads a log's shown rows anew: a task's state moves while the page is open (the poller), and the same filters keep
 * the same key, so looking again with them must invalidate it.
 */
export function useReloadTaskLog(kind: Kind) {
  const qc = useQueryClient();
  return () => qc.invalidateQueries({ queryKey: [...TASKLOG_KEY, kind] });
}

/**
 * A finished video's bytes from the gateway's content route (read with the console session's headers, which a
 * <video> element cannot send); not kept once its player is closed, a video being tens of MB.
 */
export function useVideoBlob(url: string | null) {
  return useQuery({
    queryKey: [...TASKLOG_KEY, 'video', url],
    enabled: !!url,
    gcTime: 0,
    staleTime: Infinity,
    // a refused video (gone upstream, another's) is not asked for again
    retry: false,
    queryFn: async (): Promise<Blob> => {
      const res = await apiFetch(url!);
      if (!res.ok) throw new Error(String(res.status));
      return res.blob();
    },
  });
}
