// The routing index (new-api-compat.md §2.4): one `abilities` row per (group, model) of a channel, i.e. the cartesian
// product of channel.group × channel.models. It is always rebuilt from the channel row, inside the same
// transaction as the channel write, so the relay never sees a channel and its abilities disagree.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

type Executor = Kysely<Database> | Transaction<Database>;

export interface AbilitySource {
  id: number;
  models: string;
  group: string;
  status: number;
  priority: number | null;
  weight: number | null;
  tag: string | null;
}

const INSERT_CHUNK = 50;

/** Splits a comma list, trimming and dropping empty and duplicate entries (order kept). */
export function splitCommaList(value: string | null | undefined): string[] {
  const seen = new Set<string>();
  for (const part of (value ?? '').split(',')) {
    const v = part.trim();
    if (v) seen.add(v);
  }
  return [...seen];
}

export function abilityRows(ch: AbilitySource) {
  const rows: Array<{
    group: string;
    model: string;
    channel_id: number;
    enabled: boolean;
    priority: number;
    weight: number;
    tag: string | null;
  }> = [];
  for (const group of splitCommaList(ch.group)) {
    for (const model of splitCommaList(ch.models)) {
      rows.push({
        group,
        model,
        channel_id: ch.id,
        enabled: ch.status === 1,
        priority: ch.priority ?? 0,
        weight: ch.weight ?? 0,
        tag: ch.tag || null,
      });
    }
  }
  return rows;
}

/** Replaces the abilities of each given channel with the rows derived from its current row. */
export async function rebuildAbilities(db: Executor, channels: AbilitySource[]): Promise<void> {
  if (!channels.length) return;
  const ids = channels.map((c) => c.id);
  for (let i = 0; i < ids.length; i += 500) {
    await db
      .deleteFrom('abilities')
      .where('channel_id', 'in', ids.slice(i, i + 500))
      .execute();
  }
  const rows = channels.flatMap(abilityRows);
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db
      .insertInto('abilities')
      .values(rows.slice(i, i + INSERT_CHUNK))
      .execute();
  }
}

/** Re-reads the channels by id and rebuilds their abilities (ids of deleted channels just lose theirs). */
export async function rebuildAbilitiesFor(db: Executor, ids: number[]): Promise<void> {
  if (!ids.length) return;
  const channels: AbilitySource[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    channels.push(
      ...(await db
        .selectFrom('channels')
        .select(['id', 'models', 'group', 'status', 'priority', 'weight', 'tag'])
        .where('id', 'in', ids.slice(i, i + 500))
        .execute()),
    );
  }
  const found = new Set(channels.map((c) => c.id));
  const gone = ids.filter((id) => !found.has(id));
  for (let i = 0; i < gone.length; i += 500) {
    await db
      .deleteFrom('abilities')
      .where('channel_id', 'in', gone.slice(i, i + 500))
      .execute();
  }
  await rebuildAbilities(db, channels);
}

/** POST /api/channel/fix: drops every ability row (orphans included) and rebuilds all; returns the channel count. */
export async function rebuildAllAbilities(db: Executor): Promise<number> {
  const channels = await db
    .selectFrom('channels')
    .select(['id', 'models', 'group', 'status', 'priority', 'weight', 'tag'])
    .execute();
  await db.deleteFrom('abilities').execute();
  const rows = channels.flatMap(abilityRows);
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db
      .insertInto('abilities')
      .values(rows.slice(i, i + INSERT_CHUNK))
      .execute();
  }
  return channels.length;
}

/** Distinct model names of enabled abilities, optionally limited to some groups. */
export async function enabledModels(db: Executor, groups?: string[]): Promise<string[]> {
  if (groups && !groups.length) return [];
  let q = db.selectFrom('abilities').select('model').distinct().where('enabled', '=', true);
  if (groups) q = q.where('group', 'in', groups);
  const rows = await q.orderBy('model').execute();
  return rows.map((r) => r.model);
}
