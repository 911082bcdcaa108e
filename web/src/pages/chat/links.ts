// Chat links (spec §2 "Chat page and redirect page", new-api-compat.md §11.5): the `Chats` option is a JSON list of
// one-entry objects {name: urlTemplate}; `{key}` becomes `sk-<token key>` and `{address}` the URL-encoded server address.
// Pure helpers shared by the sidebar, /chat/:id and /chat2link.
import { createElement } from 'react';
import { CommentOutlined } from '@ant-design/icons';

export interface ChatEntry {
  /** position in the `Chats` list; /chat/:id uses it */
  index: number;
  name: string;
  template: string;
}

/** Parses the `Chats` value (the status field, or its localStorage copy as text). Null when it is malformed. */
export function parseChats(raw: unknown): ChatEntry[] | null {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return null;
  const entries: ChatEntry[] = [];
  for (const [index, item] of value.entries()) {
    if (!item || typeof item !== 'object' || Array.isArray(item)) return null;
    const pairs = Object.entries(item as Record<string, unknown>);
    if (pairs.length !== 1) return null;
    const [name, template] = pairs[0]!;
    if (typeof template !== 'string' || !template.trim()) return null;
    entries.push({ index, name, template });
  }
  return entries;
}

/** The template for `id`, or the reason there is none. */
export function pickChat(
  raw: unknown,
  id: string | undefined,
): { template: string } | { problem: 'badConfig' | 'noLink' } {
  const entries = parseChats(raw);
  if (!entries) return { problem: 'badConfig' };
  const index = id === undefined || id === '' ? 0 : Number(id);
  const entry = Number.isInteger(index) ? entries[index] : undefined;
  return entry ? { template: entry.template } : { problem: 'noLink' };
}

/** Lists the chat entries for the sidebar; a malformed list shows none (the chat page explains why). */
export function chatEntries(raw: unknown): ChatEntry[] {
  return parseChats(raw) ?? [];
}

/** Sidebar menu items for the saved chat links, keyed by their /chat/:id route. */
export function chatSidebarItems(raw: unknown): Array<{ key: string; icon: React.ReactNode; label: string }> {
  return chatEntries(raw).map((c) => ({
    key: `/chat/${c.index}`,
    icon: createElement(CommentOutlined),
    label: c.name,
  }));
}

/** Fills a link template with the user's key (without its `sk-` prefix) and the server address. */
export function fillChatLink(template: string, key: string, address: string): string {
  return template.replaceAll('{address}', encodeURIComponent(address)).replaceAll('{key}', `sk-${key}`);
}

/** The legacy single `chat_link` (ChatGPT-Next-Web style settings in the fragment), as new-api's /chat2link used it. */
export function fillLegacyChatLink(base: string, key: string, address: string): string {
  const settings = `{"key":"sk-${key}","url":"${encodeURIComponent(address)}"}`;
  return `${base.replace(/\/+$/, '')}/#/?settings=${settings}`;
}

/** The address clients should call: the configured ServerAddress, else this page's origin; no trailing slash. */
export function serverAddress(configured: string | undefined, origin = window.location.origin): string {
  return (configured?.trim() || origin).replace(/\/+$/, '');
}

export interface TokenRow {
  key: string;
  status: number;
  expired_time: number;
  remain_quota: number;
  unlimited_quota: boolean;
}

/** The first token a chat client could use: enabled, not expired and with quota left. */
export function firstUsableKey(tokens: TokenRow[], nowSec = Math.floor(Date.now() / 1000)): string | null {
  const usable = tokens.find(
    (t) =>
      t.status === 1 && (t.expired_time === -1 || t.expired_time > nowSec) && (t.unlimited_quota || t.remain_quota > 0),
  );
  return usable ? usable.key.replace(/^sk-/, '') : null;
}
