// A software WebAuthn authenticator and browser for tests: it makes ES256 (P-256) discoverable credentials with
// node:crypto, answers registrations with a 'none' attestation and logins with a signed assertion, in the JSON
// form @simplewebauthn/browser sends. Everything a real platform would check or produce is explicit, so a test can
// lie on purpose: another origin, another RP id, a replayed challenge, a counter that goes backwards.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { COSEALG, cose, isoCBOR } from '@simplewebauthn/server/helpers';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

export interface SoftCredential {
  id: Buffer;
  rpId: string;
  userHandle: Buffer;
  privateKey: KeyObject;
  publicKey: KeyObject;
  counter: number;
}

/** What a test may falsify in one ceremony. */
export interface Lie {
  /** the origin written in the client data (default: the authenticator's) */
  origin?: string;
  /** the RP id whose hash goes in the authenticator data (default: the options') */
  rpId?: string;
  /** the challenge signed over (default: the options') */
  challenge?: string;
  /** the counter to report (default: the stored one plus one) */
  counter?: number;
  /** use this credential instead of the first one held for the RP id */
  credentialId?: Buffer;
  /** the user handle to report (default: the credential's) */
  userHandle?: Buffer | null;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;
/** this authenticator's model id, as its attestation would name it */
export const SOFT_AAGUID = Buffer.from('5f2b0a6c0b1e4c7a9d3e2f1a0b9c8d7e', 'hex');

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();
const b64url = (data: Buffer | Uint8Array): string => Buffer.from(data).toString('base64url');
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  const map = new Map<number, number | Uint8Array>([
    [cose.COSEKEYS.kty, cose.COSEKTY.EC2],
    [cose.COSEKEYS.alg, COSEALG.ES256],
    [cose.COSEKEYS.crv, cose.COSECRV.P256],
    [cose.COSEKEYS.x, Buffer.from(jwk.x!, 'base64url')],
    [cose.COSEKEYS.y, Buffer.from(jwk.y!, 'base64url')],
  ]);
  return isoCBOR.encode(map);
}

function clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  /** `origin`: the page the console runs on, as the browser would report it */
  constructor(readonly origin: string) {}

  /** navigator.credentials.create(): a new resident key pair for the options' RP and user. */
  create(options: PublicKeyCredentialCreationOptionsJSON, lie: Lie = {}): RegistrationResponseJSON {
    const rpId = lie.rpId ?? options.rp.id!;
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    if (this.credentials.some((c) => c.rpId === rpId && excluded.has(b64url(c.id))))
      throw new Error('InvalidStateError: this authenticator already holds a credential for the account');
    if (!options.pubKeyCredParams.some((p) => p.alg === COSEALG.ES256)) throw new Error('NotSupportedError: ES256');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const cred: SoftCredential = {
      id: randomBytes(32),
      rpId,
      userHandle: Buffer.from(options.user.id, 'base64url'),
      privateKey,
      publicKey,
      counter: lie.counter ?? 0,
    };
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(cred.id.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([FLAG_UP | FLAG_UV | FLAG_BE | FLAG_BS | FLAG_AT]),
      u32(cred.counter),
      SOFT_AAGUID,
      idLength,
      cred.id,
      Buffer.from(coseKey(publicKey)),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Map<string, string> | Uint8Array>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', authData],
      ]),
    );
    this.credentials.push(cred);
    return {
      id: b64url(cred.id),
      rawId: b64url(cred.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(
          clientData('webauthn.create', lie.challenge ?? options.challenge, lie.origin ?? this.origin),
        ),
        attestationObject: b64url(attestationObject),
        transports: ['internal', 'hybrid'],
      },
    };
  }

  /** navigator.credentials.get() with no allow list: the first passkey held for the RP id signs. */
  get(options: PublicKeyCredentialRequestOptionsJSON, lie: Lie = {}): AuthenticationResponseJSON {
    const rpId = lie.rpId ?? options.rpId!;
    const cred = lie.credentialId
      ? this.credentials.find((c) => c.id.equals(lie.credentialId!))
      : this.credentials.find((c) => c.rpId === (options.rpId ?? rpId));
    if (!cred) throw new Error('NotAllowedError: no passkey for this site');
    cred.counter = lie.counter ?? cred.counter + 1;
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([FLAG_UP | FLAG_UV | FLAG_BE | FLAG_BS]),
      u32(cred.counter),
    ]);
    const client = clientData('webauthn.get', lie.challenge ?? options.challenge, lie.origin ?? this.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(client)]), cred.privateKey);
    const userHandle = lie.userHandle === undefined ? cred.userHandle : lie.userHandle;
    return {
      id: b64url(cred.id),
      rawId: b64url(cred.id),
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: b64url(client),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        ...(userHandle ? { userHandle: b64url(userHandle) } : {}),
      },
    };
  }
}
