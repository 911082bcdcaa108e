// The channel type catalogue the console shows (GET /api/channel/types): every type's name and default base URL
// (channel-types.ts), whether the relay can serve it (channel-protocols.ts), its built-in models, and what its key
// and `other` field hold. The console keeps no copy of its own, so it cannot offer a type the server refuses.
//
// Hints are language-neutral examples of a field's format (`AK|SK|region`, `us-central1`); the console writes the
// sentence around them in the reader's language.
import { CHANNEL_TYPES } from './channel-types.js';
import { channelFactsOf, consoleAcceptsType } from './channel-protocols.js';
import type { OtherFieldKind } from '../relay/providers/channel-facts.js';

export type { OtherFieldKind };

export interface ChannelTypeEntry {
  value: number;
  label: string;
  /** colour of the type tag in the channel list (new-api's palette) */
  color: string;
  /** where the relay sends requests when the channel names no base URL; '' when the operator must give one */
  default_base_url: string;
  /** an adaptor speaks this vendor's protocol: channels of the type can be created and are relayed to */
  relayable: boolean;
  /** an example of the key format ('' for a plain API key) */
  key_hint: string;
  /** an example of the `other` field ('' when the type does not use it) */
  other_hint: string;
  /** what `other` holds, when the type uses it */
  other_kind?: OtherFieldKind;
  models: string[];
}

// new-api's tag colours per type; a type without one is shown gray.
const COLORS: Record<number, string> = {
  1: 'green',
  2: 'blue',
  3: 'cyan',
  4: 'gray',
  5: 'blue',
  8: 'pink',
  11: 'orange',
  14: 'purple',
  15: 'blue',
  16: 'volcano',
  17: 'orange',
  18: 'blue',
  19: 'gray',
  20: 'black',
  21: 'purple',
  22: 'blue',
  23: 'cyan',
  24: 'orange',
  25: 'green',
  26: 'purple',
  27: 'gray',
  31: 'green',
  33: 'purple',
  34: 'purple',
  35: 'green',
  36: 'green',
  37: 'cyan',
  38: 'blue',
  39: 'gray',
  40: 'purple',
  41: 'blue',
  42: 'blue',
  43: 'blue',
  44: 'red',
  45: 'blue',
  46: 'blue',
  47: 'blue',
  48: 'blue',
  49: 'blue',
  53: 'green',
};

// The hints of the types no provider serves yet. A relayable type's hints are its provider's channel facts
// (relay/providers/<name>/channel.ts); these move into a provider's folder when one arrives for the type.
const KEY_HINTS: Record<number, string> = {
  15: 'APIKey|SecretKey',
  18: 'APPID|APISecret|APIKey',
  23: 'AppId|SecretId|SecretKey',
};

const OTHER_FIELDS: Record<number, { kind: OtherFieldKind; hint: string }> = {
  17: { kind: 'plugin', hint: 'WebSearch' },
  18: { kind: 'spark_version', hint: 'v2.1' },
  21: { kind: 'knowledge_id', hint: '123456' },
  39: { kind: 'account_id', hint: 'd6b5da8hk1awo8nap34ube6gh' },
};

function entryOf(type: number): ChannelTypeEntry {
  const info = CHANNEL_TYPES[type]!;
  const facts = channelFactsOf(type);
  const other = facts ? facts.other : OTHER_FIELDS[type];
  const entry: ChannelTypeEntry = {
    value: type,
    label: info.name,
    color: COLORS[type] ?? 'gray',
    default_base_url: info.baseUrl,
    // a task type is served by its own routes (/mj/*, /suno/*): offered for new channels like a relayable one
    relayable: consoleAcceptsType(type),
    key_hint: facts ? facts.keyHint : (KEY_HINTS[type] ?? ''),
    other_hint: other?.hint ?? '',
    models: [...info.models],
  };
  if (other) entry.other_kind = other.kind;
  return entry;
}

/** Every known channel type, relayable ones first, each group in type-code order. */
export function channelTypeCatalogue(): ChannelTypeEntry[] {
  const entries = Object.keys(CHANNEL_TYPES)
    .map(Number)
    .sort((a, b) => a - b)
    .map(entryOf);
  return [...entries.filter((e) => e.relayable), ...entries.filter((e) => !e.relayable)];
}
