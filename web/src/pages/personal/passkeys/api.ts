// The passkey calls of the console (new-api-compat.md §9.8): each ceremony asks the server for options, lets the
// browser's authenticator answer through @simplewebauthn/browser, and sends the answer back. The server ties the
// challenge to this browser with its own httpOnly cookie.
import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser';
import { mutationOptions, queryOptions } from '@tanstack/react-query';
import { api, type Envelope } from '../../../lib/api.js';
import type { StoredUser } from '../../../context/user.js';

export interface Passkey {
  id: number;
  name: string;
  created_at: string | null;
  last_used_at: string | null;
  backup_eligible: boolean;
  backup_state: boolean;
  transports: string[];
  attachment: string;
}

export interface PasskeyStatus {
  enabled: boolean;
  last_used_at: string | null;
  passkeys: Passkey[];
}

/** new-api's begin answer: the options under data.options.publicKey */
type Begin<T> = Envelope<{ options: { publicKey: T } }>;

export const passkeysSupported = (): boolean => browserSupportsWebAuthn();

/**
 * The host passkeys would be bound to when it is an IP address (browsers refuse passkeys there), else null: the
 * server's address setting when it is a URL (the server binds passkeys to it), else the page's own host.
 */
export function passkeyIpHost(serverAddress: string | undefined, pageHost = window.location.hostname): string | null {
  let host = pageHost;
  try {
    const url = new URL((serverAddress ?? '').trim());
    if (url.protocol === 'http:' || url.protocol === 'https:') host = url.hostname;
  } catch {
    /* not set or not a URL: the page's host */
  }
  const bare = host.replace(/^\[|\]$/g, '');
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(bare) || bare.includes(':') ? bare : null;
}

export const passkeysQuery = queryOptions({
  queryKey: ['user', 'passkeys'],
  queryFn: async (): Promise<PasskeyStatus> => {
    const res = await api.get<PasskeyStatus>('/api/user/passkey');
    if (!res.success) throw new Error(res.message);
    return res.data;
  },
});

/** Registers a passkey of this device (the variable: its name); the envelope of whichever step failed, or of the finish. */
export const registerPasskeyMutation = mutationOptions({
  mutationFn: async (name: string): Promise<Envelope<unknown>> => {
    const begin: Begin<PublicKeyCredentialCreationOptionsJSON> = await api.post('/api/user/passkey/register/begin', {});
    if (!begin.success) return begin;
    const credential = await ceremony(() => startRegistration({ optionsJSON: begin.data.options.publicKey }));
    return api.post('/api/user/passkey/register/finish', { ...credential, name: name.trim() });
  },
});

/** Signs in with any passkey the browser holds for this site; the envelope carries the user as a password login's. */
export const passkeyLoginMutation = mutationOptions({
  mutationFn: async (): Promise<Envelope<StoredUser>> => {
    const begin: Begin<PublicKeyCredentialRequestOptionsJSON> = await api.post('/api/user/passkey/login/begin', {});
    if (!begin.success) return begin as unknown as Envelope<StoredUser>;
    const assertion = await ceremony(() => startAuthentication({ optionsJSON: begin.data.options.publicKey }));
    return api.post<StoredUser>('/api/user/passkey/login/finish', assertion);
  },
});

export const removePasskeyMutation = mutationOptions({
  mutationFn: (id: number) => api.del<unknown>(`/api/user/passkey/${id}`),
});

/** What the browser's WebAuthn call threw (the API client toasts its own failures, these it never sees). */
export class CeremonyError extends Error {
  /** the user dismissed the prompt or let it time out */
  readonly cancelled: boolean;
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
    const name = cause instanceof Error ? cause.name : '';
    this.cancelled = name === 'NotAllowedError' || name === 'AbortError';
  }
}

async function ceremony<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new CeremonyError(err);
  }
}

/** The toast for a failed ceremony step: the browser's refusal, else nothing (the API client already spoke). */
export function ceremonyToast(err: unknown, t: (key: string, opts?: Record<string, unknown>) => string): string | null {
  if (!(err instanceof CeremonyError)) return null;
  return err.cancelled ? t('cancelled') : t('failed', { message: err.message });
}
