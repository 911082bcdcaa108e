// The channels page's server state through TanStack Query (docs/architecture.md): one key per resource, so a change
// invalidates what it touched instead of the page reloading by hand.
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, failureText } from '../../lib/api.js';
import type { Channel } from './logic.js';

/** Every channel list (pages and searches) sits under this key: a channel change invalidates them all. */
export const CHANNELS_KEY = ['channels'] as const;
/** The user groups (GET /api/group/), shared with the users page. */
export const GROUPS_KEY = ['groups'] as const;
/** The models some enabled channel serves (the form's and the tag dialog's model choices), read at each opening. */
export const ENABLED_MODELS_KEY = ['channel-models-enabled'] as const;
/** One channel as the editor loads it (with its key state); not under CHANNELS_KEY, so a list change keeps the form. */
export const CHANNEL_KEY = ['channel'] as const;
/** A multi-key channel's key statuses (the key manager). */
export const CHANNEL_KEYS_KEY = ['channel-keys'] as const;

/** The list's view: paged, or the submitted search (null lists the pages). */
export interface ChannelListParams {
  page: number;
  pageSize: number;
  idSort: boolean;
  tagMode: boolean;
  search: ChannelSearch | null;
}

export interface ChannelSearch {
  keyword: string;
  group: string | undefined;
  model: string;
}

/**
 * The listed channels. A refusal is toasted (the server's message, else 刷新失败) and the rows shown stay; a request
 * that failed outright was toasted by the api client.
 */
export function useChannelList(p: ChannelListParams, onRefused: (text: string) => void) {
  const { page, pageSize, idSort, tagMode, search } = p;
  return useQuery({
    queryKey: search
      ? [...CHANNELS_KEY, 'search', search, idSort, tagMode]
      : [...CHANNELS_KEY, 'page', page, pageSize, idSort, tagMode],
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const res = search
        ? await api.get<Channel[]>('/api/channel/search', {
            keyword: search.keyword,
            group: search.group,
            model: search.model,
            id_sort: idSort,
            tag_mode: tagMode,
          })
        : await api.get<Channel[]>('/api/channel/', {
            p: page,
            page_size: pageSize,
            id_sort: idSort,
            tag_mode: tagMode,
          });
      if (!res.success) {
        const text = failureText(res, 'error.refreshFailed');
        onRefused(text);
        throw new Error(text);
      }
      return res.data ?? [];
    },
  });
}

export function useGroups() {
  return useQuery({
    queryKey: GROUPS_KEY,
    queryFn: async () => {
      const res = await api.get<string[]>('/api/group/');
      return res.success && Array.isArray(res.data) ? res.data : [];
    },
  });
}

/** Read again whenever a dialog that offers them opens (`enabled` turning true refetches stale data). */
export function useEnabledModels(enabled: boolean) {
  return useQuery({
    queryKey: ENABLED_MODELS_KEY,
    enabled,
    queryFn: async () => {
      const res = await api.get<string[]>('/api/channel/models_enabled');
      return res.success ? (res.data ?? []) : [];
    },
  });
}
