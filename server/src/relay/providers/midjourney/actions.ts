// Midjourney's actions (midjourney-proxy's TaskAction, new-api's constant/midjourney.go, plus VIDEO and EDITS), the
// per-call model name each is priced under, and the default prices. Data only, so that the pricing defaults, the
// relay and the console read one list.
import { DEFAULT_MODEL_PRICE } from '../../../services/pricing/defaults.js';
import { TERMINAL_STATUSES } from '../../../services/tasks/status.js';

export const MJ_ACTIONS = [
  'IMAGINE',
  'DESCRIBE',
  'BLEND',
  'UPSCALE',
  'VARIATION',
  'REROLL',
  'INPAINT',
  'MODAL',
  'ZOOM',
  'CUSTOM_ZOOM',
  'SHORTEN',
  'HIGH_VARIATION',
  'LOW_VARIATION',
  'PAN',
  'SWAP_FACE',
  'UPLOAD',
  'VIDEO',
  'EDITS',
] as const;
export type MjAction = (typeof MJ_ACTIONS)[number];

export function isMjAction(value: unknown): value is MjAction {
  return typeof value === 'string' && (MJ_ACTIONS as readonly string[]).includes(value);
}

/** The model a Midjourney action is priced and logged under: `mj_<action>` in lower case, SWAP_FACE → swap_face. */
export function mjModelName(action: MjAction): string {
  return action === 'SWAP_FACE' ? 'swap_face' : `mj_${action.toLowerCase()}`;
}

/**
 * USD per call of each Midjourney model: the shared price defaults' entries (services/pricing/defaults.ts, new-api's
 * model_ratio.go). mj_video and mj_edits came after the spec; INPAINT and CUSTOM_ZOOM cost nothing because the modal
 * that completes them is what is charged.
 */
export const MJ_DEFAULT_PRICES: Readonly<Record<string, number>> = Object.fromEntries(
  Object.entries(DEFAULT_MODEL_PRICE).filter(([model]) => model.startsWith('mj_') || model === 'swap_face'),
);

/** Actions whose submit is never charged (new-api: the follow-up /submit/modal is). */
export const MJ_UNCHARGED_ACTIONS: readonly MjAction[] = ['INPAINT', 'CUSTOM_ZOOM'];

/** Task statuses of midjourney-proxy; MODAL is the spec's addition (an action waiting for its modal). */
export const MJ_STATUS = {
  notStart: 'NOT_START',
  submitted: 'SUBMITTED',
  inProgress: 'IN_PROGRESS',
  modal: 'MODAL',
  failure: 'FAILURE',
  success: 'SUCCESS',
} as const;

/** Statuses after which a drawing task never changes again: the task rows' (relay/tasks/mj-routes.ts asks by them). */
export const MJ_TERMINAL_STATUSES: readonly string[] = TERMINAL_STATUSES;

/** How long a drawing task may run before the poller fails and refunds it (new-api: 1 h since submit). */
export const MJ_TASK_TIMEOUT_MS = 3_600_000;
