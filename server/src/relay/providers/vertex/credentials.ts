// A Vertex AI channel's key: the service-account JSON file Google Cloud issues (IAM → service accounts → keys).

export interface ServiceAccount {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  /** PEM, PKCS#8 */
  private_key: string;
  client_email: string;
  token_uri?: string;
}

/** What is wrong with a key, so the channel form can say it in the console's words (vertex/channel.ts). */
export type ServiceAccountProblem = 'json' | 'object' | 'type' | 'missing' | 'pem';

/** Thrown for a key that is not a usable service-account JSON; the message never repeats the private key. */
export class ServiceAccountError extends Error {
  constructor(
    message: string,
    readonly problem: ServiceAccountProblem,
    /** the absent fields, for `missing` */
    readonly missing: readonly string[] = [],
  ) {
    super(message);
  }
}

const REQUIRED = ['project_id', 'private_key_id', 'private_key', 'client_email'] as const;

export function parseServiceAccount(key: string): ServiceAccount {
  let json: unknown;
  try {
    json = JSON.parse(key);
  } catch {
    throw new ServiceAccountError(
      'Vertex AI key must be a service-account JSON (the key file downloaded from Google Cloud)',
      'json',
    );
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) {
    throw new ServiceAccountError('Vertex AI key must be a JSON object (a service-account key file)', 'object');
  }
  const sa = json as Record<string, unknown>;
  if (sa.type !== undefined && sa.type !== 'service_account') {
    throw new ServiceAccountError(`Vertex AI key: type is "${String(sa.type)}", expected "service_account"`, 'type');
  }
  const missing = REQUIRED.filter((f) => typeof sa[f] !== 'string' || !(sa[f] as string).trim());
  if (missing.length) throw new ServiceAccountError(`Vertex AI key: missing ${missing.join(', ')}`, 'missing', missing);
  const privateKey = sa.private_key as string;
  if (!privateKey.includes('-----BEGIN') || !privateKey.includes('PRIVATE KEY-----')) {
    throw new ServiceAccountError('Vertex AI key: private_key is not a PEM private key', 'pem');
  }
  const out: ServiceAccount = {
    type: 'service_account',
    project_id: (sa.project_id as string).trim(),
    private_key_id: (sa.private_key_id as string).trim(),
    private_key: privateKey,
    client_email: (sa.client_email as string).trim(),
  };
  if (typeof sa.token_uri === 'string' && sa.token_uri) out.token_uri = sa.token_uri;
  return out;
}
