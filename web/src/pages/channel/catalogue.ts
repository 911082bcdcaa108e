// The channel type catalogue served by the server (GET /api/channel/types): names, tag colours, default base URLs,
// which types the relay serves, built-in models and what a type's key and `other` field hold. The console keeps no
// copy, so its type select never offers a type the server would refuse.
import { useQuery } from '@tanstack/react-query';
import { api } from '../../lib/api.js';
import { translateServerMessage } from '../../i18n/server-message.js';

/** What a type's `other` column holds (the server's OtherFieldKind). */
export type OtherFieldKind =
  | 'api_version'
  | 'region_or_model_map'
  | 'spark_version'
  | 'knowledge_id'
  | 'account_id'
  | 'plugin'
  | 'app_type'
  | 'bot_id';

export interface ChannelTypeEntry {
  value: number;
  label: string;
  color: string;
  /** '' when the operator must give a base URL (or, for Bedrock and Vertex AI, when it follows the region) */
  default_base_url: string;
  relayable: boolean;
  /** language-neutral example of the key format; '' for a plain API key */
  key_hint: string;
  /** language-neutral example of `other`; '' when unused */
  other_hint: string;
  other_kind?: OtherFieldKind;
  models: string[];
}

export const CHANNEL_TYPES_KEY = ['channel-types'] as const;

/** The catalogue, fetched once per session: it only changes with a server upgrade. */
export function useChannelTypes() {
  return useQuery({
    queryKey: CHANNEL_TYPES_KEY,
    queryFn: async (): Promise<ChannelTypeEntry[]> => {
      const res = await api.get<ChannelTypeEntry[]>('/api/channel/types');
      if (!res.success) throw new Error(res.message);
      return res.data ?? [];
    },
    // the server names some types in Chinese (new-api's names): shown in English when the console is
    select: (entries) => entries.map((e) => ({ ...e, label: translateServerMessage(e.label) })),
    staleTime: Infinity,
  });
}

export function entryOf(
  catalogue: readonly ChannelTypeEntry[] | undefined,
  type: number,
): ChannelTypeEntry | undefined {
  return catalogue?.find((e) => e.value === type);
}

export interface TypeOption {
  value: number;
  label: string;
}

/**
 * The type select's choices: the relayable types; when editing a channel of another type (one new-api created), that
 * type too, under its name, so the form shows what the channel is without offering it for new channels.
 */
export function typeSelectOptions(
  catalogue: readonly ChannelTypeEntry[] | undefined,
  current: number | undefined,
  unknownLabel: (type: number) => string,
): TypeOption[] {
  const options = (catalogue ?? []).filter((e) => e.relayable).map((e) => ({ value: e.value, label: e.label }));
  if (current !== undefined && !options.some((o) => o.value === current)) {
    const entry = entryOf(catalogue, current);
    options.push({ value: current, label: entry?.label ?? unknownLabel(current) });
  }
  return options;
}
