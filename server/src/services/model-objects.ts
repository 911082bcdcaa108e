// OpenAI model objects (facts §4.10), shared by GET /v1/models and the console's GET /api/channel/models.
import { CHANNEL_TYPES } from './channel-types.js';

/** new-api's fixed `created` for model objects. */
const CREATED = 1626777600;

function permission() {
  return [
    {
      id: 'modelperm-LwHkVFn8AcMItP432fKKDIKJ',
      object: 'model_permission',
      created: CREATED,
      allow_create_engine: true,
      allow_sampling: true,
      allow_logprobs: true,
      allow_search_indices: false,
      allow_view: true,
      allow_fine_tuning: false,
      organization: '*',
      group: null,
      is_blocking: false,
    },
  ];
}

let ownerIndex: Map<string, string> | null = null;
function ownerOf(model: string): string | undefined {
  if (!ownerIndex) {
    ownerIndex = new Map();
    for (const t of Object.values(CHANNEL_TYPES)) for (const m of t.models) if (!ownerIndex.has(m)) ownerIndex.set(m, t.name.toLowerCase());
  }
  return ownerIndex.get(model);
}

/** A model of a built-in channel type (the list GET /v1/models/:model answers for). */
export function isBuiltInModel(id: string): boolean {
  return ownerOf(id) !== undefined;
}

export const modelObject = (id: string) => ({ id, object: 'model', created: CREATED, owned_by: ownerOf(id) ?? 'custom', permission: permission(), root: id, parent: null });

/** Every model of the built-in channel types, once each (the first type that lists it owns it). */
export function builtInModelObjects() {
  const seen = new Set<string>();
  const list: Array<ReturnType<typeof modelObject>> = [];
  for (const info of Object.values(CHANNEL_TYPES)) {
    for (const id of info.models) {
      if (seen.has(id)) continue;
      seen.add(id);
      list.push(modelObject(id));
    }
  }
  return list;
}
